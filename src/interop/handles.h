/* gfxep — operating-system handles that cross into gfxep through the interop API.
 *
 * Ownership rule (docs/interop.md): the application always keeps the fd or NT handle it passes in.
 * For an fd, gfxep imports a duplicate, which CUDA takes over on success; on failure gfxep closes the
 * duplicate, so a failed import neither closes nor leaks the application's fd. NT handles are never
 * taken over by CUDA, so they are passed as they are.
 */
#ifndef GFXEP_INTEROP_HANDLES_H
#define GFXEP_INTEROP_HANDLES_H

#include <stdint.h>

#include "core/status.h"

/* Duplicates an fd (close-on-exec); error naming the fd when it is not open. */
gfx_status gfx_fd_duplicate(intptr_t fd, intptr_t* dup_out);
void gfx_fd_close(intptr_t fd);
/* Number of open fds of this process, or -1 where it cannot be counted (for leak tests). */
int gfx_fd_count_open(void);

#endif
