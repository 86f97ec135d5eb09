/* gfxep fuzz target: the external resource importer (OrtInteropApi) on the reference device, through
 * ONNX Runtime 1.30 (the first with ORT_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION = 4, the one kind
 * of memory the reference backend imports).
 *
 * Once (LLVMFuzzerInitialize): ORT is loaded through tools/ortkit.c from GFXEP_ORT_LIB, which must be
 * ORT >= 1.30 (otherwise the target says so and exits 0), gfxep is registered as "gfxep.reference"
 * from GFXEP_PLUGIN and an importer is created for its device. Per input, decoded from the bytes:
 *  - a memory descriptor: version, handle_type (out-of-range values included), size and offset, and
 *    a native handle that is a page-aligned host buffer this target owns (or a pointer into it that
 *    is not page-aligned, or NULL). Garbage pointers and fd numbers go only with handle types the
 *    reference backend refuses before touching anything;
 *  - up to 6 tensor descriptors (version, element_type including invalid ones, rank 0..40, dims
 *    including negatives and values near INT64_MAX, offsets near SIZE_MAX) for CreateTensorFromMemory;
 *  - up to 3 semaphore descriptors with random types, versions and handles.
 *
 * Invariants (a violation traps):
 *  - every call returns a status or succeeds, never crashes; error statuses carry a message;
 *  - CanImportMemory says yes for HOST_ALLOCATION only, CanImportSemaphore never (reference);
 *  - ImportMemory and CreateTensorFromMemory accept exactly what this file computes independently
 *    (descriptor versions newer than the runtime may go either way);
 *  - an imported tensor's data pointer is the handle + memory offset + tensor offset, its size is
 *    element size x dims, and [data, data + GetTensorSizeInBytes) lies inside both the imported region
 *    and the host buffer (and is written to, so AddressSanitizer checks it too); type and dims are
 *    what was asked for;
 *  - ImportSemaphore always fails on the reference backend and never touches the handle: fds 0..2
 *    (handles it is given) stay open, and no file descriptor is left open;
 * Everything is released (LeakSanitizer is on; ORT's own allocations are suppressed in lsan.supp).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ortkit.h"

#define FUZZ_TARGET "fuzz_importer"
#include "fuzz_common.h"

#define HOST_ALLOCATION 4 /* ORT 1.30's ORT_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION */
#define BUF_PAGES 4
#define MAX_TENSORS 6
#define MAX_RANK_TRIED 40
#define GFXEP_MAX_RANK 32 /* src/ort/importer.c: MAX_TENSOR_RANK */
#define FIRST_VERSION 24  /* descriptors exist from ORT 1.24 */

static ortkit k;
static const OrtInteropApi* ia;
static OrtExternalResourceImporter* importer;
static int minor;
static size_t page;
static int verbose; /* FUZZ_VERBOSE=1: print what each input does */

static void skip(const char* why, const char* detail) {
  fprintf(stderr, "fuzz_importer: skipped: %s%s%s\n", why, detail ? ": " : "", detail ? detail : "");
  exit(0);
}

static void die(OrtStatus* s, const char* what) {
  if (!s) return;
  fprintf(stderr, "fuzz_importer: %s: %s\n", what, k.api->GetErrorMessage(s));
  exit(1);
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  char err[1024];
  const char* ort_log = getenv("FUZZ_ORT_LOG");
  verbose = getenv("FUZZ_VERBOSE") && getenv("FUZZ_VERBOSE")[0] == '1';
  if (ortkit_open(&k, NULL, ort_log && ort_log[0] == '1' ? ORT_LOGGING_LEVEL_WARNING : ORT_LOGGING_LEVEL_FATAL, err,
                  sizeof err))
    skip("ONNX Runtime >= 1.30 is needed (set GFXEP_ORT_LIB)", err);
  if (sscanf(k.version, "1.%d", &minor) != 1 || minor < 30)
    skip("ONNX Runtime >= 1.30 is needed for host-memory import; GFXEP_ORT_LIB gives", k.version);
  ia = k.api->GetInteropApi();
  if (!ia) skip("this ONNX Runtime has no interop API", k.version);
  die(k.api->RegisterExecutionProviderLibrary(k.env, "gfxep.reference", ortkit_plugin_path()),
      "registering gfxep.reference");
  const OrtEpDevice* device = NULL;
  if (ortkit_find_devices(&k, "reference", &device, 1) != 1) {
    fprintf(stderr, "fuzz_importer: gfxep offers no reference device\n");
    exit(1);
  }
  die(ia->CreateExternalResourceImporterForDevice(device, &importer), "CreateExternalResourceImporterForDevice");
  if (!importer) {
    fprintf(stderr, "fuzz_importer: the reference device has no importer\n");
    exit(1);
  }
  page = (size_t)sysconf(_SC_PAGESIZE);
  fprintf(stderr, "fuzz_importer: ONNX Runtime %s (%s), plugin %s\n", k.version, k.lib_path, ortkit_plugin_path_text());
  return 0;
}

