/*
 * ImageDecoder's JPEG 2000 streams (OpenJPEG, Debian libopenjp2-7-dev): JP2
 * files and raw J2K codestreams, full resolution and every quality layer,
 * 1 (gray) or 3 (RGB) components of at most 8 bits without subsampling
 * (others are refused by name). Pillow, the ONNX reference, decodes with
 * OpenJPEG too.
 */
#include "image_internal.h"

#include <openjpeg.h>
#include <stdlib.h>

typedef struct jp2_src {
    const uint8_t *d;
    size_t n, pos;
} jp2_src;

static OPJ_SIZE_T j_read(void *buf, OPJ_SIZE_T size, void *user)
{
    jp2_src *s = user;
    size_t left = s->n - s->pos, k = size < left ? size : left;
    if (!k)
        return (OPJ_SIZE_T)-1;
    memcpy(buf, s->d + s->pos, k);
    s->pos += k;
    return k;
}
static OPJ_OFF_T j_skip(OPJ_OFF_T off, void *user)
{
    jp2_src *s = user;
    if (off < 0 || (uint64_t)off > s->n - s->pos)
        return -1;
    s->pos += (size_t)off;
    return off;
}
static OPJ_BOOL j_seek(OPJ_OFF_T off, void *user)
{
    jp2_src *s = user;
    if (off < 0 || (uint64_t)off > s->n)
        return OPJ_FALSE;
    s->pos = (size_t)off;
    return OPJ_TRUE;
}
static void j_quiet(const char *msg, void *user) { (void)msg, (void)user; }

sy_status *image_decode_jp2(const sy_host_api *H, const uint8_t *d, size_t n, bool pixels, image *im)
{
    bool j2k = n >= 4 && !memcmp(d, "\xff\x4f\xff\x51", 4);
    opj_codec_t *codec = opj_create_decompress(j2k ? OPJ_CODEC_J2K : OPJ_CODEC_JP2);
    opj_stream_t *st = opj_stream_create(1 << 16, OPJ_TRUE);
    jp2_src src = {d, n, 0};
    opj_image_t *img = NULL;
    sy_status *err = NULL;
    if (!codec || !st) {
        err = H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory for the JPEG 2000 decoder");
        goto out;
    }
    opj_set_info_handler(codec, j_quiet, NULL);
    opj_set_warning_handler(codec, j_quiet, NULL);
    opj_set_error_handler(codec, j_quiet, NULL);
    opj_stream_set_user_data(st, &src, NULL);
    opj_stream_set_user_data_length(st, n);
    opj_stream_set_read_function(st, j_read);
    opj_stream_set_skip_function(st, j_skip);
    opj_stream_set_seek_function(st, j_seek);
    opj_dparameters_t prm;
    opj_set_default_decoder_parameters(&prm);
    if (!opj_setup_decoder(codec, &prm) || !opj_read_header(st, codec, &img) || !img) {
        err = H->status_new(SY_ERR_RUNTIME, "JPEG 2000 stream: the header cannot be read");
        goto out;
    }
    im->w = (int64_t)img->x1 - img->x0;
    im->h = (int64_t)img->y1 - img->y0;
    im->channels = img->numcomps >= 3 ? 3 : 1;
    if (!image_size_ok(im)) {
        err = H->status_new(SY_ERR_RUNTIME, "JPEG 2000 stream: %lld x %lld pixels is outside the supported size",
                            (long long)im->w, (long long)im->h);
        goto out;
    }
    if (img->numcomps != 1 && img->numcomps != 3 && img->numcomps != 4) {
        err = H->status_new(SY_ERR_UNSUPPORTED, "JPEG 2000 stream: %u components (1, 3 or 4 are supported)",
                            img->numcomps);
        goto out;
    }
    if (!pixels)
        goto out;
    if (!opj_decode(codec, st, img) || !opj_end_decompress(codec, st)) {
        err = H->status_new(SY_ERR_RUNTIME, "JPEG 2000 stream: the pixels cannot be decoded (cut off or corrupt)");
        goto out;
    }
    for (int c = 0; c < im->channels; c++) {
        const opj_image_comp_t *cp = &img->comps[c];
        if (cp->dx != 1 || cp->dy != 1 || cp->w != (OPJ_UINT32)im->w || cp->h != (OPJ_UINT32)im->h || cp->prec > 8 ||
            cp->sgnd || !cp->data) {
            err = H->status_new(SY_ERR_UNSUPPORTED, "JPEG 2000 stream: component %d is subsampled, signed or deeper "
                                "than 8 bits, which is not supported", c);
            goto out;
        }
    }
    im->px = malloc((size_t)im->w * (size_t)im->h * (size_t)im->channels);
    if (!im->px) {
        err = H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory for a %lld x %lld image", (long long)im->w,
                            (long long)im->h);
        goto out;
    }
    for (int64_t i = 0; i < im->w * im->h; i++)
        for (int c = 0; c < im->channels; c++) {
            OPJ_INT32 v = img->comps[c].data[i];
            im->px[i * im->channels + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
out:
    if (img)
        opj_image_destroy(img);
    if (st)
        opj_stream_destroy(st);
    if (codec)
        opj_destroy_codec(codec);
    return err;
}
