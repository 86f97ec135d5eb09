/* gfxep — what the plugin library exports besides CreateEpFactories: the per-frame GPU timings.
 *
 * For every Run of a session on a gfxep device, gfxep writes device timestamps on the Run's stream,
 * without any host synchronization: where the stream finished waiting on the imported semaphores
 * queued before the Run (OrtInteropApi WaitSemaphore), where inference began and ended, and where the
 * signals queued after it (SignalSemaphore) were reached. Once the GPU has passed them, the
 * application reads the figures of recent frames here. Reading never waits for the GPU.
 *
 * The library is loaded by ONNX Runtime (RegisterExecutionProviderLibrary); find the function in the
 * same file with dlsym / GetProcAddress:
 *
 *   void* lib = dlopen("libgfxep.so", RTLD_NOW | RTLD_NOLOAD);
 *   gfxep_read_frame_timings_fn read = (gfxep_read_frame_timings_fn)dlsym(lib, GFXEP_READ_FRAME_TIMINGS);
 *   gfxep_frame_timing f[16];
 *   int n = read("denoiser", last_seen, f, 16);   // frames of the session named "denoiser"
 *
 * Turn them on per session with the EP option "frame_timings" = "1" (off by default). A Run that replays
 * its recorded partition stamps itself on the device; on the H200 they add about 1 us of host time to a
 * Run, measured A/B by gfxep-bench --frame-timings (docs/interop.md).
 * A session is named by its EP option "session_name" (AppendExecutionProvider_V2 options, or the
 * session config entry "ep.gfxep.session_name"); a Run is told apart by its run tag (RunOptions) and
 * by `run`, the session's count of Runs. Frames are kept in a ring of recent ones per device.
 *
 * Watchdog: a semaphore wait still incomplete `wait_timeout_ms` (EP option, default 5000, 0 = off)
 * after it was queued is reported through ONNX Runtime's logger and here, with
 * GFXEP_FRAME_WAIT_TIMED_OUT, before the frame completes.
 */
#ifndef GFXEP_H
#define GFXEP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GFXEP_FRAME_TIMING_VERSION 1

/* gfxep_frame_timing.flags */
enum {
  GFXEP_FRAME_COMPLETE = 1 << 0,        /* the GPU passed every stamp of the frame; the gpu_* figures are set */
  GFXEP_FRAME_WAIT_TIMED_OUT = 1 << 1,  /* the watchdog fired on this frame's wait (see wait_* fields) */
  GFXEP_FRAME_WAIT_VALUE_KNOWN = 1 << 2, /* wait_current_value holds the semaphore's value when it fired */
  GFXEP_FRAME_HAS_RUN = 1 << 3,         /* the frame has a Run (not only waits and signals) */
  GFXEP_FRAME_WAIT_TIME_UNKNOWN = 1 << 4, /* the backend cannot time the wait itself (Vulkan: the wait and the
                                         * first stamp ride on one submission); gpu_wait_us is -1 */
  GFXEP_FRAME_DEVICE_LOST = 1 << 5,     /* the device was lost before the frame completed */
  GFXEP_FRAME_RUN_SELF_STAMPED = 1 << 6, /* the Run replayed recorded partitions that stamp their own begin
                                          * and end on the device (CUDA graphs): its figures cost the host
                                          * no call */
};

typedef struct gfxep_frame_timing {
  uint32_t version;          /* GFXEP_FRAME_TIMING_VERSION */
  uint32_t flags;            /* GFXEP_FRAME_* */
  uint64_t frame;            /* process-wide frame number, increasing; pass the last one read as after_frame */
  uint64_t session_id;       /* process-unique number of the session's gfxep instance */
  char session_name[64];     /* its EP option session_name ("" when not set) */
  uint64_t run;              /* the session's Run count at this frame, from 1 */
  char run_tag[64];          /* the Run's tag (RunOptionsSetRunTag), "" when none */
  char device[48];           /* "cuda:0", "vulkan:0", "reference:0" */
  uint64_t host_queued_ns;   /* host monotonic clock (CLOCK_MONOTONIC / QueryPerformanceCounter, in ns) when
                              * the frame's first wait or its Run was queued */
  double host_run_us;        /* host time gfxep spent queuing the Run (OnRunStart to OnRunEnd) */
  double gpu_wait_us;        /* device time the stream spent waiting on imported semaphores; 0 without waits;
                              * -1 with GFXEP_FRAME_WAIT_TIME_UNKNOWN */
  double gpu_run_us;         /* device time from the start of inference to its end */
  double gpu_signal_us;      /* from the end of inference to the last signal; 0 without signals */
  double gpu_total_us;       /* from the first stamp of the frame to its last */
  uint32_t n_waits, n_signals;
  uint64_t wait_value;       /* the value the last wait waited for */
  uint64_t wait_current_value; /* with GFXEP_FRAME_WAIT_VALUE_KNOWN: the semaphore's value when the watchdog fired */
  double wait_stalled_ms;    /* with GFXEP_FRAME_WAIT_TIMED_OUT: how long the wait had been pending when it fired */
} gfxep_frame_timing;

/* Copies, oldest first, up to `capacity` frames with a number above `after_frame` that are complete
 * or were reported by the watchdog, of the session named `session_name` (NULL: of every session).
 * Returns how many it copied, or -1 when out is NULL with capacity > 0. Thread-safe; never waits. */
typedef int (*gfxep_read_frame_timings_fn)(const char* session_name, uint64_t after_frame, gfxep_frame_timing* out,
                                           int capacity);
#define GFXEP_READ_FRAME_TIMINGS "gfxep_read_frame_timings"

#ifdef __cplusplus
}
#endif

#endif
