# KbdRejectTests.cmake - compile-fail tests: a case file whose cases (-DKBD_REJECT_CASE=<n>) must stop the compiler
# with a rule's message, and positive controls that must compile. Each test runs cmake/KbdExpectCompileFail.cmake
# (syntax-only compiles; the expected regex must match an *error* line) at ctest time, so nothing is built for them.
#
# Before the calls, in the directory:
#   set(KBD_REJECT_SOURCE <case file>)
#   set(KBD_REJECT_LABELS <labels>)        nvcc tests get `ptx` appended, or KBD_REJECT_NVCC_LABELS when set
#
# kbd_reject_tests(<prefix> <compiler tags...> [FLAGS "<extra flags>"] CASES <name|case|regex>...)
#   one test <prefix>_<name>_<tag> per case and tag, with the tag's compiler and flags:
#     c11          gcc   -std=c11 -DKBD_CPU -Wall -Wextra -I<include>
#     cxx17        g++   -std=c++17 -x c++ -DKBD_CPU -Wall -Wextra -I<include>
#     clang_c11    clang, the c11 flags (left out when no clang is found)
#     nvcc_sm<a>   nvcc  -x cu -gencode arch=compute_<a>,code=sm_<a> -I<include>, e.g. nvcc_sm90a, nvcc_sm100a
#                  (left out without KBD_HAVE_CUDA)
#   then FLAGS. An empty regex makes the case a positive control, compiled with warnings as errors (-Werror; nvcc
#   -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror). Negative cases are compiled WITHOUT -Werror: a rule that
#   only warns is not enforced for a user who builds without it, so a warning must not count as a rejection.
#
# kbd_reject_test(<test> <compiler> <flags> <case | ""> <regex | ""> [MAX_ERRORS <n>])
#   one test with an explicit compiler (a path) and flags (one string, split like a shell command line): for the
#   cases the tags do not cover. An empty <case> adds no -DKBD_REJECT_CASE (a case file that selects its case from
#   a macro in <flags>, e.g. -DCASE_xor_f32). MAX_ERRORS: one message per mistake - the regex must match the FIRST
#   error line and the compiler may print at most <n> error lines (tests/rules, rules_msg_*).
cmake_minimum_required(VERSION 3.22)

find_program(KBD_CLANG NAMES clang clang-18 clang-17 clang-16 clang-15 clang-14)

# The include flag is quoted inside the FLAGS string, so a checkout path with a space stays one argument.
set(KBD_REJECT_C11 "-std=c11 -DKBD_CPU -Wall -Wextra -I\"${PROJECT_SOURCE_DIR}/include\"")
set(KBD_REJECT_CXX17 "-std=c++17 -x c++ -DKBD_CPU -Wall -Wextra -I\"${PROJECT_SOURCE_DIR}/include\"")
set(KBD_REJECT_WERROR_CU "-Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror")
set(_kbd_reject_script ${CMAKE_CURRENT_LIST_DIR}/KbdExpectCompileFail.cmake)

function(kbd_reject_test name compiler flags case expect)
  cmake_parse_arguments(PARSE_ARGV 5 R "" "MAX_ERRORS" "")
  if(NOT KBD_REJECT_SOURCE)
    message(FATAL_ERROR "kbd_reject_test(${name}): set KBD_REJECT_SOURCE to the case file first")
  endif()
  if(R_UNPARSED_ARGUMENTS OR (DEFINED R_MAX_ERRORS AND expect STREQUAL ""))
    message(FATAL_ERROR "kbd_reject_test(${name}): after <case> <regex> only MAX_ERRORS <n>, and only with a regex")
  endif()
  if(expect STREQUAL "")
    set(mode -DEXPECT_SUCCESS=ON)
  else()
    set(mode "-DEXPECT=${expect}")
  endif()
  if(DEFINED R_MAX_ERRORS)
    list(APPEND mode -DMAX_ERRORS=${R_MAX_ERRORS})
  endif()
  if(NOT case STREQUAL "")
    string(APPEND flags " -DKBD_REJECT_CASE=${case}")
  endif()
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -DCOMPILER=${compiler} -DSOURCE=${KBD_REJECT_SOURCE} "-DFLAGS=${flags}"
                                ${mode} -P ${_kbd_reject_script})
  set(labels ${KBD_REJECT_LABELS})
  if(compiler MATCHES "nvcc")
    if(DEFINED KBD_REJECT_NVCC_LABELS)
      set(labels ${KBD_REJECT_NVCC_LABELS})
    else()
      list(APPEND labels ptx)
    endif()
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT 120)
endfunction()

function(kbd_reject_tests prefix)
  cmake_parse_arguments(PARSE_ARGV 1 R "" "FLAGS" "CASES")
  if(NOT R_UNPARSED_ARGUMENTS OR NOT R_CASES)
    message(FATAL_ERROR "kbd_reject_tests(${prefix}): give compiler tags and CASES <name|case|regex>...")
  endif()
  foreach(tag IN LISTS R_UNPARSED_ARGUMENTS)
    if(tag STREQUAL "c11")
      set(cc ${CMAKE_C_COMPILER})
      set(flags "${KBD_REJECT_C11}")
    elseif(tag STREQUAL "cxx17")
      set(cc ${CMAKE_CXX_COMPILER})
      set(flags "${KBD_REJECT_CXX17}")
    elseif(tag STREQUAL "clang_c11")
      if(NOT KBD_CLANG)
        continue()
      endif()
      set(cc ${KBD_CLANG})
      set(flags "${KBD_REJECT_C11}")
    elseif(tag MATCHES "^nvcc_sm([0-9]+a?)$")
      if(NOT KBD_HAVE_CUDA)
        continue()
      endif()
      set(cc ${CMAKE_CUDA_COMPILER})
      set(flags "-x cu -gencode arch=compute_${CMAKE_MATCH_1},code=sm_${CMAKE_MATCH_1} -I\"${PROJECT_SOURCE_DIR}/include\"")
    else()
      message(FATAL_ERROR "kbd_reject_tests(${prefix}): unknown compiler tag '${tag}' "
                          "(c11, cxx17, clang_c11, nvcc_sm<arch>)")
    endif()
    if(R_FLAGS)
      string(APPEND flags " ${R_FLAGS}")
    endif()
    foreach(entry IN LISTS R_CASES)
      string(REPLACE "|" ";" fields "${entry}")
      list(LENGTH fields nf)
      if(nf LESS 2 OR nf GREATER 3)
        message(FATAL_ERROR "kbd_reject_tests(${prefix}): '${entry}' is not <name>|<case>|<regex or empty>")
      endif()
      list(GET fields 0 cname)
      list(GET fields 1 cnum)
      set(cregex "")
      if(nf EQUAL 3)
        list(GET fields 2 cregex)
      endif()
      set(f "${flags}")
      if(cregex STREQUAL "" AND tag MATCHES "^nvcc")
        string(APPEND f " ${KBD_REJECT_WERROR_CU}")
      elseif(cregex STREQUAL "")
        string(APPEND f " -Werror")
      endif()
      kbd_reject_test(${prefix}_${cname}_${tag} ${cc} "${f}" ${cnum} "${cregex}")
    endforeach()
  endforeach()
endfunction()
