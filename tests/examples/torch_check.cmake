# tools/gpu-check/torch_check.py without torch or a GPU: example_torch_check_selftest runs gemm_cpu and
# attention_cpu with --save on small shapes (all four GEMM layouts, bf16 and f32 D, alpha/beta/bias/relu/gelu, e4m3;
# attention bf16 and f16 at head_dim 64, causal GQA with seq_q < seq_k and with seq_q > seq_k (fully masked rows),
# flash-decoding with --splits and --decode, a custom scale), then `torch_check.py selftest DIR KIND`, the checker's
# loader, tolerance and comparison against its pure-Python double reference: each must print "OK" and exit 0. Then
# it adds 64 to the first output element in the saved file, and the selftest must exit 1, print FAIL and name that
# element as the worst: the checker can fail. A --save into a missing directory must fail with the path and errno's
# text. Skipped (77) when python3 is missing. Label cpu.
#
# This file is both: included from tests/examples/CMakeLists.txt it adds the test, and the test runs it again with
# cmake -P (CMAKE_SCRIPT_MODE_FILE is set then) and -DGEMM=... -DATTN=... -DPY=... -DWORK=... to do the runs.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  if(KBD_BUILD_EXAMPLES AND TARGET gemm_cpu AND TARGET attention_cpu)
    find_program(KBD_PYTHON3 NAMES python3)
    if(KBD_PYTHON3)
      add_test(NAME example_torch_check_selftest
               COMMAND ${CMAKE_COMMAND} -DGEMM=$<TARGET_FILE:gemm_cpu> -DATTN=$<TARGET_FILE:attention_cpu>
                       -DPY=${KBD_PYTHON3} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/torch_check -P ${CMAKE_CURRENT_LIST_FILE})
    else()
      add_test(NAME example_torch_check_selftest COMMAND sh -c "echo 'python3 not found: skipped'; exit 77")
    endif()
    set_tests_properties(example_torch_check_selftest PROPERTIES LABELS cpu TIMEOUT 300 SKIP_RETURN_CODE 77)
  endif()
  return()
endif()

# ---- cmake -P: the runs ----------------------------------------------------------------------------------------
get_filename_component(root ${CMAKE_CURRENT_LIST_DIR}/../.. ABSOLUTE)
set(checker ${root}/tools/gpu-check/torch_check.py)
# "kind|arguments" (commas between arguments)
set(cases
    "gemm|64,48,80"
    "gemm|64,48,80,--a-col,--b-col,--f32,--beta,0.5"
    "gemm|64,48,80,--b-col,--bias,--act,gelu,--alpha,0.75,--beta,0.5"
    "gemm|70,40,33,--a-col,--bias,--act,relu,--beta,-1"
    "gemm|64,48,80,--fp8,--f32,--beta,1,--bias,--act,relu"
    "attention|1,4,2,40,100,64,--causal"
    "attention|1,4,2,100,40,64,--causal,--f16"
    "attention|1,8,2,4,600,64,--splits,3,--causal"
    "attention|2,8,2,1,1100,64,--decode,--f16"
    "attention|2,2,2,33,70,64,--scale,0.3")
# adds 64 to element 0 of the output (gemm: d, attention: o) in its saved file, in the file's dtype
set(mutate [=[
import struct, sys
d, key = sys.argv[1], sys.argv[2]
kv = dict(line.split("=", 1) for line in open(d + "/manifest.txt").read().splitlines() if "=" in line)
path, dtype = d + "/" + kv[key + ".file"], kv[key + ".dtype"]
b = bytearray(open(path, "rb").read())
if dtype in ("f32", "f16"):
    fmt = "<f" if dtype == "f32" else "<e"
    struct.pack_into(fmt, b, 0, struct.unpack_from(fmt, b, 0)[0] + 64)
else:
    x = struct.unpack("<f", bytes(2) + bytes(b[0:2]))[0] + 64
    b[0:2] = struct.pack("<f", x)[2:4]
open(path, "wb").write(b)
]=])

set(n 0)
foreach(case IN LISTS cases)
  string(FIND "${case}" "|" bar)
  string(SUBSTRING "${case}" 0 ${bar} kind)
  math(EXPR from "${bar} + 1")
  string(SUBSTRING "${case}" ${from} -1 argstr)
  string(REPLACE "," ";" args "${argstr}")
  string(REPLACE "," " " argline "${argstr}")
  if(kind STREQUAL "gemm")
    set(prog ${GEMM})
    set(out_key d)
    set(first "0,0")
  else()
    set(prog ${ATTN})
    set(out_key o)
    set(first "0,0,0,0")
  endif()
  set(dir ${WORK}/${n})
  math(EXPR n "${n} + 1")
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir})
  execute_process(COMMAND ${prog} ${args} --save ${dir} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${dir}/manifest.txt)
    message(FATAL_ERROR "${prog} ${argline} --save ${dir}: exit ${rc}, want 0 and a manifest\n${out}")
  endif()
  execute_process(COMMAND ${PY} ${checker} selftest ${dir} ${kind} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES " OK\n$")
    message(FATAL_ERROR "torch_check.py selftest ${dir} ${kind} (${argline}): exit ${rc}, want 0 and OK\n${out}${err}")
  endif()
  string(STRIP "${out}" out)
  message("${argline}\n  ${out}")
  execute_process(COMMAND ${PY} -c "${mutate}" ${dir} ${out_key} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "could not mutate ${dir}")
  endif()
  execute_process(COMMAND ${PY} ${checker} selftest ${dir} ${kind} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 1 OR NOT out MATCHES "worst_index=\\[${first}\\] .* FAIL\n$")
    message(FATAL_ERROR "torch_check.py selftest ${dir} ${kind} (${argline}) with ${out_key}[${first}] + 64: exit "
                        "${rc}, want 1, FAIL and worst_index=[${first}]\n${out}${err}")
  endif()
  string(STRIP "${err}" err)
  string(STRIP "${out}" out)
  message("  mutated ${out_key}[${first}] + 64: ${err}\n  ${out}")
endforeach()

# a failed --save: a message with the path and errno's text, a non-zero exit, no manifest
set(dir ${WORK}/missing/dir)
file(REMOVE_RECURSE ${WORK}/missing)
execute_process(COMMAND ${GEMM} 8 8 8 --save ${dir} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(FIND "${err}" "--save: cannot write ${dir}/manifest.txt.part: No such file or directory" at)
if(rc EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "${GEMM} 8 8 8 --save ${dir}: exit ${rc}, want non-zero and the path's error\n${out}${err}")
endif()
string(STRIP "${err}" err)
message("--save into a missing directory: exit ${rc}: ${err}")
