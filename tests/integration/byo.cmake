# Users' own programs end to end (byo_test.py): PyTorch DDP (gloo) and mpi4py jobs, the launch
# contract under both launchers, POD_PREEMPT_FILE, whole log lines. Real podsched, podworkers,
# mpirun and `podworker launch` on a 2x4-host pod.
if(TARGET podworker)
  foreach(t torch_ddp mpi4py contract_exec contract_mpi preempt_file whole_lines)
    add_test(NAME byo_integration_${t}
      COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/byo_test.py
              $<TARGET_FILE:podsched> $<TARGET_FILE:podctl> $<TARGET_FILE:podworker> ${t})
    set_tests_properties(byo_integration_${t} PROPERTIES LABELS integration TIMEOUT 400
                         RESOURCE_LOCK podworker_cluster)
  endforeach()
endif()
