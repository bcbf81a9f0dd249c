# Install kbd from the build tree into a scratch prefix, then, all from that prefix:
#   1. the installed files: headers, package, kbd-inspect, kbd-ptx-check, the gdb helper, kbd-layout (when built)
#   2. a consumer project (consumer/) without a build type and without CUDA: find_package(kbd CONFIG) +
#      kbd_add_program(... CPU_ARCHS 90 100): scale_cpu (sm_100a) and scale90_cpu (sm_90a) run and print OK, both
#      compiled optimized (the package's -O2 for an empty build type); the tool variables kbdConfig sets
#   3. the same consumer configured as Debug: not optimized (the -O2 does not fight an explicit build type)
#   4. the installed tools: kbd-inspect (--help, a one-line error, the consumer's kernel when nvcc is present,
#      else the one-line "nvcc not found"), kbd-ptx-check (--help, the usage error, the consumer's kernel with
#      scale.check when nvcc and FileCheck are present), kbd-layout, the gdb helper loaded by gdb
#   5. the consumer compiled once more by hand with pkg-config
# -D: BUILD (kbd's build tree), SRC (this directory), WORK (scratch), CC, LAYOUT (the built kbd-layout, if a target),
#     NVCC (empty: no CUDA compiler in kbd's build), FILECHECK (may be empty).
set(prefix ${WORK}/prefix)
file(REMOVE_RECURSE ${WORK})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(LAST_OUT "${out}" PARENT_SCOPE)
endfunction()
# run_expect(<exit code> <stdout regex> <stderr regex> <command...>): the exit code and both outputs must match
function(run_expect want out_re err_re)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "${want}" OR NOT out MATCHES "${out_re}" OR NOT err MATCHES "${err_re}")
    message(FATAL_ERROR "want exit ${want}, stdout /${out_re}/, stderr /${err_re}/ from: ${ARGN}\n"
                        "got exit ${rc}\nstdout: ${out}\nstderr: ${err}")
  endif()
  message(STATUS "ok: ${ARGN} -> exit ${rc}")
endfunction()
function(want_equal what got expected)
  if(NOT "${got}" STREQUAL "${expected}")
    message(FATAL_ERROR "${what}: '${got}', want '${expected}'")
  endif()
endfunction()

# ---- 1. install -----------------------------------------------------------------------------------------
if(LAYOUT AND NOT EXISTS ${LAYOUT})
  message(FATAL_ERROR "kbd-layout is not built, so kbd cannot be installed: cmake --build ${BUILD} --target kbd-layout")
