/* gfxep — the graphics interop API through a stock ONNX Runtime, where no GPU is needed:
 *  - importer creation, CanImport* answers, and every bad-input path of the importer (statuses that
 *    name the problem, no crash, no fd closed or leaked);
 *  - on ORT >= 1.30 with the reference backend: page-aligned host memory imported as device memory,
 *    several tensor views of one import, overflow-safe bounds, and a Run whose input and output are
 *    imported views with no copy (gfxep logs every data-transfer copy at VERBOSE; a custom ORT logger
 *    counts them);
 *  - Init/DeinitGraphicsInterop argument handling as ONNX Runtime's own tests expect.
 * GFXEP_TEST_BACKEND=cuda runs the same checks against the CUDA importer (GPU machine).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#else
#include <fcntl.h>
#include <unistd.h>
#endif

#include <cmocka.h>

#include "ortkit.h"

/* An open file descriptor that is not GPU memory, and whether a descriptor is still open: the
 * importers must leave the caller's descriptor alone when an import fails. */
#ifdef _WIN32
static int open_null_fd(void) { return _open("NUL", _O_RDONLY); }
static int fd_is_open(int fd) { return _get_osfhandle(fd) != -1; }
static void close_fd(int fd) { _close(fd); }
#else
static int open_null_fd(void) { return open("/dev/null", O_RDONLY); }
static int fd_is_open(int fd) { return fcntl(fd, F_GETFD) >= 0; }
static void close_fd(int fd) { close(fd); }
#endif

#define HOST_ALLOCATION 4 /* ORT 1.30's ORT_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION */

static ortkit k;
static const char* backend;
static const OrtInteropApi* ia;
static int minor; /* ORT 1.minor */
static int copies_logged;

static void count_copies(void* param, OrtLoggingLevel severity, const char* category, const char* logid,
                         const char* code_location, const char* message) {
  (void)param, (void)category, (void)logid, (void)code_location;
  if (strstr(message, "gfxep: data transfer copies")) copies_logged++;
  else if (severity >= ORT_LOGGING_LEVEL_WARNING) fprintf(stderr, "[ort] %s\n", message);
}

static const char* registration(void) { return strcmp(backend, "reference") == 0 ? "gfxep.reference" : "gfxep"; }

static void expect_ok(OrtStatus* s, const char* what) {
  if (s) fail_msg("%s: %s", what, k.api->GetErrorMessage(s));
}

static void expect_error(OrtStatus* s, OrtErrorCode code, const char* needle) {
  if (!s) fail_msg("expected an error mentioning '%s', got success", needle);
  const char* msg = k.api->GetErrorMessage(s);
  if (!strstr(msg, needle)) fail_msg("error '%s' does not mention '%s'", msg, needle);
  if (k.api->GetErrorCode(s) != code) fail_msg("error '%s' has code %d, expected %d", msg, k.api->GetErrorCode(s), code);
  k.api->ReleaseStatus(s);
}

static const OrtEpDevice* the_device(void) {
  const OrtEpDevice* d = NULL;
  if (ortkit_find_devices(&k, backend, &d, 1) != 1) fail_msg("gfxep offers no %s device", backend);
  return d;
}

