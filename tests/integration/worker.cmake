# The worker bus end to end: a real podsched on ephemeral ports, bad messages from a test client
# (bench_bus fuzz), and real podworkers running podprobe under real mpirun (worker_test.py).
add_test(NAME bus_fuzz_integration
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/bus_fuzz_test.py
          $<TARGET_FILE:podsched> $<TARGET_FILE:bench_bus>)
set_tests_properties(bus_fuzz_integration PROPERTIES LABELS integration TIMEOUT 120)
