# bench_placement: placement latency and packing quality of the pod/ policies.
add_executable(bench_placement ${CMAKE_CURRENT_LIST_DIR}/bench_placement.cc)
target_link_libraries(bench_placement PRIVATE podsched_pod)

# A quick run that checks the benchmark works and prints its headline figures.
add_test(NAME bench_placement_smoke
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bench_placement_smoke.sh $<TARGET_FILE:bench_placement>)
set_tests_properties(bench_placement_smoke PROPERTIES LABELS bench-smoke TIMEOUT 120)
