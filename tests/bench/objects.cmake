# bench_objects: checkpoint save/restore through store/objects vs dd (file://) and the aws CLI
# (s3://). Smoke runs with 8 MB: file:// with dd, and s3:// against the integration fixture's
# server (deploy/s3-server.sh, see tests/integration/objects.cmake) without the aws CLI runs,
# which take 5-10 s each on a loaded 2-core machine (interop is covered by the integration test).
add_executable(bench_objects ${CMAKE_CURRENT_LIST_DIR}/bench_objects.cc)
target_link_libraries(bench_objects PRIVATE podsched_objects podsched_formats podsched_train
                      CLI11::CLI11)

add_test(NAME objects_bench_smoke_file
         COMMAND bench_objects --mb 8 --shards 2 --dir ${CMAKE_BINARY_DIR}/objects-bench)
set_tests_properties(objects_bench_smoke_file PROPERTIES
  LABELS bench-smoke TIMEOUT 60 FAIL_REGULAR_EXPRESSION "bench_objects: error")

add_test(NAME objects_bench_smoke_s3
         COMMAND sh -c "eval \"$(${CMAKE_SOURCE_DIR}/deploy/s3-server.sh env ${CMAKE_BINARY_DIR}/objects-s3-server)\" && exec $<TARGET_FILE:bench_objects> --mb 8 --shards 2 --no-dd --no-awscli --s3 --dir ${CMAKE_BINARY_DIR}/objects-bench")
set_tests_properties(objects_bench_smoke_s3 PROPERTIES
  LABELS bench-smoke TIMEOUT 90 FIXTURES_REQUIRED objects_s3
  FAIL_REGULAR_EXPRESSION "bench_objects: error")
