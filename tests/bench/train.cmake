# podtrain benchmarks: async checkpoint overhead and exact vs float all-reduce (train_bench.py).
add_executable(bench_train_allreduce ${CMAKE_CURRENT_LIST_DIR}/bench_train_allreduce.cc)
target_link_libraries(bench_train_allreduce PRIVATE podsched_ring_reduce MPI::MPI_CXX)

add_test(NAME bench_smoke_train
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/train_bench.py
                 $<TARGET_FILE:podtrain> $<TARGET_FILE:bench_train_allreduce> --smoke)
set_tests_properties(bench_smoke_train PROPERTIES LABELS bench-smoke TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "FIGURE train_async_ckpt_overhead.*FIGURE allreduce_exact_over_float_1k_w2")
