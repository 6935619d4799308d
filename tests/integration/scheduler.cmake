# podsim end to end: generate traces, replay them under two policies, check the JSON report.
set(_podsim_check ${CMAKE_CURRENT_LIST_DIR}/podsim_check.cmake.script)
set(_podsim_dir ${CMAKE_BINARY_DIR}/tests/podsim)
file(MAKE_DIRECTORY ${_podsim_dir})

foreach(mix grant slices bursts)
  add_test(NAME podsim_gen_${mix}
    COMMAND podsim gen --jobs 1500 --seed 7 --mix ${mix} --out ${_podsim_dir}/${mix}.csv)
  set_tests_properties(podsim_gen_${mix} PROPERTIES LABELS integration
                       FIXTURES_SETUP podsim_trace_${mix})
  add_test(NAME podsim_replay_${mix}
    COMMAND ${CMAKE_COMMAND} -DPODSIM=$<TARGET_FILE:podsim> -DTRACE=${_podsim_dir}/${mix}.csv
            -DFORMAT=podsim -DPOLICIES=fifo-first-fit,fair-best-fit -DEXPECT_JOBS=1500
            "-DEXTRA=--reclaim-rate 0.02 --host-failures 0.02" -P ${_podsim_check})
  set_tests_properties(podsim_replay_${mix} PROPERTIES LABELS integration TIMEOUT 120
                       FIXTURES_REQUIRED podsim_trace_${mix})
endforeach()

# The first 2,000 jobs of the Philly trace (outside the repository: ../shared/data).
find_file(PODSCHED_PHILLY_TRACE philly-2017-09-10.csv
  PATHS ${CMAKE_SOURCE_DIR}/../shared/data ${CMAKE_SOURCE_DIR}/../../shared/data /work/shared/data
  NO_DEFAULT_PATH)
if(PODSCHED_PHILLY_TRACE)
  add_test(NAME podsim_replay_philly_2000
    COMMAND ${CMAKE_COMMAND} -DPODSIM=$<TARGET_FILE:podsim> -DTRACE=${PODSCHED_PHILLY_TRACE}
            -DFORMAT=philly -DPOLICIES=fifo-first-fit,fair-best-fit -DEXPECT_JOBS=2000
            "-DEXTRA=--max-rows 2000" -P ${_podsim_check})
  set_tests_properties(podsim_replay_philly_2000 PROPERTIES LABELS integration TIMEOUT 120)
  # The same on the grant's fleet (a v2 pod, a v3 pod, 105 v2-8 devices) through --fleet.
  add_test(NAME podsim_replay_philly_2000_grant_fleet
    COMMAND ${CMAKE_COMMAND} -DPODSIM=$<TARGET_FILE:podsim> -DTRACE=${PODSCHED_PHILLY_TRACE}
            -DFORMAT=philly -DPOLICIES=fifo-first-fit,fair-best-fit -DEXPECT_JOBS=2000
            "-DEXTRA=--max-rows 2000 --fleet ${CMAKE_SOURCE_DIR}/deploy/fleets/grant.yaml --reclaim-rate 0.05 --host-failures 0.05"
            -P ${_podsim_check})
  set_tests_properties(podsim_replay_philly_2000_grant_fleet PROPERTIES LABELS integration
                       TIMEOUT 120)
endif()

# A fleet file podsim cannot use is refused (two pods named alike).
add_test(NAME podsim_replay_rejects_bad_fleet
  COMMAND podsim replay --trace ${CMAKE_CURRENT_LIST_DIR}/podsim_check.cmake.script
          --fleet ${CMAKE_CURRENT_LIST_DIR}/fleet_twice.yaml)
set_tests_properties(podsim_replay_rejects_bad_fleet PROPERTIES LABELS integration
                     PASS_REGULAR_EXPRESSION "two pods of the fleet are named 'a'")

# Bad input gives a clear error and a non-zero exit.
add_test(NAME podsim_replay_rejects_bad_format
  COMMAND podsim replay --trace ${CMAKE_CURRENT_LIST_DIR}/podsim_check.cmake.script --format nope)
set_tests_properties(podsim_replay_rejects_bad_format PROPERTIES LABELS integration
                     WILL_FAIL TRUE)

# Any row order of a trace gives the same replay (Philly format and podsim CSV with sweeps).
add_test(NAME podsim_row_order
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/podsim_order_test.py $<TARGET_FILE:podsim>)
set_tests_properties(podsim_row_order PROPERTIES LABELS integration TIMEOUT 300)
