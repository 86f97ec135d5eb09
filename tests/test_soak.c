/* gfxep — soak: many cycles of what an application does over and over, through a stock ONNX Runtime
 * (GFXEP_ORT_LIB picks 1.29 or 1.30), checking that nothing accumulates:
 *  - 10,000 import / view / release cycles of page-aligned host memory through the interop API
 *    (HOST_ALLOCATION, ORT >= 1.30; skipped on 1.29), every view at its expected address;
 *  - 1,000 session create / Run / release cycles of add_relu.onnx on the gfxep device, every result
 *    compared with ORT's CPU EP.
 * After a warm-up, open fds must not change and the resident set may grow by less than 2 MiB (imports)
 * or 8 MiB (sessions). With GFXEP_TEST_BACKEND=cuda the device memory in use (nvidia-smi, when present)
 * may grow by less than 64 MiB; without a gfxep CUDA device the test exits 77. Each case prints one
 * JSON line with its figures.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ortkit.h"

#ifndef GFXEP_MODELS_DIR
#define GFXEP_MODELS_DIR "models"
#endif

#define HOST_ALLOCATION 4 /* ORT 1.30's ORT_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION */

#define ATOL_F32 1e-5
#define RTOL_F32 1e-4

#define IMPORT_CYCLES 10000
#define IMPORT_WARMUP 100
#define IMPORT_RSS_LIMIT ((long long)2 << 20)
#ifndef SESSION_CYCLES
#define SESSION_CYCLES 1000
#endif
#define SESSION_WARMUP 20
#define SESSION_RSS_LIMIT ((long long)8 << 20)
#define GPU_MEM_LIMIT_MIB 64

/* AddressSanitizer keeps freed memory in quarantine, so the resident set grows by design there: the
 * figures are printed, fds are checked, the resident-set limits are not (leaks are LeakSanitizer's). */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_CHECKED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_CHECKED 0
#endif
#endif
#ifndef RSS_CHECKED
#define RSS_CHECKED 1
#endif

static ortkit k;
static const char* backend;
static const OrtEpDevice* device;
static const OrtInteropApi* ia;
static int minor; /* ORT 1.minor */

static const char* registration(void) { return strcmp(backend, "reference") == 0 ? "gfxep.reference" : "gfxep"; }

static void expect_ok(OrtStatus* s, const char* what) {
  if (s) fail_msg("%s: %s", what, k.api->GetErrorMessage(s));
}

/* ---- what the process holds ---- */

static int fd_count(void) {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0;
  for (struct dirent* e; (e = readdir(d));)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n - 1; /* the directory's own fd */
}

static long long rss_bytes(void) {
  FILE* f = fopen("/proc/self/statm", "r");
  if (!f) return -1;
  long long size = 0, resident = -1;
  if (fscanf(f, "%lld %lld", &size, &resident) != 2) resident = -1;
  fclose(f);
  return resident < 0 ? -1 : resident * (long long)sysconf(_SC_PAGESIZE);
}

/* Device memory in use on the gfxep device's GPU in MiB (nvidia-smi), or -1 where it cannot be read:
 * not the CUDA backend, no nvidia-smi, or no answer. The GPU is picked by its PCI bus id. */
static long long gpu_mem_used_mib(void) {
  if (strcmp(backend, "cuda") != 0) return -1;
  const char* bus = ortkit_device_meta(&k, device, "gfxep.pci_bus_id");
  char cmd[256];
  for (int attempt = 0; attempt < 2; attempt++) {
    if (attempt == 0 && !(bus && bus[0])) continue;
    if (attempt == 0)
      snprintf(cmd, sizeof cmd, "nvidia-smi --id=%s --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null",
               bus);
    else /* one GPU, or the bus id form nvidia-smi did not take: the first GPU's figure */
      snprintf(cmd, sizeof cmd, "nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null");
    FILE* p = popen(cmd, "r");
    if (!p) continue;
    long long mib = -1;
    if (fscanf(p, "%lld", &mib) != 1) mib = -1;
    int rc = pclose(p);
    if (rc == 0 && mib >= 0) return mib;
  }
  return -1;
}

