# The dashboard in a real browser: the real podsched (ephemeral port, temp data dir) and Debian's
# Chromium driven by playwright-core (web/node_modules, installed by `npm ci` in deploy/deps.sh).
# Screenshots of every page at 1280x800 and 390x844 land in build/web-screenshots/.
# With podworker built (the worker bus), a second phase runs a real podtrain job under an agent.
find_program(PODSCHED_NODE node)
if(PODSCHED_NODE)
  set(web_live_args "")
  if(TARGET podworker AND TARGET podtrain)
    set(web_live_args --podworker $<TARGET_FILE:podworker> --podtrain $<TARGET_FILE:podtrain>)
  endif()
  add_test(NAME web_browser
    COMMAND ${PODSCHED_NODE} ${CMAKE_SOURCE_DIR}/web/tests/dashboard_test.mjs
            --podsched $<TARGET_FILE:podsched> --out ${CMAKE_BINARY_DIR}/web-screenshots
            --chromium /usr/bin/chromium ${web_live_args})
  set_tests_properties(web_browser PROPERTIES LABELS browser TIMEOUT 300
                       RESOURCE_LOCK podworker_cluster)
else()
  message(STATUS "node not found: the browser test (web_browser) is not registered; run deploy/deps.sh")
endif()
