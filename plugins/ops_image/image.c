/*
 * ops_image: ImageDecoder (20), cpu_ref kernel. encoded_stream (uint8 1-D)
 * -> uint8 [H, W, 3] (pixel_format RGB or BGR) or [H, W, 1] (Grayscale).
 *
 * Formats: JPEG (libjpeg-turbo, its default islow DCT and fancy
 * upsampling), PNG (libpng, 8-bit; 16-bit samples keep their high byte,
 * alpha is dropped, palette and gray expand to RGB), BMP (uncompressed 24
 * and 32 bit, either row order) and binary PNM (P5 gray, P6 RGB, maxval
 * 255), TIFF (image_tiff.c, libtiff) and JPEG 2000 (image_jp2.c, OpenJPEG),
 * each of the last two when its library was found at build time (refused by
 * name otherwise). Grayscale from colour is ITU-R 601-2 luma in Pillow's
 * fixed point, (19595 R + 38470 G + 7471 B + 2^15) >> 16, as the ONNX
 * reference (Pillow) computes it.
 *
 * The output shape is in the stream, so the node runs dynamically unless
 * the stream is a constant: infer reads the header.
 */
#include "image_internal.h"

#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <stdlib.h>

#include <jpeglib.h>
#include <png.h>
#include <setjmp.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

typedef enum { PF_RGB, PF_BGR, PF_GRAY } pixel_format;
typedef enum { IMG_NONE, IMG_JPEG, IMG_PNG, IMG_BMP, IMG_PNM, IMG_JP2, IMG_TIFF } img_kind;

static img_kind sniff(const uint8_t *d, size_t n, const char **other)
{
    *other = NULL;
    if (n >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff)
        return IMG_JPEG;
    if (n >= 8 && !memcmp(d, "\x89PNG\r\n\x1a\n", 8))
        return IMG_PNG;
    if (n >= 2 && d[0] == 'B' && d[1] == 'M')
        return IMG_BMP;
    if (n >= 2 && d[0] == 'P' && (d[1] == '5' || d[1] == '6'))
        return IMG_PNM;
    if (n >= 12 && (!memcmp(d, "\x00\x00\x00\x0cjP  ", 8) || !memcmp(d, "\xff\x4f\xff\x51", 4))) {
#ifdef SY_HAVE_OPENJP2
        return IMG_JP2;
#else
        *other = "JPEG 2000 (this build has no OpenJPEG)";
#endif
    } else if (n >= 4 && (!memcmp(d, "II*\0", 4) || !memcmp(d, "MM\0*", 4))) {
#ifdef SY_HAVE_TIFF
        return IMG_TIFF;
#else
        *other = "TIFF (this build has no libtiff)";
#endif
    }
    return IMG_NONE;
}


/* ---- JPEG --------------------------------------------------------------- */
typedef struct jerr {
    struct jpeg_error_mgr mgr;
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
} jerr;

static void jpeg_fail(j_common_ptr c)
{
    jerr *e = (jerr *)c->err;
    c->err->format_message(c, e->msg);
    longjmp(e->jb, 1);
}

static void jpeg_quiet(j_common_ptr c, int level) { (void)c, (void)level; }

static sy_status *decode_jpeg(const uint8_t *d, size_t n, bool pixels, image *im)
{
    struct jpeg_decompress_struct c;
    jerr e;
    memset(&c, 0, sizeof c);
    c.err = jpeg_std_error(&e.mgr);
    e.mgr.error_exit = jpeg_fail;
    e.mgr.emit_message = jpeg_quiet;
    uint8_t *volatile px = NULL;
    if (setjmp(e.jb)) {
        jpeg_destroy_decompress(&c);
        free(px);
        return ERR(SY_ERR_RUNTIME, "JPEG stream: %s", e.msg);
    }
    jpeg_create_decompress(&c);
    jpeg_mem_src(&c, d, (unsigned long)n);
    jpeg_read_header(&c, TRUE);
    bool gray = c.num_components == 1;
    c.out_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
    im->h = c.image_height;
    im->w = c.image_width;
    im->channels = gray ? 1 : 3;
    if (im->h <= 0 || im->w <= 0 || im->h > MAX_SIDE || im->w > MAX_SIDE || im->h * im->w > MAX_PIXELS) {
        jpeg_destroy_decompress(&c);
        return ERR(SY_ERR_RUNTIME, "JPEG stream: %lld x %lld pixels is outside the supported size",
                   (long long)im->w, (long long)im->h);
    }
    if (!pixels) {
        jpeg_destroy_decompress(&c);
        return NULL;
    }
    jpeg_start_decompress(&c);
    size_t stride = (size_t)im->w * (size_t)im->channels;
    px = malloc(stride * (size_t)im->h);
    if (!px) {
        jpeg_destroy_decompress(&c);
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory for a %lld x %lld image", (long long)im->w, (long long)im->h);
    }
    while (c.output_scanline < c.output_height) {
        JSAMPROW row = px + (size_t)c.output_scanline * stride;
        jpeg_read_scanlines(&c, &row, 1);
    }
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    im->px = px;
    return NULL;
}

