# The token life cycle end to end (tokens_test.py): podctl admin user/token, podctl login, and a
# revocation ending bearer requests, a dashboard session and an event stream. A real podsched and
# podctl, no podworker.
add_test(NAME tokens_integration
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/tokens_test.py
          $<TARGET_FILE:podsched> $<TARGET_FILE:podctl>)
set_tests_properties(tokens_integration PROPERTIES LABELS integration TIMEOUT 60)