typedef struct snapshot {
  int fds;
  long long rss;
  long long gpu_mib;
  uint64_t t_ns;
} snapshot;

static snapshot take_snapshot(void) {
  snapshot s = {fd_count(), rss_bytes(), gpu_mem_used_mib(), ortkit_now_ns()};
  return s;
}

static void print_figures(const char* name, int cycles, int warmup, const snapshot* a, const snapshot* b,
                          const char* extra) {
  double seconds = (double)(b->t_ns - a->t_ns) / 1e9;
  printf("{\"%s\": {\"ort\": \"%s\", \"backend\": \"%s\", \"cycles\": %d, \"warmup\": %d, \"seconds\": %.3f, "
         "\"us_per_cycle\": %.1f, \"fds_before\": %d, \"fds_after\": %d, \"rss_before_kib\": %lld, "
         "\"rss_after_kib\": %lld, \"rss_growth_kib\": %lld",
         name, k.version, backend, cycles, warmup, seconds, seconds * 1e6 / cycles, a->fds, b->fds, a->rss >> 10,
         b->rss >> 10, (b->rss - a->rss) / 1024);
  if (a->gpu_mib >= 0 && b->gpu_mib >= 0)
    printf(", \"gpu_mem_used_mib_before\": %lld, \"gpu_mem_used_mib_after\": %lld", a->gpu_mib, b->gpu_mib);
  else if (strcmp(backend, "cuda") == 0)
    printf(", \"gpu_mem_used_mib_before\": null, \"gpu_mem_used_mib_after\": null");
  printf(", \"rss_checked\": %s%s}}\n", RSS_CHECKED ? "true" : "false", extra ? extra : "");
  fflush(stdout);
}

static void check_growth(const char* what, const snapshot* a, const snapshot* b, long long rss_limit) {
  assert_true(a->fds >= 0 && a->rss > 0);
  if (b->fds != a->fds) fail_msg("%s: open fds went from %d to %d", what, a->fds, b->fds);
  if (RSS_CHECKED && b->rss - a->rss >= rss_limit)
    fail_msg("%s: the resident set grew by %lld KiB (limit %lld KiB)", what, (b->rss - a->rss) / 1024,
             rss_limit / 1024);
  if (a->gpu_mib >= 0 && b->gpu_mib >= 0 && b->gpu_mib - a->gpu_mib >= GPU_MEM_LIMIT_MIB)
    fail_msg("%s: device memory in use grew by %lld MiB (limit %d MiB)", what, b->gpu_mib - a->gpu_mib,
             GPU_MEM_LIMIT_MIB);
  if (strcmp(backend, "cuda") == 0 && (a->gpu_mib < 0 || b->gpu_mib < 0))
    printf("# %s: nvidia-smi gave no figure; device memory not checked\n", what);
}

/* ---- 10,000 imports of host memory ---- */

typedef struct import_state {
  OrtExternalResourceImporter* imp;
  char* mem;
  size_t page;
  uint64_t wrong_address;
  uint64_t wrong_data;
} import_state;

/* One cycle: import 4 pages at a page offset, view [1,3,8,8] floats at a tensor offset, check where
 * the view points and what it reads, release both. */
static void import_cycle(import_state* st, int cycle) {
  size_t mem_off = (size_t)(cycle % 3) * st->page;
  size_t t_off = (size_t)(cycle % 5) * 256;
  OrtExternalMemoryDescriptor d = {.version = ORT_API_VERSION,
                                   .handle_type = (OrtExternalMemoryHandleType)HOST_ALLOCATION,
                                   .native_handle = st->mem,
                                   .size_bytes = 4 * st->page,
                                   .offset_bytes = mem_off};
  OrtExternalMemoryHandle* h = NULL;
  expect_ok(ia->ImportMemory(st->imp, &d, &h), "import");
  int64_t shape[4] = {1, 3, 8, 8};
  OrtExternalTensorDescriptor td = {.version = ORT_API_VERSION,
                                    .element_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
                                    .shape = shape,
                                    .rank = 4,
                                    .offset_bytes = t_off};
  OrtValue* v = NULL;
  expect_ok(ia->CreateTensorFromMemory(st->imp, h, &td, &v), "view");
  void* data = NULL;
  expect_ok(k.api->GetTensorMutableData(v, &data), "view data");
  /* registered host memory has the host address on the device too (unified addressing) */
  char* want = st->mem + mem_off + t_off;
  if (data != want) st->wrong_address++;
  else if (strcmp(backend, "reference") == 0 && *(const uint32_t*)data != (uint32_t)((mem_off + t_off) / 4))
    st->wrong_data++;
  k.api->ReleaseValue(v);
  ia->ReleaseExternalMemoryHandle(h);
}

