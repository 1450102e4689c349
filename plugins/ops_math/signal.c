/*
 * ops_math / signal.c: HannWindow, HammingWindow, BlackmanWindow (17),
 * MelWeightMatrix (17), DFT (17, 20) and STFT (17).
 *
 * Windows and MelWeightMatrix have value-dependent output shapes (the size
 * inputs): infer computes them when the values are known and returns
 * SY_ERR_DYNAMIC_SHAPE otherwise. The DFT is a direct O(n^2) transform in
 * double (complex values are the trailing dim of size 2; size 1 = real),
 * shared by DFT and STFT: forward, inverse (1/n), onesided (n/2 + 1 bins, or
 * for the inverse a Hermitian half spectrum giving a real signal).
 */
#include "math_internal.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */

#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

static const sy_tensor *opt_in(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

static sy_status *scalar_int(const sy_tensor *t, const char *what, int64_t *v)
{
    if (sy_tensor_numel(t) != 1)
        return ERR(SY_ERR_SHAPE, "%s must be a scalar", what);
    if (!t->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "%s is not known before the run", what);
    *v = sy_load_i64(t->data, t->dtype, 0);
    return NULL;
}

static sy_status *out_dtype(const sy_node *n, sy_dtype *dt)
{
    int64_t d = sy_attr_int_or(H, n, "output_datatype", SY_DT_FLOAT32);
    if (!sy_dt_is_numeric((sy_dtype)d) || d == SY_DT_BOOL)
        return ERR(SY_ERR_TYPE, "output_datatype %lld is not a supported numeric type", (long long)d);
    *dt = (sy_dtype)d;
    return NULL;
}

/* ======================================================================== */
/* windows                                                                  */
/* ======================================================================== */

static sy_status *infer_window(sy_node *n)
{
    const sy_tensor *t;
    SY_TRY(sy_need_input(H, n, 0, &t));
    int64_t size;
    SY_TRY(scalar_int(t, "size", &size));
    if (size < 0)
        return ERR(SY_ERR_INVALID_ARGUMENT, "size must be >= 0, got %lld", (long long)size);
    sy_dtype dt = SY_DT_UNDEFINED; /* set by out_dtype; initialised for GCC -O3 -Wmaybe-uninitialized */
    SY_TRY(out_dtype(n, &dt));
    return H->node_set_output(n, 0, dt, 1, &size);
}

typedef struct window_state {
    int kind; /* 0 hann, 1 hamming, 2 blackman */
    bool periodic;
} window_state;

static sy_status *prepare_window(sy_node *n, void **state)
{
    window_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    const char *op = H->node_op(n);
    s->kind = !strcmp(op, "HannWindow") ? 0 : !strcmp(op, "HammingWindow") ? 1 : 2;
    s->periodic = sy_attr_int_or(H, n, "periodic", 1) != 0;
    *state = s;
    return NULL;
}

static sy_status *run_window(void *state, const sy_kernel_io *io)
{
    const window_state *s = state;
    sy_tensor *y = io->outputs[0];
    int64_t size = y->dims[0];
    double N = s->periodic ? (double)size : (double)(size - 1);
    for (int64_t i = 0; i < size; i++) {
        double a = 2.0 * M_PI * (double)i / N, v;
        switch (s->kind) {
        case 0: v = 0.5 - 0.5 * cos(a); break;
        case 1: v = 25.0 / 46.0 - (21.0 / 46.0) * cos(a); break;
        default: v = 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a); break;
        }
        sy_store_f64(y->data, y->dtype, (size_t)i, N == 0 ? 1.0 : v);
    }
    return NULL;
}

/* ======================================================================== */
/* MelWeightMatrix                                                          */
/* ======================================================================== */

