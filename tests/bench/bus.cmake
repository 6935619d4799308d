# bench_bus: simulated podworkers speaking the bus protocol (heartbeat load, bad messages), and
# the end-to-end bus figures with real podworkers (docs/bench-bus.md).
add_executable(bench_bus ${CMAKE_CURRENT_LIST_DIR}/bench_bus.cc)
target_link_libraries(bench_bus PRIVATE podsched_proto cppzmq PkgConfig::ZMQ CLI11::CLI11)
add_dependencies(bench_bus podsched)

set(bus_bench_workers "")
if(TARGET podworker AND TARGET podprobe)
  set(bus_bench_workers --podworker $<TARGET_FILE:podworker> --podprobe $<TARGET_FILE:podprobe>)
endif()
add_test(NAME bench_bus_smoke
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/bus_bench.py --smoke
          --podsched $<TARGET_FILE:podsched> --podctl $<TARGET_FILE:podctl>
          --bench-bus $<TARGET_FILE:bench_bus> ${bus_bench_workers})
set_tests_properties(bench_bus_smoke PROPERTIES LABELS bench-smoke TIMEOUT 300)
