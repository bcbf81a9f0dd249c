# The GPT-2 forward pass (examples/gpt2, issue 28 item 5), included by tests/gpt2/CMakeLists.txt. Needs the CPU-mode
# model library examples/CMakeLists.txt builds (gpt2_model_cpu: gpt2.c, the GEMM and attention host calls, every
# kernel) and so KBD_BUILD_EXAMPLES. Label cpu.
#   test_gpt2_model   logits of prefill (prompt lengths 1, 7, 64; batch 1 and 3; head size 16 and 64) against the
#                     double reference ref_gpt2.c within the documented bf16 bound; greedy tokens equal to the
#                     reference's for 16 steps; KV-cache decode equal to recomputation; device sampling; bad input;
#                     attention's kv_rows
#   gpt2_cli_*        the gpt2_cpu program on a checkpoint test_gpt2_model writes (--write-model)
if(TARGET gpt2_model_cpu AND KBD_HAVE_CMOCKA)
  kbd_cpu_test(test_gpt2_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpt2_model.c ${CMAKE_CURRENT_LIST_DIR}/ref_gpt2.c
               LIBS gpt2_model_cpu m TIMEOUT 300)
  set(gpt2_cli_dir ${CMAKE_CURRENT_BINARY_DIR}/gpt2_cli_model)
  add_test(NAME gpt2_cli_model COMMAND ${CMAKE_COMMAND} -E make_directory ${gpt2_cli_dir})
  add_test(NAME gpt2_cli_write COMMAND test_gpt2_model --write-model ${gpt2_cli_dir})
  set_tests_properties(gpt2_cli_model PROPERTIES LABELS cpu FIXTURES_SETUP gpt2_cli_dir)
  set_tests_properties(gpt2_cli_write PROPERTIES LABELS cpu FIXTURES_REQUIRED gpt2_cli_dir FIXTURES_SETUP gpt2_cli)
  # the same checkpoint with a tokenizer: --prompt encoded (merges "he", "ll", "hell", " w" applied), the prompt and
  # the generated tokens streamed as text; the ids printed after it show the encoding: 258 = "hell", 111 = "o", 259 = " w"
  set(gpt2_cli_tok ${CMAKE_CURRENT_BINARY_DIR}/gpt2_cli_model_tok)
  add_test(NAME gpt2_cli_model_tok COMMAND ${CMAKE_COMMAND} -E make_directory ${gpt2_cli_tok})
  add_test(NAME gpt2_cli_write_tok COMMAND test_gpt2_model --write-model ${gpt2_cli_tok} --tokenizer)
  set_tests_properties(gpt2_cli_model_tok PROPERTIES LABELS cpu FIXTURES_SETUP gpt2_cli_tok_dir)
  set_tests_properties(gpt2_cli_write_tok PROPERTIES LABELS cpu FIXTURES_REQUIRED gpt2_cli_tok_dir
                                                     FIXTURES_SETUP gpt2_cli_tok)
  add_test(NAME gpt2_cli_prompt COMMAND gpt2_cpu --model ${gpt2_cli_tok} --prompt "hello world" --steps 3)
  set_tests_properties(gpt2_cli_prompt PROPERTIES LABELS cpu FIXTURES_REQUIRED gpt2_cli_tok TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "^[^\n]*hello world[^\n]*\nprompt: 258,111,259,111,114,108,100\n")
  # greedy from --tokens (no tokenizer in the folder: ids are printed), batch 2
  add_test(NAME gpt2_cli_tokens COMMAND gpt2_cpu --model ${gpt2_cli_dir} --tokens 1,2,3,4,5 --steps 6 --batch 2)
  set_tests_properties(gpt2_cli_tokens PROPERTIES LABELS cpu FIXTURES_REQUIRED gpt2_cli TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "row 1:( [0-9]+)( [0-9]+)( [0-9]+)( [0-9]+)( [0-9]+)( [0-9]+)\ntokens: [0-9]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+\n.*prefill 2 x 5 tokens.*decode 2 x 6 tokens")
  # temperature and top-k with a seed
  add_test(NAME gpt2_cli_sample COMMAND gpt2_cpu --model ${gpt2_cli_dir} --tokens 7 --steps 4 --temperature 0.8
                                        --top-k 20 --seed 5)
  set_tests_properties(gpt2_cli_sample PROPERTIES LABELS cpu FIXTURES_REQUIRED gpt2_cli TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "tokens: [0-9]+,[0-9]+,[0-9]+,[0-9]+\n.*decode 1 x 4 tokens")
  # bad input: the message and exit status 1 (not a crash: the status is echoed and matched with the message)
  set(gpt2_bad "gpt2_cli_bad_token|outside the vocabulary|--tokens 1,300 --steps 1"
               "gpt2_cli_too_long|past the model's context|--tokens 1,2 --steps 63"
               "gpt2_cli_no_model|missing|--tokens 1" "gpt2_cli_prompt_no_tokenizer|needs the tokenizer|--prompt hello")
  foreach(case IN LISTS gpt2_bad)
    string(REPLACE "|" ";" f "${case}")
    list(GET f 0 name)
    list(GET f 1 msg)
    list(GET f 2 argstr)
    separate_arguments(args UNIX_COMMAND "${argstr}")
    set(model ${gpt2_cli_dir})
    if(name STREQUAL "gpt2_cli_no_model")
      set(model ${gpt2_cli_dir}/missing)
    endif()
    add_test(NAME ${name} COMMAND sh -c "\"$0\" \"$@\" 2>&1; echo \"exit=$?\"" $<TARGET_FILE:gpt2_cpu> --model ${model}
                                  ${args})
    set_tests_properties(${name} PROPERTIES LABELS cpu FIXTURES_REQUIRED gpt2_cli TIMEOUT 60
                                            PASS_REGULAR_EXPRESSION "${msg}.*exit=1")
  endforeach()
