# podsched + podctl end to end: a real daemon on an ephemeral port in a temp dir, driven through
# the real podctl binary and raw HTTP (curl), including kill -9 and restart.
add_test(NAME daemon_integration
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/daemon_test.sh
          $<TARGET_FILE:podsched> $<TARGET_FILE:podctl>)
set_tests_properties(daemon_integration PROPERTIES LABELS integration TIMEOUT 180)
