# Tests whose jobs run as their users' Unix accounts: real podsched, root podworkers, real
# accounts in a private mount namespace (testaccounts.py; the machine's account database is not
# touched). Each script takes PODSCHED PODCTL PODWORKER and exits 77 (skipped) when not root.
#   accounts_integration: jobs run as their users under mpirun and `podworker launch`;
#     checkpoints stay in each user's prefix (accounts_test.py)
#   shared_site_integration: a one-machine shared site on the default layout, users added with
#     podctl; each user's job checkpoints and resumes in its own prefix of the default file://
#     store inside podsched's data dir, neither reaches the other's (shared_site_test.py)
if(TARGET podworker)
  foreach(test accounts_integration:accounts_test.py shared_site_integration:shared_site_test.py)
    string(REPLACE ":" ";" parts ${test})
    list(GET parts 0 name)
    list(GET parts 1 script)
    add_test(NAME ${name}
      COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/${script}
              $<TARGET_FILE:podsched> $<TARGET_FILE:podctl> $<TARGET_FILE:podworker>)
    set_tests_properties(${name} PROPERTIES LABELS integration TIMEOUT 300
                         SKIP_RETURN_CODE 77 RESOURCE_LOCK podworker_cluster)
  endforeach()
endif()
