# The worker bus end to end: a real podsched on ephemeral ports, bad messages from a test client
# (bench_bus fuzz), and real podworkers running podprobe under real mpirun (worker_test.py).
add_test(NAME bus_fuzz_integration
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/bus_fuzz_test.py
          $<TARGET_FILE:podsched> $<TARGET_FILE:bench_bus>)
set_tests_properties(bus_fuzz_integration PROPERTIES LABELS integration TIMEOUT 120)
# The audit's H2: one agent's Log flood beside seven quiet agents (bench_bus flood).
add_test(NAME bus_flood_integration
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/bus_flood_test.py
          $<TARGET_FILE:podsched> $<TARGET_FILE:bench_bus>)
set_tests_properties(bus_flood_integration PROPERTIES LABELS integration TIMEOUT 120)

# Real podworkers (one per host of a 2x4 pod) running podprobe under mpirun.
if(TARGET podworker AND TARGET podprobe)
  foreach(t success preempt grace on_demand agent_loss agent_stop restart curve max_runtime
          floods)
    add_test(NAME worker_integration_${t}
      COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/worker_test.py
              $<TARGET_FILE:podsched> $<TARGET_FILE:podctl> $<TARGET_FILE:podworker>
              $<TARGET_FILE:podprobe> ${t})
    set_tests_properties(worker_integration_${t} PROPERTIES LABELS integration TIMEOUT 300
                         RESOURCE_LOCK podworker_cluster)
  endforeach()
  # A fleet (issue 28): two v2 pods, two devices and a v3 pod, an agent each naming its pod's own
  # hosts; devices first, an on-demand v2-32 preempting across pods (fleet_test.py).
  add_test(NAME fleet_integration
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/fleet_test.py
            $<TARGET_FILE:podsched> $<TARGET_FILE:podctl> $<TARGET_FILE:podworker>
            $<TARGET_FILE:podprobe>)
  set_tests_properties(fleet_integration PROPERTIES LABELS integration TIMEOUT 300
                       RESOURCE_LOCK podworker_cluster)
  # Multislice jobs (issue 28 stage 2): podtrain on 2 slices across two pods, one MPI world,
  # bit-identical to one process; exec ranks told their slice; a slice's agent killed mid-run.
  if(TARGET podtrain)
    add_test(NAME multislice_integration
      COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/multislice_test.py
              $<TARGET_FILE:podsched> $<TARGET_FILE:podctl> $<TARGET_FILE:podworker>
              $<TARGET_FILE:podtrain>)
    set_tests_properties(multislice_integration PROPERTIES LABELS integration TIMEOUT 300
                         RESOURCE_LOCK podworker_cluster)
  endif()
  # Job arrays (throttle, POD_ARRAY_*), dependencies and cancel of a whole array (sweeps_test.py).
  add_test(NAME sweeps_integration
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/sweeps_test.py
            $<TARGET_FILE:podsched> $<TARGET_FILE:podctl> $<TARGET_FILE:podworker>)
  set_tests_properties(sweeps_integration PROPERTIES LABELS integration TIMEOUT 300
                       RESOURCE_LOCK podworker_cluster)
endif()
