/* gfxep-demo — the frame pipeline: a headless Vulkan renderer and a neural network sharing the GPU
 * frame after frame, with no copies and no CPU waits.
 *
 * Each frame: a compute shader renders an animated scene (and a noisy version of it) into buffers
 * exported to gfxep -> gfxep waits for the renderer's timeline value, runs the denoiser on the noisy
 * frame in place, and signals its own timeline value -> Vulkan waits for it on the GPU and composes
 * noisy | denoised side by side (RGBA8). Several frames are in flight; every k-th frame is kept and
 * written as a PNG. The same frames are then run through host memory (Vulkan -> CPU -> ORT -> CPU ->
 * Vulkan) for comparison, and one frame is checked numerically against ORT's CPU EP.
 *
 * The device (--backend): gfxep's CUDA device, which imports the renderer's buffers and semaphores
 * (two semaphore hops between Vulkan and CUDA per frame), or gfxep's Vulkan backend on the renderer's
 * own VkDevice and queue (handed over with InitGraphicsInterop: render, inference and present are
 * submissions on one queue, ordered by timeline semaphores where the device exports them, by the
 * queue alone where it does not, as on lavapipe). Where neither is offered it says so and runs the
 * host path on the reference backend at a small resolution (it cannot import GPU memory).
 *
 * Output folder: frame_NNNNN.png, report.json, frames.csv. Ctrl-C stops after the frames in flight
 * and releases everything in order; a GPU wait that does not finish in time fails with a message.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demo.h"

static volatile sig_atomic_t stop_requested;
static const char* watchdog_stage = "start";

static void on_sigint(int sig) {
  (void)sig;
  stop_requested = 1;
}

static void on_watchdog(int sig) {
  (void)sig;
  static const char msg[] = "\ngfxep-demo: a GPU wait did not finish in time; stage: ";
  ssize_t w = write(2, msg, sizeof msg - 1);
  w = write(2, watchdog_stage, strlen(watchdog_stage));
  w = write(2, "\n", 1);
  (void)w;
  _exit(3);
}

void demo_arm(const char* stage, unsigned seconds) {
  watchdog_stage = stage;
  alarm(seconds);
}

int demo_stop_requested(void) { return stop_requested; }

static void usage(FILE* f) {
  fprintf(f,
          "usage: gfxep-demo [options]\n"
          "  --width W --height H   frame size (default 1920x1080; 160x96 on a CPU device)\n"
          "  --frames N             frames per mode (default 300; 30 on a CPU device)\n"
          "  --in-flight K          frames in flight, 1..8 (default 3)\n"
          "  --every E              keep every E-th frame as a PNG (default 60)\n"
          "  --model PATH           ONNX model with input [1,3,H,W] and output [1,3,H,W]\n"
          "  --mode interop|host|both   pipelines to run (default both)\n"
          "  --backend auto|cuda|vulkan|reference   gfxep's device (default auto: cuda, else vulkan, else\n"
          "                         reference); vulkan runs inference on the renderer's own VkDevice and queue\n"
          "  --precision fp32|tf32|fp16   gfxep's precision option (default fp32)\n"
          "  --noise SIGMA          noise added to the rendered frame (default 0.08)\n"
          "  --out DIR              output folder (default demo-out)\n"
          "  --dump DIR             write clean/noisy frame pairs for tools/train_denoiser.py and exit\n");
}

static int parse(int argc, char** argv, demo_options* o) {
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      exit(0);
    }
    if (!v) {
      fprintf(stderr, "gfxep-demo: %s needs a value\n", a);
      return -1;
    }
    i++;
    if (!strcmp(a, "--width")) o->width = (uint32_t)atoi(v);
    else if (!strcmp(a, "--height")) o->height = (uint32_t)atoi(v);
    else if (!strcmp(a, "--frames")) o->frames = atoi(v);
    else if (!strcmp(a, "--in-flight")) o->in_flight = atoi(v);
    else if (!strcmp(a, "--every")) o->every = atoi(v);
    else if (!strcmp(a, "--model")) o->model = v;
    else if (!strcmp(a, "--noise")) o->noise = (float)atof(v);
    else if (!strcmp(a, "--out")) o->out_dir = v;
    else if (!strcmp(a, "--dump")) o->dump_dir = v;
    else if (!strcmp(a, "--backend")) o->backend = v;
    else if (!strcmp(a, "--precision")) o->precision = v;
    else if (!strcmp(a, "--mode")) {
      if (!strcmp(v, "interop")) o->mode = DEMO_INTEROP;
      else if (!strcmp(v, "host")) o->mode = DEMO_HOST;
      else if (!strcmp(v, "both")) o->mode = DEMO_BOTH;
      else {
        fprintf(stderr, "gfxep-demo: --mode %s is not one of interop, host, both\n", v);
        return -1;
      }
    } else {
      fprintf(stderr, "gfxep-demo: unknown option %s\n", a);
      usage(stderr);
      return -1;
    }
  }
  if (o->in_flight < 1 || o->in_flight > DEMO_MAX_IN_FLIGHT) {
    fprintf(stderr, "gfxep-demo: --in-flight %d is not in 1..%d\n", o->in_flight, DEMO_MAX_IN_FLIGHT);
    return -1;
  }
  if ((o->width && (o->width < 16 || o->width > 8192)) || (o->height && (o->height < 16 || o->height > 8192))) {
    fprintf(stderr, "gfxep-demo: frame size %ux%u is outside 16..8192\n", o->width, o->height);
    return -1;
  }
  if (o->every < 1) o->every = 1;
  static const char* const backends[] = {"auto", "cuda", "vulkan", "reference"};
  int known = !o->backend;
  for (size_t i = 0; i < 4 && !known; i++) known = !strcmp(o->backend, backends[i]);
  if (!known) {
    fprintf(stderr, "gfxep-demo: --backend %s is not one of auto, cuda, vulkan, reference\n", o->backend);
    return -1;
  }
  return 0;
}

int main(int argc, char** argv) {
  demo_options o = {.frames = 0, .in_flight = 3, .every = 60, .mode = DEMO_BOTH, .noise = 0.08f,
                    .out_dir = "demo-out"};
  if (parse(argc, argv, &o)) return 2;
  struct sigaction sa = {0};
  sa.sa_handler = on_sigint;
  sigaction(SIGINT, &sa, NULL);
  signal(SIGALRM, on_watchdog);
  if (mkdir(o.out_dir, 0755) && errno != EEXIST) {
    fprintf(stderr, "gfxep-demo: cannot create %s: %s\n", o.out_dir, strerror(errno));
    return 2;
  }
  demo_ctx ctx;
  char err[1024];
  if (demo_open(&ctx, &o, err, sizeof err)) {
    fprintf(stderr, "gfxep-demo: %s\n", err);
    demo_close(&ctx);
    return 2;
  }
  int rc = o.dump_dir ? demo_dump(&ctx, &o) : demo_run(&ctx, &o);
  demo_close(&ctx);
  return rc;
}
