#!/usr/bin/env bash
# Bounded fuzzing of gfxep with libFuzzer: builds three fuzz targets (tests/fuzz/) with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer, replays the known crash reproducers
# (tests/fuzz/crashes/<target>-*), then fuzzes each target for SECONDS (default 20) from a temporary
# copy of its committed corpus (tests/fuzz/corpus/<target>/, never modified here).
#
#   fuzz_ir        the IR and the reference executor, no ONNX Runtime
#   fuzz_options   EP options through ONNX Runtime 1.29 (GFXEP_ORT_LIB, default .deps/ort-1.29)
#   fuzz_importer  the interop importer through ONNX Runtime 1.30 (GFXEP_ORT130_LIB, default
#                  .deps/ort-1.30; skipped when it is absent)
#
# The ORT targets load an instrumented libgfxep.so built here (build/fuzz/libgfxep.so), so gfxep's ORT
# layer is checked by the sanitizers too. A crash, leak or timeout fails the script; its input is
# left in build/fuzz/crashes/. Without clang + libFuzzer the script says why and exits 1, or 0 when
# FUZZ_OPTIONAL=1.
#
# Environment: GFXEP_BUILD_DIR (default build), GFXEP_MODELS_DIR (default $GFXEP_BUILD_DIR/models),
# GFXEP_ORT_LIB, GFXEP_ORT130_LIB, FUZZ_CC (default clang), FUZZ_TARGETS (default all three).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-20}
build=${GFXEP_BUILD_DIR:-$root/build}
out=$build/fuzz
cc=${FUZZ_CC:-clang}
targets=${FUZZ_TARGETS:-fuzz_ir fuzz_options fuzz_importer}
models=${GFXEP_MODELS_DIR:-$build/models}
ort129=${GFXEP_ORT_LIB:-$root/.deps/ort-1.29/lib/libonnxruntime.so}
ort130=${GFXEP_ORT130_LIB:-$root/.deps/ort-1.30/lib/libonnxruntime.so.1}

unavailable() {
  echo "fuzz: $1"
  if [ "${FUZZ_OPTIONAL:-0}" = 1 ]; then
    echo "fuzz: skipped (FUZZ_OPTIONAL=1)"
    exit 0
  fi
  exit 1
}

case $seconds in '' | *[!0-9]*) echo "usage: tools/fuzz.sh [SECONDS]" >&2; exit 2 ;; esac
command -v "$cc" >/dev/null 2>&1 || unavailable "no '$cc' on PATH: libFuzzer needs clang"
mkdir -p "$out/crashes" || exit 1
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
printf 'int LLVMFuzzerTestOneInput(const unsigned char* d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
  >"$probe_dir/probe.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$probe_dir/probe.c" -o "$probe_dir/probe" 2>"$probe_dir/probe.err"; then
  unavailable "$cc cannot build a libFuzzer target with -fsanitize=fuzzer,address,undefined: $(head -c 300 "$probe_dir/probe.err")"
fi

# ---- build (only what is out of date) ----
cflags=(-std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -Wall -Wextra -fno-sanitize-recover=undefined
        -I"$root/src" -I"$root/.deps/ort-1.29/include" -I"$root/tools")
