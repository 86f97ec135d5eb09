/* gfxep demo — writes RGBA8 images as PNG files with libpng. */
#ifndef GFXEP_DEMO_PNG_WRITE_H
#define GFXEP_DEMO_PNG_WRITE_H

#include <stddef.h>
#include <stdint.h>

/* pixels: height rows of width packed RGBA8 pixels (R in the low byte). 0 on success, -1 with err. */
int png_write_rgba(const char* path, const uint32_t* pixels, uint32_t width, uint32_t height, char* err, size_t n);

#endif
