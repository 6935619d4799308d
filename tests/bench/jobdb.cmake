# bench_jobdb: durable submissions per second into SQLite, with and without group commit.
add_executable(bench_jobdb ${CMAKE_CURRENT_LIST_DIR}/bench_jobdb.cc)
target_link_libraries(bench_jobdb PRIVATE podsched_jobdb podsched_jobdb_testing CLI11::CLI11)

# A quick run that checks the benchmark works and prints its headline figures.
add_test(NAME bench_jobdb_smoke
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bench_jobdb_smoke.sh $<TARGET_FILE:bench_jobdb>)
set_tests_properties(bench_jobdb_smoke PROPERTIES LABELS bench-smoke TIMEOUT 120)
