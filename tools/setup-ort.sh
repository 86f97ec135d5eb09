#!/usr/bin/env bash
# Fetches ONNX Runtime from the npm registry, pinned by version and integrity hash, and unpacks
# what the build and the tests need into .deps/ (or $GFXEP_DEPS). Downloads are cached in
# $GFXEP_CACHE (default ~/.cache/gfxep) so a second run costs nothing.
#
#   .deps/ort-1.29/include/   ORT 1.29.0 C headers (the ABI gfxep is built against)
#   .deps/ort-1.29/lib/       libonnxruntime.so (ORT 1.29.0, CPU build, Linux x64)
#   .deps/ort-1.30/lib/       libonnxruntime.so.1 (ORT 1.30.0) for the forward-compatibility tests
#   .deps/ort-1.29/win-x64/, .deps/ort-1.30/win-x64/   onnxruntime.dll of the same releases for
#                             Windows x64 (the Windows build's tests run them under Wine)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
deps=${GFXEP_DEPS:-$root/.deps}
cache=${GFXEP_CACHE:-$HOME/.cache/gfxep}
mkdir -p "$deps" "$cache"

# name@version  sha512 integrity as the registry publishes it
packages=(
  "com.github.asus4.onnxruntime@0.4.9 BkzxduSZ9IkeDP6Q8lz2TFU2ie7hSSvS7ZIfzMooExoq0CNzJnuuGaUJ7IsojBgqO4ouD1jXah8OYyJbCN29Fg=="
  "onnxruntime-node@1.30.0 twhs1C2C/BFkz1yc5OY0KIU2GUq6DURO7hD4bx5Q2Qy3nAMJwRXW8xU3NVczE29VA9lolLOYepoD8fjTGOfIqw=="
)

fetch() { # spec integrity -> prints the verified tarball path
  local spec=$1 want=$2 name=${1%@*} version=${1##*@}
  local tgz="$cache/${name}-${version}.tgz"
  if [ ! -f "$tgz" ] || [ "$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)" != "$want" ]; then
    echo "setup-ort: fetching $spec" >&2
    local tmp; tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$spec" >/dev/null)
    mv "$tmp"/*.tgz "$tgz.part"; rm -rf "$tmp"
    local got; got=$(openssl dgst -sha512 -binary "$tgz.part" | base64 -w0)
    if [ "$got" != "$want" ]; then
      rm -f "$tgz.part"
      echo "setup-ort: integrity mismatch for $spec: got sha512-$got, want sha512-$want" >&2
      exit 1
    fi
    mv "$tgz.part" "$tgz"
  fi
  echo "$tgz"
}


set -- ${packages[0]}; t129=$(fetch "$1" "$2")
set -- ${packages[1]}; t130=$(fetch "$1" "$2")

stamp="$deps/.stamp"
want_stamp="$(basename "$t129") $(basename "$t130") win-x64"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ]; then
  exit 0
fi

hdr='package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers'
lib='package/Plugins/Linux/x64/libonnxruntime.so'
win='package/Plugins/Windows/x64'
tmp=$(mktemp -d)
tar -xzf "$t129" -C "$tmp" "$hdr" "$lib" "$win/onnxruntime.dll" "$win/onnxruntime_providers_shared.dll"
rm -rf "$deps/ort-1.29"; mkdir -p "$deps/ort-1.29/include" "$deps/ort-1.29/lib" "$deps/ort-1.29/win-x64"
cp "$tmp/$hdr"/*.h "$deps/ort-1.29/include/"
cp "$tmp/$lib" "$deps/ort-1.29/lib/libonnxruntime.so"
cp "$tmp/$win"/*.dll "$deps/ort-1.29/win-x64/"
rm -rf "$tmp"

lib130='package/bin/napi-v6/linux/x64/libonnxruntime.so.1'
win130='package/bin/napi-v6/win32/x64/onnxruntime.dll'
tmp=$(mktemp -d)
tar -xzf "$t130" -C "$tmp" "$lib130" "$win130"
rm -rf "$deps/ort-1.30"; mkdir -p "$deps/ort-1.30/lib" "$deps/ort-1.30/win-x64"
cp "$tmp/$lib130" "$deps/ort-1.30/lib/libonnxruntime.so.1"
cp "$tmp/$win130" "$deps/ort-1.30/win-x64/onnxruntime.dll"
ln -sf libonnxruntime.so.1 "$deps/ort-1.30/lib/libonnxruntime.so"
rm -rf "$tmp"

echo "$want_stamp" > "$stamp"
echo "setup-ort: ONNX Runtime 1.29.0 and 1.30.0 ready in $deps" >&2
