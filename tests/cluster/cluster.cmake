# Multi-node cluster tests: hosts are network namespaces on a private bridge (root only; skipped
# with a message otherwise). podsched + S3 in one namespace, four podworkers in four others,
# podtrain across them, faults injected (preemption, kill -9, link cut, scheduler kill); and a
# fleet of two pods, a pair of namespaces each, with a multislice job across them.
# RUN_SERIAL: each scenario runs 4 MPI ranks across 5 namespaces on a 2-core machine.
foreach(scenario mpi across preempt agent-kill link-cut sched-kill torch multislice)
  add_test(NAME cluster_${scenario}
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/cluster_test.py ${CMAKE_BINARY_DIR} ${scenario})
  set_tests_properties(cluster_${scenario} PROPERTIES
    LABELS cluster TIMEOUT 900 RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
endforeach()

# The namespace harness itself: create, cross-namespace TCP, cut/restore, cleanup.
add_test(NAME cluster_netns_selfcheck
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/netns.py 3)
set_tests_properties(cluster_netns_selfcheck PROPERTIES
  LABELS cluster TIMEOUT 60 RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
