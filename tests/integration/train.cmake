# podtrain under real mpirun: bit-identical resume (exact, batch norm, float), torn checkpoints
# under random SIGKILL, stale epochs, exit codes and progress datagrams.
foreach(t determinism torn stale usage data)
  add_test(NAME train_integration_${t}
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/train_test.py $<TARGET_FILE:podtrain> ${t})
  set_tests_properties(train_integration_${t} PROPERTIES LABELS integration TIMEOUT 240)
endforeach()

# The same resume check with checkpoints on a real S3 server (the objects_s3 fixture of
# tests/integration/objects.cmake starts it).
add_test(NAME train_integration_s3
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/train_test.py $<TARGET_FILE:podtrain> s3)
set_tests_properties(train_integration_s3 PROPERTIES
  LABELS integration TIMEOUT 240 SKIP_RETURN_CODE 77 FIXTURES_REQUIRED objects_s3
  ENVIRONMENT "PODSCHED_TEST_S3_DIR=${CMAKE_BINARY_DIR}/objects-s3-server")
