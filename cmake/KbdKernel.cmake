# KbdKernel.cmake - build one kernel source into CPU-emulation programs and GPU programs.
#
#   kbd_add_program(<name> HOST <host.c...> KERNELS <kernel.cu...> [LIBS <libs...>]
#                   [CPU_ARCHS <90|100>...] [GPU_ARCHS <arch>...])
#
# Creates
#   <name>_cpu      host sources + kernel sources compiled as C11 with -DKBD_CPU, emulating sm_100a (always;
#                   CPU_ARCHS 100 is the default)
#   <name>90_cpu    the same with -DKBD_CPU_ARCH=90, emulating sm_90a (with CPU_ARCHS 90; `CPU_ARCHS 90 100`
#                   makes both). The name follows examples/gemm's gemm90_cpu and keeps the `_cpu` suffix that
#                   tools/run-examples.sh looks for.
#   <name>_sm90a    kernels by nvcc for sm_90a, host sources by the host C compiler (when nvcc is found)
#   <name>_sm100a   likewise for sm_100a
# and sets KBD_PROGRAMS_<name> to the list of targets created (KBD_CPU_PROGRAMS_<name>: the CPU ones). Kernel
# sources are written in the C/CUDA common subset, so the CPU build compiles the very same file as C through a
# one-line wrapper (<binary dir>/kbd_cpu_sources/<name>/<kernel>.c, shared by the CPU programs).
#
# GPU programs are made for the archs of KBD_GPU_ARCHS (cache, default "90a;100a"); GPU_ARCHS restricts one program
# to the archs its kernels support (GPU_ARCHS 100a: a tcgen05-only kernel, none in a 90a-only build). Without a CUDA
# compiler, or with -DKBD_ENABLE_CUDA=OFF, only the CPU programs are made.
#
# Optimisation: with no CMAKE_BUILD_TYPE (a single-config generator configured without one, where CMake itself
# passes no -O and a CPU program would run at -O0, several times slower) the CPU programs get -O2, unless
# CMAKE_C_FLAGS already holds an -O option. It is a generator expression on the empty configuration, so it never
# adds to an explicit build type (Debug stays -O0 -g, RelWithDebInfo -O2 -g) or to a multi-config generator.
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
  if(NOT KBD_HAVE_CUDA)
    # Not an error: a project configured without a CUDA compiler builds and runs every CPU program.
    message(STATUS "kbd: no GPU programs (KBD_ENABLE_CUDA=OFF or no nvcc found): kbd_add_program makes the CPU "
                   "programs (<name>_cpu) only")
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
  cmake_parse_arguments(P "" "" "HOST;KERNELS;LIBS;CPU_ARCHS;GPU_ARCHS" ${ARGN})
  if(P_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kbd_add_program(${name}): unexpected arguments before HOST/KERNELS: ${P_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT P_KERNELS)
    message(FATAL_ERROR "kbd_add_program(${name}): KERNELS is required")
  endif()
  if("CPU_ARCHS" IN_LIST P_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "kbd_add_program(${name}): CPU_ARCHS needs 90 and/or 100")
  endif()
  if(NOT P_CPU_ARCHS)
    set(P_CPU_ARCHS 100)
  endif()
  list(REMOVE_DUPLICATES P_CPU_ARCHS)
  foreach(a IN LISTS P_CPU_ARCHS)
    if(NOT a MATCHES "^(90|100)$")
      message(FATAL_ERROR
              "kbd_add_program(${name}): CPU_ARCHS ${a}: the CPU machine emulates 90 (sm_90a) or 100 (sm_100a)")
    endif()
  endforeach()
  set(gpu_archs ${KBD_GPU_ARCHS})
  if(DEFINED P_GPU_ARCHS OR "GPU_ARCHS" IN_LIST P_KEYWORDS_MISSING_VALUES)
    set(gpu_archs)
    foreach(a IN LISTS KBD_GPU_ARCHS)
      if(a IN_LIST P_GPU_ARCHS)
        list(APPEND gpu_archs ${a})
      endif()
    endforeach()
  endif()

  set(cpu_sources)
  foreach(k IN LISTS P_KERNELS)
    get_filename_component(kabs ${k} ABSOLUTE)
    get_filename_component(kname ${k} NAME_WE)
    set(wrap ${CMAKE_CURRENT_BINARY_DIR}/kbd_cpu_sources/${name}/${kname}.c)
    file(CONFIGURE OUTPUT ${wrap} CONTENT "/* generated: CPU-emulation build of ${k} */\n#include \"${kabs}\"\n")
    list(APPEND cpu_sources ${wrap})
  endforeach()
  # -O2 only for an empty configuration and only when the user's C flags pick no level (see the top of this file).
  set(cpu_opt)
  if(NOT CMAKE_C_FLAGS MATCHES "(^| )-O")
    set(cpu_opt $<$<AND:$<CONFIG:>,$<COMPILE_LANGUAGE:C,CXX>>:-O2>)
  endif()
  set(made)
  set(cpu_made)
  foreach(a IN ITEMS 100 90) # <name>_cpu first, as before
    if(NOT a IN_LIST P_CPU_ARCHS)
      continue()
    endif()
    if(a STREQUAL "100")
      set(t ${name}_cpu)
    else()
      set(t ${name}${a}_cpu)
    endif()
    add_executable(${t} ${P_HOST} ${cpu_sources})
    target_compile_definitions(${t} PRIVATE KBD_CPU)
    if(NOT a STREQUAL "100") # 100 is kbd/config.h's default: <name>_cpu is built as it always was
      target_compile_definitions(${t} PRIVATE KBD_CPU_ARCH=${a})
    endif()
    target_compile_options(${t} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:${KBD_WARNINGS_C}> ${cpu_opt})
    target_link_libraries(${t} PRIVATE kbd::kbd ${P_LIBS})
    list(APPEND made ${t})
    list(APPEND cpu_made ${t})
  endforeach()
  if(KBD_HAVE_CUDA)
    foreach(arch IN LISTS gpu_archs)
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
  set(KBD_CPU_PROGRAMS_${name} ${cpu_made} PARENT_SCOPE)
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
