# KbdExpectCompileFail.cmake - a compile that must FAIL with a given diagnostic (a `cmake -P` script).
#
#   cmake -DCOMPILER=<path> -DSOURCE=<file> [-DFLAGS="<flags, space separated>"] -DEXPECT=<regex>
#         -P KbdExpectCompileFail.cmake
#   cmake -DCOMPILER=<path> -DSOURCE=<file> [-DFLAGS="..."] -DEXPECT=<regex> -DMAX_ERRORS=<n>
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
# MAX_ERRORS=<n> (one message per mistake, issue 31 item 9) is stricter: the FIRST error line must match EXPECT and
# the output may hold at most <n> error lines. An error line is then one with "error:" in it: gcc, g++ and clang
# write "file:line:col: error: ...", nvcc "file(line): error: ...", and each diagnostic has exactly one (clang's
# "fatal error: too many errors emitted" counts too; nvcc's closing "N errors detected" has no colon).
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
if(DEFINED MAX_ERRORS AND NOT MAX_ERRORS MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "KbdExpectCompileFail: -DMAX_ERRORS=${MAX_ERRORS}: give the number of error lines allowed (>= 1)")
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
if(DEFINED MAX_ERRORS)
  set(first "")
  set(count 0)
  foreach(line IN LISTS lines)
    if(line MATCHES "error:")
      math(EXPR count "${count} + 1")
      if(count EQUAL 1)
        set(first "${line}")
      endif()
    endif()
  endforeach()
  if(NOT first MATCHES "${EXPECT}")
    message(FATAL_ERROR "KbdExpectCompileFail: the first error line does not match /${EXPECT}/:\n${first}")
  endif()
  if(count GREATER MAX_ERRORS)
    message(FATAL_ERROR
              "KbdExpectCompileFail: ${count} error lines, at most ${MAX_ERRORS} allowed: the rule must be the only error")
  endif()
  message("OK: ${count} error line(s) (at most ${MAX_ERRORS}), the first: ${first}")
  return()
endif()
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
