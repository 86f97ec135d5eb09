#!/usr/bin/env bash
# Prepares a fresh Debian/Ubuntu machine and builds gfxep into build/ (or $GFXEP_BUILD_DIR):
# Debian packages via apt-get (when missing), ONNX Runtime from npm (pinned, hash-checked), then
# CMake + Ninja. The CUDA backend is built when nvcc is found (PATH or /usr/local/cuda).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GFXEP_BUILD_DIR:-$root/build}

packages=(cmake ninja-build gcc libc6-dev pkg-config libcmocka-dev python3 python3-onnx python3-numpy npm openssl ca-certificates)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

"$root/tools/setup-ort.sh"

cuda_args=()
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda_args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cuda_args[@]}" ${GFXEP_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "${GFXEP_JOBS:-$(nproc)}"
