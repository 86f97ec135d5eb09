/* gfxep — shared libraries opened at run time: dlopen on POSIX, LoadLibrary on Windows.
 *
 * The plugin loads its backend modules with these, and the tools load ONNX Runtime with them, so
 * both build for Linux and for Windows from the same sources. Paths are UTF-8 on every system.
 */
#ifndef GFXEP_CORE_DYNLIB_H
#define GFXEP_CORE_DYNLIB_H

#include <stddef.h>

/* Opens the library at path (symbols resolved now, kept local). Returns NULL on failure with the
 * system's reason in err. */
void* gfx_dynlib_open(const char* path, char* err, size_t err_size);

/* The address of an exported symbol, or NULL. */
void* gfx_dynlib_symbol(void* lib, const char* name);

void gfx_dynlib_close(void* lib);

/* The folder holding the library (or program) that contains address addr, without a trailing
 * separator, into out. Returns 0, or -1 when it cannot be found or does not fit. */
int gfx_dynlib_folder_of(const void* addr, char* out, size_t size);

/* The separator between a folder and a file name in the paths above. */
#ifdef _WIN32
#define GFX_PATH_SEP '\\'
#else
#define GFX_PATH_SEP '/'
#endif

#endif
