# gfxep — the Windows build's tests (included from the top-level CMakeLists when cross-compiling with
# MinGW-w64): ONNX Runtime's own Windows x64 build (onnxruntime.dll from the pinned npm packages,
# tools/setup-ort.sh) loads gfxep.dll under Wine (Debian's wine64) and runs the ORT-level tests on
# the reference backend: device listing, registration cycles, models against ORT's CPU EP, bad input.
# cmocka is Debian's source package, cross-compiled by tools/setup-windows.sh.

find_path(CMOCKA_INCLUDE_DIR cmocka.h REQUIRED)
find_library(CMOCKA_LIBRARY NAMES cmocka-static cmocka REQUIRED)
find_program(GFXEP_WINE NAMES wine64 wine PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
find_program(GFXEP_OBJDUMP x86_64-w64-mingw32-objdump)

# Unix paths as the Windows programs see them under Wine (its drive Z: is the Unix root)
set(GFXEP_WINE_ROOT "Z:")
set(win_env
  "WINEPREFIX=${PROJECT_BINARY_DIR}/wine-prefix" "WINEDEBUG=-all" "WINEDLLOVERRIDES=mscoree,mshtml="
  "GFXEP_MODELS_DIR=${GFXEP_WINE_ROOT}${GFXEP_MODELS_DIR}"
  "GFXEP_PLUGIN=${GFXEP_WINE_ROOT}$<TARGET_FILE:gfxep>")

# gfxep.dll exports exactly what ONNX Runtime looks up
if(GFXEP_OBJDUMP)
  add_test(NAME windows_exports COMMAND bash -c
           "names=$(\"$1\" -p \"$2\" | awk '/\\[Ordinal\\/Name Pointer\\] Table/ {on = 1; next} on && /\\[/ {print $NF} on && !NF {exit}' | LC_ALL=C sort | tr '\\n' ' ');
            echo \"exports: $names\"; [ \"$names\" = 'CreateEpFactories ReleaseEpFactory gfxep_read_frame_timings ' ]"
           windows_exports "${GFXEP_OBJDUMP}" $<TARGET_FILE:gfxep>)
endif()

if(NOT GFXEP_WINE)
  message(STATUS "gfxep: no wine64; the Windows build is compiled and linked, not run")
  return()
endif()

# the Wine prefix, created once before the tests that run programs in it
add_test(NAME wine_prefix COMMAND "${GFXEP_WINE}" cmd /c exit 0)
set_tests_properties(wine_prefix PROPERTIES FIXTURES_SETUP wine TIMEOUT 300 ENVIRONMENT "${win_env}")

# name, ONNX Runtime DLL, program, arguments...
function(gfxep_wine_test name ort)
  add_test(NAME ${name} COMMAND "${GFXEP_WINE}" ${ARGN})
  set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED wine LABELS windows TIMEOUT 600
    ENVIRONMENT "${win_env};GFXEP_ORT_LIB=${GFXEP_WINE_ROOT}${ort};GFXEP_TEST_BACKEND=reference")
endfunction()

# the ORT-level tests of the Linux build, the same sources: the plugin through ORT against its CPU EP
# (test_ort), bad input and faults (test_faults), the interop API's argument rules and host-memory
# imports (test_interop), threads and registration cycles (test_concurrency); on ORT 1.29 and 1.30
foreach(t test_ort test_faults test_interop test_concurrency)
  add_executable(${t} tests/${t}.c)
  target_include_directories(${t} PRIVATE "${CMOCKA_INCLUDE_DIR}")
  target_link_libraries(${t} PRIVATE gfxep_ortload "${CMOCKA_LIBRARY}" Threads::Threads m)
  target_compile_definitions(${t} PRIVATE GFXEP_MODELS_DIR="${GFXEP_WINE_ROOT}${GFXEP_MODELS_DIR}")
  # cmocka.h marks its message functions with the Microsoft printf format, which knows no %zu; the
  # library itself is built with MinGW's C99 printf (tools/setup-windows.sh), so messages print right
  target_compile_options(${t} PRIVATE -Wno-format)
  add_dependencies(${t} gfxep gfxep_models)
  string(REPLACE "test_" "" short ${t})
  gfxep_wine_test(win_${short}129_reference "${GFXEP_ORT_LIB}" $<TARGET_FILE:${t}>)
  if(EXISTS "${GFXEP_ORT130_LIB}")
    gfxep_wine_test(win_${short}130_reference "${GFXEP_ORT130_LIB}" $<TARGET_FILE:${t}>)
  endif()
