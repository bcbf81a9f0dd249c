# bench/gpt2/gpt2_bench.cmake - the GPT-2 GPU benchmark (issue 28 item 6; docs/gpt2.md "Benchmarks"), included by
# bench/CMakeLists.txt. One kbd_add_program over the example's sources: gpt2_bench_sm90a / gpt2_bench_sm100a (prefill
# and decode tokens/s, time per op, greedy tokens for the PyTorch check; run by tools/gpu-check.sh's gpt2 stage beside
# tools/gpt2_torch_ref.py) and gpt2_bench_cpu, the same program on the CPU machine (its main only, the model from
# examples' gpt2_model_cpu, so the kernels are not compiled a second time in CPU mode; the GPU programs link
# gpt2_kernels_sm<arch>, the kernel objects gpt2_sm<arch> links, for the same reason).
#   bench_gpt2_gpu_bench_cpu   gpt2_bench_cpu on a tiny model end to end, its JSON checked field by field, its bad
#                              arguments; the torch script's prompt formula, safetensors reader and JSON fields
#                              against the bench's; the comparison table (test_gpt2_bench.py). Label cpu.
if(NOT TARGET gpt2_model_cpu)
  return()
endif()
set(_gx ${PROJECT_SOURCE_DIR}/examples)
kbd_add_program(gpt2_bench
  HOST ${CMAKE_CURRENT_LIST_DIR}/gpt2_gpu_bench.c ${CMAKE_CURRENT_LIST_DIR}/gpt2_random_model.c ${_gx}/gpt2/gpt2.c
       ${_gx}/gemm/gemm_run.c ${_gx}/attention/attention_run.c
  KERNELS ${_gx}/gpt2/gpt2_kernels.cu ${_gx}/gemm/gemm.cu ${_gx}/attention/attention.cu ${_gx}/attention/attention_f16.cu
  LIBS gpt2_host m)
set_property(TARGET gpt2_bench_cpu PROPERTY SOURCES ${CMAKE_CURRENT_LIST_DIR}/gpt2_gpu_bench.c
                                                    ${CMAKE_CURRENT_LIST_DIR}/gpt2_random_model.c)
target_link_libraries(gpt2_bench_cpu PRIVATE gpt2_model_cpu)
foreach(t IN LISTS KBD_PROGRAMS_gpt2_bench)
  target_include_directories(${t} PRIVATE ${_gx}/gpt2 ${_gx}/gemm ${_gx}/attention)
  if(t MATCHES "_sm([0-9]+)a$")
    # the program skips (77) on a device of another arch instead of failing its first launch
    target_compile_definitions(${t} PRIVATE BENCH_GPU_ARCH=${CMAKE_MATCH_1})
    # the kernels: gpt2_sm<arch>'s objects (examples/CMakeLists.txt), not a second nvcc compile of each
    if(TARGET gpt2_kernels_sm${CMAKE_MATCH_1}a)
      set_property(TARGET ${t} PROPERTY SOURCES ${CMAKE_CURRENT_LIST_DIR}/gpt2_gpu_bench.c
                                                ${CMAKE_CURRENT_LIST_DIR}/gpt2_random_model.c ${_gx}/gpt2/gpt2.c
                                                ${_gx}/gemm/gemm_run.c ${_gx}/attention/attention_run.c)
      target_link_libraries(${t} PRIVATE gpt2_kernels_sm${CMAKE_MATCH_1}a)
    endif()
  endif()
endforeach()

find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME bench_gpt2_gpu_bench_cpu
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/test_gpt2_bench.py $<TARGET_FILE:gpt2_bench_cpu>
                   ${PROJECT_SOURCE_DIR}/tools ${CMAKE_CURRENT_BINARY_DIR}/gpt2_bench_test)
  set_tests_properties(bench_gpt2_gpu_bench_cpu PROPERTIES LABELS cpu TIMEOUT 300)
endif()
