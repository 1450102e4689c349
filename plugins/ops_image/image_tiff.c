/*
 * ImageDecoder's TIFF streams (libtiff, Debian libtiff-dev): any layout
 * libtiff's RGBA interface reads (strips or tiles, 8-bit RGB, gray,
 * palette, the usual compressions), top-left first, alpha dropped. Pillow,
 * the ONNX reference, reads the same samples for 8-bit images.
 */
#include "image_internal.h"

#include <stdlib.h>
#include <tiffio.h>

typedef struct tiff_src {
    const uint8_t *d;
    size_t n, pos;
} tiff_src;

static tmsize_t t_read(thandle_t h, void *buf, tmsize_t size)
{
    tiff_src *s = h;
    size_t left = s->n - s->pos, k = (size_t)size < left ? (size_t)size : left;
    memcpy(buf, s->d + s->pos, k);
    s->pos += k;
    return (tmsize_t)k;
}
static tmsize_t t_write(thandle_t h, void *buf, tmsize_t size) { (void)h, (void)buf, (void)size; return 0; }
static toff_t t_seek(thandle_t h, toff_t off, int whence)
{
    tiff_src *s = h;
    uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? s->pos : s->n;
    if (off > UINT64_MAX - base || base + off > s->n)
        return (toff_t)-1;
    s->pos = (size_t)(base + off);
    return s->pos;
}
static int t_close(thandle_t h) { (void)h; return 0; }
static toff_t t_size(thandle_t h) { return ((tiff_src *)h)->n; }
static int t_map(thandle_t h, void **base, toff_t *size) { (void)h, (void)base, (void)size; return 0; }
static void t_unmap(thandle_t h, void *base, toff_t size) { (void)h, (void)base, (void)size; }

/* libtiff reports through handlers; a decode error is in its return value */
static void t_quiet(const char *module, const char *fmt, va_list ap) { (void)module, (void)fmt, (void)ap; }

sy_status *image_decode_tiff(const sy_host_api *H, const uint8_t *d, size_t n, bool pixels, image *im)
{
    TIFFSetErrorHandler(t_quiet);
    TIFFSetWarningHandler(t_quiet);
    tiff_src src = {d, n, 0};
    TIFF *tif = TIFFClientOpen("encoded_stream", "rm", &src, t_read, t_write, t_seek, t_close, t_size, t_map, t_unmap);
    if (!tif)
        return H->status_new(SY_ERR_RUNTIME, "TIFF stream: not a readable TIFF file");
    uint32_t w = 0, h = 0;
    uint16_t spp = 1, photometric = PHOTOMETRIC_RGB;
    TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
    TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PHOTOMETRIC, &photometric);
    im->w = w;
    im->h = h;
    im->channels = photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE ? 1 : 3;
    if (!image_size_ok(im)) {
        TIFFClose(tif);
        return H->status_new(SY_ERR_RUNTIME, "TIFF stream: %lld x %lld pixels is outside the supported size",
                             (long long)im->w, (long long)im->h);
    }
    if (!pixels) {
        TIFFClose(tif);
        return NULL;
    }
    uint32_t *raster = malloc((size_t)w * h * sizeof *raster);
    im->px = malloc((size_t)w * h * (size_t)im->channels);
    if (!raster || !im->px) {
        free(raster);
        free(im->px);
        im->px = NULL;
        TIFFClose(tif);
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory for a %u x %u image", w, h);
    }
    int ok = TIFFReadRGBAImageOriented(tif, w, h, raster, ORIENTATION_TOPLEFT, 0);
    TIFFClose(tif);
    if (!ok) {
        free(raster);
        free(im->px);
        im->px = NULL;
        return H->status_new(SY_ERR_RUNTIME, "TIFF stream: the pixels cannot be decoded (cut off, or a layout libtiff's "
                             "RGBA reader does not take)");
    }
    for (size_t i = 0; i < (size_t)w * h; i++) {
        uint32_t p = raster[i];
        if (im->channels == 1) {
            im->px[i] = (uint8_t)TIFFGetR(p);
        } else {
            im->px[3 * i] = (uint8_t)TIFFGetR(p);
            im->px[3 * i + 1] = (uint8_t)TIFFGetG(p);
            im->px[3 * i + 2] = (uint8_t)TIFFGetB(p);
        }
    }
    free(raster);
    return NULL;
}
