/*
 * ops_nn / resize.c: Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9).
 *
 * Separable N-d resampling: for every axis a small table maps each output
 * index to at most 4 input taps (nearest: 1, linear: 2, cubic: 4) with
 * weights; axes whose table is the identity use one tap. Coordinate modes:
 * half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners,
 * asymmetric, tf_crop_and_resize (with extrapolation_value). Nearest modes:
 * round_prefer_floor/ceil, floor, ceil. exclude_outside, cubic_coeff_a,
 * axes and keep_aspect_ratio_policy are honoured. antialias (opset 18+,
 * linear and cubic) stretches the filter by 1/scale when downsampling, so an
 * axis then has 2 - 2 * floor(-w / scale + 1) taps (w = 1 linear, 2 cubic),
 * normalised to sum 1.
 */
#include "nn_internal.h"

#include <math.h>
#include <stdlib.h>

enum { RM_NEAREST, RM_LINEAR, RM_CUBIC };
enum { CT_HALF_PIXEL, CT_HALF_PIXEL_SYM, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_CROP };
enum { NM_RPF, NM_RPC, NM_FLOOR, NM_CEIL };
enum { KA_STRETCH, KA_NOT_LARGER, KA_NOT_SMALLER };

typedef struct resize_state {
    int mode, ctm, nearest, keep;
    float cubic_a, extrapolation;
    bool exclude_outside;
    bool antialias;
    bool upsample; /* Upsample: scales only, asymmetric */
    bool scales_attr;
    float attr_scales[SY_MAX_RANK];
    int64_t naxes;
    int64_t axes[SY_MAX_RANK];
} resize_state;

static sy_status *pick(const char *v, const char *const *names, int n, int *out, const char *what)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i])) {
            *out = i;
            return NULL;
        }
    return ERR(SY_ERR_INVALID_ARGUMENT, "%s \"%s\" is not supported", what, v);
}

static sy_status *read_resize(const sy_node *n, resize_state *s)
{
    memset(s, 0, sizeof *s);
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const ctms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                       "align_corners", "asymmetric", "tf_crop_and_resize"};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    static const char *const kas[] = {"stretch", "not_larger", "not_smaller"};
    char buf[40];
    s->upsample = !strcmp(H->node_op(n), "Upsample");
    sy_attr_string_or(H, n, "mode", "nearest", buf, sizeof buf);
    if (!strcmp(buf, "bilinear") || !strcmp(buf, "trilinear"))
        strcpy(buf, "linear");
    SY_TRY(pick(buf, modes, 3, &s->mode, "mode"));
    int32_t opset = H->node_opset(n);
    sy_attr_string_or(H, n, "coordinate_transformation_mode", opset < 11 ? "asymmetric" : "half_pixel", buf,
                      sizeof buf);
    SY_TRY(pick(buf, ctms, 6, &s->ctm, "coordinate_transformation_mode"));
    sy_attr_string_or(H, n, "nearest_mode", opset < 11 ? "floor" : "round_prefer_floor", buf, sizeof buf);
    SY_TRY(pick(buf, nms, 4, &s->nearest, "nearest_mode"));
    sy_attr_string_or(H, n, "keep_aspect_ratio_policy", "stretch", buf, sizeof buf);
    SY_TRY(pick(buf, kas, 3, &s->keep, "keep_aspect_ratio_policy"));
    s->cubic_a = sy_attr_float_or(H, n, "cubic_coeff_a", -0.75f);
    s->extrapolation = sy_attr_float_or(H, n, "extrapolation_value", 0.0f);
    s->exclude_outside = sy_attr_int_or(H, n, "exclude_outside", 0) != 0;
    s->antialias = sy_attr_int_or(H, n, "antialias", 0) != 0 && s->mode != RM_NEAREST;
    s->naxes = sy_attr_ints_copy(H, n, "axes", s->axes, SY_MAX_RANK + 1);
    if (s->naxes > SY_MAX_RANK)
        return ERR(SY_ERR_SHAPE, "too many axes");
    int64_t c = sy_attr_floats_copy(H, n, "scales", s->attr_scales, SY_MAX_RANK + 1);
    s->scales_attr = c >= 0;
    if (c > SY_MAX_RANK)
        return ERR(SY_ERR_SHAPE, "too many scales");
    return NULL;
}

