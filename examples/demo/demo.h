/* gfxep demo — shared between the demo's files. */
#ifndef GFXEP_DEMO_H
#define GFXEP_DEMO_H

#include <stdint.h>

#include "../../include/gfxep.h"
#include "ortkit.h"
#include "stats.h"
#include "vk_producer.h"

#define DEMO_MAX_IN_FLIGHT 8

typedef enum demo_mode { DEMO_INTEROP = 1, DEMO_HOST = 2, DEMO_BOTH = 3 } demo_mode;

typedef struct demo_options {
  uint32_t width, height; /* 0: the default for the device found */
  int frames;             /* 0: likewise */
  int in_flight;
  int every;
  demo_mode mode;
  float noise;
  const char* model;
  const char* out_dir;
  const char* dump_dir;
  const char* backend;   /* "auto", "cuda", "vulkan" or "reference" */
  const char* precision; /* gfxep's precision option, NULL: its default (fp32) */
} demo_options;

/* One pipeline's measurements. */
typedef struct demo_report {
  const char* name;
  int frames;
  double seconds;              /* wall time of the measured frames */
  series cpu_us;               /* host time to submit one frame (render, inference calls, present) */
  series ort_us;               /* the part of it spent in gfxep's WaitSemaphore + Run + SignalSemaphore */
  series ring_wait_us;         /* host time waiting for a slot to come back (back-pressure, not a stall) */
  series render_us, between_us, present_us, round_trip_us; /* GPU clock, from Vulkan timestamps */
  series frame_us;             /* host clock, serial pipelines: submit to result on the host */
  /* gfxep's own per-frame GPU timings (include/gfxep.h), read once each frame is back: the wait on the
   * render's semaphore, the inference, the signal, and the whole of gfxep's part of the frame */
  series gfxep_wait_us, gfxep_run_us, gfxep_signal_us, gfxep_total_us;
} demo_report;

typedef struct demo_ctx {
  ortkit k;
  gfxep_read_frame_timings_fn read_frames; /* the plugin's export, NULL when absent */
  uint64_t last_frame;                     /* the newest gfxep frame already read */
  const OrtInteropApi* ia;
  const OrtEpDevice* device;
  const char* backend;         /* gfxep.backend of the device: cuda, vulkan or reference */
  const char* registration;    /* the name gfxep was registered under for it */
  int zero_copy;               /* the device imports the renderer's memory: the interop pipeline runs */
  int one_queue;               /* gfxep records on the renderer's own VkDevice and queue (Vulkan backend) */
  int use_semaphores;          /* frames ordered by imported timeline semaphores (else by the one queue) */
  int software;                /* a CPU device (lavapipe, the reference backend): small default sizes */
  vkp_ctx* vk;
  vkp_pipeline *scene, *present;
  OrtExternalResourceImporter* importer;
  OrtSession* session;
  char input_name[128], output_name[128];
  uint32_t width, height;
  int frames;
  int interop_ready;
} demo_ctx;

int demo_open(demo_ctx* ctx, demo_options* o, char* err, size_t n);
void demo_close(demo_ctx* ctx);
int demo_run(demo_ctx* ctx, const demo_options* o);
int demo_dump(demo_ctx* ctx, const demo_options* o);

/* The watchdog: fail with a message if the next `seconds` pass without another demo_arm. */
void demo_arm(const char* stage, unsigned seconds);
int demo_stop_requested(void);

/* demo_pipelines.c */
int demo_run_interop(demo_ctx* ctx, const demo_options* o, demo_report* r);
int demo_run_host(demo_ctx* ctx, const demo_options* o, demo_report* r);
/* Renders one frame, runs it through gfxep (interop) and ORT's CPU EP, and compares. */
int demo_check_frame(demo_ctx* ctx, const demo_options* o, double* max_abs, double* psnr_noisy, double* psnr_out);

/* demo_report.c */
void demo_report_free(demo_report* r);
int demo_report_write(const demo_ctx* ctx, const demo_options* o, const demo_report* reports, int n, double max_abs,
                      double psnr_noisy, double psnr_out);
void demo_progress(const char* what, int done, int total, double fps, double cpu_us);

/* Frames kept for PNGs: written after the measured loop so disk I/O never sits inside a frame. */
typedef struct demo_keep {
  int frame;
  uint32_t* rgba; /* 2W x H */
} demo_keep;

int demo_write_pngs(const demo_ctx* ctx, const char* out_dir, const char* tag, demo_keep* keep, int n);

#endif
