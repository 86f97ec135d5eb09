#include "png_write.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>

int png_write_rgba(const char* path, const uint32_t* pixels, uint32_t width, uint32_t height, char* err, size_t n) {
  png_image image = {0};
  image.version = PNG_IMAGE_VERSION;
  image.width = width;
  image.height = height;
  image.format = PNG_FORMAT_RGBA; /* bytes R, G, B, A in memory: a little-endian packed uint32 with R low */
  if (!png_image_write_to_file(&image, path, 0, pixels, (png_int_32)(width * 4), NULL)) {
    snprintf(err, n, "writing %s: %s", path, image.message);
    png_image_free(&image);
    return -1;
  }
  return 0;
}
