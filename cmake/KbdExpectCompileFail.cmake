# KbdExpectCompileFail.cmake - a compile that must FAIL with a given diagnostic (a `cmake -P` script).
#
#   cmake -DCOMPILER=<path> -DSOURCE=<file> [-DFLAGS="<flags, space separated>"] -DEXPECT=<regex>
#         -P KbdExpectCompileFail.cmake
#   cmake -DCOMPILER=<path> -DSOURCE=<file> [-DFLAGS="..."] -DEXPECT_SUCCESS=ON -P KbdExpectCompileFail.cmake
#
# Runs COMPILER in syntax-only mode on SOURCE with FLAGS:
#   gcc, g++, clang:  -fsyntax-only
#   nvcc:             -fdevice-syntax-only -Xcompiler -fsyntax-only -c (the CUDA front end, which is where
#                     static assertions of a kernel source fire, still runs in full)
# The script stops with a fatal error (so the CTest test fails) when
#   - the compile succeeds, or
#   - no *error* line of the compiler's output matches EXPECT: an unrelated error (a missing include, a
#     typo in the case) or a mere warning does not count as the expected rejection.
# EXPECT_SUCCESS=ON turns it into a positive control: the compile must succeed. Give it the same
# include path as the negative cases, so that a broken setup cannot make every negative case "pass".
# FLAGS is split like a shell command line (separate_arguments UNIX_COMMAND).
cmake_minimum_required(VERSION 3.22)

foreach(v COMPILER SOURCE)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "KbdExpectCompileFail: -D${v}=... is required")
  endif()
endforeach()
if(NOT EXPECT_SUCCESS AND (NOT DEFINED EXPECT OR "${EXPECT}" STREQUAL ""))
  message(FATAL_ERROR "KbdExpectCompileFail: -DEXPECT=<regex> (or -DEXPECT_SUCCESS=ON) is required")
endif()
if(NOT EXISTS "${SOURCE}")
  message(FATAL_ERROR "KbdExpectCompileFail: SOURCE ${SOURCE} does not exist")
endif()

separate_arguments(flags UNIX_COMMAND "${FLAGS}")
get_filename_component(cc_name "${COMPILER}" NAME)
set(obj "")
if(cc_name MATCHES "nvcc")
  # nvcc has no -fsyntax-only of its own. Nothing is written with host -fsyntax-only, but give -o a
  # unique scratch name anyway so that parallel tests never share an output file.
  string(MD5 tag "${SOURCE} ${FLAGS}")
  set(obj "${CMAKE_CURRENT_BINARY_DIR}/kbd_expect_${tag}.o")
  set(mode -fdevice-syntax-only -Xcompiler -fsyntax-only -c -o "${obj}")
else()
  set(mode -fsyntax-only)
endif()

execute_process(COMMAND "${COMPILER}" ${mode} ${flags} "${SOURCE}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(obj)
  file(REMOVE "${obj}")
endif()
string(JOIN " " shown "${COMPILER}" ${mode} ${flags} "${SOURCE}")
set(log "${out}${err}")
message("command: ${shown}\nexit status: ${rc}\n--- compiler output ---\n${log}--- end of output ---")

if(EXPECT_SUCCESS)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "KbdExpectCompileFail: the positive control did not compile (exit ${rc})")
  endif()
  message("OK: compiled cleanly, as expected")
  return()
endif()

if(rc EQUAL 0)
  message(FATAL_ERROR "KbdExpectCompileFail: the compile SUCCEEDED, but it must fail with /${EXPECT}/")
endif()

# Look for the expectation on the compiler's error lines only. `;` would split the CMake list.
string(REPLACE ";" "," flat "${log}")
string(REPLACE "\n" ";" lines "${flat}")
set(found "")
foreach(line IN LISTS lines)
  if(line MATCHES "[Ee]rror" AND line MATCHES "${EXPECT}")
    set(found "${line}")
    break()
  endif()
endforeach()
if(NOT found)
  message(FATAL_ERROR "KbdExpectCompileFail: the compile failed (exit ${rc}), but no error line matches /${EXPECT}/")
endif()
message("OK: rejected as expected: ${found}")