endif()
# On a GPU (label gpu; skips without one), with tests/gpu's harness (kbd_gpu_query and kbd_compare_dump are defined
# there, after this directory):
#   gpu_gpt2             the program of the device's arch without --model: the demo checkpoint (random, 2 layers x 128
#                        channels) written, loaded, prefilled and decoded on the device, every step's status checked
#   gpu_gpt2_cpu_vs_gpu  the same demo on the device and in gpt2_cpu with --dump: the prefill's logits within
#                        0.25 + 1 % (the bf16 bound of test_gpt2_model: both sides round every activation to bf16, in
#                        different f32 summation orders)
#   gpu_harness_gpt2_cpu_vs_cpu  gpt2_cpu standing in for the GPU program: the plumbing, without a device
# They also place gpt2_sm90a / gpt2_sm100a in tools/gpu-check.sh's plan.
if(KBD_HAVE_CUDA)
  set(gpt2_programs)
  foreach(arch IN LISTS KBD_GPU_ARCHS)
    if(TARGET gpt2_sm${arch})
      list(APPEND gpt2_programs --program "${arch}=$<TARGET_FILE:gpt2_sm${arch}>")
    endif()
  endforeach()
  if(gpt2_programs)
    set(gpt2_run bash ${PROJECT_SOURCE_DIR}/tests/gpu/run_gpu_example.sh --query $<TARGET_FILE:kbd_gpu_query>
                 ${gpt2_programs})
    set(gpt2_cmp --cpu $<TARGET_FILE:gpt2_cpu> --compare $<TARGET_FILE:kbd_compare_dump> --tolerance
                 "--atol 0.25 --rtol 0.01")
    set(gpt2_dumps ${CMAKE_CURRENT_BINARY_DIR}/dumps)
    add_test(NAME gpu_gpt2 COMMAND ${gpt2_run} --)
    add_test(NAME gpu_gpt2_cpu_vs_gpu COMMAND ${gpt2_run} ${gpt2_cmp} --dir ${gpt2_dumps}/cpu_vs_gpu --)
    add_test(NAME gpu_harness_gpt2_cpu_vs_cpu COMMAND ${gpt2_run} ${gpt2_cmp} --dir ${gpt2_dumps}/cpu_vs_cpu
                                                      --standin $<TARGET_FILE:gpt2_cpu> --)
    set_tests_properties(gpu_gpt2 gpu_gpt2_cpu_vs_gpu gpu_harness_gpt2_cpu_vs_cpu PROPERTIES LABELS gpu
                                                                                     SKIP_RETURN_CODE 77 TIMEOUT 600)
  endif()
endif()