/* ---- PNG ---------------------------------------------------------------- */
typedef struct png_src {
    const uint8_t *d;
    size_t n, pos;
    char msg[128];
} png_src;

static void png_read_mem(png_structp p, png_bytep out, size_t len)
{
    png_src *s = png_get_io_ptr(p);
    if (len > s->n - s->pos)
        png_error(p, "the stream ends inside the image");
    memcpy(out, s->d + s->pos, len);
    s->pos += len;
}

static void png_fail(png_structp p, png_const_charp m)
{
    png_src *s = png_get_error_ptr(p);
    snprintf(s->msg, sizeof s->msg, "%s", m);
    png_longjmp(p, 1);
}

static void png_quiet(png_structp p, png_const_charp m) { (void)p, (void)m; }

static sy_status *decode_png(const uint8_t *d, size_t n, bool pixels, image *im)
{
    png_src src = {d, n, 0, ""};
    png_structp p = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, png_fail, png_quiet);
    png_infop info = p ? png_create_info_struct(p) : NULL;
    if (!p || !info) {
        png_destroy_read_struct(&p, NULL, NULL);
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory for the PNG decoder");
    }
    uint8_t *volatile px = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(p))) {
        png_destroy_read_struct(&p, &info, NULL);
        free(px);
        free(rows);
        return ERR(SY_ERR_RUNTIME, "PNG stream: %s", src.msg[0] ? src.msg : "cannot be decoded");
    }
    png_set_read_fn(p, &src, png_read_mem);
    png_read_info(p, info);
    png_uint_32 w = png_get_image_width(p, info), h = png_get_image_height(p, info);
    int ct = png_get_color_type(p, info);
    im->w = w;
    im->h = h;
    im->channels = (ct & PNG_COLOR_MASK_COLOR) || ct == PNG_COLOR_TYPE_PALETTE ? 3 : 1;
    if (im->h <= 0 || im->w <= 0 || im->h > MAX_SIDE || im->w > MAX_SIDE || im->h * im->w > MAX_PIXELS) {
        png_destroy_read_struct(&p, &info, NULL);
        return ERR(SY_ERR_RUNTIME, "PNG stream: %lld x %lld pixels is outside the supported size", (long long)im->w,
                   (long long)im->h);
    }
    if (!pixels) {
        png_destroy_read_struct(&p, &info, NULL);
        return NULL;
    }
    png_set_strip_16(p);
    png_set_strip_alpha(p);
    png_set_packing(p);
    if (ct == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(p);
    if (ct == PNG_COLOR_TYPE_GRAY || ct == PNG_COLOR_TYPE_GRAY_ALPHA)
        png_set_expand_gray_1_2_4_to_8(p);
    png_set_interlace_handling(p);
    png_read_update_info(p, info);
    size_t stride = (size_t)im->w * (size_t)im->channels;
    if (png_get_rowbytes(p, info) != stride)
        png_error(p, "unexpected row layout after the 8-bit conversion");
    px = malloc(stride * (size_t)im->h);
    rows = malloc((size_t)im->h * sizeof *rows);
    if (!px || !rows)
        png_error(p, "out of memory");
    for (int64_t r = 0; r < im->h; r++)
        rows[r] = px + (size_t)r * stride;
    png_read_image(p, rows);
    png_read_end(p, NULL);
    png_destroy_read_struct(&p, &info, NULL);
    free(rows);
    im->px = px;
    return NULL;
}

