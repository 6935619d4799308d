# bench_daemon: durable submissions/s and submit/list latency of podsched over HTTP at 1, 8 and 64
# keep-alive clients, with a given number of jobs stored (docs/bench-daemon.md).
add_executable(bench_daemon ${CMAKE_CURRENT_LIST_DIR}/bench_daemon.cc)
target_link_libraries(bench_daemon PRIVATE CURL::libcurl Threads::Threads CLI11::CLI11)
add_dependencies(bench_daemon podsched)

add_test(NAME bench_daemon_smoke
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bench_daemon_smoke.sh $<TARGET_FILE:bench_daemon>
          $<TARGET_FILE:podsched>)
set_tests_properties(bench_daemon_smoke PROPERTIES LABELS bench-smoke TIMEOUT 180)
