#include "interop/handles.h"

#if defined(_WIN32)

gfx_status gfx_fd_duplicate(intptr_t fd, intptr_t* dup_out) {
  (void)fd;
  *dup_out = -1;
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "file descriptors are not shared this way on Windows");
}
void gfx_fd_close(intptr_t fd) { (void)fd; }
int gfx_fd_count_open(void) { return -1; }

#else

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

gfx_status gfx_fd_duplicate(intptr_t fd, intptr_t* dup_out) {
  *dup_out = -1;
  if (fd < 0 || fd > INT32_MAX)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "native_handle %lld is not a file descriptor", (long long)fd);
  if (fcntl((int)fd, F_GETFD) < 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "native_handle fd %d is not open (%s)", (int)fd, strerror(errno));
  int d = fcntl((int)fd, F_DUPFD_CLOEXEC, 0);
  if (d < 0) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "duplicating fd %d failed: %s", (int)fd, strerror(errno));
  *dup_out = d;
  return NULL;
}

void gfx_fd_close(intptr_t fd) {
  if (fd >= 0) close((int)fd);
}

int gfx_fd_count_open(void) {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0;
  for (struct dirent* e; (e = readdir(d));)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n - 1; /* the directory's own fd */
}

#endif