static uint32_t any_version(reader* r) {
  static const uint32_t v[] = {
      ORT_API_VERSION, ORT_API_VERSION, ORT_API_VERSION, ORT_API_VERSION, 30, 24, 25, 23, 0, 1, 31, 1000,
      UINT32_MAX,      0xFFFF /* random */};
  uint32_t x = PICK(r, v);
  return x == 0xFFFF ? (uint32_t)u64(r) : x;
}

/* version decides the outcome: 1 accepted, 0 refused, -1 either (newer than this runtime) */
static int version_ok(uint32_t v) { return v < FIRST_VERSION ? 0 : v <= (uint32_t)minor ? 1 : -1; }

static void expect_error(OrtStatus* s, const char* what) {
  CHECK(s, "%s: expected an error status, got success", what);
  const char* m = k.api->GetErrorMessage(s);
  CHECK(m && m[0], "%s: error status with an empty message", what);
  if (verbose) fprintf(stderr, "fuzz_importer:   %s -> %s\n", what, m);
  k.api->ReleaseStatus(s);
}

/* The lowest free fd number: higher after an input only when an fd was left open (a duplicate of a
 * handle, say). */
static int lowest_free_fd(void) {
  int fd = open("/dev/null", O_RDONLY);
  if (fd >= 0) close(fd);
  return fd;
}

/* gfxep's element sizes (src/ort/importer.c), 0 for types it refuses */
static size_t element_size(int t) {
  switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return 1;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: return 2;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: return 4;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return 8;
    default: return 0;
  }
}

static int64_t any_dim(reader* r) {
  static const int64_t d[] = {1,
                              1,
                              2,
                              3,
                              4,
                              8,
                              16,
                              64,
                              256,
                              1024,
                              0,
                              0,
                              -1,
                              -2,
                              INT64_MIN,
                              INT64_MAX,
                              INT64_MAX - 1,
                              INT64_MAX / 2 + 1,
                              (int64_t)1 << 31,
                              (int64_t)1 << 32,
                              (int64_t)1 << 40,
                              (int64_t)1 << 62,
                              0x7777 /* random */};
  int64_t x = PICK(r, d);
  return x == 0x7777 ? (int64_t)u64(r) : x;
}

/* ---- the target ---- */

typedef struct import {
  OrtExternalMemoryDescriptor desc;
  OrtExternalMemoryHandle* handle;
  char* region;       /* handle + offset */
  size_t region_size; /* size - offset */
} import;

