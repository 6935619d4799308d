# podsched side by side with Slurm (slurm_bench.py, docs/benchmarks.md): trivial jobs end to end
# and CLI submissions. The smoke run (20 jobs) installs slurm-wlm and munge if missing.
if(TARGET podworker)
  add_test(NAME bench_slurm_smoke
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/slurm_bench.py --smoke
            --podsched $<TARGET_FILE:podsched> --podctl $<TARGET_FILE:podctl>
            --podworker $<TARGET_FILE:podworker>)
  set_tests_properties(bench_slurm_smoke PROPERTIES LABELS bench-smoke TIMEOUT 900
                       SKIP_RETURN_CODE 77 RESOURCE_LOCK podworker_cluster)
endif()