static sy_status *mel_params(const sy_tensor *const *in, int64_t *bins, int64_t *dft, int64_t *rate, double *lo,
                             double *hi)
{
    SY_TRY(scalar_int(in[0], "num_mel_bins", bins));
    SY_TRY(scalar_int(in[1], "dft_length", dft));
    SY_TRY(scalar_int(in[2], "sample_rate", rate));
    if (!in[3]->data || !in[4]->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "the edge frequencies are not known before the run");
    *lo = sy_load_f64(in[3]->data, in[3]->dtype, 0);
    *hi = sy_load_f64(in[4]->data, in[4]->dtype, 0);
    if (*bins <= 0 || *dft <= 0 || *rate <= 0)
        return ERR(SY_ERR_INVALID_ARGUMENT, "num_mel_bins, dft_length and sample_rate must be > 0");
    if (!(*lo >= 0 && *hi > *lo && *hi <= (double)*rate / 2))
        return ERR(SY_ERR_INVALID_ARGUMENT, "edges must satisfy 0 <= lower < upper <= sample_rate / 2");
    return NULL;
}

static sy_status *infer_mel(sy_node *n)
{
    const sy_tensor *in[5];
    for (uint32_t i = 0; i < 5; i++)
        SY_TRY(sy_need_input(H, n, i, &in[i]));
    int64_t bins = 0, dft = 0, rate = 0;
    double lo = 0, hi = 0;
    SY_TRY(mel_params(in, &bins, &dft, &rate, &lo, &hi));
    sy_dtype dt = SY_DT_UNDEFINED; /* set by out_dtype; initialised for GCC -O3 -Wmaybe-uninitialized */
    SY_TRY(out_dtype(n, &dt));
    int64_t dims[2] = {dft / 2 + 1, bins};
    return H->node_set_output(n, 0, dt, 2, dims);
}

