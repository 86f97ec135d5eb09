#!/usr/bin/python3
"""Plots gfxep-demo's per-frame timings (frames.csv, report.json in the demo's output folder) into
report.png: GPU time per stage of the zero-copy pipeline, and frame latency of both pipelines.
Uses Debian's python3-matplotlib. Usage: plot_report.py OUT_DIR
"""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(out_dir):
    with open(os.path.join(out_dir, "report.json")) as f:
        report = json.load(f)
    rows = {}
    with open(os.path.join(out_dir, "frames.csv")) as f:
        for r in csv.DictReader(f):
            rows.setdefault(r["pipeline"], []).append(r)

    def col(pipeline, key):
        return [float(r[key]) if r[key] else float("nan") for r in rows.get(pipeline, [])]

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
    ax = axes[0]
    # the zero-copy pipeline ("interop", or "interop_one_queue" on the renderer's own queue)
    zero_copy = next((name for name in rows if name.startswith("interop")), None)
    one_queue = report.get("gfxep_on_the_renderers_queue", False)
    if zero_copy:
        between = ("wait + inference + signal on the one queue" if one_queue
                   else "wait + inference + signal, with both hops")
        for key, label in (("gpu_render_us", "render (Vulkan)"),
                           ("gpu_between_us", between),
                           ("gpu_present_us", "present (Vulkan)"),
                           ("gpu_round_trip_us", "frame round trip (GPU clock)")):
            ax.plot(col(zero_copy, key), label=label, linewidth=0.8)
        # gfxep's own per-frame timings (include/gfxep.h): its part of the frame, split
        for key, label in (("gpu_gfxep_wait_us", "gfxep: semaphore wait (its frame timings)"),
                           ("gpu_gfxep_inference_us", "gfxep: inference (its frame timings)"),
                           ("gpu_gfxep_signal_us", "gfxep: signal (its frame timings)")):
            values = col(zero_copy, key) if rows.get(zero_copy) and key in rows[zero_copy][0] else []
            if any(v == v for v in values):  # not all NaN
                ax.plot(values, label=label, linewidth=0.8, linestyle="--")
        ax.set_title(f"zero-copy pipeline ({report.get('backend', '?')} backend): GPU time per stage")
        ax.set_ylabel("microseconds")
    elif rows:
        # no zero-copy pipeline ran (no GPU): the host pipeline's per-frame time instead of an empty panel
        name = next(iter(rows))
        ax.plot(col(name, "host_us"), label=f"{name}: host time per frame", linewidth=0.8)
        ax.set_title(f"{name} ({report.get('backend', '?')} backend): host time per frame")
        ax.set_ylabel("microseconds")
    ax.set_xlabel("frame")
    if rows:
        ax.legend(fontsize=8)
    ax = axes[1]
    labels, p50, p99 = [], [], []
    for name, p in report["pipelines"].items():
        key = "gpu_us_frame_round_trip" if "gpu_us_frame_round_trip" in p and name.startswith("interop") \
            else "host_us_frame_latency"
        if key in p:
            labels.append(f"{name}\n({'GPU clock' if key.startswith('gpu') else 'host clock'})")
            p50.append(p[key]["p50"])
            p99.append(p[key]["p99"])
    xs = range(len(labels))
    ax.bar([x - 0.2 for x in xs], p50, width=0.4, label="p50")
    ax.bar([x + 0.2 for x in xs], p99, width=0.4, label="p99")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels)
    ax.set_ylabel("microseconds per frame")
    ax.set_title(f"{report['width']}x{report['height']}, {report['gfxep_device']}")
    ax.legend()
    fig.suptitle(f"gfxep-demo {report['date']}: model {os.path.basename(report['model'])}, "
                 f"ORT {report['onnxruntime']}")
    fig.tight_layout()
    path = os.path.join(out_dir, "report.png")
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "demo-out"))