/* Output dims and per-axis scales (as used by the coordinate transform). */
static sy_status *resize_dims(const resize_state *s, const sy_tensor *x, const sy_tensor *const *in, uint32_t nin,
                              int64_t *out, double *scale, const float **roi_out, float *roi_buf)
{
    int32_t r = x->rank;
    int32_t axes[SY_MAX_RANK], na = r;
    for (int32_t i = 0; i < r; i++)
        axes[i] = i;
    if (s->naxes >= 0) {
        na = (int32_t)s->naxes;
        for (int32_t i = 0; i < na; i++)
            SY_TRY(sy_norm_axis(H, s->axes[i], r, false, "axes value", &axes[i]));
    }
    for (int32_t d = 0; d < r; d++) {
        out[d] = x->dims[d];
        scale[d] = 1.0;
    }
    const sy_tensor *roi = NULL, *ts = NULL, *tz = NULL;
    if (s->upsample) {
        ts = nin > 1 ? in[1] : NULL;
    } else if (nin == 2) { /* opset 10: X, scales */
        ts = in[1];
    } else {
        roi = nin > 1 ? in[1] : NULL;
        ts = nin > 2 ? in[2] : NULL;
        tz = nin > 3 ? in[3] : NULL;
    }
    if (ts && sy_tensor_numel(ts) == 0)
        ts = NULL;
    if (tz && sy_tensor_numel(tz) == 0)
        tz = NULL;
    if (roi && sy_tensor_numel(roi) == 0)
        roi = NULL;
    *roi_out = NULL;
    if (roi && s->ctm == CT_TF_CROP) {
        if (!roi->data)
            return ERR(SY_ERR_DYNAMIC_SHAPE, "roi is not known before the run");
        int64_t nr = sy_tensor_numel(roi);
        if (nr != 2 * na)
            return ERR(SY_ERR_SHAPE, "roi must hold 2 * %d values, got %lld", (int)na, (long long)nr);
        for (int32_t d = 0; d < r; d++) {
            roi_buf[d] = 0.0f;
            roi_buf[r + d] = 1.0f;
        }
        for (int32_t i = 0; i < na; i++) {
            roi_buf[axes[i]] = (float)sy_load_f64(roi->data, roi->dtype, (size_t)i);
            roi_buf[r + axes[i]] = (float)sy_load_f64(roi->data, roi->dtype, (size_t)(na + i));
        }
        *roi_out = roi_buf;
    }
    if (s->scales_attr) {
        for (int32_t d = 0; d < r; d++) {
            scale[d] = s->attr_scales[d];
            out[d] = (int64_t)floor((double)x->dims[d] * scale[d]);
        }
        return NULL;
    }
    if (ts && tz)
        return ERR(SY_ERR_INVALID_ARGUMENT, "only one of scales and sizes may be given");
    if (ts) {
        if (!ts->data)
            return ERR(SY_ERR_DYNAMIC_SHAPE, "scales are not known before the run");
        if (sy_tensor_numel(ts) != na)
            return ERR(SY_ERR_SHAPE, "scales must hold %d values, got %lld", (int)na, (long long)sy_tensor_numel(ts));
        for (int32_t i = 0; i < na; i++) {
            double sc = sy_load_f64(ts->data, ts->dtype, (size_t)i);
            if (!(sc > 0))
                return ERR(SY_ERR_INVALID_ARGUMENT, "scales must be > 0");
            scale[axes[i]] = sc;
            out[axes[i]] = (int64_t)floor((double)x->dims[axes[i]] * sc);
        }
        return NULL;
    }
    if (!tz)
        return ERR(SY_ERR_INVALID_ARGUMENT, "one of scales and sizes is required");
    if (!tz->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "sizes are not known before the run");
    if (sy_tensor_numel(tz) != na)
        return ERR(SY_ERR_SHAPE, "sizes must hold %d values, got %lld", (int)na, (long long)sy_tensor_numel(tz));
    int64_t sz[SY_MAX_RANK];
    for (int32_t i = 0; i < na; i++)
        sz[i] = sy_load_i64(tz->data, tz->dtype, (size_t)i);
    if (s->keep == KA_STRETCH) {
        for (int32_t i = 0; i < na; i++) {
            out[axes[i]] = sz[i];
            scale[axes[i]] = x->dims[axes[i]] ? (double)sz[i] / (double)x->dims[axes[i]] : 1.0;
        }
        return NULL;
    }
    double sc = s->keep == KA_NOT_LARGER ? INFINITY : 0.0;
    for (int32_t i = 0; i < na; i++) {
        double v = (double)sz[i] / (double)x->dims[axes[i]];
        sc = s->keep == KA_NOT_LARGER ? (v < sc ? v : sc) : (v > sc ? v : sc);
    }
    for (int32_t i = 0; i < na; i++) {
        scale[axes[i]] = sc;
        out[axes[i]] = (int64_t)floor((double)x->dims[axes[i]] * sc + 0.5);
    }
    return NULL;
}