static sy_status *run_mel(void *state, const sy_kernel_io *io)
{
    (void)state;
    int64_t bins = 0, dft = 0, rate = 0;
    double lo = 0, hi = 0;
    SY_TRY(mel_params(io->inputs, &bins, &dft, &rate, &lo, &hi));
    sy_tensor *y = io->outputs[0];
    int64_t rows = dft / 2 + 1;
    int64_t *fb = malloc(sizeof(int64_t) * (size_t)(bins + 2));
    double *w = calloc((size_t)(rows * bins), sizeof(double));
    if (!fb || !w) {
        free(fb);
        free(w);
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    /* mel edges in float like the reference's float32 inputs, the rest in double */
    float lo_mel = 2595.0f * log10f(1.0f + (float)lo / 700.0f), hi_mel = 2595.0f * log10f(1.0f + (float)hi / 700.0f);
    double step = ((double)hi_mel - (double)lo_mel) / (double)(bins + 2);
    for (int64_t i = 0; i < bins + 2; i++) {
        double mel = (double)i * step + (double)lo_mel;
        double hz = 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
        fb[i] = (int64_t)floor((double)(dft + 1) * hz / (double)rate);
    }
    for (int64_t i = 0; i < bins; i++) {
        int64_t l = fb[i], c = fb[i + 1], h = fb[i + 2];
        if (c - l == 0) {
            if (c >= 0 && c < rows)
                w[c * bins + i] = 1;
        } else {
            for (int64_t j = l; j <= c; j++)
                if (j >= 0 && j < rows)
                    w[j * bins + i] = (double)(j - l) / (double)(c - l);
        }
        if (h - c > 0)
            for (int64_t j = c; j < h; j++)
                if (j >= 0 && j < rows)
                    w[j * bins + i] = (double)(h - j) / (double)(h - c);
    }
    for (int64_t k = 0; k < rows * bins; k++)
        sy_store_f64(y->data, y->dtype, (size_t)k, w[k]);
    free(fb);
    free(w);
    return NULL;
}

/* ======================================================================== */
/* the shared transform                                                     */
/* ======================================================================== */

/* One line: m complex inputs (re, im; stride in elements between them) to
 * `nout` outputs of an n-point transform. Forward: X[k] = sum x[j] w^-jk;
 * inverse: (1/n) sum X[j] w^jk; half_in: the input is the first m bins of a
 * Hermitian spectrum of length n (the rest mirrored, conjugated). */
static void dft_line(const double *re, const double *im, int64_t m, int64_t n, int64_t nout, bool inverse,
                     bool half_in, double *ore, double *oim)
{
    double sign = inverse ? 1.0 : -1.0;
    for (int64_t k = 0; k < nout; k++) {
        double sr = 0, si = 0;
        for (int64_t j = 0; j < n; j++) {
            double xr, xi;
            if (half_in) {
                if (j < m) {
                    xr = re[j];
                    xi = im[j];
                } else if (n - j < m) {
                    xr = re[n - j];
                    xi = -im[n - j];
                } else {
                    xr = xi = 0;
                }
            } else if (j < m) {
                xr = re[j];
                xi = im[j];
            } else {
                xr = xi = 0;
            }
            double a = sign * 2.0 * M_PI * (double)((j * k) % n) / (double)n;
            double c = cos(a), s = sin(a);
            sr += xr * c - xi * s;
            si += xr * s + xi * c;
        }
        if (inverse) {
            sr /= (double)n;
            si /= (double)n;
        }
        ore[k] = sr;
        oim[k] = si;
    }
}

/* ======================================================================== */
/* DFT                                                                      */
/* ======================================================================== */

typedef struct dft_geom {
    int32_t axis;
    int64_t m, n, nout;
    bool inverse, onesided, real_out;
} dft_geom;

static sy_status *dft_geometry(const sy_node *n, const sy_tensor *x, const sy_tensor *len_t, const sy_tensor *axis_t,
                               dft_geom *g)
{
    if (x->rank < 2 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
        return ERR(SY_ERR_SHAPE, "input must be [..., signal dims, 1 or 2] (real or complex), got rank %d",
                   (int)x->rank);
    int64_t axis;
    if (H->node_opset(n) >= 20) {
        axis = -2;
        if (axis_t)
            SY_TRY(scalar_int(axis_t, "axis", &axis));
    } else {
        axis = sy_attr_int_or(H, n, "axis", 1);
    }
    if (axis < 0)
        axis += x->rank;
    if (axis < 0 || axis > x->rank - 2)
        return ERR(SY_ERR_SHAPE, "axis must address a signal dim in [0, %d] (or [-%d, -2]) for rank %d",
                   (int)x->rank - 2, (int)x->rank, (int)x->rank);
    g->axis = (int32_t)axis;
    g->inverse = sy_attr_int_or(H, n, "inverse", 0) != 0;
    g->onesided = sy_attr_int_or(H, n, "onesided", 0) != 0;
    g->m = x->dims[axis];
    if (len_t && sy_tensor_numel(len_t) > 0) {
        SY_TRY(scalar_int(len_t, "dft_length", &g->n));
        if (g->n <= 0)
            return ERR(SY_ERR_INVALID_ARGUMENT, "dft_length must be > 0, got %lld", (long long)g->n);
    } else {
        g->n = g->onesided && g->inverse ? 2 * (g->m - 1) : g->m;
    }
    g->real_out = g->onesided && g->inverse;
    g->nout = g->onesided && !g->inverse ? g->n / 2 + 1 : g->n;
    if (g->n <= 0)
        return ERR(SY_ERR_SHAPE, "the transform length must be > 0");
    return NULL;
}

static sy_status *infer_dft(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (!sy_dt_is_float(x->dtype))
        return ERR(SY_ERR_TYPE, "input must be a float tensor, got %s", sy_dt_name(x->dtype));
    dft_geom g;
    SY_TRY(dft_geometry(n, x, opt_in(n, 1), opt_in(n, 2), &g));
    int64_t dims[SY_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    dims[g.axis] = g.nout;
    dims[x->rank - 1] = g.real_out ? 1 : 2;
    return H->node_set_output(n, 0, x->dtype, x->rank, dims);
}

static sy_status *prepare_dft(sy_node *n, void **state)
{
    dft_geom *g = calloc(1, sizeof *g);
    if (!g)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    /* dft_length and axis are known here: infer needed them */
    sy_status *st = dft_geometry(n, H->node_input(n, 0), opt_in(n, 1), opt_in(n, 2), g);
    if (st) {
        free(g);
        return st;
    }
    *state = g;
    return NULL;
}

static sy_status *run_dft(void *state, const sy_kernel_io *io)
{
    const dft_geom *g = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int32_t axis = g->axis;
    int64_t m = g->m, nout = g->nout, n = g->n;
    bool inverse = g->inverse, onesided = g->onesided;
    bool cin = x->dims[x->rank - 1] == 2, cout = y->dims[y->rank - 1] == 2;
    int64_t outer = sy_dims_prod(x->dims, 0, axis), inner = sy_dims_prod(x->dims, axis + 1, x->rank - 1);
    double *buf = malloc(sizeof(double) * (size_t)(2 * m + 2 * nout + 2));
    if (!buf)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    double *re = buf, *im = re + m, *ore = im + m, *oim = ore + nout;
    int64_t cx = cin ? 2 : 1, cy = cout ? 2 : 1;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t j = 0; j < m; j++) {
                size_t e = (size_t)(((o * m + j) * inner + i) * cx);
                re[j] = sy_load_f64(x->data, x->dtype, e);
                im[j] = cin ? sy_load_f64(x->data, x->dtype, e + 1) : 0.0;
            }
            dft_line(re, im, m, n, nout, inverse, onesided && inverse, ore, oim);
            for (int64_t k = 0; k < nout; k++) {
                size_t e = (size_t)(((o * nout + k) * inner + i) * cy);
                sy_store_f64(y->data, y->dtype, e, ore[k]);
                if (cout)
                    sy_store_f64(y->data, y->dtype, e + 1, oim[k]);
            }
        }
    free(buf);
    return NULL;
}

/* ======================================================================== */
/* STFT                                                                     */
/* ======================================================================== */

static sy_status *stft_geometry(const sy_node *n, const sy_tensor *x, const sy_tensor *step_t, const sy_tensor *win,
                                const sy_tensor *len_t, int64_t *frames, int64_t *flen, int64_t *step, int64_t *bins)
{
    if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
        return ERR(SY_ERR_SHAPE, "signal must be [batch, length, 1 or 2], got rank %d", (int)x->rank);
    SY_TRY(scalar_int(step_t, "frame_step", step));
    if (*step <= 0)
        return ERR(SY_ERR_INVALID_ARGUMENT, "frame_step must be > 0");
    *flen = -1;
    if (len_t && sy_tensor_numel(len_t) > 0)
        SY_TRY(scalar_int(len_t, "frame_length", flen));
    if (win && sy_tensor_numel(win) > 0) {
        if (win->rank != 1)
            return ERR(SY_ERR_SHAPE, "window must be 1-D");
        if (*flen >= 0 && *flen != win->dims[0])
            return ERR(SY_ERR_SHAPE, "frame_length %lld differs from the window length %lld", (long long)*flen,
                       (long long)win->dims[0]);
        *flen = win->dims[0];
    }
    if (*flen <= 0 || *flen > x->dims[1])
        return ERR(SY_ERR_INVALID_ARGUMENT, "frame_length (or the window) must be in [1, signal length %lld]",
                   (long long)x->dims[1]);
    bool onesided = sy_attr_int_or(H, n, "onesided", 1) != 0;
    *frames = 1 + (x->dims[1] - *flen) / *step;
    *bins = onesided ? *flen / 2 + 1 : *flen;
    return NULL;
}

static sy_status *infer_stft(sy_node *n)
{
    const sy_tensor *x, *st;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &st));
    int64_t frames = 0, flen = 0, step = 0, bins = 0;
    SY_TRY(stft_geometry(n, x, st, opt_in(n, 2), opt_in(n, 3), &frames, &flen, &step, &bins));
    int64_t dims[4] = {x->dims[0], frames, bins, 2};
    return H->node_set_output(n, 0, x->dtype, 4, dims);
}