static void test_soak_host_imports(void** state) {
  (void)state;
  if (minor < 30) {
    printf("{\"soak_import\": {\"ort\": \"%s\", \"backend\": \"%s\", "
           "\"skipped\": \"HOST_ALLOCATION needs ORT >= 1.30\"}}\n",
           k.version, backend);
    skip();
  }
  import_state st = {.page = (size_t)sysconf(_SC_PAGESIZE)};
  expect_ok(ia->CreateExternalResourceImporterForDevice(device, &st.imp), "importer");
  bool can = false;
  expect_ok(ia->CanImportMemory(st.imp, (OrtExternalMemoryHandleType)HOST_ALLOCATION, &can), "can import");
  assert_true(can);
  st.mem = aligned_alloc(st.page, 4 * st.page);
  assert_non_null(st.mem);
  /* every 32-bit word holds its own index, so a view at byte offset o reads o / 4 first */
  for (size_t i = 0; i < st.page; i++) ((uint32_t*)st.mem)[i] = (uint32_t)i;
  for (int c = 0; c < IMPORT_WARMUP; c++) import_cycle(&st, c);
  snapshot before = take_snapshot();
  for (int c = 0; c < IMPORT_CYCLES; c++) import_cycle(&st, c);
  snapshot after = take_snapshot();
  char extra[160];
  snprintf(extra, sizeof extra, ", \"wrong_address\": %llu, \"wrong_data\": %llu",
           (unsigned long long)st.wrong_address, (unsigned long long)st.wrong_data);
  print_figures("soak_import", IMPORT_CYCLES, IMPORT_WARMUP, &before, &after, extra);
  ia->ReleaseExternalResourceImporter(st.imp);
  free(st.mem);
  assert_int_equal(st.wrong_address, 0);
  assert_int_equal(st.wrong_data, 0);
  check_growth("host imports", &before, &after, IMPORT_RSS_LIMIT);
}

/* ---- 1,000 sessions ---- */

static const char* model_path(const char* name) {
  static char buf[1024];
  const char* dir = getenv("GFXEP_MODELS_DIR");
  snprintf(buf, sizeof buf, "%s/%s.onnx", dir && dir[0] ? dir : GFXEP_MODELS_DIR, name);
  return buf;
}

typedef struct session_state {
  const ortkit_tensor* in;
  size_t n_in;
  const ortkit_tensor* want;
  size_t n_want;
  uint64_t mismatches;
  double max_abs;
  int cpu_only; /* ORT's CPU EP alone: the control the gfxep cycles are measured against */
} session_state;

static void session_cycle(session_state* st) {
  OrtSession* s = NULL;
  expect_ok(ortkit_session(&k, model_path("add_relu"), st->cpu_only ? NULL : device, NULL, NULL, 0, &s), "session");
  ortkit_tensor* got = NULL;
  size_t n_got = 0;
  expect_ok(ortkit_run(&k, s, NULL, st->in, st->n_in, &got, &n_got), "run");
  ortkit_diff d;
  if (n_got != st->n_want || ortkit_compare(got, st->want, n_got, ATOL_F32, RTOL_F32, &d)) st->mismatches++;
  else if (d.max_abs > st->max_abs) st->max_abs = d.max_abs;
  ortkit_tensors_free(got, n_got);
  k.api->ReleaseSession(s);
}

