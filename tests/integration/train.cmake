# podtrain under real mpirun: bit-identical resume (exact, batch norm, float), torn checkpoints
# under random SIGKILL, stale epochs, exit codes and progress datagrams.
foreach(t determinism torn stale usage data)
  add_test(NAME train_integration_${t}
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/train_test.py $<TARGET_FILE:podtrain> ${t})
  set_tests_properties(train_integration_${t} PROPERTIES LABELS integration TIMEOUT 240)
endforeach()
