# gfxep — the headless Vulkan producer (tests/vk_producer.c) and its test.
# Included from tests/CMakeLists.txt after CMOCKA_INCLUDE_DIR / CMOCKA_LIBRARY are found.
# Needs the Vulkan loader + headers and glslc; without them it builds nothing and leaves
# GFXEP_HAVE_VULKAN undefined.

find_package(Vulkan QUIET)
find_program(GLSLC glslc)

if(NOT Vulkan_FOUND OR NOT GLSLC)
  if(NOT Vulkan_FOUND)
    set(_gfxep_vkp_missing "the Vulkan loader and headers (find_package(Vulkan))")
  else()
    set(_gfxep_vkp_missing "glslc")
  endif()
  message(STATUS "gfxep: no ${_gfxep_vkp_missing}; not building the Vulkan producer (gfxep_vkp) or its test")
  unset(GFXEP_HAVE_VULKAN)
  unset(GFXEP_HAVE_VULKAN CACHE)
  return()
endif()

# the fill shader, compiled to a C initializer list of SPIR-V words that vk_producer.c #includes
set(GFXEP_VKP_GENERATED_DIR "${CMAKE_CURRENT_BINARY_DIR}/vkp_generated")
set(GFXEP_VKP_FILL_HEADER "${GFXEP_VKP_GENERATED_DIR}/fill_comp.spv.h")
add_custom_command(
  OUTPUT "${GFXEP_VKP_FILL_HEADER}"
  COMMAND ${CMAKE_COMMAND} -E make_directory "${GFXEP_VKP_GENERATED_DIR}"
  COMMAND "${GLSLC}" -O -mfmt=c -o "${GFXEP_VKP_FILL_HEADER}" "${CMAKE_CURRENT_LIST_DIR}/shaders/fill.comp"
  DEPENDS "${CMAKE_CURRENT_LIST_DIR}/shaders/fill.comp"
  COMMENT "glslc: shaders/fill.comp -> fill_comp.spv.h"
  VERBATIM)

add_library(gfxep_vkp STATIC "${CMAKE_CURRENT_LIST_DIR}/vk_producer.c" "${GFXEP_VKP_FILL_HEADER}")
target_include_directories(gfxep_vkp PUBLIC "${CMAKE_CURRENT_LIST_DIR}" PRIVATE "${GFXEP_VKP_GENERATED_DIR}")
target_link_libraries(gfxep_vkp PUBLIC Vulkan::Vulkan)

set(GFXEP_HAVE_VULKAN TRUE)
set(GFXEP_HAVE_VULKAN TRUE CACHE INTERNAL "the Vulkan producer library gfxep_vkp is built")

add_executable(test_vk_producer "${CMAKE_CURRENT_LIST_DIR}/test_vk_producer.c")
target_include_directories(test_vk_producer PRIVATE "${CMOCKA_INCLUDE_DIR}")
target_link_libraries(test_vk_producer PRIVATE gfxep_vkp "${CMOCKA_LIBRARY}")
add_test(NAME vk_producer COMMAND test_vk_producer)
set_tests_properties(vk_producer PROPERTIES TIMEOUT 60)