endforeach()

# every test model through gfxep-run, against ORT's CPU EP (the list written next to the models)
file(WRITE "${PROJECT_BINARY_DIR}/write_model_list.cmake" [=[
file(GLOB models "${DIR}/*.onnx")
list(TRANSFORM models PREPEND "${ROOT}")
list(JOIN models "\n" text)
file(WRITE "${DIR}/list.txt" "${text}\n")
]=])
add_custom_command(TARGET gfxep_models POST_BUILD
  COMMAND ${CMAKE_COMMAND} -DDIR=${GFXEP_MODELS_DIR} -DROOT=${GFXEP_WINE_ROOT} -P "${PROJECT_BINARY_DIR}/write_model_list.cmake")
gfxep_wine_test(win_models_reference "${GFXEP_ORT_LIB}" $<TARGET_FILE:gfxep-run> --backend reference --runs 0 --quiet
                --atol 1e-5 --rtol 1e-4 --models "${GFXEP_WINE_ROOT}${GFXEP_MODELS_DIR}/list.txt")
# the README's C example, linked against onnxruntime.dll (copied next to it)
add_custom_command(TARGET gfxep-minimal POST_BUILD
  COMMAND ${CMAKE_COMMAND} -E copy_if_different "${GFXEP_ORT_LIB}" "$<TARGET_FILE_DIR:gfxep-minimal>/onnxruntime.dll")
gfxep_wine_test(win_example_c_reference "${GFXEP_ORT_LIB}" $<TARGET_FILE:gfxep-minimal>
                "${GFXEP_WINE_ROOT}$<TARGET_FILE:gfxep>" "${GFXEP_WINE_ROOT}${GFXEP_MODELS_DIR}/denoise_small.onnx"
                reference gfxep.reference)

# the Vulkan backend (gfxep_vulkan.dll) on Wine's Vulkan (winevulkan), which hands the calls to this
# machine's loader and Mesa's CPU Vulkan driver (lavapipe): the C example and the test models.
# Wine's Vulkan lives in its display driver (winex11), so these run on a virtual X server (xvfb-run)
find_program(GFXEP_XVFB_RUN xvfb-run)
if(TARGET gfxep_vulkan AND GFXEP_XVFB_RUN)
  set(lvp_icd "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
  function(gfxep_wine_vulkan_test name)
    add_test(NAME ${name} COMMAND "${GFXEP_XVFB_RUN}" -a "${GFXEP_WINE}" ${ARGN})
    set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED wine LABELS "windows;vulkan" TIMEOUT 600 RUN_SERIAL ON
      ENVIRONMENT "${win_env};GFXEP_ORT_LIB=${GFXEP_WINE_ROOT}${GFXEP_ORT_LIB};VK_ICD_FILENAMES=${lvp_icd};VK_DRIVER_FILES=${lvp_icd}")
  endfunction()
  gfxep_wine_vulkan_test(win_example_c_vulkan $<TARGET_FILE:gfxep-minimal> "${GFXEP_WINE_ROOT}$<TARGET_FILE:gfxep>"
                         "${GFXEP_WINE_ROOT}${GFXEP_MODELS_DIR}/denoise_small.onnx" vulkan gfxep.vulkan)
  gfxep_wine_vulkan_test(win_models_vulkan $<TARGET_FILE:gfxep-run> --backend vulkan --runs 0 --quiet
                         --atol 1e-5 --rtol 1e-4 --models "${GFXEP_WINE_ROOT}${GFXEP_MODELS_DIR}/list.txt")
  # the devices gfxep offers there (lavapipe through Wine among them), and their interop capabilities
  gfxep_wine_vulkan_test(win_info $<TARGET_FILE:gfxep-info>)
  # gfxep.dll finds gfxep_vulkan.dll next to itself
  add_dependencies(gfxep-run gfxep_vulkan)
else()
  gfxep_wine_test(win_info "${GFXEP_ORT_LIB}" $<TARGET_FILE:gfxep-info>)
endif()