/* ---- BMP (BITMAPINFOHEADER and later, BI_RGB / BI_BITFIELDS 32) --------- */
static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static sy_status *decode_bmp(const uint8_t *d, size_t n, bool pixels, image *im)
{
    if (n < 54)
        return ERR(SY_ERR_RUNTIME, "BMP stream: %zu bytes is shorter than its headers (54)", n);
    uint32_t off = le32(d + 10), hdr = le32(d + 14);
    int32_t w = (int32_t)le32(d + 18), h = (int32_t)le32(d + 22);
    uint16_t bpp = le16(d + 28);
    uint32_t comp = le32(d + 30);
    if (hdr < 40)
        return ERR(SY_ERR_UNSUPPORTED, "BMP stream: the %u-byte OS/2 header is not supported", hdr);
    if ((bpp != 24 && bpp != 32) || !(comp == 0 || (comp == 3 && bpp == 32)))
        return ERR(SY_ERR_UNSUPPORTED, "BMP stream: %u bits per pixel with compression %u is not supported (24 or 32, "
                   "uncompressed)", bpp, comp);
    bool top_down = h < 0;
    int64_t hh = top_down ? -(int64_t)h : h;
    if (w <= 0 || hh <= 0 || w > MAX_SIDE || hh > MAX_SIDE)
        return ERR(SY_ERR_RUNTIME, "BMP stream: %d x %lld pixels is outside the supported size", w, (long long)hh);
    im->w = w;
    im->h = hh;
    im->channels = 3;
    size_t stride = ((size_t)w * bpp / 8 + 3) & ~(size_t)3;
    if (off > n || stride * (size_t)hh > n - off)
        return ERR(SY_ERR_RUNTIME, "BMP stream: the pixel rows need %zu bytes after offset %u, the stream has %zu",
                   stride * (size_t)hh, off, n);
    if (!pixels)
        return NULL;
    uint8_t *px = malloc((size_t)w * (size_t)hh * 3);
    if (!px)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory for a %d x %lld image", w, (long long)hh);
    for (int64_t r = 0; r < hh; r++) {
        const uint8_t *src = d + off + (size_t)(top_down ? r : hh - 1 - r) * stride;
        uint8_t *dst = px + (size_t)r * (size_t)w * 3;
        for (int32_t x = 0; x < w; x++) { /* stored B, G, R (, X) */
            dst[3 * x] = src[x * (bpp / 8) + 2];
            dst[3 * x + 1] = src[x * (bpp / 8) + 1];
            dst[3 * x + 2] = src[x * (bpp / 8)];
        }
    }
    im->px = px;
    return NULL;
}

/* ---- PNM (P5, P6, maxval 255) ------------------------------------------- */
static bool pnm_int(const uint8_t *d, size_t n, size_t *pos, int64_t *out)
{
    for (;;) { /* whitespace and # comments */
        while (*pos < n && (d[*pos] == ' ' || d[*pos] == '\t' || d[*pos] == '\n' || d[*pos] == '\r'))
            (*pos)++;
        if (*pos < n && d[*pos] == '#') {
            while (*pos < n && d[*pos] != '\n')
                (*pos)++;
            continue;
        }
        break;
    }
    int64_t v = 0;
    size_t start = *pos;
    while (*pos < n && d[*pos] >= '0' && d[*pos] <= '9' && v <= MAX_SIDE * 16)
        v = v * 10 + (d[(*pos)++] - '0');
    *out = v;
    return *pos > start;
}

static sy_status *decode_pnm(const uint8_t *d, size_t n, bool pixels, image *im)
{
    size_t pos = 2;
    int64_t w, h, maxval;
    if (!pnm_int(d, n, &pos, &w) || !pnm_int(d, n, &pos, &h) || !pnm_int(d, n, &pos, &maxval) || pos >= n)
        return ERR(SY_ERR_RUNTIME, "PNM stream: the header (width, height, maxval) is incomplete");
    pos++; /* the single whitespace before the samples */
    if (maxval != 255)
        return ERR(SY_ERR_UNSUPPORTED, "PNM stream: maxval %lld is not supported (255)", (long long)maxval);
    if (w <= 0 || h <= 0 || w > MAX_SIDE || h > MAX_SIDE || w * h > MAX_PIXELS)
        return ERR(SY_ERR_RUNTIME, "PNM stream: %lld x %lld pixels is outside the supported size", (long long)w,
                   (long long)h);
    im->w = w;
    im->h = h;
    im->channels = d[1] == '6' ? 3 : 1;
    size_t bytes = (size_t)(w * h) * (size_t)im->channels;
    if (bytes > n - pos)
        return ERR(SY_ERR_RUNTIME, "PNM stream: %zu sample bytes needed, %zu present", bytes, n - pos);
    if (!pixels)
        return NULL;
    im->px = malloc(bytes);
    if (!im->px)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory for a %lld x %lld image", (long long)w, (long long)h);
    memcpy(im->px, d + pos, bytes);
    return NULL;
}

