"""Per-frame GPU timings from Python: gfxep's reader (include/gfxep.h) through ctypes.

Registers the plugin with ONNX Runtime's Python API, runs a model with the EP options
frame_timings=1 and session_name=..., then reads the frames the GPU has finished from the same
library ORT loaded, and prints them. Needs `onnxruntime` >= 1.24 and numpy.

    python3 examples/frame_timings.py /path/to/libgfxep.so model.onnx [cuda|vulkan|reference]

Prints one JSON line per frame and a summary line; exits non-zero when no frame came back complete.
"""
import ctypes
import json
import sys

import numpy as np
import onnxruntime as ort

GFXEP_FRAME_COMPLETE = 1 << 0
GFXEP_FRAME_HAS_RUN = 1 << 3
GFXEP_FRAME_RUN_SELF_STAMPED = 1 << 6  # the Run's recorded partition stamped itself: no host call


class FrameTiming(ctypes.Structure):
    """gfxep_frame_timing of include/gfxep.h, GFXEP_FRAME_TIMING_VERSION 1, field for field."""
    _fields_ = [
        ("version", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("frame", ctypes.c_uint64),
        ("session_id", ctypes.c_uint64),
        ("session_name", ctypes.c_char * 64),
        ("run", ctypes.c_uint64),
        ("run_tag", ctypes.c_char * 64),
        ("device", ctypes.c_char * 48),
        ("host_queued_ns", ctypes.c_uint64),
        ("host_run_us", ctypes.c_double),
        ("gpu_wait_us", ctypes.c_double),
        ("gpu_run_us", ctypes.c_double),
        ("gpu_signal_us", ctypes.c_double),
        ("gpu_total_us", ctypes.c_double),
        ("n_waits", ctypes.c_uint32),
        ("n_signals", ctypes.c_uint32),
        ("wait_value", ctypes.c_uint64),
        ("wait_current_value", ctypes.c_uint64),
        ("wait_stalled_ms", ctypes.c_double),
    ]


# the C struct is 288 bytes (frame_timing.c asserts it); a mismatch here would read garbage
assert ctypes.sizeof(FrameTiming) == 288, ctypes.sizeof(FrameTiming)


def frame_reader(plugin_path):
    """gfxep_read_frame_timings of the library ORT loaded (the same file is the same library)."""
    lib = ctypes.CDLL(plugin_path)
    read = lib.gfxep_read_frame_timings
    read.argtypes = [ctypes.c_char_p, ctypes.c_uint64, ctypes.POINTER(FrameTiming), ctypes.c_int]
    read.restype = ctypes.c_int
    return read


def main(plugin, model, backend="cuda"):
    registration = "gfxep" if backend == "cuda" else "gfxep." + backend
    ort.register_execution_provider_library(registration, plugin)
    devices = [d for d in ort.get_ep_devices()
               if d.ep_name == "gfxep" and d.ep_metadata.get("gfxep.backend") == backend]
    if not devices:
        raise SystemExit(f"no gfxep {backend} device")
    so = ort.SessionOptions()
    so.add_provider_for_devices([devices[0]], {"frame_timings": "1", "session_name": "python-example"})
    session = ort.InferenceSession(model, sess_options=so)
    feeds = {i.name: np.random.default_rng(1).uniform(-1, 1, [d if isinstance(d, int) else 64 for d in i.shape])
             .astype(np.float32) for i in session.get_inputs()}
    runs = 8
    for r in range(runs):
        opts = ort.RunOptions()
        opts.logid = f"frame-{r}"  # the run tag (RunOptionsSetRunTag) is "logid" in Python
        session.run(None, feeds, opts)
    read = frame_reader(plugin)
    frames = (FrameTiming * 64)()
    n = read(b"python-example", 0, frames, 64)
    complete = 0
    for f in frames[:n]:
        ok = bool(f.flags & GFXEP_FRAME_COMPLETE) and bool(f.flags & GFXEP_FRAME_HAS_RUN) and f.gpu_run_us > 0
        complete += ok
        print(json.dumps({"frame": f.frame, "run": f.run, "tag": f.run_tag.decode(), "device": f.device.decode(),
                          "gpu_run_us": round(f.gpu_run_us, 2), "gpu_total_us": round(f.gpu_total_us, 2),
                          "host_run_us": round(f.host_run_us, 2), "complete": ok,
                          "self_stamped": bool(f.flags & GFXEP_FRAME_RUN_SELF_STAMPED)}))
    del session, so, devices
    ort.unregister_execution_provider_library(registration)
    print(f"{complete} of {runs} runs came back as complete frames")
    return 0 if complete == runs else 1


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    sys.exit(main(*sys.argv[1:4]))
