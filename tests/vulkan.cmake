# gfxep — the test of the headless Vulkan producer (tools/vkp, built by tools/vkp/vkp.cmake).
# Included from tests/CMakeLists.txt after CMOCKA_INCLUDE_DIR / CMOCKA_LIBRARY are found; builds
# nothing when gfxep_vkp is not built (no Vulkan or no glslc).

if(NOT GFXEP_HAVE_VULKAN)
  return()
endif()

# test_add is the test's own shader; scene and present are the demo's, compiled once by vkp.cmake
# (asking again here reuses that rule and attaches the headers to this directory's targets)
gfxep_vkp_shader(test_add "${PROJECT_SOURCE_DIR}/tools/vkp/shaders/test_add.comp")
gfxep_vkp_shader(scene "${PROJECT_SOURCE_DIR}/tools/vkp/shaders/scene.comp")
gfxep_vkp_shader(present "${PROJECT_SOURCE_DIR}/tools/vkp/shaders/present.comp")

add_executable(test_vk_producer "${CMAKE_CURRENT_LIST_DIR}/test_vk_producer.c"
  "${GFXEP_VKP_SHADER_DIR}/test_add_spv.h" "${GFXEP_VKP_SHADER_DIR}/scene_spv.h"
  "${GFXEP_VKP_SHADER_DIR}/present_spv.h")
target_include_directories(test_vk_producer PRIVATE "${CMOCKA_INCLUDE_DIR}")
target_link_libraries(test_vk_producer PRIVATE gfxep_vkp "${CMOCKA_LIBRARY}" m)
add_test(NAME vk_producer COMMAND test_vk_producer)
set_tests_properties(vk_producer PROPERTIES TIMEOUT 60)