static void tensors(reader* r, const import* im, const char* buf, size_t buf_size) {
  int n = 1 + u8(r) % MAX_TENSORS;
  OrtValue* made[MAX_TENSORS] = {0};
  int64_t shapes[MAX_TENSORS][MAX_RANK_TRIED];
  for (int t = 0; t < n; t++) {
    OrtExternalTensorDescriptor d;
    memset(&d, 0, sizeof d);
    d.version = any_version(r);
    static const int types[] = {1,  1,  1,  1, 2, 3,  4,  5,  6,  7,  9,  10,  11,
                                12, 13, 16, 8, 0, 14, 15, 17, 21, 23, -1, 1000};
    d.element_type = (ONNXTensorElementDataType)PICK(r, types);
    uint8_t rb = u8(r);
    d.rank = rb < 200 ? rb % 5 : rb % (MAX_RANK_TRIED + 1);
    int64_t* shape = shapes[t];
    for (size_t i = 0; i < MAX_RANK_TRIED; i++) shape[i] = i < d.rank ? any_dim(r) : 0;
    d.shape = u8(r) < 8 ? NULL : shape;
    uint8_t ob = u8(r);
    size_t rs = im->region_size;
    switch (ob % 12) {
      case 0:
      case 1:
      case 2: d.offset_bytes = 0; break;
      case 3: d.offset_bytes = (size_t)4 * (u8(r) % 64); break;
      case 4: d.offset_bytes = page; break;
      case 5: d.offset_bytes = rs - u8(r) % 16; break;
      case 6: d.offset_bytes = rs; break;
      case 7: d.offset_bytes = rs + 1; break;
      case 8: d.offset_bytes = SIZE_MAX - u8(r) % 16; break;
      case 9: d.offset_bytes = rs ? (size_t)u64(r) % rs : 0; break;
      default: d.offset_bytes = (size_t)u64(r);
    }

    /* what gfxep must answer */
    int ok = version_ok(d.version);
    size_t es = element_size(d.element_type);
    size_t total = es;
    int overflow = 0;
    if (!es || d.rank > GFXEP_MAX_RANK || (d.rank > 0 && !d.shape)) ok = 0;
    for (size_t i = 0; ok && i < d.rank; i++) {
      if (shape[i] < 0)
        ok = 0;
      else if (shape[i] != 0 && total > SIZE_MAX / (uint64_t)shape[i])
        overflow = 1, total = SIZE_MAX;
      else
        total *= (size_t)shape[i];
    }
    if (ok && overflow) ok = total == 0 ? -1 : 0; /* an overflowing prefix before a zero dim: either */
    if (ok && !overflow && (d.offset_bytes > rs || total > rs - d.offset_bytes)) ok = 0;
    /* ONNX Runtime multiplies the dims in int64 and refuses a prefix that overflows even when a later
     * dim is 0 (SafeInt): such a zero-size tensor may go either way */
    __int128 prefix = 1;
    for (size_t i = 0; ok == 1 && i < d.rank; i++) {
      prefix *= shape[i];
      if (prefix > INT64_MAX) ok = -1;
      if (prefix == 0) break;
    }

    OrtValue* v = NULL;
    OrtStatus* s = ia->CreateTensorFromMemory(importer, im->handle, &d, &v);
    if (verbose)
      fprintf(stderr, "fuzz_importer:   tensor v%u type %d rank %zu%s offset %zu (region %zu): %s\n", d.version,
              (int)d.element_type, d.rank, d.shape ? "" : " (shape NULL)", d.offset_bytes, rs,
              s ? "refused" : "created");
    if (s) {
      CHECK(ok != 1, "CreateTensorFromMemory refused a tensor that fits: %s", k.api->GetErrorMessage(s));
      CHECK(!v, "a refused CreateTensorFromMemory returned a value");
      expect_error(s, "CreateTensorFromMemory");
      continue;
    }
    CHECK(ok != 0,
          "CreateTensorFromMemory accepted a tensor it must refuse (version %u, type %d, rank %zu, "
          "offset %zu, region %zu)",
          d.version, (int)d.element_type, d.rank, d.offset_bytes, rs);
    CHECK(v, "CreateTensorFromMemory succeeded without a value");
    made[t] = v;

    void* data = NULL;
    size_t bytes = 0;
    s = k.api->GetTensorMutableData(v, &data);
    CHECK(!s, "GetTensorMutableData: %s", k.api->GetErrorMessage(s));
    s = k.api->GetTensorSizeInBytes(v, &bytes);
    CHECK(!s, "GetTensorSizeInBytes: %s", k.api->GetErrorMessage(s));
    const char* p = data;
    CHECK(bytes == total, "tensor of %zu bytes, its type and shape make %zu", bytes, total);
    CHECK(p == im->region + d.offset_bytes, "tensor data at %p, expected region %p + %zu", data, (void*)im->region,
          d.offset_bytes);
    CHECK(p >= im->region && (size_t)(p - im->region) <= im->region_size &&
              bytes <= im->region_size - (size_t)(p - im->region),
          "tensor [%p, +%zu) is outside the imported region [%p, +%zu)", data, bytes, (void*)im->region,
          im->region_size);
    CHECK(p >= buf && (size_t)(p - buf) <= buf_size && bytes <= buf_size - (size_t)(p - buf),
          "tensor [%p, +%zu) is outside the host buffer [%p, +%zu)", data, bytes, (const void*)buf, buf_size);
    if (bytes) memset(data, 0x5A, bytes); /* AddressSanitizer checks the range too */

    OrtTensorTypeAndShapeInfo* info = NULL;
    s = k.api->GetTensorTypeAndShape(v, &info);
    CHECK(!s, "GetTensorTypeAndShape: %s", k.api->GetErrorMessage(s));
    ONNXTensorElementDataType et;
    size_t rank = 0;
    int64_t dims[MAX_RANK_TRIED];
    CHECK(!k.api->GetTensorElementType(info, &et) && et == d.element_type, "element type changed");
    CHECK(!k.api->GetDimensionsCount(info, &rank) && rank == d.rank, "rank %zu, asked for %zu", rank, d.rank);
    CHECK(!k.api->GetDimensions(info, dims, rank), "GetDimensions");
    for (size_t i = 0; i < rank; i++)
      CHECK(dims[i] == shape[i], "dim %zu is %lld, asked for %lld", i, (long long)dims[i], (long long)shape[i]);
    k.api->ReleaseTensorTypeAndShapeInfo(info);
  }
  for (int t = 0; t < n; t++)
    if (made[t]) k.api->ReleaseValue(made[t]);
}

