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

# A one-machine shared site on the default layout (shared_site_test.py): users added with
# podctl, each user's job checkpoints and resumes in its own prefix of the default file:// store
# inside podsched's data dir; neither reaches the other's.
if(TARGET podworker)
  add_test(NAME shared_site_integration
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/shared_site_test.py
            $<TARGET_FILE:podsched> $<TARGET_FILE:podctl> $<TARGET_FILE:podworker>)
  set_tests_properties(shared_site_integration PROPERTIES LABELS integration TIMEOUT 300
                       SKIP_RETURN_CODE 77 RESOURCE_LOCK podworker_cluster)
endif()
