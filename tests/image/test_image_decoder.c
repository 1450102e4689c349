/*
 * ops_image's ImageDecoder through the public API, on streams written here
 * byte by byte (hand-worked pixels, no decoder involved in making them):
 *   - a 2 x 2 bottom-up 24-bit BMP decodes to its pixels in RGB, BGR and
 *     Grayscale (Pillow's luma: (19595 R + 38470 G + 7471 B + 2^15) >> 16);
 *   - a 3 x 1 binary PNM (P6) with a comment in its header;
 *   - a 2 x 1 uncompressed RGB TIFF (little-endian, one strip; when the
 *     plugin was built with libtiff);
 *   - refusals with the format and the rule: a BMP whose rows are cut off,
 *     a stream of no known format, a JPEG header claiming 60000 x 60000
 *     pixels, a TIFF stream cut after its header, a bad pixel_format.
 * The real JPEG / PNG files of the ONNX node tests are checked by
 * `switchyard conformance` (conformance_onnx_node).
 */
#include "../partition/pt_common.h"

static sy_env *env;
static sy_model *models[16];
static size_t n_models;

static sy_session *decoder_session(const char *fmt, sy_status **create_err)
{
    pt_model *m = pt_model_new(fmt);
    m->opset.version = 20;
    const int64_t d[1] = {1};
    pt_input(m, "data", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 1, d);
    /* the stream length is symbolic */
    Onnx__TensorShapeProto__Dimension *len = m->graph.input[0]->type->tensor_type->shape->dim[0];
    len->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
    len->dim_param = pt_strdup(m, "bytes");
    pt_node(m, "ImageDecoder", "decode", (const char *[]){"data", NULL}, (const char *[]){"img", NULL});
    pt_attr_string(m, "pixel_format", fmt);
    pt_output(m, "img", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 0, NULL);
    sy_model *model = pt_load(env, m);
    pt_model_free(m);
    if (!model || n_models == sizeof models / sizeof models[0])
        return NULL;
    models[n_models++] = model;
    sy_session *s = NULL;
    *create_err = sy_session_create(env, model, NULL, &s);
    return s;
}

/* decodes `bytes`; returns the run status (NULL on success) and the output */
static sy_status *decode(sy_session *s, const uint8_t *bytes, size_t n, const sy_tensor **out)
{
    sy_tensor t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    t.dtype = SY_DT_UINT8;
    t.rank = 1;
    t.dims[0] = (int64_t)n;
    t.data = (void *)bytes;
    t.nbytes = n;
    sy_status *st = sy_session_set_input(s, "data", &t, SY_INPUT_COPY);
    if (!st)
        st = sy_session_run(s);
    if (!st)
        st = sy_session_get_output(s, 0, out);
    return st;
}

/* 2 x 2, 24 bit, bottom-up: top row (10,20,30) (200,100,50), bottom row
 * (0,0,0) (255,255,255); stored B, G, R with rows padded to 8 bytes */
static const uint8_t bmp[70] = {
    'B', 'M', 70, 0, 0, 0, 0, 0, 0, 0, 54, 0, 0, 0, /* file header: size 70, pixels at 54 */
    40, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 24, 0, 0, 0, 0, 0, 16, 0, 0, 0, /* info: 2 x 2, 24 bpp, BI_RGB */
    0x13, 0x0b, 0, 0, 0x13, 0x0b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 255, 255, 255, 0, 0,      /* bottom row first */
    30, 20, 10, 50, 100, 200, 0, 0,    /* top row */
};