endif()
run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
foreach(f include/kbd/tile.h bin/kbd-inspect bin/kbd-ptx-check share/kbd/gdb/kbd.py share/pkgconfig/kbd.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${prefix}/${f}")
  endif()
endforeach()
set(layout_tool)
if(LAYOUT)
  set(layout_tool ${prefix}/bin/kbd-layout)
  if(NOT EXISTS ${layout_tool})
    message(FATAL_ERROR "not installed: ${layout_tool} (kbd-layout was built)")
  endif()
endif()

# ---- 2. the consumer: no build type, no CUDA --------------------------------------------------------------
run(${CMAKE_COMMAND} -S ${SRC}/consumer -B ${WORK}/build -DCMAKE_PREFIX_PATH=${prefix} -DKBD_ENABLE_CUDA=OFF)
if(NOT LAST_OUT MATCHES "kbd: no GPU programs")
  message(FATAL_ERROR "the consumer's configure without CUDA did not say so:\n${LAST_OUT}")
endif()
include(${WORK}/build/kbd_package.cmake)
want_equal("KBD_PROGRAMS_scale" "${consumer_programs}" "scale_cpu;scale90_cpu")
want_equal("KBD_CPU_PROGRAMS_scale" "${consumer_cpu_programs}" "scale_cpu;scale90_cpu")
want_equal("KBD_HAVE_CUDA" "${consumer_have_cuda}" "OFF")
want_equal("KBD_INCLUDE_DIR" "${consumer_include_dir}" "${prefix}/include")
want_equal("KBD_INSPECT_EXECUTABLE" "${consumer_inspect}" "${prefix}/bin/kbd-inspect")
want_equal("KBD_PTX_CHECK_EXECUTABLE" "${consumer_ptx_check}" "${prefix}/bin/kbd-ptx-check")
want_equal("KBD_LAYOUT_EXECUTABLE" "${consumer_layout}" "${layout_tool}")
want_equal("KBD_GDB_HELPER" "${consumer_gdb_helper}" "${prefix}/share/kbd/gdb/kbd.py")
run(${CMAKE_COMMAND} --build ${WORK}/build)
foreach(prog_arch scale_cpu:100 scale90_cpu:90)
  string(REPLACE ":" ";" prog_arch ${prog_arch})
  list(GET prog_arch 0 prog)
  list(GET prog_arch 1 arch)
  run(${WORK}/build/${prog})
  if(NOT LAST_OUT MATCHES "consumer: OK, the CPU machine emulating sm_${arch}a, kernel optimized")
    message(FATAL_ERROR "${prog} did not print OK for sm_${arch}a, optimized: ${LAST_OUT}")
  endif()
  message(STATUS "${prog}: ${LAST_OUT}")
endforeach()

# ---- 3. an explicit build type wins -------------------------------------------------------------------------
run(${CMAKE_COMMAND} -S ${SRC}/consumer -B ${WORK}/debug -DCMAKE_PREFIX_PATH=${prefix} -DKBD_ENABLE_CUDA=OFF
    -DCMAKE_BUILD_TYPE=Debug)
run(${CMAKE_COMMAND} --build ${WORK}/debug --target scale90_cpu)
run(${WORK}/debug/scale90_cpu)
if(NOT LAST_OUT MATCHES "consumer: OK, the CPU machine emulating sm_90a, kernel not optimized")
  message(FATAL_ERROR "the Debug scale90_cpu is not the unoptimized sm_90a program: ${LAST_OUT}")
endif()

# ---- 4. the installed tools ---------------------------------------------------------------------------------
run_expect(0 "usage: kbd-inspect" "^$" ${prefix}/bin/kbd-inspect --help)
run_expect(1 "^$" "^kbd-inspect: [^\n]*no_such\\.cu[^\n]*\n$" ${prefix}/bin/kbd-inspect ${WORK}/no_such.cu)
if(NVCC)
  set(ENV{NVCC} ${NVCC})
  run_expect(0 "scale  \\[sm_100a\\][^\n]*scale\\.cu.*registers/thread.*occupancy" "^$"
             ${prefix}/bin/kbd-inspect ${SRC}/consumer/scale.cu --arch 100a --no-sass)
else()
  # No CUDA compiler in kbd's build: kbd-inspect must say so in one line (nvcc is searched on PATH and in
  # /usr/local/cuda/bin; where those hold one after all, this is the compile instead).
  execute_process(COMMAND ${prefix}/bin/kbd-inspect ${SRC}/consumer/scale.cu --arch 100a --no-sass
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(STATUS "kbd-inspect found an nvcc that kbd's build did not: ${out}")
  elseif(NOT rc EQUAL 1 OR NOT err MATCHES "^kbd-inspect: [^\n]*nvcc[^\n]*\n$")
    message(FATAL_ERROR "kbd-inspect without nvcc: exit ${rc}, want 1 and one line naming nvcc:\n${err}")
  endif()
endif()
run_expect(0 "usage: kbd-ptx-check " "^$" ${prefix}/bin/kbd-ptx-check --help)
run_expect(2 "^$" "^kbd-ptx-check: ERROR: usage: kbd-ptx-check [^\n]*\n$" ${prefix}/bin/kbd-ptx-check)
if(NVCC AND FILECHECK)
  set(ENV{KBD_FILECHECK} ${FILECHECK})
  set(ENV{KBD_PTX_OUT} ${WORK}/ptx)
  run_expect(0 "PTX matches scale\\.check.*PASS scale\\.cu sm_100a" ".*"
             ${prefix}/bin/kbd-ptx-check ${SRC}/consumer/scale.cu 100a ${SRC}/consumer/scale.check)
else()
  message(STATUS "kbd-ptx-check on the consumer's kernel not run: it needs nvcc and FileCheck")
endif()
if(layout_tool)
  run_expect(0 "ROW f32 1 x 64, 32 threads.*T31 V1" "^$" ${layout_tool} frag --layout ROW --dtype f32 --rows 1
             --cols 64 --scope warp --text)
endif()
find_program(GDB gdb)
if(GDB)
  run_expect(0 "kbd-warps" ".*" ${GDB} -nx -batch -ex "source ${prefix}/share/kbd/gdb/kbd.py" -ex "help kbd-warps")
else()
  message(STATUS "gdb not installed: the gdb helper was checked as installed, not loaded")
endif()

# ---- 5. pkg-config -----------------------------------------------------------------------------------------
find_program(PKGCONF NAMES pkg-config pkgconf)
if(PKGCONF)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/share/pkgconfig)
  run(${PKGCONF} --cflags --libs kbd)
  string(STRIP "${LAST_OUT}" flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  file(WRITE ${WORK}/scale_cpu.c "#include \"${SRC}/consumer/scale.cu\"\n")
  run(${CC} -std=c11 -DKBD_CPU -I${SRC}/consumer ${SRC}/consumer/main.c ${WORK}/scale_cpu.c ${flags} -o ${WORK}/pc)
  run(${WORK}/pc)
  message(STATUS "pkg-config build: ${LAST_OUT}")
else()
  message(STATUS "pkg-config not installed: the pkg-config half of this test was not run")
endif()
