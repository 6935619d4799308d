# Goodput under provider reclaim: a preemptible podtrain v2-32 job on real podsched + podworkers
# (127.0.0.1), uninterrupted vs preempted every PERIOD s with and without the grace-period
# checkpoint. Full run (figures in docs/bench-goodput.md):
#   python3 tests/bench/goodput.py build
# The ctest smoke run is tiny: a few seconds of training, one or two preemptions per run.
add_test(NAME bench_goodput_smoke
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/goodput.py ${CMAKE_BINARY_DIR}
                 --steps 120 --period 5 --step-ms 50 --checkpoint-every 20 --grace 15 --write-delay-ms 1500)
set_tests_properties(bench_goodput_smoke PROPERTIES LABELS bench-smoke TIMEOUT 600 RUN_SERIAL TRUE)
