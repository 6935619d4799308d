# Recovery tests of store/jobdb: a random scheduler run against SQLite rebuilt after reopening,
# and 100 SIGKILLs of a process in the middle of group commits.
add_executable(jobdb_crash_writer ${CMAKE_CURRENT_LIST_DIR}/jobdb_crash_writer.cc)
target_link_libraries(jobdb_crash_writer PRIVATE podsched_jobdb podsched_jobdb_testing)

add_executable(jobdb_recovery_test ${CMAKE_CURRENT_LIST_DIR}/jobdb_recovery_test.cc
                                   ${CMAKE_CURRENT_LIST_DIR}/jobdb_crash_test.cc)
target_link_libraries(jobdb_recovery_test PRIVATE podsched_jobdb podsched_jobdb_testing
                                                  GTest::gtest_main)
target_compile_definitions(jobdb_recovery_test
                           PRIVATE JOBDB_CRASH_WRITER="$<TARGET_FILE:jobdb_crash_writer>")
add_dependencies(jobdb_recovery_test jobdb_crash_writer)
gtest_discover_tests(jobdb_recovery_test PROPERTIES LABELS integration TIMEOUT 120)