static sy_status *run_stft(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0], *win = io->n_inputs > 2 ? io->inputs[2] : NULL;
    sy_tensor *y = io->outputs[0];
    int64_t step = sy_load_i64(io->inputs[1]->data, io->inputs[1]->dtype, 0);
    int64_t frames = y->dims[1], bins = y->dims[2], flen;
    if (win && sy_tensor_numel(win) > 0)
        flen = win->dims[0];
    else
        flen = sy_load_i64(io->inputs[3]->data, io->inputs[3]->dtype, 0);
    bool cin = x->dims[2] == 2;
    int64_t L = x->dims[1];
    double *buf = malloc(sizeof(double) * (size_t)(2 * flen + 2 * bins));
    if (!buf)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    double *re = buf, *im = re + flen, *ore = im + flen, *oim = ore + bins;
    for (int64_t b = 0; b < x->dims[0]; b++)
        for (int64_t f = 0; f < frames; f++) {
            for (int64_t j = 0; j < flen; j++) {
                double w = win && sy_tensor_numel(win) > 0 ? sy_load_f64(win->data, win->dtype, (size_t)j) : 1.0;
                size_t e = (size_t)((b * L + f * step + j) * (cin ? 2 : 1));
                re[j] = sy_load_f64(x->data, x->dtype, e) * w;
                im[j] = cin ? sy_load_f64(x->data, x->dtype, e + 1) * w : 0.0;
            }
            dft_line(re, im, flen, flen, bins, false, false, ore, oim);
            for (int64_t k = 0; k < bins; k++) {
                size_t e = (size_t)(((b * frames + f) * bins + k) * 2);
                sy_store_f64(y->data, y->dtype, e, ore[k]);
                sy_store_f64(y->data, y->dtype, e + 1, oim[k]);
            }
        }
    free(buf);
    return NULL;
}

