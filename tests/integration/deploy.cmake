# deploy/up.sh end to end: --detach (podsched + 64 podworkers, one per host, demo workload) on an
# alternate port and var dir, then --down, which must leave no process behind.
add_test(NAME deploy_up_smoke
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/deploy_up_test.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(deploy_up_smoke PROPERTIES LABELS integration TIMEOUT 300 RUN_SERIAL TRUE)
# The same with --fleet: a v2 and a v3 pod and 10 devices (42 hosts, 12 agents), issue 28.
add_test(NAME deploy_up_fleet_smoke
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/deploy_up_test.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
          --fleet)
set_tests_properties(deploy_up_fleet_smoke PROPERTIES LABELS integration TIMEOUT 300 RUN_SERIAL TRUE)

# The multi-machine example configs parse (podsched.yaml with placeholders filled in, every
# podworker-*.env command line).
add_test(NAME deploy_examples
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/deploy_examples_test.py ${CMAKE_SOURCE_DIR}
          $<TARGET_FILE:podsched> $<TARGET_FILE:podworker>)
set_tests_properties(deploy_examples PROPERTIES LABELS integration TIMEOUT 60)
