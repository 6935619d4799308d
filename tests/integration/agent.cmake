# podworker against a scheduler played by the test (a ZeroMQ ROUTER): 2 real agents, real mpirun,
# podprobe on 4 simulated hosts (docs/podworker.md). End-to-end tests with podsched are elsewhere.
add_executable(agent_integration_test ${CMAKE_CURRENT_LIST_DIR}/agent_test.cc)
target_link_libraries(agent_integration_test PRIVATE podsched_common podsched_proto PkgConfig::ZMQ cppzmq
                                                     GTest::gtest_main)
target_compile_definitions(agent_integration_test PRIVATE
  PODWORKER="$<TARGET_FILE:podworker>" PODPROBE="$<TARGET_FILE:podprobe>")
add_dependencies(agent_integration_test podworker podprobe)
gtest_discover_tests(agent_integration_test TEST_PREFIX "agent_integration."
                     PROPERTIES LABELS integration TIMEOUT 180 RUN_SERIAL TRUE)
