# reduce.cmake - CPU-mode reduction benchmark (issue 3); include(reduce.cmake) from bench/CMakeLists.txt.
#   cmake --build build -t reduce_cpu && KBD_CPU_THREADS=1 ./build/bench/reduce_cpu [n]
# The kernel is examples/sum_reduce/sum_reduce.cu compiled as C through a one-line wrapper (as
# kbd_add_program does), so the benchmark measures exactly the example users copy.
set(kbd_reduce_wrap ${CMAKE_CURRENT_BINARY_DIR}/kbd_cpu/reduce_cpu/sum_reduce.c)
file(CONFIGURE OUTPUT ${kbd_reduce_wrap}
     CONTENT "/* generated: CPU build of examples/sum_reduce/sum_reduce.cu */\n#include \"${PROJECT_SOURCE_DIR}/examples/sum_reduce/sum_reduce.cu\"\n")
add_executable(reduce_cpu ${CMAKE_CURRENT_LIST_DIR}/reduce_cpu.c ${kbd_reduce_wrap})
target_compile_definitions(reduce_cpu PRIVATE KBD_CPU)
target_compile_options(reduce_cpu PRIVATE ${KBD_WARNINGS_C})
target_include_directories(reduce_cpu PRIVATE ${PROJECT_SOURCE_DIR}/examples/sum_reduce)
target_link_libraries(reduce_cpu PRIVATE kbd::kbd)
add_test(NAME bench_reduce_cpu_smoke COMMAND reduce_cpu --smoke)
set_tests_properties(bench_reduce_cpu_smoke PROPERTIES LABELS bench TIMEOUT 60)
