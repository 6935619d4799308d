# deploy/up.sh end to end: --detach (podsched + 64 podworkers, one per host, demo workload) on an
# alternate port and var dir, then --down, which must leave no process behind.
add_test(NAME deploy_up_smoke
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/deploy_up_test.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(deploy_up_smoke PROPERTIES LABELS integration TIMEOUT 300 RUN_SERIAL TRUE)
