/* ops_image internals shared between the decoders of its source files. */
#ifndef SY_OPS_IMAGE_INTERNAL_H
#define SY_OPS_IMAGE_INTERNAL_H

#include "switchyard/sy_sdk.h"

#define MAX_SIDE 65536 /* refuse larger images (width or height) */
#define MAX_PIXELS ((int64_t)1 << 26) /* 8192 x 8192: a header alone cannot ask for more */

/* a decoded image: rgb (3 channels) or gray (1) */
typedef struct image {
    int64_t h, w;
    int channels; /* 1 or 3 */
    uint8_t *px;  /* h * w * channels, malloc'ed (NULL when only the header was read) */
} image;

static inline bool image_size_ok(const image *im)
{
    return im->h > 0 && im->w > 0 && im->h <= MAX_SIDE && im->w <= MAX_SIDE && im->h * im->w <= MAX_PIXELS;
}

/* The header (pixels false) or the whole image of a stream of that format;
 * image_tiff.c and image_jp2.c, built when their library is found. */
sy_status *image_decode_tiff(const sy_host_api *H, const uint8_t *d, size_t n, bool pixels, image *im);
sy_status *image_decode_jp2(const sy_host_api *H, const uint8_t *d, size_t n, bool pixels, image *im);

#endif
