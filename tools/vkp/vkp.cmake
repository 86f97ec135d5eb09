# gfxep — vkp: the headless Vulkan producer library (tools/vkp/vk_producer.c) used by the interop
# tests and the frame-pipeline demo, and gfxep_vkp_shader(), which turns GLSL compute shaders into
# C headers of SPIR-V words.
#
# Included from the top-level CMakeLists.txt (before add_subdirectory(tests)). Needs the Vulkan
# loader + headers and glslc; without them it builds nothing and leaves GFXEP_HAVE_VULKAN undefined,
# so users guard with if(GFXEP_HAVE_VULKAN).
#
# Generated headers (all in ${CMAKE_BINARY_DIR}/shaders, a PUBLIC include dir of gfxep_vkp):
#   fill_spv.h     tools/vkp/shaders/fill.comp     (used inside vk_producer.c)
#   scene_spv.h    tools/vkp/shaders/scene.comp    (demo: the animated scene, clean + noisy)
#   present_spv.h  tools/vkp/shaders/present.comp  (demo: side-by-side RGBA8 composition)
# Each is a bare C initializer list (glslc -mfmt=c): the includer names the array, e.g.
#   static const uint32_t scene_spirv[] =
#   #include "scene_spv.h"
#       ;

set(GFXEP_VKP_SHADER_DIR "${CMAKE_BINARY_DIR}/shaders")

# gfxep_vkp_shader(<name> <file.comp>)
# Compiles <file.comp> (relative paths are taken from the calling directory) with
# glslc -O --target-env=vulkan1.2 -mfmt=c into ${CMAKE_BINARY_DIR}/shaders/<name>_spv.h. Every target
# of the calling directory that lists <name>_spv.h among its sources gets that directory as a private
# include dir and a dependency on the generation step (both added when the directory has been
# processed, so the target may be defined after the call). Calling it again for the same name from
# another directory (e.g. a demo and a test both listing scene_spv.h) reuses the first rule: one file
# must have one rule, or Ninja refuses the build. Returns nothing.
function(gfxep_vkp_shader name file)
  if(NOT GLSLC)
    message(FATAL_ERROR "gfxep_vkp_shader(${name}): glslc was not found; guard the call with if(GFXEP_HAVE_VULKAN)")
  endif()
  get_filename_component(source "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(header "${GFXEP_VKP_SHADER_DIR}/${name}_spv.h")
  get_property(known_source GLOBAL PROPERTY "_GFXEP_VKP_SHADER_${name}")
  if(known_source AND NOT known_source STREQUAL source)
    message(FATAL_ERROR "gfxep_vkp_shader(${name}): already compiled from ${known_source}, now asked for ${source}")
  endif()
  if(NOT known_source)
    set_property(GLOBAL PROPERTY "_GFXEP_VKP_SHADER_${name}" "${source}")
    add_custom_command(
      OUTPUT "${header}"
      COMMAND ${CMAKE_COMMAND} -E make_directory "${GFXEP_VKP_SHADER_DIR}"
      COMMAND "${GLSLC}" -O --target-env=vulkan1.2 -mfmt=c -o "${header}" "${source}"
      DEPENDS "${source}"
      COMMENT "glslc: ${file} -> ${name}_spv.h"
      VERBATIM)
    # a target owning the rule, so that targets of other directories can depend on it
    add_custom_target(gfxep_vkp_spv_${name} DEPENDS "${header}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY _GFXEP_VKP_SHADERS "${name}")
  get_property(scan_pending DIRECTORY PROPERTY _GFXEP_VKP_SCAN_PENDING)
  if(NOT scan_pending)
    set_property(DIRECTORY PROPERTY _GFXEP_VKP_SCAN_PENDING TRUE)
    cmake_language(DEFER CALL _gfxep_vkp_attach_shaders)
  endif()
endfunction()

# Runs at the end of a directory that called gfxep_vkp_shader: finds the targets listing a generated
# header by its file name and gives them the include dir and the dependency.
function(_gfxep_vkp_attach_shaders)
  get_property(names DIRECTORY PROPERTY _GFXEP_VKP_SHADERS)
  list(REMOVE_DUPLICATES names)
  get_property(targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "UTILITY")
      continue()
    endif()
    get_target_property(sources ${target} SOURCES)
    if(NOT sources)
      continue()
    endif()
    foreach(name IN LISTS names)
      foreach(src IN LISTS sources)
        get_filename_component(src_name "${src}" NAME)
        if(src_name STREQUAL "${name}_spv.h")
          if(type STREQUAL "INTERFACE_LIBRARY")
            target_include_directories(${target} INTERFACE "${GFXEP_VKP_SHADER_DIR}")
          else()
            target_include_directories(${target} PRIVATE "${GFXEP_VKP_SHADER_DIR}")
          endif()
          add_dependencies(${target} gfxep_vkp_spv_${name})
          break()
        endif()
      endforeach()
    endforeach()
  endforeach()
endfunction()

find_package(Vulkan QUIET)
find_program(GLSLC glslc)

if(NOT Vulkan_FOUND OR NOT GLSLC)
  if(NOT Vulkan_FOUND)
    set(_gfxep_vkp_missing "the Vulkan loader and headers (find_package(Vulkan))")
  else()
    set(_gfxep_vkp_missing "glslc")
  endif()
  message(STATUS "gfxep: no ${_gfxep_vkp_missing}; not building the Vulkan producer (gfxep_vkp), its test or the demo")
  unset(GFXEP_HAVE_VULKAN)
  unset(GFXEP_HAVE_VULKAN CACHE)
  return()
endif()

gfxep_vkp_shader(fill "${CMAKE_CURRENT_LIST_DIR}/shaders/fill.comp")
gfxep_vkp_shader(scene "${CMAKE_CURRENT_LIST_DIR}/shaders/scene.comp")
gfxep_vkp_shader(present "${CMAKE_CURRENT_LIST_DIR}/shaders/present.comp")

# scene_spv.h and present_spv.h are listed so that they build (and are checked by glslc) with the
# library; the library itself embeds only fill_spv.h.
add_library(gfxep_vkp STATIC "${CMAKE_CURRENT_LIST_DIR}/vk_producer.c"
  "${GFXEP_VKP_SHADER_DIR}/fill_spv.h" "${GFXEP_VKP_SHADER_DIR}/scene_spv.h" "${GFXEP_VKP_SHADER_DIR}/present_spv.h")
# PUBLIC shader dir: whoever links gfxep_vkp can #include "scene_spv.h" / "present_spv.h"
target_include_directories(gfxep_vkp PUBLIC "${PROJECT_SOURCE_DIR}/tools/vkp" "${GFXEP_VKP_SHADER_DIR}")
target_link_libraries(gfxep_vkp PUBLIC Vulkan::Vulkan)

set(GFXEP_HAVE_VULKAN TRUE)
set(GFXEP_HAVE_VULKAN TRUE CACHE INTERNAL "the Vulkan producer library gfxep_vkp is built")
