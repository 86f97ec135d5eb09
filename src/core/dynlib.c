/* gfxep — shared libraries opened at run time (see dynlib.h). */
#ifndef _WIN32
#define _GNU_SOURCE /* dladdr */
#endif
#include "core/dynlib.h"

#include <stdio.h>
#include <string.h>

#ifdef _WIN32
#include <windows.h>

/* UTF-8 to the UTF-16 the wide Windows API takes; 0 when it does not convert or fit. */
static int widen(const char* s, wchar_t* out, int size) { return MultiByteToWideChar(CP_UTF8, 0, s, -1, out, size); }

static void system_message(DWORD code, char* err, size_t err_size) {
  wchar_t text[512];
  if (!FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0, text, 512, NULL) ||
      !WideCharToMultiByte(CP_UTF8, 0, text, -1, err, (int)err_size, NULL, NULL))
    snprintf(err, err_size, "Windows error %lu", (unsigned long)code);
  /* FormatMessage ends its text with a line break */
  for (size_t n = strlen(err); n > 0 && (err[n - 1] == '\n' || err[n - 1] == '\r' || err[n - 1] == ' '); n--)
    err[n - 1] = 0;
}

void* gfx_dynlib_open(const char* path, char* err, size_t err_size) {
  wchar_t wpath[MAX_PATH * 4];
  if (!widen(path, wpath, (int)(sizeof wpath / sizeof wpath[0]))) {
    snprintf(err, err_size, "%s: not a valid UTF-8 path of at most %d characters", path, MAX_PATH * 4 - 1);
    return NULL;
  }
  /* the library's own folder is searched for the libraries it imports (next to it, as on Linux
   * with $ORIGIN), then the system's */
  HMODULE m = LoadLibraryExW(wpath, NULL, LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
  if (!m) {
    char why[400];
    system_message(GetLastError(), why, sizeof why);
    snprintf(err, err_size, "%s: %s", path, why);
  }
  return (void*)m;
}

void* gfx_dynlib_symbol(void* lib, const char* name) {
  FARPROC p = GetProcAddress((HMODULE)lib, name);
  void* v;
  memcpy(&v, &p, sizeof v); /* a function pointer as an object pointer, as dlsym returns it */
  return v;
}

void gfx_dynlib_close(void* lib) {
  if (lib) FreeLibrary((HMODULE)lib);
}

int gfx_dynlib_folder_of(const void* addr, char* out, size_t size) {
  HMODULE m = NULL;
  if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          (LPCWSTR)addr, &m))
    return -1;
  wchar_t wpath[MAX_PATH * 4];
  DWORD n = GetModuleFileNameW(m, wpath, (DWORD)(sizeof wpath / sizeof wpath[0]));
  if (n == 0 || n >= sizeof wpath / sizeof wpath[0]) return -1;
  if (!WideCharToMultiByte(CP_UTF8, 0, wpath, -1, out, (int)size, NULL, NULL)) return -1;
  char* sep = strrchr(out, '\\');
  if (!sep) return -1;
  *sep = 0;
  return 0;
}

#else
#include <dlfcn.h>

void* gfx_dynlib_open(const char* path, char* err, size_t err_size) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    snprintf(err, err_size, "%s", why ? why : path);
  }
  return h;
}

void* gfx_dynlib_symbol(void* lib, const char* name) { return dlsym(lib, name); }

void gfx_dynlib_close(void* lib) {
  if (lib) dlclose(lib);
}

int gfx_dynlib_folder_of(const void* addr, char* out, size_t size) {
  Dl_info info;
  if (!dladdr(addr, &info) || !info.dli_fname) return -1;
  const char* slash = strrchr(info.dli_fname, '/');
  int n = slash ? snprintf(out, size, "%.*s", (int)(slash - info.dli_fname), info.dli_fname) : snprintf(out, size, ".");
  return n < 0 || (size_t)n >= size ? -1 : 0;
}
#endif
