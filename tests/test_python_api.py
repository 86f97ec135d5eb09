"""gfxep through ONNX Runtime's Python API: register the plugin, find its device, run a model on it
and compare with ORT's CPU EP. Needs `onnxruntime` >= 1.24 and numpy (the GPU machine has both).

Environment: GFXEP_PLUGIN (libgfxep.so), GFXEP_MODELS_DIR, GFXEP_TEST_BACKEND (cuda | vulkan | reference).
Prints one JSON line and exits non-zero on failure.
"""
import json
import os
import sys

import numpy as np
import onnxruntime as ort


def main():
    plugin = os.environ["GFXEP_PLUGIN"]
    models = os.environ["GFXEP_MODELS_DIR"]
    backend = os.environ.get("GFXEP_TEST_BACKEND", "cuda")
    # plain "gfxep" offers the GPUs of every backend; "gfxep.<backend>" that backend only, software
    # devices (reference, lavapipe) included
    registration = "gfxep" if backend == "cuda" else "gfxep." + backend
    ort.register_execution_provider_library(registration, plugin)
    devices = [d for d in ort.get_ep_devices()
               if d.ep_name == "gfxep" and d.ep_metadata.get("gfxep.backend") == backend]
    if not devices:
        raise SystemExit(f"no gfxep {backend} device in get_ep_devices()")
    dev = devices[0]
    result = {"ort_version": ort.__version__, "device": dict(dev.ep_metadata),
              "hardware": {"type": str(dev.device.type), "vendor_id": dev.device.vendor_id,
                           "metadata": dict(dev.device.metadata)}}
    rng = np.random.default_rng(5)
    agreement = {}
    for name in ("add_relu", "conv_net", "partial", "denoise_small"):
        path = os.path.join(models, name + ".onnx")
        so = ort.SessionOptions()
        so.add_provider_for_devices([dev], {})
        ep = ort.InferenceSession(path, sess_options=so)
        cpu = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        feeds = {}
        for i in ep.get_inputs():
            shape = [d if isinstance(d, int) else 24 for d in i.shape]
            feeds[i.name] = rng.uniform(-1, 1, shape).astype(np.float32)
        got = ep.run(None, feeds)
        want = cpu.run(None, feeds)
        err = max(float(np.max(np.abs(g - w))) for g, w in zip(got, want))
        ok = all(np.allclose(g, w, atol=1e-5, rtol=1e-4) for g, w in zip(got, want))
        agreement[name] = {"max_abs": err, "ok": ok}
        del ep, so
    result["models"] = agreement
    # ORT's rule: unregister only once nothing refers to the library's devices any more
    del dev, devices
    ort.unregister_execution_provider_library(registration)
    passed = sum(1 for v in agreement.values() if v["ok"])
    print(json.dumps({"python_api": result}))
    print(f"{passed} passed, {len(agreement) - passed} failed")
    return 0 if passed == len(agreement) else 1


if __name__ == "__main__":
    sys.exit(main())