libs=(-ldl -lpthread -lm)
core_src=("$root"/src/core/*.c "$root"/src/ir/*.c)
backend_src=("$root"/src/exec/*.c "$root"/src/backend/*.c "$root"/src/backend/ref/*.c "$root"/src/interop/*.c)

# stale OUT INPUT...: true when OUT is missing or older than an input (or this script)
stale() {
  local target=$1
  shift
  [ -e "$target" ] || return 0
  local f
  for f in "$@" "$root/tools/fuzz.sh"; do [ "$f" -nt "$target" ] && return 0; done
  return 1
}

build_one() { # OUT SOURCES... (sources end at --, then extra flags)
  local target=$1
  shift
  local srcs=() flags=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do srcs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  flags=("$@")
  if stale "$target" "${srcs[@]}" "$root"/src/*/*.h "$root"/src/*/*/*.h "$root"/src/ir/ops.def "$root/tools/ortkit.h" \
    "$root"/tests/fuzz/*.h; then
    echo "fuzz: building $(basename "$target")"
    "$cc" "${cflags[@]}" "${flags[@]}" "${srcs[@]}" -o "$target.tmp" "${libs[@]}" || return 1
    mv "$target.tmp" "$target"
  fi
}

build_failed=0
build_one "$out/libgfxep.so" "$root"/src/ort/*.c "${backend_src[@]}" "${core_src[@]}" -- \
  -fsanitize=fuzzer-no-link,address,undefined -fPIC -shared -fvisibility=hidden \
  "-Wl,--version-script=$root/cmake/gfxep.lds" -Wl,-z,nodelete || build_failed=1
build_one "$out/fuzz_ir" "$root/tests/fuzz/fuzz_ir.c" "${backend_src[@]}" "${core_src[@]}" -- \
  -fsanitize=fuzzer,address,undefined || build_failed=1
for t in fuzz_options fuzz_importer; do
  build_one "$out/$t" "$root/tests/fuzz/$t.c" "$root/tools/ortkit.c" "$root/src/core/dynlib.c" -- -fsanitize=fuzzer,address,undefined \
    "-DGFXEP_DEFAULT_PLUGIN=\"$out/libgfxep.so\"" || build_failed=1
done
if [ $build_failed = 1 ]; then
  echo "fuzz: the build failed"
  echo "fuzz: 0 passed, 1 failed"
  exit 1
fi

# ---- run ----
export ASAN_OPTIONS="allocator_may_return_null=1:fast_unwind_on_malloc=0:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export GFXEP_MODELS_DIR=$models

passed=0
failed=0
skipped=0
for t in $targets; do
  env_vars=()
  case $t in
    fuzz_ir) ;;
    fuzz_options)
      env_vars=(GFXEP_ORT_LIB="$ort129" GFXEP_PLUGIN="$out/libgfxep.so")
      if [ ! -e "$models/add_relu.onnx" ]; then
        echo "$t: FAILED: $models/add_relu.onnx is missing (build the project first, or set GFXEP_MODELS_DIR)"
        failed=$((failed + 1))
        continue
      fi ;;
    fuzz_importer)
      env_vars=(GFXEP_ORT_LIB="$ort130" GFXEP_PLUGIN="$out/libgfxep.so")
      if [ ! -e "$ort130" ]; then
        echo "$t: skipped: ONNX Runtime 1.30 not found at $ort130 (tools/setup-ort.sh fetches it)"
        skipped=$((skipped + 1))
        continue
      fi ;;
    *) echo "$t: FAILED: no such target"; failed=$((failed + 1)); continue ;;
  esac
  ok=1
  log=$out/$t.log
  : >"$log"

  # the known crashes first: each must now pass
  for repro in "$root"/tests/fuzz/crashes/"$t"-*; do
    [ -e "$repro" ] || continue
    env "${env_vars[@]}" "$out/$t" -timeout=10 -rss_limit_mb=2048 "$repro" >"$log.replay" 2>&1
    rc=$?
    cat "$log.replay" >>"$log"
    if [ $rc != 0 ]; then
      echo "$t: FAILED: reproducer tests/fuzz/crashes/$(basename "$repro") still fails (exit $rc)"
      # the report with its first stack, so that a failure seen once (e.g. only under load) can be placed
      grep -m1 -A30 -E "invariant violated|runtime error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)" "$log.replay" |
        cut -c1-240 | sed 's/^/    /'
      ok=0
    fi
  done
  rm -f "$log.replay"

  work=$(mktemp -d)
  mkdir -p "$work/corpus"
  if [ -d "$root/tests/fuzz/corpus/$t" ]; then cp -R "$root/tests/fuzz/corpus/$t/." "$work/corpus/"; fi
  dict=()
  [ -f "$root/tests/fuzz/$t.dict" ] && dict=("-dict=$root/tests/fuzz/$t.dict")
  env "${env_vars[@]}" "$out/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "-artifact_prefix=$out/crashes/$t-" "${dict[@]}" "$work/corpus" >"$log.run" 2>&1
  rc=$?
  cat "$log.run" >>"$log"
  rm -rf "$work"
  runs=$(grep -oE '^Done [0-9]+ runs' "$log.run" | tail -1 | awk '{print $2}')
  if grep -q "^$t: skipped" "$log.run" && [ $rc = 0 ] && [ -z "$runs" ]; then
    echo "$t: skipped: $(grep -m1 "^$t: skipped" "$log.run" | sed "s/^$t: skipped: //")"
    skipped=$((skipped + 1))
    rm -f "$log.run"
    continue
  fi
  # after a crash there is no "Done" line: the last status line has the count
  if [ -z "$runs" ]; then runs=$(grep -oE '^#[0-9]+' "$log.run" | tail -1 | tr -d '#'); fi
  if [ $rc != 0 ]; then
    ok=0
    artifact=$(grep -oE "Test unit written to .*" "$log.run" | tail -1 | sed 's/Test unit written to //')
    echo "$t: FAILED (exit $rc) after ${runs:-0} executions; input: ${artifact:-none written} (log: $log)"
    grep -m1 -A30 -E "invariant violated|runtime error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)" "$log.run" |
      cut -c1-240 | sed 's/^/    /'
    # a CI clone is deleted after the run: the input itself, when small, so that it can be committed
    # to tests/fuzz/crashes/ from the log alone (base64 -d)
    if [ -n "$artifact" ] && [ -f "$artifact" ] && [ "$(stat -c %s "$artifact")" -le 8192 ]; then
      echo "    input (base64): $(base64 -w0 "$artifact")"
    fi
  else
    echo "$t: ${runs:-0} executions in ${seconds} s"
  fi
  rm -f "$log.run"
  if [ $ok = 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done

note=""
[ $skipped -gt 0 ] && note=" ($skipped skipped)"
echo "fuzz: $passed passed, $failed failed$note"
[ $failed = 0 ]
