/* gfxep — per-frame GPU timings and the watchdog on imported-semaphore waits (include/gfxep.h).
 *
 * A FRAME is what one stream does for one Run: the imported-semaphore waits queued on the stream
 * before the Run, the Run, and the signals queued after it. Each is marked by device stamps written on
 * the stream (backend stamp_write: no flush, no host wait): before and after the waits, at the start
 * and end of the Run, after the signals. A frame opens with its first wait or its Run and closes when
 * the next frame opens on the stream or when it is read complete.
 *
 * Frames live in a ring per device (gfx_frame_log): waits and signals come through the device's
 * importer, which knows no session, and the Run that follows names the session. Reading resolves the
 * frames the GPU has passed; the watchdog thread looks at frames whose waits have not completed.
 */
#ifndef GFXEP_ORT_FRAME_TIMING_H
#define GFXEP_ORT_FRAME_TIMING_H

#include "exec/run_stamps.h"
#include "ort/device.h"

struct gfx_ep;

/* The device's frame log, created on first use (NULL, logged once, where the backend has no stamps or
 * they cannot be created). Destroyed with gfx_frame_log_destroy when the device set goes. */
typedef struct gfx_frame_log gfx_frame_log;
gfx_frame_log* gfx_frame_log_for(gfx_device* d);
void gfx_frame_log_destroy(gfx_device* d);
/* With no session left on the device (the set's lock held): drops the log, whose stamps live on the
 * backend's current device object (the renderer's VkDevice after InitGraphicsInterop); a later session
 * makes a new one. Called around InitGraphicsInterop and DeinitGraphicsInterop. Kept while stalled. */
void gfx_frame_log_retire(gfx_device* d);
/* The watchdog's limit for waits on this device that no Run has claimed yet (0: off); the newest
 * session's option sets it. A wait followed by a Run is watched with that Run's session's limit. */
void gfx_frame_log_set_timeout(gfx_device* d, unsigned ms);

/* Importer hooks around a backend wait / signal on `stream` (a native stream of device d).
 * `after` is 0 before the backend call and 1 after it succeeded. */
void gfx_frames_wait(gfx_device* d, void* stream, void* semaphore, uint64_t value, int after);
void gfx_frames_signal(gfx_device* d, void* stream, int after);

/* Run hooks: OnRunStart; around each Compute (not during a capture): gfx_frames_compute fills `req`
 * with what the partition's run should stamp (the Run's begin in its first partition, its end in its
 * last; nothing when no frame is recorded), the run stamps it (gfx_model_run_stamped), and
 * gfx_frames_compute_done records how; OnRunEnd (the stream of the Run's last Compute, NULL when no
 * Compute ran) writes the end where no partition did. */
void gfx_frames_run_start(struct gfx_ep* ep, const OrtRunOptions* run_options);
void gfx_frames_compute(struct gfx_ep* ep, void* stream, gfx_run_stamps* req);
void gfx_frames_compute_done(struct gfx_ep* ep, void* stream, gfx_run_stamps* req);
void gfx_frames_run_end(struct gfx_ep* ep, void* stream);

#endif