static void test_soak_sessions(void** state) {
  (void)state;
  OrtSession* cpu = NULL;
  expect_ok(ortkit_session(&k, model_path("add_relu"), NULL, NULL, NULL, 0, &cpu), "cpu session");
  ortkit_tensor *in = NULL, *want = NULL;
  size_t n_in = 0, n_want = 0;
  expect_ok(ortkit_random_inputs(&k, cpu, 42, 1, &in, &n_in), "inputs");
  expect_ok(ortkit_run(&k, cpu, NULL, in, n_in, &want, &n_want), "cpu run");
  k.api->ReleaseSession(cpu);
  session_state st = {in, n_in, want, n_want, 0, 0.0, 0};
  for (int c = 0; c < SESSION_WARMUP; c++) session_cycle(&st);
  /* the control: as many cycles with ORT's CPU EP alone */
  session_state cpu_st = st;
  cpu_st.cpu_only = 1;
  for (int c = 0; c < SESSION_WARMUP; c++) session_cycle(&cpu_st);
  const long long control0 = rss_bytes();
  for (int c = 0; c < SESSION_CYCLES; c++) session_cycle(&cpu_st);
  const long long control_kib = (rss_bytes() - control0) / 1024;
  snapshot before = take_snapshot();
  long long rss_half = 0;
  for (int c = 0; c < SESSION_CYCLES; c++) {
    session_cycle(&st);
    if (c == SESSION_CYCLES / 2 - 1) rss_half = rss_bytes();
  }
  snapshot after = take_snapshot();
  /* the second half's growth tells a steady leak (about half the total) from heap that settles (0) */
  char extra[256];
  snprintf(extra, sizeof extra,
           ", \"rss_growth_second_half_kib\": %lld, \"cpu_ep_control_rss_growth_kib\": %lld, \"model\": \"add_relu\", "
           "\"mismatches\": %llu, \"max_abs_vs_cpu\": %.3g",
           (after.rss - rss_half) / 1024, control_kib, (unsigned long long)st.mismatches, st.max_abs);
  print_figures("soak_sessions", SESSION_CYCLES, SESSION_WARMUP, &before, &after, extra);
  ortkit_tensors_free(in, n_in);
  ortkit_tensors_free(want, n_want);
  assert_int_equal(st.mismatches, 0);
  /* ONNX Runtime's own heap grows over session cycles by an amount that varies from run to run (0.9 to
   * 5 MiB of allocated bytes per 1,000 CPU-EP-only cycles on a 2-core machine, ORT 1.29): gfxep's share
   * is what grows beyond the same cycles on ORT's CPU EP, measured just before */
  long long allowed = SESSION_RSS_LIMIT + (control_kib > 0 ? control_kib * 1024 : 0);
  check_growth("sessions", &before, &after, allowed);
}

int main(void) {
  backend = getenv("GFXEP_TEST_BACKEND");
  if (!backend || !backend[0]) backend = "reference";
  char err[512];
  if (ortkit_open(&k, NULL, ORT_LOGGING_LEVEL_WARNING, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  sscanf(k.version, "1.%d", &minor);
  ia = k.api->GetInteropApi();
  printf("# ONNX Runtime %s from %s, gfxep backend %s\n", k.version, k.lib_path, backend);
  OrtStatus* s = k.api->RegisterExecutionProviderLibrary(k.env, registration(), ortkit_plugin_path());
  if (s || !ia) {
    fprintf(stderr, "register: %s\n", s ? k.api->GetErrorMessage(s) : "no interop API");
    if (s) k.api->ReleaseStatus(s);
    ortkit_close(&k);
    return 1;
  }
  int rc;
  if (ortkit_find_devices(&k, backend, &device, 1) != 1) {
    printf("# gfxep offers no %s device%s\n", backend, strcmp(backend, "cuda") == 0 ? ": skipped" : "");
    rc = strcmp(backend, "cuda") == 0 ? 77 : 1;
  } else {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_soak_host_imports),
        cmocka_unit_test(test_soak_sessions),
    };
    rc = cmocka_run_group_tests(tests, NULL, NULL);
  }
  s = k.api->UnregisterExecutionProviderLibrary(k.env, registration());
  if (s) k.api->ReleaseStatus(s);
  ortkit_close(&k);
  return rc;
}
