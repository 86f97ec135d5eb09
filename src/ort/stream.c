/* gfxep — OrtSyncStreamImpl and OrtSyncNotificationImpl over backend streams and events.
 *
 * ORT reads a stream's native handle once, when it wraps the stream, so a stream keeps one backend
 * stream for life. A notification is an event recorded on the producing stream; consumers on a
 * gfxep stream of the same backend wait for it on the device, anything else waits on the host.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "backend/wrap.h"
#include "ort/device_objects.h"

/* One backend stream that several OrtSyncStreamImpls wrap (cuda_graph=ort: every session stream of
 * the EP is the one stream that captures and replays). Counted, because ORT may release its stream
 * wrappers after the EP that created them. */
struct gfx_shared_stream {
  gfx_device* device;
  void* native;
  atomic_int refs;
};

typedef struct gfx_stream {
  OrtSyncStreamImpl base; /* first */
  gfx_device* device;
  void* native;
  gfx_shared_stream* shared; /* where native comes from, or NULL when the stream owns it */
} gfx_stream;

OrtStatus* gfx_shared_stream_create(gfx_device* dev, gfx_shared_stream** out) {
  *out = NULL;
  gfx_shared_stream* ss = calloc(1, sizeof *ss);
  if (!ss) return gfx_ort_error(ORT_FAIL, "gfxep: out of memory creating a stream");
  gfx_status st = gfx_backend_stream_create(dev->dev, &ss->native);
  if (st) {
    free(ss);
    return gfx_to_ort(st);
  }
  ss->device = dev;
  atomic_init(&ss->refs, 1);
  *out = ss;
  return NULL;
}

void gfx_shared_stream_release(gfx_shared_stream* ss) {
  if (!ss || atomic_fetch_sub(&ss->refs, 1) != 1) return;
  gfx_backend_stream_destroy(ss->device->dev, ss->native);
  free(ss);
}

void* gfx_shared_stream_native(const gfx_shared_stream* ss) { return ss ? ss->native : NULL; }

typedef struct gfx_notification {
  OrtSyncNotificationImpl base; /* first */
  gfx_stream* stream;
  void* event;
} gfx_notification;

static void ORT_API_CALL stream_release(OrtSyncStreamImpl* this_ptr);

gfx_device* gfx_stream_device(const OrtSyncStream* stream) {
  const OrtSyncStreamImpl* impl = stream ? gfx_ep_api->SyncStream_GetImpl(stream) : NULL;
  /* a stream is ours when its Release is ours: the C way of a type check */
  if (!impl || impl->Release != stream_release) return NULL;
  return ((const gfx_stream*)(const void*)impl)->device;
}

static void ORT_API_CALL notification_release(OrtSyncNotificationImpl* this_ptr) {
  gfx_notification* n = (gfx_notification*)(void*)this_ptr;
  gfx_backend_event_destroy(n->stream->device->dev, n->event);
  free(n);
}

static OrtStatus* ORT_API_CALL notification_activate(OrtSyncNotificationImpl* this_ptr) {
  gfx_notification* n = (gfx_notification*)(void*)this_ptr;
  gfx_device* d = n->stream->device;
  return gfx_to_ort(gfx_backend_event_record(d->dev, n->event, n->stream->native));
}

static OrtStatus* ORT_API_CALL notification_wait_on_device(OrtSyncNotificationImpl* this_ptr,
                                                           OrtSyncStream* consumer) {
  gfx_notification* n = (gfx_notification*)(void*)this_ptr;
  gfx_device* d = n->stream->device;
  gfx_device* cd = gfx_stream_device(consumer);
  if (cd && cd->dev == d->dev)
    return gfx_to_ort(gfx_backend_stream_wait_event(d->dev, gfx_ort->SyncStream_GetHandle(consumer), n->event));
  /* another device or EP: the only safe order is to wait here */
  return gfx_to_ort(gfx_backend_event_sync(d->dev, n->event));
}

static OrtStatus* ORT_API_CALL notification_wait_on_host(OrtSyncNotificationImpl* this_ptr) {
  gfx_notification* n = (gfx_notification*)(void*)this_ptr;
  return gfx_to_ort(gfx_backend_event_sync(n->stream->device->dev, n->event));
}

static void ORT_API_CALL stream_release(OrtSyncStreamImpl* this_ptr) {
  gfx_stream* s = (gfx_stream*)(void*)this_ptr;
  if (s->shared) gfx_shared_stream_release(s->shared);
  else gfx_backend_stream_destroy(s->device->dev, s->native);
  free(s);
}

static void* ORT_API_CALL stream_handle(OrtSyncStreamImpl* this_ptr) { return ((gfx_stream*)(void*)this_ptr)->native; }

static OrtStatus* ORT_API_CALL stream_create_notification(OrtSyncStreamImpl* this_ptr,
                                                          OrtSyncNotificationImpl** out) {
  gfx_stream* s = (gfx_stream*)(void*)this_ptr;
  *out = NULL;
  gfx_notification* n = calloc(1, sizeof *n);
  if (!n) return gfx_ort_error(ORT_FAIL, "gfxep: out of memory creating a notification");
  gfx_status st = gfx_backend_event_create(s->device->dev, &n->event);
  if (st) {
    free(n);
    return gfx_to_ort(st);
  }
  n->stream = s;
  n->base.ort_version_supported = ORT_API_VERSION;
  n->base.Release = notification_release;
  n->base.Activate = notification_activate;
  n->base.WaitOnDevice = notification_wait_on_device;
  n->base.WaitOnHost = notification_wait_on_host;
  *out = &n->base;
  return NULL;
}

/* Work is submitted as it is enqueued; there is nothing buffered to flush. */
static OrtStatus* ORT_API_CALL stream_flush(OrtSyncStreamImpl* this_ptr) {
  (void)this_ptr;
  return NULL;
}

static OrtStatus* ORT_API_CALL stream_on_session_run_end(OrtSyncStreamImpl* this_ptr) {
  (void)this_ptr;
  return NULL;
}

OrtStatus* gfx_stream_create(gfx_device* dev, gfx_shared_stream* shared, OrtSyncStreamImpl** out) {
  *out = NULL;
  gfx_stream* s = calloc(1, sizeof *s);
  if (!s) return gfx_ort_error(ORT_FAIL, "gfxep: out of memory creating a stream");
  if (shared) {
    atomic_fetch_add(&shared->refs, 1);
    s->shared = shared;
    s->native = shared->native;
  } else {
    gfx_status st = gfx_backend_stream_create(dev->dev, &s->native);
    if (st) {
      free(s);
      return gfx_to_ort(st);
    }
  }
  s->device = dev;
  s->base.ort_version_supported = ORT_API_VERSION;
  s->base.Release = stream_release;
  s->base.GetHandle = stream_handle;
  s->base.CreateNotification = stream_create_notification;
  s->base.Flush = stream_flush;
  s->base.OnSessionRunEnd = stream_on_session_run_end;
  *out = &s->base;
  return NULL;
}
