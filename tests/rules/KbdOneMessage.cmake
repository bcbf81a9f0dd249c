# KbdOneMessage.cmake - a compile that must fail with the kbd rule as its FIRST error and at most MAX error lines
# (a `cmake -P` script; issue 31, item 9: one message per mistake).
#
#   cmake -DCOMPILER=<path> -DSOURCE=<file> -DFLAGS="<flags>" -DEXPECT=<regex> -DMAX=<n> -P KbdOneMessage.cmake
#
# Runs COMPILER in syntax-only mode as cmake/KbdExpectCompileFail.cmake does (nvcc: the device front end, where
# the static assertions of a kernel fire) and fails when the compile succeeds, when the first error line does not
# match EXPECT, or when the output has more than MAX error lines. An error line is one with "error:" in it: gcc,
# g++ and clang write "file:line:col: error: ...", nvcc "file(line): error: ...", and each diagnostic has exactly
# one (clang's "fatal error: too many errors emitted" counts too; nvcc's closing "N errors detected" has no colon).
cmake_minimum_required(VERSION 3.22)

foreach(v COMPILER SOURCE EXPECT MAX)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "KbdOneMessage: -D${v}=... is required")
  endif()
endforeach()

separate_arguments(flags UNIX_COMMAND "${FLAGS}")
get_filename_component(cc_name "${COMPILER}" NAME)
set(obj "")
if(cc_name MATCHES "nvcc")
  string(MD5 tag "${SOURCE} ${FLAGS}")
  set(obj "${CMAKE_CURRENT_BINARY_DIR}/kbd_one_message_${tag}.o")
  set(mode -fdevice-syntax-only -Xcompiler -fsyntax-only -c -o "${obj}")
else()
  set(mode -fsyntax-only)
endif()

execute_process(COMMAND "${COMPILER}" ${mode} ${flags} "${SOURCE}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(obj)
  file(REMOVE "${obj}")
endif()
string(JOIN " " shown "${COMPILER}" ${mode} ${flags} "${SOURCE}")
set(log "${out}${err}")
message("command: ${shown}\nexit status: ${rc}\n--- compiler output ---\n${log}--- end of output ---")

if(rc EQUAL 0)
  message(FATAL_ERROR "KbdOneMessage: the compile SUCCEEDED, but it must fail with /${EXPECT}/")
endif()

string(REPLACE ";" "," flat "${log}")
string(REPLACE "\n" ";" lines "${flat}")
set(first "")
set(count 0)
foreach(line IN LISTS lines)
  if(line MATCHES "error:")
    math(EXPR count "${count} + 1")
    if(first STREQUAL "")
      set(first "${line}")
    endif()
  endif()
endforeach()
if(NOT first MATCHES "${EXPECT}")
  message(FATAL_ERROR "KbdOneMessage: the first error line does not match /${EXPECT}/:\n${first}")
endif()
if(count GREATER MAX)
  message(FATAL_ERROR "KbdOneMessage: ${count} error lines, at most ${MAX} allowed: the rule must be the only error")
endif()
message("OK: ${count} error line(s) (at most ${MAX}), the first: ${first}")
