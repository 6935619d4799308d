# podsched + podctl end to end: a real daemon on an ephemeral port in a temp dir, driven through
# the real podctl binary and raw HTTP (curl), including kill -9 and restart.
add_test(NAME daemon_integration
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/daemon_test.sh
          $<TARGET_FILE:podsched> $<TARGET_FILE:podctl>)
set_tests_properties(daemon_integration PROPERTIES LABELS integration TIMEOUT 180)
# Audit M11 (quarantine_test.py): an unreadable ended job, or a pod changed under ended jobs,
# does not keep a real podsched from starting; an unreadable active job does, naming it.
add_test(NAME jobdb_quarantine_integration
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/quarantine_test.py $<TARGET_FILE:podsched>)
set_tests_properties(jobdb_quarantine_integration PROPERTIES LABELS integration TIMEOUT 90)
# Audit M4 (http_limits_test.py): idle sockets from one address, then from many, never lock out
# a client with a request; an idle socket is closed after the 10 s header timeout.
add_test(NAME http_limits_integration
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/http_limits_test.py $<TARGET_FILE:podsched>)
set_tests_properties(http_limits_integration PROPERTIES LABELS integration TIMEOUT 90)

# Audit H1 (retention_test.py): a per-user creation budget refuses a third 10,000-task array,
# ended jobs leave memory after the retention and read back from the store, also after kill -9.
add_test(NAME retention_integration
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/retention_test.py $<TARGET_FILE:podsched>
          $<TARGET_FILE:podctl>)
set_tests_properties(retention_integration PROPERTIES LABELS integration TIMEOUT 120)
