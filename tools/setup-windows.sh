#!/usr/bin/env bash
# Builds gfxep for 64-bit Windows with MinGW-w64 into build-win/ (or $GFXEP_WIN_BUILD_DIR):
# gfxep.dll, gfxep-run.exe, gfxep-info.exe, gfxep-minimal.exe and the ORT-level tests. What it needs
# beyond tools/setup.sh's packages and ONNX Runtime (tools/setup-ort.sh also unpacks ORT's Windows
# DLLs): Debian's wine64 to run the tests, and cmocka for Windows, cross-compiled from Debian's own
# cmocka source package (fetched with apt-get source, which checks it against the signed archive;
# patched and unpacked by dpkg-source) into .deps/win-x64/cmocka.
#
# Not built here: the CUDA module (it needs MSVC and nvcc for Windows; docs/windows.md says what a
# Windows machine needs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GFXEP_WIN_BUILD_DIR:-$root/build-win}
deps=${GFXEP_DEPS:-$root/.deps}
cache=${GFXEP_CACHE:-$HOME/.cache/gfxep}
toolchain="$root/cmake/mingw-w64-x86_64.cmake"

missing=()
command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=(gcc-mingw-w64-x86-64)
[ -x /usr/lib/wine/wine64 ] || command -v wine64 >/dev/null || missing+=(wine64)
command -v dpkg-source >/dev/null || missing+=(dpkg-dev)
# Wine's Vulkan needs its X11 display driver: a virtual X server for the Vulkan tests
command -v xvfb-run >/dev/null || missing+=(xvfb)
command -v xauth >/dev/null || missing+=(xauth)
bash "$root/tools/apt-install.sh" setup-windows ${missing[@]+"${missing[@]}"}
"$root/tools/setup-ort.sh"

# cmocka for Windows, from Debian's source package (the version the Linux build links), with MinGW's
# C99 printf, so that the %zu of the tests' messages prints as on Linux
cmocka="$deps/win-x64/cmocka"
if [ ! -f "$cmocka/include/cmocka.h" ]; then
  src="$cache/debian-src"
  mkdir -p "$src/lists/partial"
  # a private source list, so the machine's own apt configuration is left as it is
  printf 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main\n' \
    > "$src/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$src/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$src/lists")
  # as root, apt would hand the downloads to its _apt user, who cannot write into this cache
  [ "$(id -u)" -eq 0 ] && apt_opts+=(-o APT::Sandbox::User=root)
  echo "setup-windows: fetching Debian's cmocka source package" >&2
  apt-get -qq "${apt_opts[@]}" update
  (cd "$src" && apt-get -qq "${apt_opts[@]}" source --download-only cmocka >/dev/null)
  dsc=$(ls "$src"/cmocka_*.dsc | sort -V | tail -1)
  # the build folder too: its CMake cache names the toolchain file of the checkout that made it
  rm -rf "$src/unpacked" "$src/build" && dpkg-source --no-check -x "$dsc" "$src/unpacked" >/dev/null
  cmake -S "$src/unpacked" -B "$src/build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS=-D__USE_MINGW_ANSI_STDIO=1 -DWITH_STATIC_LIB=ON -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF -DCMAKE_INSTALL_PREFIX="$cmocka" >/dev/null
  cmake --build "$src/build" >/dev/null
  cmake --install "$src/build" >/dev/null
fi

# The Vulkan module links the Vulkan loader, vulkan-1.dll: MinGW gets an import library made from the
# loader's exports (those of Wine's vulkan-1.dll, the one the tests run with) and the Vulkan headers of
# this machine (libvulkan-dev), given to it alone
vulkan="$deps/win-x64/vulkan"
wine_vulkan=/usr/lib/x86_64-linux-gnu/wine/x86_64-windows/vulkan-1.dll
vulkan_args=()
if [ -f /usr/include/vulkan/vulkan_core.h ] && [ -f "$wine_vulkan" ]; then
  if [ ! -f "$vulkan/lib/libvulkan-1.a" ]; then
    rm -rf "$vulkan" && mkdir -p "$vulkan/include" "$vulkan/lib"
    ln -s /usr/include/vulkan "$vulkan/include/vulkan"
    [ -d /usr/include/vk_video ] && ln -s /usr/include/vk_video "$vulkan/include/vk_video"
    { echo "LIBRARY vulkan-1.dll"; echo "EXPORTS"
      x86_64-w64-mingw32-objdump -p "$wine_vulkan" |
        awk '/\[Ordinal\/Name Pointer\] Table/ {on = 1; next} on && /\[/ {print "  " $NF} on && !NF {exit}'
    } > "$vulkan/lib/vulkan-1.def"
    x86_64-w64-mingw32-dlltool -d "$vulkan/lib/vulkan-1.def" -l "$vulkan/lib/libvulkan-1.a"
  fi
  vulkan_args=(-DVulkan_INCLUDE_DIR="$vulkan/include" -DVulkan_LIBRARY="$vulkan/lib/libvulkan-1.a")
fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${vulkan_args[@]}" \
  -DCMAKE_PREFIX_PATH="$cmocka" -DCMOCKA_INCLUDE_DIR="$cmocka/include" \
  -DCMOCKA_LIBRARY="$cmocka/lib/libcmocka-static.a" ${GFXEP_WIN_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "${GFXEP_JOBS:-$(nproc)}"