sy_status *nn_infer_resize(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    resize_state s;
    SY_TRY(read_resize(n, &s));
    const sy_tensor *in[4] = {x, NULL, NULL, NULL};
    uint32_t nin = H->node_num_inputs(n);
    for (uint32_t i = 1; i < nin && i < 4; i++)
        in[i] = H->node_input(n, i);
    int64_t out[SY_MAX_RANK];
    double scale[SY_MAX_RANK];
    const float *roi;
    float rb[2 * SY_MAX_RANK];
    SY_TRY(resize_dims(&s, x, in, nin, out, scale, &roi, rb));
    return H->node_set_output(n, 0, x->dtype, x->rank, out);
}

/* Tap slots per output element along an axis: 4, or for antialias the
 * footprint at the smallest scale that gives `out` from `in` (scale >=
 * out / (in + 1), so 1 / scale <= in / out + 1 covers it). */
static int64_t axis_taps(const resize_state *s, int64_t in, int64_t out)
{
    if (!s->antialias || out <= 0 || out >= in)
        return 4;
    int64_t inv = (in + out - 1) / out + 1;
    return (s->mode == RM_CUBIC ? 4 : 2) * inv + 2;
}

sy_status *nn_prepare_resize(sy_node *n, void **state)
{
    resize_state *s = malloc(sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = read_resize(n, s);
    if (st) {
        free(s);
        return st;
    }
    const sy_tensor *y = H->node_output(n, 0), *x = H->node_input(n, 0);
    size_t taps = 0;
    for (int32_t d = 0; d < y->rank; d++)
        taps += (size_t)y->dims[d] * (size_t)axis_taps(s, x->dims[d], y->dims[d]);
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n) + taps * (sizeof(int64_t) + sizeof(float)) + y->rank + 64);
    *state = s;
    return NULL;
}

static double cubic_w(double r, int t, double A)
{
    double x;
    switch (t) {
    case 0: x = r + 1; return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    case 1: return ((A + 2) * r - (A + 3)) * r * r + 1;
    case 2: x = 1 - r; return ((A + 2) * x - (A + 3)) * x * x + 1;
    default: x = 2 - r; return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    }
}

/* Antialias taps for source coordinate xo at scale sc: the filter (linear:
 * triangle of half-width 1, cubic: Keys of half-width 2) in units of output
 * pixels when downsampling, taps at b + i where b = ceil(xo) - 1 (the
 * reference prefers the left neighbour), weights normalised to sum 1
 * (after exclude_outside drops taps outside the input). Unused slots get
 * weight 0. Returns the tap count, or -1 when it exceeds k. */
static double aa_weight(const resize_state *s, double t)
{
    double A = s->cubic_a;
    t = fabs(t);
    if (s->mode == RM_CUBIC)
        return t <= 1 ? ((A + 2) * t - (A + 3)) * t * t + 1 : t < 2 ? ((A * t - 5 * A) * t + 8 * A) * t - 4 * A : 0.0;
    return t < 1 ? 1 - t : 0.0;
}