static sy_status *decode(const sy_tensor *x, bool pixels, image *im)
{
    memset(im, 0, sizeof *im);
    const uint8_t *d = x->data;
    size_t n = (size_t)sy_tensor_numel(x);
    const char *other;
    switch (sniff(d, n, &other)) {
    case IMG_JPEG: return decode_jpeg(d, n, pixels, im);
    case IMG_PNG: return decode_png(d, n, pixels, im);
    case IMG_BMP: return decode_bmp(d, n, pixels, im);
    case IMG_PNM: return decode_pnm(d, n, pixels, im);
#ifdef SY_HAVE_TIFF
    case IMG_TIFF: return image_decode_tiff(H, d, n, pixels, im);
#endif
#ifdef SY_HAVE_OPENJP2
    case IMG_JP2: return image_decode_jp2(H, d, n, pixels, im);
#endif
    default:
        if (other)
            return ERR(SY_ERR_UNSUPPORTED, "encoded_stream is %s, which is not supported", other);
        return ERR(SY_ERR_RUNTIME, "encoded_stream (%zu bytes) is not a JPEG, PNG, BMP or PNM image", n);
    }
}

static sy_status *pixel_format_of(const sy_node *n, pixel_format *pf)
{
    char f[16];
    sy_attr_string_or(H, n, "pixel_format", "RGB", f, sizeof f);
    if (!strcmp(f, "RGB"))
        *pf = PF_RGB;
    else if (!strcmp(f, "BGR"))
        *pf = PF_BGR;
    else if (!strcmp(f, "Grayscale"))
        *pf = PF_GRAY;
    else
        return ERR(SY_ERR_INVALID_MODEL, "pixel_format must be \"RGB\", \"BGR\" or \"Grayscale\", got \"%s\"", f);
    return NULL;
}

static sy_status *infer_decoder(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->dtype != SY_DT_UINT8 || x->rank != 1)
        return ERR(SY_ERR_TYPE, "encoded_stream must be a 1-D uint8 tensor");
    pixel_format pf = PF_RGB; /* set by pixel_format_of (GCC -O3 cannot tell) */
    SY_TRY(pixel_format_of(n, &pf));
    if (!x->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "the image size is in the encoded stream");
    image im;
    SY_TRY(decode(x, false, &im));
    int64_t d[3] = {im.h, im.w, pf == PF_GRAY ? 1 : 3};
    return H->node_set_output(n, 0, SY_DT_UINT8, 3, d);
}

static sy_status *prepare_decoder(sy_node *n, void **state)
{
    pixel_format *pf = malloc(sizeof *pf);
    if (!pf)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = pixel_format_of(n, pf);
    if (st) {
        free(pf);
        return st;
    }
    *state = pf;
    return NULL;
}

/* Decoding allocates its pixel buffer: the image size is only known from
 * the stream, and the node runs dynamically anyway. */
static sy_status *run_decoder(void *state, const sy_kernel_io *io)
{
    pixel_format pf = *(const pixel_format *)state;
    sy_tensor *y = io->outputs[0];
    image im;
    SY_TRY(decode(io->inputs[0], true, &im));
    if (im.h != y->dims[0] || im.w != y->dims[1]) {
        free(im.px);
        return ERR(SY_ERR_RUNTIME, "the image is %lld x %lld, %lld x %lld was planned", (long long)im.w,
                   (long long)im.h, (long long)y->dims[1], (long long)y->dims[0]);
    }
    uint8_t *o = y->data;
    int64_t np = im.h * im.w;
    for (int64_t i = 0; i < np; i++) {
        const uint8_t *p = im.px + i * im.channels;
        uint8_t r = p[0], g = im.channels == 3 ? p[1] : p[0], b = im.channels == 3 ? p[2] : p[0];
        if (pf == PF_GRAY)
            o[i] = im.channels == 1 ? p[0] : (uint8_t)((19595u * r + 38470u * g + 7471u * b + 0x8000u) >> 16);
        else if (pf == PF_RGB) {
            o[3 * i] = r;
            o[3 * i + 1] = g;
            o[3 * i + 2] = b;
        } else {
            o[3 * i] = b;
            o[3 * i + 1] = g;
            o[3 * i + 2] = r;
        }
    }
    free(im.px);
    return NULL;
}

static const sy_attr_def a_dec[] = {{"pixel_format", SY_ATTR_STRING, false}};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("ImageDecoder", 20, 1, 1, 1, 1, SY_ATTRS(a_dec), infer_decoder, SY_NO_INPLACE,
              SY_SCHEMA_DATA_DEPENDENT_SHAPE),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("ImageDecoder", 1, 0, SY_DT_BIT(SY_DT_UINT8), 0, prepare_decoder, run_decoder, sy_release_free),
};

static sy_status *image_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

static void image_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_image",
    .version = "0.1.0",
    .description = "ImageDecoder (JPEG via libjpeg, PNG via libpng, BMP, PNM), cpu_ref kernel",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = image_init,
    .fini = image_fini,
};

SY_PLUGIN_DEFINE(desc)