static void test_bmp(void)
{
    static const uint8_t want_rgb[12] = {10, 20, 30, 200, 100, 50, 0, 0, 0, 255, 255, 255};
    const char *fmts[3] = {"RGB", "BGR", "Grayscale"};
    for (int f = 0; f < 3; f++) {
        sy_status *cst = NULL;
        sy_session *s = decoder_session(fmts[f], &cst);
        PT_CHECK(s && !cst, "%s session: %s", fmts[f], pt_msg(cst));
        if (!s)
            continue;
        const sy_tensor *y = NULL;
        sy_status *st = decode(s, bmp, sizeof bmp, &y);
        PT_CHECK(!st, "%s: %s", fmts[f], pt_msg(st));
        int64_t ch = f == 2 ? 1 : 3;
        PT_CHECK(y && y->rank == 3 && y->dims[0] == 2 && y->dims[1] == 2 && y->dims[2] == ch, "%s: [2, 2, %lld]",
                 fmts[f], (long long)ch);
        if (y && y->rank == 3 && y->dims[2] == ch) {
            const uint8_t *p = y->data;
            for (int i = 0; i < 4; i++) {
                const uint8_t *w = want_rgb + 3 * i;
                if (f == 0)
                    PT_CHECK(p[3 * i] == w[0] && p[3 * i + 1] == w[1] && p[3 * i + 2] == w[2], "RGB pixel %d", i);
                else if (f == 1)
                    PT_CHECK(p[3 * i] == w[2] && p[3 * i + 1] == w[1] && p[3 * i + 2] == w[0], "BGR pixel %d", i);
                else {
                    /* luma by hand: (10,20,30) -> 18, (200,100,50) -> 124, 0, 255 */
                    static const uint8_t luma[4] = {18, 124, 0, 255};
                    PT_CHECK(p[i] == luma[i], "gray pixel %d: %u, want %u", i, p[i], luma[i]);
                }
            }
        }
        sy_session_release(s);
    }
}

static void test_pnm(void)
{
    static const char pnm[] = "P6\n# a comment\n3 1\n255\n\x01\x02\x03\x04\x05\x06\x07\x08\x09";
    sy_status *cst = NULL;
    sy_session *s = decoder_session("RGB", &cst);
    PT_REQUIRE(s && !cst, "session: %s", pt_msg(cst));
    const sy_tensor *y = NULL;
    sy_status *st = decode(s, (const uint8_t *)pnm, sizeof pnm - 1, &y);
    PT_CHECK(!st, "P6: %s", pt_msg(st));
    PT_CHECK(y && y->dims[0] == 1 && y->dims[1] == 3 && y->dims[2] == 3, "[1, 3, 3]");
    if (y && y->nbytes == 9)
        for (int i = 0; i < 9; i++)
            PT_CHECK(((const uint8_t *)y->data)[i] == i + 1, "sample %d", i);
done:
    sy_session_release(s);
}

/* 2 x 1, 8-bit RGB, uncompressed: header, an IFD of 10 entries at 8, the
 * BitsPerSample values at 134, the strip (10,20,30) (200,100,50) at 140 */
static const uint8_t tiff_rgb[146] = {
    'I', 'I', 42, 0, 8, 0, 0, 0, 10, 0,
    0x00, 0x01, 3, 0, 1, 0, 0, 0, 2, 0, 0, 0,    /* 256 ImageWidth SHORT 2 */
    0x01, 0x01, 3, 0, 1, 0, 0, 0, 1, 0, 0, 0,    /* 257 ImageLength SHORT 1 */
    0x02, 0x01, 3, 0, 3, 0, 0, 0, 134, 0, 0, 0,  /* 258 BitsPerSample SHORT[3] at 134 */
    0x03, 0x01, 3, 0, 1, 0, 0, 0, 1, 0, 0, 0,    /* 259 Compression: none */
    0x06, 0x01, 3, 0, 1, 0, 0, 0, 2, 0, 0, 0,    /* 262 Photometric: RGB */
    0x11, 0x01, 4, 0, 1, 0, 0, 0, 140, 0, 0, 0,  /* 273 StripOffsets LONG 140 */
    0x15, 0x01, 3, 0, 1, 0, 0, 0, 3, 0, 0, 0,    /* 277 SamplesPerPixel 3 */
    0x16, 0x01, 3, 0, 1, 0, 0, 0, 1, 0, 0, 0,    /* 278 RowsPerStrip 1 */
    0x17, 0x01, 4, 0, 1, 0, 0, 0, 6, 0, 0, 0,    /* 279 StripByteCounts LONG 6 */
    0x1c, 0x01, 3, 0, 1, 0, 0, 0, 1, 0, 0, 0,    /* 284 PlanarConfiguration: contiguous */
    0, 0, 0, 0,                                  /* no next IFD */
    8, 0, 8, 0, 8, 0,                            /* BitsPerSample */
    10, 20, 30, 200, 100, 50,                    /* the strip */
};

