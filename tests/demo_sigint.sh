#!/usr/bin/env bash
# Ctrl-C in the middle of the demo: it must finish the frames in flight, release everything, write its
# report and exit 0, within a bounded time.
set -u
demo=$1 out=$2
rm -rf "$out"
"$demo" --frames 100000 --width 64 --height 48 --out "$out" >"$out.log" 2>&1 &
pid=$!
sleep 4
kill -INT "$pid"
for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then
  kill -KILL "$pid"
  echo "FAIL: the demo did not exit within 30 s of Ctrl-C"
  exit 1
fi
wait "$pid"
rc=$?
grep -q "stopped by Ctrl-C" "$out.log" || { echo "FAIL: no shutdown message"; cat "$out.log"; exit 1; }
[ -s "$out/report.json" ] || { echo "FAIL: no report after Ctrl-C"; exit 1; }
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc after Ctrl-C"; cat "$out.log"; exit 1; }
echo "demo stopped cleanly on Ctrl-C"
