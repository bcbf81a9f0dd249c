# examples/gpt2/host.cmake - gpt2_host: the GPT-2 example's host-side file formats (JSON, safetensors, config.json,
# the BPE tokenizer). Plain C11, no kernels, so one library serves gpt2_cpu, the GPU programs and tests/gpt2.
# Included from examples/ and from tests/gpt2; the guard keeps the second include from defining it twice.
if(NOT TARGET gpt2_host)
  add_library(gpt2_host STATIC
              ${CMAKE_CURRENT_LIST_DIR}/gpt2_json.c ${CMAKE_CURRENT_LIST_DIR}/gpt2_safetensors.c
              ${CMAKE_CURRENT_LIST_DIR}/gpt2_config.c ${CMAKE_CURRENT_LIST_DIR}/gpt2_tokenizer.c)
  target_include_directories(gpt2_host PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(gpt2_host PUBLIC kbd::kbd)
  target_compile_options(gpt2_host PRIVATE -Wall -Wextra -Werror)
endif()