static int antialias_taps(const resize_state *s, double xo, double sc, int64_t in, int64_t *ti, float *tw, int64_t k)
{
    double se = sc < 1.0 ? sc : 1.0;
    double half = s->mode == RM_CUBIC ? 2.0 : 1.0;
    int64_t start = (int64_t)floor(-half / se) + 1, n = 2 - 2 * start;
    if (n > k)
        return -1;
    double b = ceil(xo) - 1.0, ratio = xo - b, tot = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int64_t i = 0; i < n; i++) {
            int64_t idx = (int64_t)b + start + i;
            double w = (s->exclude_outside && (idx < 0 || idx >= in)) ? 0.0
                                                                       : aa_weight(s, ((double)(start + i) - ratio) * se);
            if (pass == 0) {
                tot += w;
                continue;
            }
            ti[i] = idx < 0 ? 0 : (idx >= in ? in - 1 : idx);
            tw[i] = (float)(tot != 0 ? w / tot : 0.0);
        }
    for (int64_t i = n; i < k; i++) {
        ti[i] = ti[0];
        tw[i] = 0.0f;
    }
    return (int)n;
}

static sy_status *resize_f32(void *state, const sy_kernel_io *io)
{
    const resize_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t out[SY_MAX_RANK];
    double scale[SY_MAX_RANK];
    const float *roi;
    float rb[2 * SY_MAX_RANK];
    SY_TRY(resize_dims(s, x, io->inputs, io->n_inputs, out, scale, &roi, rb));
    int32_t r = x->rank;
    int ntap = s->mode == RM_NEAREST ? 1 : s->mode == RM_LINEAR ? 2 : 4;
    size_t need = 0;
    int64_t K[SY_MAX_RANK];
    for (int32_t d = 0; d < r; d++) {
        K[d] = axis_taps(s, x->dims[d], out[d]);
        need += (size_t)out[d] * (size_t)K[d];
    }
    if (need * (sizeof(int64_t) + sizeof(float)) + (size_t)r > io->scratch_bytes)
        return ERR(SY_ERR_INTERNAL, "Resize scratch too small");
    int64_t *tidx = io->scratch;
    float *tw = (float *)(tidx + need);
    uint8_t *oob_any = (uint8_t *)(tw + need); /* unused marker space */
    (void)oob_any;
    int64_t *idx_d[SY_MAX_RANK];
    float *w_d[SY_MAX_RANK];
    int nt[SY_MAX_RANK];
    size_t pos = 0;
    for (int32_t d = 0; d < r; d++) {
        idx_d[d] = tidx + pos;
        w_d[d] = tw + pos;
        pos += (size_t)(out[d] * K[d]);
        int64_t in = x->dims[d], on = out[d];
        double sc = scale[d];
        double ow = sc * (double)in; /* the reference transforms with the unrounded output length */
        bool identity = true;
        for (int64_t o = 0; o < on; o++) {
            double xo;
            switch (s->ctm) {
            case CT_HALF_PIXEL: xo = ((double)o + 0.5) / sc - 0.5; break;
            case CT_HALF_PIXEL_SYM: {
                double adj = (double)on / (sc * (double)in), center = (double)in / 2.0;
                xo = center * (1 - adj) + ((double)o + 0.5) / sc - 0.5;
                break;
            }
            case CT_PYTORCH: xo = ow > 1 ? ((double)o + 0.5) / sc - 0.5 : 0.0; break;
            case CT_ALIGN: xo = ow == 1 ? 0.0 : (double)o * (double)(in - 1) / (ow - 1); break;
            case CT_ASYM: xo = (double)o / sc; break;
            default: {
                double st = roi ? roi[d] : 0.0, en = roi ? roi[r + d] : 1.0;
                xo = ow > 1 ? st * (double)(in - 1) + (double)o * (en - st) * (double)(in - 1) / (ow - 1)
                            : 0.5 * (st + en) * (double)(in - 1);
                break;
            }
            }
            int64_t *ti = idx_d[d] + o * K[d];
            float *tw_ = w_d[d] + o * K[d];
            if (s->ctm == CT_TF_CROP && (xo < 0 || xo > (double)(in - 1))) {
                for (int t = 0; t < 4; t++) {
                    ti[t] = -1; /* marks extrapolation */
                    tw_[t] = 0;
                }
                identity = false;
                continue;
            }
            if (s->mode == RM_NEAREST) {
                double v;
                switch (s->nearest) {
                case NM_RPF: v = (xo == floor(xo) + 0.5) ? floor(xo) : round(xo); break;
                case NM_RPC: v = (xo == floor(xo) + 0.5) ? ceil(xo) : round(xo); break;
                case NM_FLOOR: v = floor(xo); break;
                default: v = ceil(xo); break;
                }
                int64_t k = (int64_t)v;
                k = k < 0 ? 0 : (k >= in ? in - 1 : k);
                ti[0] = k;
                tw_[0] = 1.0f;
                if (k != o)
                    identity = false;
                continue;
            }
            if (s->antialias) {
                int nta = antialias_taps(s, xo, sc, in, ti, tw_, K[d]);
                if (nta < 0)
                    return ERR(SY_ERR_INTERNAL, "Resize antialias taps exceed the planned %lld", (long long)K[d]);
                identity = false;
                ntap = nta > ntap ? nta : ntap;
                continue;
            }
            double fl = floor(xo), rr = xo - fl;
            int64_t base = (int64_t)fl - (ntap == 4 ? 1 : 0);
            double ws[4], tot = 0;
            for (int t = 0; t < ntap; t++) {
                ws[t] = ntap == 2 ? (t == 0 ? 1 - rr : rr) : cubic_w(rr, t, s->cubic_a);
                int64_t k = base + t;
                if (s->exclude_outside && (k < 0 || k >= in))
                    ws[t] = 0;
                tot += ws[t];
            }
            for (int t = 0; t < ntap; t++) {
                int64_t k = base + t;
                ti[t] = k < 0 ? 0 : (k >= in ? in - 1 : k);
                tw_[t] = (float)(s->exclude_outside && tot != 0 ? ws[t] / tot : ws[t]);
            }
            if (!(in == on && rr == 0 && ti[ntap == 4 ? 1 : 0] == o))
                identity = false;
        }
        nt[d] = identity ? 1 : ntap;
        ntap = s->mode == RM_NEAREST ? 1 : s->mode == RM_LINEAR ? 2 : 4;
        if (identity && nt[d] == 1) /* move the weight-1 tap first */
            for (int64_t o = 0; o < on; o++) {
                idx_d[d][o * K[d]] = o;
                w_d[d][o * K[d]] = 1.0f;
            }
    }
    int64_t xs[SY_MAX_RANK];
    sy_strides(r, x->dims, xs);
    const float *xd = x->data;
    float *yd = y->data;
    int64_t total = sy_numel(r, out);
    int64_t oi[SY_MAX_RANK] = {0};
    for (int64_t j = 0; j < total; j++) {
        double acc = 0;
        bool extrap = false;
        int tap[SY_MAX_RANK] = {0};
        for (int32_t d = 0; d < r; d++)
            if (idx_d[d][oi[d] * K[d]] < 0)
                extrap = true;
        if (extrap) {
            yd[j] = s->extrapolation;
        } else {
            for (;;) {
                double w = 1;
                int64_t off = 0;
                for (int32_t d = 0; d < r; d++) {
                    w *= w_d[d][oi[d] * K[d] + tap[d]];
                    off += idx_d[d][oi[d] * K[d] + tap[d]] * xs[d];
                }
                if (w != 0)
                    acc += w * xd[off];
                int32_t d = r - 1;
                for (; d >= 0; d--) {
                    if (++tap[d] < nt[d])
                        break;
                    tap[d] = 0;
                }
                if (d < 0)
                    break;
            }
            yd[j] = (float)acc;
        }
        sy_index_next(r, out, oi);
    }
    return NULL;
}

sy_status *nn_run_resize(void *state, const sy_kernel_io *io) { return sy_run_as_f32(H, state, io, resize_f32); }
