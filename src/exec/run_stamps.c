/* gfxep — replay stamp rings shared between recorded graphs and frame timings (run_stamps.h). */
#include "exec/run_stamps.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "backend/wrap.h"
#include "core/log.h"

struct gfx_replay_stamps {
  gfx_dev* dev;
  void* ring;
  atomic_int refs;
};

gfx_status gfx_replay_stamps_create(gfx_dev* dev, int capacity, gfx_replay_stamps** out) {
  *out = NULL;
  gfx_replay_stamps* r = calloc(1, sizeof *r);
  if (!r) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "out of host memory for replay stamps");
  gfx_status s = gfx_backend_replay_stamps_create(dev, capacity, &r->ring);
  if (s) {
    free(r);
    return s;
  }
  r->dev = dev;
  atomic_init(&r->refs, 1);
  *out = r;
  return NULL;
}

gfx_replay_stamps* gfx_replay_stamps_ref(gfx_replay_stamps* r) {
  if (r) atomic_fetch_add(&r->refs, 1);
  return r;
}

void gfx_replay_stamps_unref(gfx_replay_stamps* r) {
  if (!r || atomic_fetch_sub(&r->refs, 1) != 1) return;
  gfx_backend_replay_stamps_destroy(r->dev, r->ring);
  free(r);
}

gfx_status gfx_replay_stamps_record(gfx_replay_stamps* r, int end, void* stream) {
  return gfx_backend_replay_stamp_record(r->dev, r->ring, end, stream);
}

gfx_status gfx_replay_stamps_read_ns(gfx_replay_stamps* r, uint64_t replay, uint64_t* begin_ns, uint64_t* end_ns) {
  return gfx_backend_replay_stamp_read_ns(r->dev, r->ring, replay, begin_ns, end_ns);
}

void gfx_run_stamps_write(gfx_dev* dev, gfx_run_stamps* st, int end, void* stream) {
  const int slot = st ? (end ? st->end_slot : st->begin_slot) : -1;
  if (!st || !st->stamps || slot < 0) return;
  gfx_status s = gfx_backend_stamp_write(dev, st->stamps, slot, stream);
  if (s) {
    gfx_log(GFX_LOG_WARNING, "gfxep: frame timings: %s", gfx_status_message(s));
    gfx_status_free(s);
    return;
  }
  if (end) st->end_written = 1;
  else st->begin_written = 1;
}