static void test_tiff(void)
{
    sy_status *cst = NULL;
    sy_session *s = decoder_session("BGR", &cst);
    PT_REQUIRE(s && !cst, "session: %s", pt_msg(cst));
    const sy_tensor *y = NULL;
    sy_status *st = decode(s, tiff_rgb, sizeof tiff_rgb, &y);
    if (st && strstr(sy_status_get_message(st), "no libtiff")) {
        printf("SKIPPED test_tiff: ops_image was built without libtiff (Debian libtiff-dev)\n");
        sy_status_free(st);
        goto done;
    }
    PT_CHECK(!st, "TIFF: %s", pt_msg(st));
    PT_CHECK(y && y->rank == 3 && y->dims[0] == 1 && y->dims[1] == 2 && y->dims[2] == 3, "[1, 2, 3]");
    if (y && y->nbytes == 6) {
        static const uint8_t bgr[6] = {30, 20, 10, 50, 100, 200};
        for (int i = 0; i < 6; i++)
            PT_CHECK(((const uint8_t *)y->data)[i] == bgr[i], "BGR sample %d: %u, want %u", i,
                     ((const uint8_t *)y->data)[i], bgr[i]);
    }
done:
    sy_session_release(s);
}

static void expect_refused(const uint8_t *bytes, size_t n, const char *what, const char *rule)
{
    sy_status *cst = NULL;
    sy_session *s = decoder_session("RGB", &cst);
    PT_REQUIRE(s && !cst, "session: %s", pt_msg(cst));
    const sy_tensor *y = NULL;
    sy_status *st = decode(s, bytes, n, &y);
    PT_CHECK(st != NULL, "%s is refused", what);
    const char *msg = pt_msg(st);
    PT_HAS(msg, "decode");
    PT_HAS(msg, rule);
done:
    sy_session_release(s);
}

static void test_refusals(void)
{
    expect_refused(bmp, 60, "a BMP cut inside its rows", "BMP stream: the pixel rows need 16 bytes");
    static const uint8_t junk[16] = "not an image..";
    expect_refused(junk, sizeof junk, "an unknown format", "is not a JPEG, PNG, BMP or PNM image");
    /* SOI, APP0 JFIF, DQT (64 ones), a baseline SOF0 claiming 60000 x 60000
     * with 1 component, SOS, EOI */
    uint8_t big[160];
    size_t k = 0;
    static const uint8_t head[] = {0xff, 0xd8, 0xff, 0xe0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0,
                                   0xff, 0xdb, 0, 67, 0};
    memcpy(big, head, sizeof head);
    k = sizeof head;
    memset(big + k, 1, 64);
    k += 64;
    static const uint8_t tail[] = {0xff, 0xc0, 0, 11, 8, 0xea, 0x60, 0xea, 0x60, 1, 1, 0x11, 0,
                                   0xff, 0xda, 0, 8, 1, 1, 0, 0, 0x3f, 0, 0xff, 0xd9};
    memcpy(big + k, tail, sizeof tail);
    k += sizeof tail;
    expect_refused(big, k, "a 60000 x 60000 JPEG", "outside the supported size");
    static const uint8_t tiff[12] = {'I', 'I', '*', 0, 8, 0, 0, 0, 0, 0, 0, 0};
    /* cut after the header: "TIFF stream: ..." with libtiff, "TIFF (this build has no libtiff)" without */
    expect_refused(tiff, sizeof tiff, "a TIFF stream", "TIFF");
    sy_status *cst = NULL;
    sy_session *s = decoder_session("CMYK", &cst);
    PT_CHECK(!s && cst, "pixel_format CMYK is refused at creation");
    PT_HAS(pt_msg(cst), "pixel_format must be");
    sy_session_release(s);
}

int main(void)
{
    char ini[1024];
    snprintf(ini, sizeof ini, "[switchyard]\nplugins = %s/libsy_cpu_ref.so\nplugins = %s/libsy_ops_image.so\n",
             PT_PLUGIN_DIR, PT_PLUGIN_DIR);
    snprintf(ini + strlen(ini), sizeof ini - strlen(ini), "%s", "");
    char path[1024];
    snprintf(path, sizeof path, "%s/libsy_ops_image.so", PT_PLUGIN_DIR);
    if (access(path, R_OK) != 0) {
        printf("SKIPPED: %s was not built (libjpeg / libpng absent)\n", path);
        return 77;
    }
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    if (st) {
        fprintf(stderr, "FAIL: environment: %s\n", pt_msg(st));
        return 1;
    }
    PT_RUN(test_bmp);
    PT_RUN(test_pnm);
    PT_RUN(test_tiff);
    PT_RUN(test_refusals);
    for (size_t i = 0; i < n_models; i++)
        sy_model_release(models[i]);
    sy_env_release(env);
    return pt_result();
}
