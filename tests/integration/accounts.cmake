# Jobs run as their users' Unix accounts; checkpoints stay in each user's prefix
# (accounts_test.py). Real podsched, two root podworkers, mpirun and `podworker launch`, in a
# private mount namespace with test accounts (the machine's account database is not touched).
if(TARGET podworker)
  add_test(NAME accounts_integration
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/accounts_test.py
            $<TARGET_FILE:podsched> $<TARGET_FILE:podctl> $<TARGET_FILE:podworker>)
  set_tests_properties(accounts_integration PROPERTIES LABELS integration TIMEOUT 300
                       SKIP_RETURN_CODE 77 RESOURCE_LOCK podworker_cluster)
endif()