static int setup(void** state) {
  (void)state;
  char err[512];
  if (ortkit_open_logged(&k, NULL, ORT_LOGGING_LEVEL_VERBOSE, count_copies, NULL, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    return -1;
  }
  backend = getenv("GFXEP_TEST_BACKEND");
  if (!backend || !backend[0]) backend = "reference";
  sscanf(k.version, "1.%d", &minor);
  printf("# ONNX Runtime %s, gfxep backend %s\n", k.version, backend);
  ia = k.api->GetInteropApi();
  OrtStatus* s = k.api->RegisterExecutionProviderLibrary(k.env, registration(), ortkit_plugin_path());
  if (s || !ia) {
    if (s) k.api->ReleaseStatus(s);
    return -1;
  }
  return 0;
}

static int teardown(void** state) {
  (void)state;
  OrtStatus* s = k.api->UnregisterExecutionProviderLibrary(k.env, registration());
  if (s) k.api->ReleaseStatus(s);
  ortkit_close(&k);
  return 0;
}

static OrtExternalResourceImporter* make_importer(void) {
  OrtExternalResourceImporter* imp = NULL;
  expect_ok(ia->CreateExternalResourceImporterForDevice(the_device(), &imp), "create importer");
  assert_non_null(imp);
  return imp;
}

static void test_can_import_answers_truthfully(void** state) {
  (void)state;
  OrtExternalResourceImporter* imp = make_importer();
  bool yes = true;
  expect_ok(ia->CanImportMemory(imp, ORT_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_RESOURCE, &yes), "can d3d12");
  assert_false(yes); /* Linux, or a backend without D3D12 imports */
  expect_ok(ia->CanImportMemory(imp, ORT_EXTERNAL_MEMORY_HANDLE_TYPE_VK_MEMORY_WIN32, &yes), "can win32");
  assert_false(yes);
  expect_ok(ia->CanImportMemory(imp, ORT_EXTERNAL_MEMORY_HANDLE_TYPE_VK_MEMORY_OPAQUE_FD, &yes), "can fd");
  assert_int_equal(yes, strcmp(backend, "cuda") == 0);
  expect_ok(ia->CanImportMemory(imp, (OrtExternalMemoryHandleType)HOST_ALLOCATION, &yes), "can host");
  assert_int_equal(yes, minor >= 30); /* the type exists from 1.30 on */
  expect_ok(ia->CanImportMemory(imp, (OrtExternalMemoryHandleType)77, &yes), "can unknown");
  assert_false(yes);
  expect_ok(ia->CanImportSemaphore(imp, ORT_EXTERNAL_SEMAPHORE_VK_TIMELINE_SEMAPHORE_OPAQUE_FD, &yes), "can sem fd");
  assert_int_equal(yes, strcmp(backend, "cuda") == 0);
  expect_ok(ia->CanImportSemaphore(imp, ORT_EXTERNAL_SEMAPHORE_D3D12_FENCE, &yes), "can fence");
  assert_false(yes);
  ia->ReleaseExternalResourceImporter(imp);
}

static void test_import_memory_bad_input(void** state) {
  (void)state;
  OrtExternalResourceImporter* imp = make_importer();
  OrtExternalMemoryHandle* h = NULL;
  OrtExternalMemoryDescriptor d = {.version = ORT_API_VERSION,
                                   .handle_type = ORT_EXTERNAL_MEMORY_HANDLE_TYPE_VK_MEMORY_OPAQUE_FD,
                                   .native_handle = (void*)(intptr_t)12345,
                                   .size_bytes = 4096,
                                   .offset_bytes = 0};
  int cuda = strcmp(backend, "cuda") == 0;
  /* ORT itself rejects a NULL descriptor before gfxep sees it; gfxep's own checks follow */
  OrtStatus* s = ia->ImportMemory(imp, NULL, &h);
  assert_non_null(s);
  k.api->ReleaseStatus(s);
  OrtExternalMemoryDescriptor v = d;
  v.version = 23;
  expect_error(ia->ImportMemory(imp, &v, &h), ORT_INVALID_ARGUMENT, "version 23");
  v = d;
  v.handle_type = (OrtExternalMemoryHandleType)99;
  expect_error(ia->ImportMemory(imp, &v, &h), ORT_INVALID_ARGUMENT, "handle_type 99");
  v = d;
  v.handle_type = ORT_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_HEAP;
  expect_error(ia->ImportMemory(imp, &v, &h), ORT_NOT_IMPLEMENTED, "cannot be imported");
  if (cuda) {
    v = d;
    v.native_handle = NULL;
    expect_error(ia->ImportMemory(imp, &v, &h), ORT_INVALID_ARGUMENT, "native_handle is NULL");
    v = d;
    v.size_bytes = 0;
    expect_error(ia->ImportMemory(imp, &v, &h), ORT_INVALID_ARGUMENT, "size_bytes is 0");
    v = d;
    v.offset_bytes = 4096;
    expect_error(ia->ImportMemory(imp, &v, &h), ORT_INVALID_ARGUMENT, "offset_bytes 4096");
    /* an fd that is not open is named, and nothing is closed */
    expect_error(ia->ImportMemory(imp, &d, &h), ORT_INVALID_ARGUMENT, "fd 12345 is not open");
    /* an open fd that is no GPU memory: the import fails, and the caller's fd stays open and usable */
    int fd = open_null_fd();
    assert_true(fd >= 0);
    v = d;
    v.native_handle = (void*)(intptr_t)fd;
    OrtStatus* st = ia->ImportMemory(imp, &v, &h);
    assert_non_null(st);
    printf("# importing /dev/null as GPU memory: %s\n", k.api->GetErrorMessage(st));
    k.api->ReleaseStatus(st);
    assert_true(fd_is_open(fd));
    close_fd(fd);
  } else {
    expect_error(ia->ImportMemory(imp, &d, &h), ORT_NOT_IMPLEMENTED, "cannot be imported");
  }
  assert_null(h);
  ia->ReleaseExternalResourceImporter(imp);
}

static void test_import_semaphore_bad_input(void** state) {
  (void)state;
  OrtExternalResourceImporter* imp = make_importer();
  OrtExternalSemaphoreHandle* h = NULL;
  OrtExternalSemaphoreDescriptor d = {.version = ORT_API_VERSION,
                                      .type = ORT_EXTERNAL_SEMAPHORE_VK_TIMELINE_SEMAPHORE_OPAQUE_FD,
                                      .native_handle = (void*)(intptr_t)12345};
  OrtExternalSemaphoreDescriptor v = d;
  v.version = 1;
  expect_error(ia->ImportSemaphore(imp, &v, &h), ORT_INVALID_ARGUMENT, "version 1");
  v = d;
  v.type = (OrtExternalSemaphoreType)42;
  expect_error(ia->ImportSemaphore(imp, &v, &h), ORT_INVALID_ARGUMENT, "type 42");
  if (strcmp(backend, "cuda") == 0) {
    expect_error(ia->ImportSemaphore(imp, &d, &h), ORT_INVALID_ARGUMENT, "fd 12345 is not open");
    int fd = open_null_fd();
    v = d;
    v.native_handle = (void*)(intptr_t)fd;
    OrtStatus* st = ia->ImportSemaphore(imp, &v, &h);
    assert_non_null(st);
    k.api->ReleaseStatus(st);
    assert_true(fd_is_open(fd)); /* still the caller's */
    close_fd(fd);
  } else {
    expect_error(ia->ImportSemaphore(imp, &d, &h), ORT_NOT_IMPLEMENTED, "cannot be imported");
  }
  assert_null(h);
  ia->ReleaseExternalResourceImporter(imp);
}

/* Page-aligned host memory viewed as device tensors (ORT >= 1.30). */
static void test_host_memory_views_and_zero_copy_run(void** state) {
  (void)state;
  if (minor < 30) skip();
  OrtExternalResourceImporter* imp = make_importer();
  bool can = false;
  expect_ok(ia->CanImportMemory(imp, (OrtExternalMemoryHandleType)HOST_ALLOCATION, &can), "can");
  if (!can) {
    ia->ReleaseExternalResourceImporter(imp);
    skip();
  }
  const size_t page = ortkit_page_size(), size = 4 * page;
  float* mem = ortkit_aligned_alloc(page, size);
  assert_non_null(mem);
  memset(mem, 0, size);
  OrtExternalMemoryDescriptor d = {.version = ORT_API_VERSION,
                                   .handle_type = (OrtExternalMemoryHandleType)HOST_ALLOCATION,
                                   .native_handle = mem,
                                   .size_bytes = size,
                                   .offset_bytes = page};
  OrtExternalMemoryDescriptor bad = d;
  bad.native_handle = (char*)mem + 8;
  OrtExternalMemoryHandle* h = NULL;
  expect_error(ia->ImportMemory(imp, &bad, &h), ORT_INVALID_ARGUMENT, "page-aligned");
  expect_ok(ia->ImportMemory(imp, &d, &h), "import");
  assert_non_null(h);

  /* views: x at 0, y at 1024 bytes, both [1,3,8,8] floats (768 bytes), within the 3-page region */
  int64_t shape[4] = {1, 3, 8, 8};
  OrtExternalTensorDescriptor tx = {.version = ORT_API_VERSION, .element_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
                                    .shape = shape, .rank = 4, .offset_bytes = 0};
  OrtExternalTensorDescriptor ty = tx;
  ty.offset_bytes = 1024;
  OrtValue *x = NULL, *y = NULL, *z = NULL;
  expect_ok(ia->CreateTensorFromMemory(imp, h, &tx, &x), "view x");
  expect_ok(ia->CreateTensorFromMemory(imp, h, &ty, &y), "view y");

  /* bounds: past the end, overflowing shapes, negative dims, bad element type */
  OrtExternalTensorDescriptor b = tx;
  b.offset_bytes = 3 * page - 100;
  expect_error(ia->CreateTensorFromMemory(imp, h, &b, &z), ORT_INVALID_ARGUMENT, "does not fit");
  int64_t huge[3] = {INT64_MAX, 4, 4};
  b = tx;
  b.shape = huge;
  b.rank = 3;
  expect_error(ia->CreateTensorFromMemory(imp, h, &b, &z), ORT_INVALID_ARGUMENT, "shape[");
  int64_t big2[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
  b.shape = big2;
  b.rank = 2;
  expect_error(ia->CreateTensorFromMemory(imp, h, &b, &z), ORT_INVALID_ARGUMENT, "larger than memory");
  int64_t neg[2] = {2, -3};
  b.shape = neg;
  expect_error(ia->CreateTensorFromMemory(imp, h, &b, &z), ORT_INVALID_ARGUMENT, "negative");
  b = tx;
  b.offset_bytes = SIZE_MAX - 8;
  expect_error(ia->CreateTensorFromMemory(imp, h, &b, &z), ORT_INVALID_ARGUMENT, "past the end");
  b = tx;
  b.element_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING;
  expect_error(ia->CreateTensorFromMemory(imp, h, &b, &z), ORT_INVALID_ARGUMENT, "element_type");
  b = tx;
  b.version = 5;
  expect_error(ia->CreateTensorFromMemory(imp, h, &b, &z), ORT_INVALID_ARGUMENT, "version 5");
  assert_null(z);

  /* the view carries the device's DEFAULT memory info */
  const OrtMemoryInfo* mi = NULL;
  expect_ok(k.api->GetTensorMemoryInfo(x, &mi), "memory info");
  int cmp = 1;
  expect_ok(k.api->CompareMemoryInfo(mi, k.api->EpDevice_MemoryInfo(the_device(), OrtDeviceMemoryType_DEFAULT), &cmp),
            "compare");
  assert_int_equal(cmp, 0);

  /* write the input through the host, run add_relu from view x into view y */
  float* hx = (float*)((char*)mem + page);
  float* hy = (float*)((char*)mem + page + 1024);
  for (int i = 0; i < 192; i++) hx[i] = (float)(i % 17) - 8.0f;
  char path[1024];
  const char* dir = getenv("GFXEP_MODELS_DIR");
  snprintf(path, sizeof path, "%s/add_relu.onnx", dir && dir[0] ? dir : GFXEP_MODELS_DIR);
  OrtSession* s = NULL;
  const OrtEpDevice* dev = the_device();
  expect_ok(ortkit_session(&k, path, dev, NULL, NULL, 0, &s), "session");
  const char* in_names[] = {"x"};
  const char* out_names[] = {"y"};
  expect_ok(k.api->Run(s, NULL, in_names, (const OrtValue* const*)&x, 1, out_names, 1, &y), "warm-up run");
  copies_logged = 0;
  for (int r = 0; r < 5; r++)
    expect_ok(k.api->Run(s, NULL, in_names, (const OrtValue* const*)&x, 1, out_names, 1, &y), "run");
  int zero_copy_copies = copies_logged;
  /* the reference result, computed by ORT's CPU EP on the same input */
  ortkit_tensor in = {.name = "x", .rank = 4, .dims = {1, 3, 8, 8}, .count = 192, .data = hx};
  OrtSession* cpu = NULL;
  expect_ok(ortkit_session(&k, path, NULL, NULL, NULL, 0, &cpu), "cpu session");
  ortkit_tensor* want = NULL;
  size_t n_want = 0;
  expect_ok(ortkit_run(&k, cpu, NULL, &in, 1, &want, &n_want), "cpu run");
  for (int i = 0; i < 192; i++)
    if (hy[i] != want[0].data[i]) fail_msg("y[%d] = %g, the CPU EP says %g", i, hy[i], want[0].data[i]);
  /* control: the same session fed host tensors does copy (so the counter is not blind) */
  copies_logged = 0;
  ortkit_tensor* got = NULL;
  size_t n_got = 0;
  expect_ok(ortkit_run(&k, s, NULL, &in, 1, &got, &n_got), "host run");
  int host_copies = copies_logged;
  printf("# data-transfer copies over 5 runs on imported views: %d; one run with host tensors: %d\n",
         zero_copy_copies, host_copies);
  assert_int_equal(zero_copy_copies, 0);
  assert_true(host_copies >= 2);
  ortkit_tensors_free(want, n_want);
  ortkit_tensors_free(got, n_got);
  k.api->ReleaseSession(cpu);
  k.api->ReleaseSession(s);
  k.api->ReleaseValue(x);
  k.api->ReleaseValue(y);
  ia->ReleaseExternalMemoryHandle(h);
  ia->ReleaseExternalResourceImporter(imp);
  ortkit_aligned_free(mem);
}

/* A handle outlives its importer, as ORT's contract allows. */
static void test_handle_outlives_importer(void** state) {
  (void)state;
  if (minor < 30) skip();
  OrtExternalResourceImporter* imp = make_importer();
  bool can = false;
  expect_ok(ia->CanImportMemory(imp, (OrtExternalMemoryHandleType)HOST_ALLOCATION, &can), "can");
  if (!can) {
    ia->ReleaseExternalResourceImporter(imp);
    skip();
  }
  size_t page = ortkit_page_size();
  void* mem = ortkit_aligned_alloc(page, page);
  OrtExternalMemoryDescriptor d = {.version = ORT_API_VERSION + 1, /* a newer application is accepted */
                                   .handle_type = (OrtExternalMemoryHandleType)HOST_ALLOCATION,
                                   .native_handle = mem,
                                   .size_bytes = page,
                                   .offset_bytes = 0};
  OrtExternalMemoryHandle* h = NULL;
  expect_ok(ia->ImportMemory(imp, &d, &h), "import");
  ia->ReleaseExternalResourceImporter(imp);
  ia->ReleaseExternalMemoryHandle(h);
  ortkit_aligned_free(mem);
}

static void test_graphics_interop_init_rules(void** state) {
  (void)state;
  const OrtEpDevice* d = the_device();
  OrtGraphicsInteropConfig none = {.version = ORT_API_VERSION, .graphics_api = ORT_GRAPHICS_API_NONE};
  expect_error(ia->InitGraphicsInteropForEpDevice(d, &none), ORT_INVALID_ARGUMENT, "ORT_GRAPHICS_API_NONE");
  OrtGraphicsInteropConfig vk = {.version = ORT_API_VERSION, .graphics_api = ORT_GRAPHICS_API_VULKAN};
  OrtGraphicsInteropConfig old = vk;
  old.version = 24;
  expect_error(ia->InitGraphicsInteropForEpDevice(d, &old), ORT_INVALID_ARGUMENT, "version 24");
  OrtGraphicsInteropConfig d3d = {.version = ORT_API_VERSION, .graphics_api = ORT_GRAPHICS_API_D3D12};
#ifdef _WIN32
  /* on Windows a D3D12 request reaches the backend: the reference backend has none, and a GPU backend
   * refuses a config without a command queue */
  if (strcmp(backend, "reference") == 0) {
    expect_error(ia->InitGraphicsInteropForEpDevice(d, &d3d), ORT_NOT_IMPLEMENTED, "no graphics interop");
  } else {
    OrtStatus* st = ia->InitGraphicsInteropForEpDevice(d, &d3d);
    assert_non_null(st);
    k.api->ReleaseStatus(st);
  }
#else
  expect_error(ia->InitGraphicsInteropForEpDevice(d, &d3d), ORT_NOT_IMPLEMENTED, "needs Windows");
#endif
  expect_error(ia->DeinitGraphicsInteropForEpDevice(d), ORT_FAIL, "not initialized");
  if (strcmp(backend, "cuda") != 0) {
    expect_error(ia->InitGraphicsInteropForEpDevice(d, &vk), ORT_NOT_IMPLEMENTED, "no graphics interop");
    return;
  }
  OrtKeyValuePairs* opts = NULL;
  k.api->CreateKeyValuePairs(&opts);
  k.api->AddKeyValuePair(opts, "VkExternalComputeQueueDataParamsNV_data", "not-a-pointer");
  OrtGraphicsInteropConfig blob = vk;
  blob.additional_options = opts;
  expect_error(ia->InitGraphicsInteropForEpDevice(d, &blob), ORT_INVALID_ARGUMENT, "not-a-pointer");
  k.api->ReleaseKeyValuePairs(opts);
  /* CUDA-in-Graphics: the choice is checked, "require" fails with the reason where it cannot be had
   * (no CIG on the device, or no queue data given: no blob is passed here), "off" always works */
  OrtGraphicsInteropConfig cig = vk;
  k.api->CreateKeyValuePairs(&opts);
  k.api->AddKeyValuePair(opts, "gfxep.cuda_cig", "sometimes");
  cig.additional_options = opts;
  expect_error(ia->InitGraphicsInteropForEpDevice(d, &cig), ORT_INVALID_ARGUMENT, "not one of auto, off, require");
  k.api->ReleaseKeyValuePairs(opts);
  k.api->CreateKeyValuePairs(&opts);
  k.api->AddKeyValuePair(opts, "gfxep.cuda_cig", "require");
  cig.additional_options = opts;
  expect_error(ia->InitGraphicsInteropForEpDevice(d, &cig), ORT_NOT_IMPLEMENTED, "require, but");
  k.api->ReleaseKeyValuePairs(opts);
  k.api->CreateKeyValuePairs(&opts);
  k.api->AddKeyValuePair(opts, "gfxep.cuda_cig", "off");
  cig.additional_options = opts;
  expect_ok(ia->InitGraphicsInteropForEpDevice(d, &cig), "init, CIG off");
  expect_ok(ia->DeinitGraphicsInteropForEpDevice(d), "deinit, CIG off");
  k.api->ReleaseKeyValuePairs(opts);
  expect_ok(ia->InitGraphicsInteropForEpDevice(d, &vk), "init");
  expect_error(ia->InitGraphicsInteropForEpDevice(d, &vk), ORT_FAIL, "already initialized");
  expect_ok(ia->DeinitGraphicsInteropForEpDevice(d), "deinit");
  expect_error(ia->DeinitGraphicsInteropForEpDevice(d), ORT_FAIL, "not initialized");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_can_import_answers_truthfully),
      cmocka_unit_test(test_import_memory_bad_input),
      cmocka_unit_test(test_import_semaphore_bad_input),
      cmocka_unit_test(test_host_memory_views_and_zero_copy_run),
      cmocka_unit_test(test_handle_outlives_importer),
      cmocka_unit_test(test_graphics_interop_init_rules),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