static void semaphores(reader* r) {
  int n = u8(r) % 4;
  for (int i = 0; i < n; i++) {
    OrtExternalSemaphoreDescriptor d;
    memset(&d, 0, sizeof d);
    d.version = any_version(r);
    static const int types[] = {0, 1, 2, 2, 2, 3, -1, 77, 0x7777};
    int type = PICK(r, types);
    if (type == 0x7777) type = (int)u64(r);
    d.type = (OrtExternalSemaphoreType)type;
    /* fd numbers that are open (0, 1, 2), ones that are not, and pointers nobody may touch */
    static const intptr_t handles[] = {0, 1, 2, 3, 12345, -1, (intptr_t)0xdeadbeef, 0x7777};
    intptr_t h = PICK(r, handles);
    if (h == 0x7777) h = (intptr_t)u64(r);
    d.native_handle = (void*)h;

    bool can = true;
    OrtStatus* s = ia->CanImportSemaphore(importer, d.type, &can);
    CHECK(!s, "CanImportSemaphore(%d): %s", type, k.api->GetErrorMessage(s));
    CHECK(!can, "the reference device claims it can import semaphore type %d", type);
    OrtExternalSemaphoreHandle* out = NULL;
    s = ia->ImportSemaphore(importer, &d, &out);
    if (!s) {
      ia->ReleaseExternalSemaphoreHandle(out);
      FAIL("the reference device imported a semaphore (type %d, handle %p)", type, d.native_handle);
    }
    CHECK(!out, "a refused ImportSemaphore returned a handle");
    expect_error(s, "ImportSemaphore");
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  reader rd = {data, size, 0};
  reader* r = &rd;
  int fd_before = lowest_free_fd();
  size_t buf_size = BUF_PAGES * page;
  char* buf = aligned_alloc(page, buf_size);
  CHECK(buf, "out of memory");
  memset(buf, 0, buf_size);

import im;
  memset(&im, 0, sizeof im);
  OrtExternalMemoryDescriptor* d = &im.desc;
  d->version = any_version(r);
  static const int types[] = {
      HOST_ALLOCATION, HOST_ALLOCATION, HOST_ALLOCATION, HOST_ALLOCATION, HOST_ALLOCATION, 0, 1, 2, 3, 5, 77, -1,
      INT32_MIN,       0x7777};
  int type = PICK(r, types);
  if (type == 0x7777) type = (int)u64(r);
  d->handle_type = (OrtExternalMemoryHandleType)type;

  /* the handle: for HOST_ALLOCATION, memory of ours (page-aligned, or not: refused before use) or
   * NULL; for any other type, anything, since the reference backend refuses them all untouched */
  size_t avail = 0; /* bytes of buf from the handle on */
  uint8_t hb = u8(r);
  if (type == HOST_ALLOCATION) {
    size_t first = (size_t)(hb % BUF_PAGES) * page;
    if (hb >= 240) {
      d->native_handle = NULL;
    } else if (hb >= 220) {
      size_t mis = 1 + u8(r) % (page - 1);
      d->native_handle = buf + first + mis; /* not page-aligned: refused */
      avail = buf_size - first - mis;
    } else {
      d->native_handle = buf + first;
      avail = buf_size - first;
    }
  } else {
    static const intptr_t garbage[] = {0, 1, 2, 12345, -1, (intptr_t)0xdeadbeef, 0x7777};
    intptr_t g = PICK(r, garbage);
    d->native_handle = (void*)(g == 0x7777 ? (intptr_t)u64(r) : g);
  }
  /* size: never more than the buffer behind a HOST_ALLOCATION handle (the application's word is taken
   * for it, as for a Vulkan allocation's size); anything for the other types */
  uint8_t sb = u8(r);
  if (type == HOST_ALLOCATION) {
    switch (sb % 6) {
      case 0:
      case 1: d->size_bytes = avail; break;
      case 2: d->size_bytes = 0; break;
      case 3: d->size_bytes = avail ? 1 + (size_t)u64(r) % avail : 0; break;
      case 4: d->size_bytes = avail >= page ? page : avail; break;
      default: d->size_bytes = avail ? avail - (size_t)u8(r) % avail : 0;
    }
  } else {
    static const size_t sizes[] = {0, 1, 4096, 1 << 20, SIZE_MAX, SIZE_MAX / 2};
    d->size_bytes = sb < 200 ? PICK(r, sizes) : (size_t)u64(r);
  }
  uint8_t ob = u8(r);
  switch (ob % 9) {
    case 0:
    case 1:
    case 2: d->offset_bytes = 0; break;
    case 3: d->offset_bytes = page; break;
    case 4: d->offset_bytes = d->size_bytes ? d->size_bytes - 1 : 0; break;
    case 5: d->offset_bytes = d->size_bytes; break;
    case 6: d->offset_bytes = SIZE_MAX - u8(r) % 4; break;
    case 7: d->offset_bytes = d->size_bytes ? (size_t)u64(r) % d->size_bytes : 0; break;
    default: d->offset_bytes = (size_t)u8(r) * 64;
  }

  bool can = false;
  OrtStatus* s = ia->CanImportMemory(importer, d->handle_type, &can);
  CHECK(!s, "CanImportMemory(%d): %s", type, k.api->GetErrorMessage(s));
  CHECK(can == (type == HOST_ALLOCATION), "CanImportMemory(%d) says %d", type, (int)can);

  /* what gfxep must answer */
  int ok = version_ok(d->version);
  if (type != HOST_ALLOCATION || !d->native_handle || ((uintptr_t)d->native_handle % page) != 0 || d->size_bytes == 0 ||
      d->offset_bytes >= d->size_bytes)
    ok = 0;

  s = ia->ImportMemory(importer, d, &im.handle);
  if (verbose)
    fprintf(stderr, "fuzz_importer: memory v%u type %d handle %p (buffer %p) size %zu offset %zu: %s\n", d->version,
            type, d->native_handle, (void*)buf, d->size_bytes, d->offset_bytes, s ? "refused" : "imported");
  if (s) {
    CHECK(ok != 1, "ImportMemory refused a valid descriptor: %s", k.api->GetErrorMessage(s));
    CHECK(!im.handle, "a refused ImportMemory returned a handle");
    expect_error(s, "ImportMemory");
    /* a tensor of no memory at all */
    OrtExternalTensorDescriptor td = {.version = ORT_API_VERSION, .element_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT};
    OrtValue* v = NULL;
    s = ia->CreateTensorFromMemory(importer, NULL, &td, &v);
    CHECK(!v, "CreateTensorFromMemory with no memory handle returned a value");
    expect_error(s, "CreateTensorFromMemory with no memory handle");
  } else {
    CHECK(ok != 0, "ImportMemory accepted a descriptor it must refuse (version %u, type %d, size %zu, offset %zu)",
          d->version, type, d->size_bytes, d->offset_bytes);
    CHECK(im.handle, "ImportMemory succeeded without a handle");
    im.region = (char*)d->native_handle + d->offset_bytes;
    im.region_size = d->size_bytes - d->offset_bytes;
    tensors(r, &im, buf, buf_size);
    ia->ReleaseExternalMemoryHandle(im.handle);
  }
  semaphores(r);
  free(buf);
  for (int fd = 0; fd < 3; fd++) CHECK(fcntl(fd, F_GETFD) >= 0, "fd %d was closed", fd);
  /* libFuzzer's RSS thread opens /proc files now and then: only a lasting change counts */
  int fd_after = lowest_free_fd();
  for (int tries = 0; tries < 50 && fd_after > fd_before; tries++) {
    nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);
    fd_after = lowest_free_fd();
  }
  CHECK(fd_after <= fd_before, "the lowest free fd moved from %d to %d: a file descriptor was left open", fd_before,
        fd_after);
  return 0;
}
