/* gfxep-run — runs an ONNX model through ONNX Runtime with gfxep and with ORT's own CPU EP on the same
 * seeded random inputs, then prints where each node ran, how close the outputs are, and timings.
 *
 *   gfxep-run [--backend cuda|reference] [--runs N] [--dyn D] [--atol A] [--rtol R] [--quiet] model.onnx
 *
 * --backend picks the gfxep device (default: cuda when a CUDA device is offered, else reference).
 * Exit status: 0 when the outputs agree within the tolerances, 1 when they do not, 2 on errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortkit.h"

static void usage(void) {
  fprintf(stderr,
          "usage: gfxep-run [--backend cuda|reference] [--runs N] [--dyn D] [--atol A] [--rtol R] [--quiet] "
          "model.onnx\n");
}

static double percentile(double* v, int n, double p) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  int k = (int)(p * (n - 1) + 0.5);
  return v[k];
}

/* Median and p99 of `runs` timed runs after one warm-up, in milliseconds. */
static int time_runs(ortkit* k, OrtSession* s, const ortkit_tensor* in, size_t n_in, int runs, double* p50,
                     double* p99) {
  double* ms = calloc((size_t)runs + 1, sizeof *ms);
  for (int r = -1; r < runs; r++) {
    ortkit_tensor* out = NULL;
    size_t n_out = 0;
    uint64_t t0 = ortkit_now_ns();
    if (ortkit_failed(k, ortkit_run(k, s, NULL, in, n_in, &out, &n_out), "run")) {
      free(ms);
      return -1;
    }
    if (r >= 0) ms[r] = (double)(ortkit_now_ns() - t0) / 1e6;
    ortkit_tensors_free(out, n_out);
  }
  *p50 = percentile(ms, runs, 0.5);
  *p99 = percentile(ms, runs, 0.99);
  free(ms);
  return 0;
}

int main(int argc, char** argv) {
  const char* backend = NULL;
  const char* model = NULL;
  int runs = 20, quiet = 0;
  long dyn = 64;
  double abs_tol = 1e-4, rel_tol = 1e-4;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--backend") && i + 1 < argc) backend = argv[++i];
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dyn") && i + 1 < argc) dyn = strtol(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--atol") && i + 1 < argc) abs_tol = atof(argv[++i]);
    else if (!strcmp(argv[i], "--rtol") && i + 1 < argc) rel_tol = atof(argv[++i]);
    else if (!strcmp(argv[i], "--quiet")) quiet = 1;
    else if (argv[i][0] == '-') {
      usage();
      return 2;
    } else model = argv[i];
  }
  if (!model || runs < 1 || dyn < 1) {
    usage();
    return 2;
  }

  ortkit k;
  char err[512];
  if (ortkit_open(&k, NULL, ORT_LOGGING_LEVEL_WARNING, err, sizeof err)) {
    fprintf(stderr, "gfxep-run: %s\n", err);
    return 2;
  }
  printf("ONNX Runtime %s (%s)\nplugin %s\n", k.version, k.lib_path, ortkit_plugin_path());
  /* the reference backend is only offered to a registration that asks for it */
  int want_ref = backend && !strcmp(backend, "reference");
  const char* reg = want_ref ? "gfxep.reference" : "gfxep";
  if (ortkit_failed(&k, k.api->RegisterExecutionProviderLibrary(k.env, reg, ortkit_plugin_path()), "register")) {
    ortkit_close(&k);
    return 2;
  }
  const OrtEpDevice* dev[8];
  size_t n_dev = ortkit_find_devices(&k, backend, dev, 8);
  if (n_dev == 0 && !backend) {
    printf("no CUDA device offered by gfxep; using the reference backend (plain C on the CPU, slow by design)\n");
    backend = "reference";
    if (ortkit_failed(&k, k.api->RegisterExecutionProviderLibrary(k.env, "gfxep.reference", ortkit_plugin_path()),
                      "register reference")) {
      ortkit_close(&k);
      return 2;
    }
    n_dev = ortkit_find_devices(&k, "reference", dev, 8);
  }
  if (n_dev == 0) {
    fprintf(stderr, "gfxep-run: gfxep offers no %s device here\n", backend ? backend : "");
    ortkit_close(&k);
    return 2;
  }
  const char* uuid = ortkit_device_meta(&k, dev[0], "gfxep.device_uuid");
  printf("gfxep device: %s (%s backend%s%s)\n", ortkit_device_meta(&k, dev[0], "gfxep.device_name"),
         ortkit_device_meta(&k, dev[0], "gfxep.backend"), uuid ? ", uuid " : "", uuid ? uuid : "");

  int rc = 2;
  OrtSession *ep_session = NULL, *cpu_session = NULL;
  ortkit_tensor *in = NULL, *out_ep = NULL, *out_cpu = NULL;
  size_t n_in = 0, n_out_ep = 0, n_out_cpu = 0;
  if (ortkit_failed(&k, ortkit_session(&k, model, dev[0], NULL, NULL, 0, &ep_session), "session with gfxep") ||
      ortkit_failed(&k, ortkit_session(&k, model, NULL, NULL, NULL, 0, &cpu_session), "session with the CPU EP") ||
      ortkit_failed(&k, ortkit_random_inputs(&k, ep_session, 42, dyn, &in, &n_in), "inputs"))
    goto done;
  size_t on_gfxep = 0, on_other = 0;
  if (!quiet) printf("node placement:\n");
  if (ortkit_failed(&k, ortkit_placement(&k, ep_session, &on_gfxep, &on_other, !quiet), "placement")) goto done;
  printf("nodes on gfxep: %zu, on other EPs: %zu\n", on_gfxep, on_other);
  if (ortkit_failed(&k, ortkit_run(&k, ep_session, NULL, in, n_in, &out_ep, &n_out_ep), "run with gfxep") ||
      ortkit_failed(&k, ortkit_run(&k, cpu_session, NULL, in, n_in, &out_cpu, &n_out_cpu), "run with the CPU EP"))
    goto done;
  ortkit_diff d;
  int bad = n_out_ep != n_out_cpu || ortkit_compare(out_ep, out_cpu, n_out_ep, abs_tol, rel_tol, &d);
  printf("agreement with ORT's CPU EP: max abs error %.3g, max rel error %.3g, %zu elements outside atol %.1g + rtol "
         "%.1g -> %s\n",
         d.max_abs, d.max_rel, d.mismatched, abs_tol, rel_tol, bad ? "MISMATCH" : "match");
  double ep50, ep99, cpu50, cpu99;
  if (time_runs(&k, ep_session, in, n_in, runs, &ep50, &ep99) ||
      time_runs(&k, cpu_session, in, n_in, runs, &cpu50, &cpu99))
    goto done;
  printf("latency over %d runs, host inputs and outputs: gfxep p50 %.3f ms p99 %.3f ms; CPU EP p50 %.3f ms p99 %.3f "
         "ms\n",
         runs, ep50, ep99, cpu50, cpu99);
  rc = bad ? 1 : 0;
done:
  ortkit_tensors_free(in, n_in);
  ortkit_tensors_free(out_ep, n_out_ep);
  ortkit_tensors_free(out_cpu, n_out_cpu);
  if (ep_session) k.api->ReleaseSession(ep_session);
  if (cpu_session) k.api->ReleaseSession(cpu_session);
  ortkit_close(&k);
  return rc;
}
