# Device-wide reduce/scan benchmark (included from bench/CMakeLists.txt):
#   device_bench_cpu                 kbd on the CPU machine vs a plain loop
#   device_bench_sm90a / _sm100a     kbd vs CUB DeviceReduce/DeviceScan on a GPU (exit 77 without one)
kbd_add_program(device_bench HOST ${CMAKE_CURRENT_LIST_DIR}/device_bench.c
                KERNELS ${CMAKE_CURRENT_LIST_DIR}/device_kernels.cu)
foreach(t IN LISTS KBD_PROGRAMS_device_bench)
  if(NOT t STREQUAL "device_bench_cpu")
    # CUB is C++ (17 at least) and only exists for the GPU programs.
    target_sources(${t} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/device_cub.cu)
    set_target_properties(${t} PROPERTIES CUDA_STANDARD 17)
    set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/device_cub.cu TARGET_DIRECTORY ${t}
                                PROPERTIES LANGUAGE CUDA)
  endif()
endforeach()
add_test(NAME bench_device_cpu_smoke COMMAND device_bench_cpu --smoke)
set_tests_properties(bench_device_cpu_smoke PROPERTIES LABELS bench TIMEOUT 120)
