/* gfxep — where a run's device time was stamped, for the per-frame timings.
 *
 * A run stamps its begin and end either with slot stamps written around its work (backend.h:
 * stamp_write), which costs the host a call each, or, when it replays a recording that stamps itself
 * (backend.h: replay stamps), by naming the ring and the replay, which costs the host nothing. A ring
 * belongs to one recorded graph and is shared, by reference, with the frames that still want to read
 * it, so that it outlives the graph as long as a reader needs it.
 */
#ifndef GFXEP_EXEC_RUN_STAMPS_H
#define GFXEP_EXEC_RUN_STAMPS_H

#include <stdint.h>

#include "backend/backend.h"

typedef struct gfx_replay_stamps gfx_replay_stamps;

/* A ring of `capacity` replays on dev, with one reference. */
gfx_status gfx_replay_stamps_create(gfx_dev* dev, int capacity, gfx_replay_stamps** out);
gfx_replay_stamps* gfx_replay_stamps_ref(gfx_replay_stamps* r);
void gfx_replay_stamps_unref(gfx_replay_stamps* r);
/* Records the begin (end = 0) or end (end = 1) stamp into the capture in progress on stream. */
gfx_status gfx_replay_stamps_record(gfx_replay_stamps* r, int end, void* stream);
/* Replay n's begin and end on the device clock: GFX_ERR_NOT_READY until it ended, GFX_ERR_EXPIRED once
 * overwritten. */
gfx_status gfx_replay_stamps_read_ns(gfx_replay_stamps* r, uint64_t replay, uint64_t* begin_ns, uint64_t* end_ns);

/* What a run is asked to stamp, and how it did. */
typedef struct gfx_run_stamps {
  /* in: slot stamps (backend.h) for a run that does not replay a self-stamping recording; -1: none */
  void* stamps;
  int begin_slot, end_slot;
  /* out */
  int begin_written, end_written; /* slot stamps written */
  gfx_replay_stamps* ring;        /* the run replayed a self-stamping recording: replay `replay` of this
                                   * ring holds its begin and end (a reference the caller releases) */
  uint64_t replay;
} gfx_run_stamps;

/* Writes the request's begin (end = 0) or end (end = 1) slot stamp on stream, if it asks for one
 * (st may be NULL), and notes that it did; a failure is logged and costs the frame its figures, never
 * the run. */
void gfx_run_stamps_write(gfx_dev* dev, gfx_run_stamps* st, int end, void* stream);

#endif
