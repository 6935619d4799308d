# bench_spawn: the start cost of podworker's helpers (podworker-helper, podworker-rank) and of
# podctl against the agent's own binary and /bin/true, and the agent's own cost of starting a
# child (SpawnChild against fork + exec; issue 29, stage 1).
if(TARGET podworker AND TARGET podctl)
  add_executable(bench_spawn ${CMAKE_CURRENT_LIST_DIR}/bench_spawn.cc
                             ${CMAKE_SOURCE_DIR}/worker/agent/child.cc)
  target_link_libraries(bench_spawn PRIVATE podsched_agent_logic CLI11::CLI11 Threads::Threads)

  add_test(NAME bench_spawn_smoke
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bench_spawn_smoke.sh $<TARGET_FILE:bench_spawn>
            $<TARGET_FILE:podworker> $<TARGET_FILE:podworker-helper>
            $<TARGET_FILE:podworker-rank> $<TARGET_FILE:podctl>)
  set_tests_properties(bench_spawn_smoke PROPERTIES LABELS bench-smoke TIMEOUT 120)
endif()
