# bench_scheduler: scheduling pass latency (1k / 10k queued on a v3 pod), placement across a
# fleet, podsim throughput, and FIFO against fair share behind large gangs.
add_executable(bench_scheduler ${CMAKE_CURRENT_LIST_DIR}/bench_scheduler.cc)
target_link_libraries(bench_scheduler PRIVATE podsched_core podsched_sim podsched_fleet_yaml
                      CLI11::CLI11)

# The Philly trace lives outside the repository (../shared/data from the main checkout).
find_file(PODSCHED_PHILLY_TRACE philly-2017-09-10.csv
  PATHS ${CMAKE_SOURCE_DIR}/../shared/data ${CMAKE_SOURCE_DIR}/../../shared/data /work/shared/data
  NO_DEFAULT_PATH)

add_test(NAME bench_scheduler_smoke
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bench_scheduler_smoke.sh $<TARGET_FILE:bench_scheduler>
          "$<$<BOOL:${PODSCHED_PHILLY_TRACE}>:${PODSCHED_PHILLY_TRACE}>"
          ${CMAKE_SOURCE_DIR}/deploy/fleets/grant.yaml)
set_tests_properties(bench_scheduler_smoke PROPERTIES LABELS bench-smoke TIMEOUT 120)
