# KbdKernel.cmake - build one kernel source into a CPU-emulation program and GPU programs.
#
#   kbd_add_program(<name> HOST <host.c...> KERNELS <kernel.cu...> [LIBS <libs...>])
#
# Creates
#   <name>_cpu      host sources + kernel sources compiled as C11 with -DKBD_CPU (always)
#   <name>_sm90a    kernels by nvcc for sm_90a, host sources by the host C compiler (when nvcc is found)
#   <name>_sm100a   likewise for sm_100a
# and sets KBD_PROGRAMS_<name> to the list of targets created. Kernel sources are written in the
# C/CUDA common subset, so the CPU build compiles the very same file as C through a one-line wrapper.
include_guard(GLOBAL)
include(CheckLanguage)

set(KBD_GPU_ARCHS "90a;100a" CACHE STRING "GPU targets built by kbd_add_program (sm_<arch>)")
set(KBD_WARNINGS_C -Wall -Wextra -Werror)
# The C++ dialect nvcc compiles kernel sources in. Kernel sources are the C/CUDA common subset, so C++14 suffices,
# and it is cheaper to build: in C++17 libstdc++'s <cmath>, which nvcc's own headers include, declares the special
# math functions (std::cyl_bessel_j, ...), and both nvcc passes parse and instantiate them for every translation
# unit, about 0.3 s on a 2-core machine (docs/benchmarks.md, "Compile time"). Set 17 (or more) here, or the
# CUDA_STANDARD property of one program's targets, for kernels that use newer C++ (CUB, Thrust: bench/device.cmake).
set(KBD_CUDA_STANDARD 14 CACHE STRING "C++ standard nvcc compiles kbd_add_program kernel sources in")

if(NOT DEFINED KBD_HAVE_CUDA)
  set(KBD_HAVE_CUDA OFF)
  if(NOT DEFINED KBD_ENABLE_CUDA OR KBD_ENABLE_CUDA)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      # Architectures are passed per target as -gencode (the `a` targets need compute_XXa, and a plain
      # -arch=sm_90a would also run a generic compute_90 pass that rejects wgmma/tcgen05).
      if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
        set(CMAKE_CUDA_ARCHITECTURES OFF)
      endif()
      enable_language(CUDA)
      find_package(CUDAToolkit REQUIRED)
      set(KBD_HAVE_CUDA ON)
    endif()
  endif()
endif()

# ptxas compiles the kernels of one translation unit in parallel threads (-Xptxas -split-compile=N; 0: one per core).
# The SASS is byte for byte the one of a serial compile (every example, both archs: docs/benchmarks.md, "Compile
# time"), so only the wall time changes: a file with several kernels (the attention example's seven) builds about
# 1 s faster on 2 cores. nvcc's own -split-compile (cicc's optimizer) is not used: it changes the sm_100a code.
set(KBD_PTXAS_THREADS 0 CACHE STRING
    "ptxas threads per translation unit for kbd_add_program GPU targets (-Xptxas -split-compile; 0: one per core, 1: serial)")

function(kbd_gpu_flags out arch)
  set(flags -gencode arch=compute_${arch},code=sm_${arch} -Werror all-warnings "SHELL:-Xcompiler -Wall"
      "SHELL:-Xcompiler -Wextra" "SHELL:-Xcompiler -Werror")
  if(NOT KBD_PTXAS_THREADS STREQUAL "1")
    list(APPEND flags "SHELL:-Xptxas -split-compile=${KBD_PTXAS_THREADS}")
  endif()
  set(${out} ${flags} PARENT_SCOPE)
endfunction()

function(kbd_add_program name)
  cmake_parse_arguments(P "" "" "HOST;KERNELS;LIBS" ${ARGN})
  if(NOT P_KERNELS)
    message(FATAL_ERROR "kbd_add_program(${name}): KERNELS is required")
  endif()
  set(cpu_sources)
  foreach(k IN LISTS P_KERNELS)
    get_filename_component(kabs ${k} ABSOLUTE)
    get_filename_component(kname ${k} NAME_WE)
    set(wrap ${CMAKE_CURRENT_BINARY_DIR}/kbd_cpu_sources/${name}/${kname}.c)
    file(CONFIGURE OUTPUT ${wrap} CONTENT "/* generated: CPU-emulation build of ${k} */\n#include \"${kabs}\"\n")
    list(APPEND cpu_sources ${wrap})
  endforeach()
  add_executable(${name}_cpu ${P_HOST} ${cpu_sources})
  target_compile_definitions(${name}_cpu PRIVATE KBD_CPU)
  target_compile_options(${name}_cpu PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:${KBD_WARNINGS_C}>)
  target_link_libraries(${name}_cpu PRIVATE kbd::kbd ${P_LIBS})
  set(made ${name}_cpu)
  if(KBD_HAVE_CUDA)
    foreach(arch IN LISTS KBD_GPU_ARCHS)
      set(t ${name}_sm${arch})
      add_executable(${t} ${P_HOST} ${P_KERNELS})
      set_source_files_properties(${P_KERNELS} TARGET_DIRECTORY ${t} PROPERTIES LANGUAGE CUDA)
      kbd_gpu_flags(gflags ${arch})
      target_compile_options(${t} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${gflags}>
                                          $<$<COMPILE_LANGUAGE:C,CXX>:${KBD_WARNINGS_C}>)
      target_link_libraries(${t} PRIVATE kbd::kbd CUDA::cudart ${P_LIBS})
      set_target_properties(${t} PROPERTIES CUDA_ARCHITECTURES OFF CUDA_STANDARD ${KBD_CUDA_STANDARD}
                                            CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF)
      list(APPEND made ${t})
      kbd_register_gpu_program(${t} ${arch} ${name})
    endforeach()
  endif()
  set(KBD_PROGRAMS_${name} ${made} PARENT_SCOPE)
endfunction()

# kbd_register_gpu_program(<target> <arch> <program name>) - a GPU program of this build, for the GPU check's plan
# (tools/gpu-check.sh reads <build>/kbd-gpu-programs.txt, written by kbd_write_gpu_programs: one line per program,
# tab-separated: arch, target, program name, source directory relative to the project, executable). kbd_add_program
# registers its programs; a GPU executable made with add_executable registers itself (tests/types, tests/tma).
function(kbd_register_gpu_program target arch name)
  set_property(GLOBAL APPEND PROPERTY KBD_GPU_PROGRAM_ENTRIES "${target}|${arch}|${name}")
endfunction()

function(kbd_write_gpu_programs file)
  get_property(entries GLOBAL PROPERTY KBD_GPU_PROGRAM_ENTRIES)
  set(lines "")
  foreach(e IN LISTS entries)
    string(REPLACE "|" ";" f "${e}")
    list(GET f 0 t)
    list(GET f 1 arch)
    list(GET f 2 name)
    get_target_property(dir ${t} SOURCE_DIR)
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${dir})
    string(APPEND lines "${arch}\t${t}\t${name}\t${rel}\t$<TARGET_FILE:${t}>\n")
  endforeach()
  file(GENERATE OUTPUT ${file} CONTENT "${lines}")
endfunction()