/* ======================================================================== */
/* tables                                                                   */
/* ======================================================================== */

static const sy_attr_def a_window[] = {{"output_datatype", SY_ATTR_INT, false}, {"periodic", SY_ATTR_INT, false}};
static const sy_attr_def a_mel[] = {{"output_datatype", SY_ATTR_INT, false}};
static const sy_attr_def a_dft17[] = {{"axis", SY_ATTR_INT, false}, {"inverse", SY_ATTR_INT, false},
                                      {"onesided", SY_ATTR_INT, false}};
static const sy_attr_def a_dft20[] = {{"inverse", SY_ATTR_INT, false}, {"onesided", SY_ATTR_INT, false}};
static const sy_attr_def a_stft[] = {{"onesided", SY_ATTR_INT, false}};

#define DYN(op, since, mi, ma, attrs, infer)                                                                       \
    SY_SCHEMA(op, since, mi, ma, 1, 1, attrs, infer, SY_NO_INPLACE, SY_SCHEMA_DATA_DEPENDENT_SHAPE)

static const sy_op_schema schemas[] = {
    DYN("HannWindow", 17, 1, 1, SY_ATTRS(a_window), infer_window),
    DYN("HammingWindow", 17, 1, 1, SY_ATTRS(a_window), infer_window),
    DYN("BlackmanWindow", 17, 1, 1, SY_ATTRS(a_window), infer_window),
    DYN("MelWeightMatrix", 17, 5, 5, SY_ATTRS(a_mel), infer_mel),
    DYN("DFT", 17, 1, 2, SY_ATTRS(a_dft17), infer_dft),
    DYN("DFT", 20, 1, 3, SY_ATTRS(a_dft20), infer_dft),
    DYN("STFT", 17, 2, 4, SY_ATTRS(a_stft), infer_stft),
};

#define INTS_MASK (SY_DT_BIT(SY_DT_INT32) | SY_DT_BIT(SY_DT_INT64))
static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("HannWindow", 1, 0, INTS_MASK, 0, prepare_window, run_window, sy_release_free),
    SY_CPU_KERNEL("HammingWindow", 1, 0, INTS_MASK, 0, prepare_window, run_window, sy_release_free),
    SY_CPU_KERNEL("BlackmanWindow", 1, 0, INTS_MASK, 0, prepare_window, run_window, sy_release_free),
    SY_CPU_KERNEL("MelWeightMatrix", 1, 0, INTS_MASK, 0, sy_prepare_nothing, run_mel, NULL),
    SY_CPU_KERNEL("DFT", 1, 0, SY_DT_MASK_FLOATS, 0, prepare_dft, run_dft, sy_release_free),
    SY_CPU_KERNEL("STFT", 1, 0, SY_DT_MASK_FLOATS, 0, sy_prepare_nothing, run_stft, NULL),
};

sy_status *math_signal_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
