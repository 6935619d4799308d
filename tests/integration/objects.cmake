# store/objects integration: the conformance suite on file:// and on a real S3 server (OpenStack
# Swift + s3api on 127.0.0.1) that a ctest fixture starts and stops with deploy/s3-server.sh.
set(objects_s3_dir ${CMAKE_BINARY_DIR}/objects-s3-server)

# Each run starts from empty data: stop a leftover server of an interrupted run, then wipe.
set(objects_s3_script ${CMAKE_SOURCE_DIR}/deploy/s3-server.sh)
add_test(NAME objects_s3_server_start
         COMMAND sh -c "'${objects_s3_script}' stop '${objects_s3_dir}' >/dev/null 2>&1; rm -rf '${objects_s3_dir}' && exec '${objects_s3_script}' start '${objects_s3_dir}'")
add_test(NAME objects_s3_server_stop
         COMMAND ${objects_s3_script} stop ${objects_s3_dir})
set_tests_properties(objects_s3_server_start PROPERTIES
  FIXTURES_SETUP objects_s3 LABELS integration TIMEOUT 180 RESOURCE_LOCK objects_s3_server)
set_tests_properties(objects_s3_server_stop PROPERTIES
  FIXTURES_CLEANUP objects_s3 LABELS integration TIMEOUT 30 RESOURCE_LOCK objects_s3_server)

add_executable(objects_conformance_test ${CMAKE_CURRENT_LIST_DIR}/objects_conformance_test.cc)
target_link_libraries(objects_conformance_test PRIVATE podsched_objects GTest::gtest_main)
gtest_discover_tests(objects_conformance_test
  TEST_PREFIX "objects."
  DISCOVERY_TIMEOUT 30
  PROPERTIES
    LABELS integration
    TIMEOUT 120
    FIXTURES_REQUIRED objects_s3
    ENVIRONMENT "PODSCHED_TEST_S3_DIR=${objects_s3_dir};PODSCHED_TEST_TMPDIR=${CMAKE_BINARY_DIR}/objects-tmp")
