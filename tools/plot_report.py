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
    if "interop" in rows:
        for key, label in (("gpu_render_us", "render (Vulkan)"),
                           ("gpu_between_us", "wait + inference + signal, with both hops"),
                           ("gpu_present_us", "present (Vulkan)"),
                           ("gpu_round_trip_us", "frame round trip (GPU clock)")):
            ax.plot(col("interop", key), label=label, linewidth=0.8)
        ax.set_title("zero-copy pipeline: GPU time per stage")
        ax.set_xlabel("frame")
        ax.set_ylabel("microseconds")
        ax.legend(fontsize=8)
    ax = axes[1]
    labels, p50, p99 = [], [], []
    for name, p in report["pipelines"].items():
        key = "gpu_us_frame_round_trip" if "gpu_us_frame_round_trip" in p and name == "interop" \
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
