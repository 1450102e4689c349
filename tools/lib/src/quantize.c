/*
 * sy_quantize: post-training static quantization of a float ONNX model into
 * a QDQ model (QuantizeLinear/DequantizeLinear around every quantizable op)
 * that any ONNX runtime loads, and that Switchyard's QDQ pass folds into
 * integer kernels.
 *
 *   1. the model is read with protobuf-c; a float16 model is widened to
 *      its float32 form with float16 inputs and outputs (quant_widen.c);
 *      Conv + BatchNormalization and
 *      Conv + Add(constant per-channel) are folded into the Conv's weights
 *      and bias (quant_fold.c);
 *   2. calibration: every intermediate value becomes a graph output of a
 *      copy of the model, which runs over the calibration inputs; the
 *      scheme's observer (through its recipe extension, see sy_sdk.h) sees
 *      every float value; constants computed by nodes are captured;
 *   3. the opset is raised to 13 (per-axis DequantizeLinear) or 21 (int4
 *      blocks, 16-bit Q/DQ) (quant_opset.c);
 *   4. the QDQ rewrite (quant_qdq.c), or the weight-only one
 *      (quant_weight_only.c);
 *   5. the model is written to a temporary file;
 *   6. the written model runs over the calibration set and is compared with
 *      fp32: max abs error, relative error, argmax agreement; only then is
 *      it renamed to the output path (a model that fails to load or run is
 *      removed, never left behind).
 * External data is read into the tensors when the model is decoded
 * (quant_external.c), so the output is one self-contained file.
 */
#include "quant_internal.h"
#include "tl_files.h"

#include <switchyard/sy_tools.h>

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sy_tools_version(void) { return SY_TOOLS_VERSION; }

static size_t argmax(const float *v, size_t n)
{
    size_t b = 0;
    for (size_t i = 1; i < n; i++)
        if (v[i] > v[b])
            b = i;
    return b;
}

/* the caller's struct, up to what it declared */
#define FITS(s, type, field) ((s)->struct_size >= offsetof(type, field) + sizeof((s)->field))

typedef struct qopts {
    const char *scheme;
    bool per_channel;
    int32_t block_size;
    sy_calib_method method;
    double pct;
    bool evaluate;
    sy_tools_progress_fn progress;
    void *user;
} qopts;

static sy_status *read_options(const sy_quantize_options *o, qopts *q)
{
    memset(q, 0, sizeof *q);
    q->scheme = "int8";
    q->method = SY_CALIB_MINMAX;
    q->pct = 99.99;
    q->evaluate = true;
    if (!o)
        return NULL;
    if (o->struct_size < offsetof(sy_quantize_options, scheme) + sizeof o->scheme)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_quantize: options.struct_size %zu is too small",
                                o->struct_size);
    if (o->scheme)
        q->scheme = o->scheme;
    if (FITS(o, sy_quantize_options, per_channel))
        q->per_channel = o->per_channel != 0;
    if (FITS(o, sy_quantize_options, block_size)) {
        if (o->block_size && (o->block_size < 2 || o->block_size > 65536))
            return sy_status_create(SY_ERR_INVALID_ARGUMENT, "block size %d: expected 2 to 65536 (0: the recipe's)",
                                    (int)o->block_size);
        q->block_size = o->block_size;
    }
    if (FITS(o, sy_quantize_options, observer)) {
        if (o->observer != SY_QUANTIZE_MINMAX && o->observer != SY_QUANTIZE_PERCENTILE)
            return sy_status_create(SY_ERR_INVALID_ARGUMENT, "observer %d: expected SY_QUANTIZE_MINMAX (0) or "
                                    "SY_QUANTIZE_PERCENTILE (1)", o->observer);
        q->method = o->observer == SY_QUANTIZE_PERCENTILE ? SY_CALIB_PERCENTILE : SY_CALIB_MINMAX;
    }
    if (FITS(o, sy_quantize_options, percentile) && o->percentile != 0.0) {
        if (!(o->percentile > 50.0 && o->percentile <= 100.0))
            return sy_status_create(SY_ERR_INVALID_ARGUMENT, "percentile %g: expected a number in (50, 100]",
                                    o->percentile);
        q->pct = o->percentile;
    }
    if (FITS(o, sy_quantize_options, skip_evaluation))
        q->evaluate = !o->skip_evaluation;
    if (FITS(o, sy_quantize_options, progress_user)) {
        q->progress = o->progress;
        q->user = o->progress_user;
    }
    return NULL;
}

static void say(const qopts *o, const char *phase, size_t done, size_t total, const char *msg)
{
    if (o->progress)
        o->progress(o->user, phase, done, total, msg);
}

/* the report the caller gave, written up to its struct_size */
static void report_out(sy_quantize_report *dst, const sy_quantize_report *src)
{
    if (!dst || dst->struct_size < sizeof dst->struct_size)
        return;
    size_t n = dst->struct_size < sizeof *src ? dst->struct_size : sizeof *src;
    size_t keep = dst->struct_size;
    memcpy(dst, src, n);
    dst->struct_size = keep;
}

/* The recipe "quant_recipe.SCHEME" and whether the options fit it. */
static sy_status *find_recipe(sy_env *env, const qopts *o, const sy_quant_recipe **out, int32_t *block)
{
    char ext[128];
    snprintf(ext, sizeof ext, "quant_recipe.%s", o->scheme);
    const sy_quant_recipe *rc = sy_get_extension(env, ext, SY_QUANT_RECIPE_VERSION);
    if (!rc || rc->struct_size < sizeof *rc)
        return sy_status_create(SY_ERR_NOT_FOUND,
                                "no loaded plugin publishes the scheme '%s' (extension %s); 'switchyard plugins' "
                                "lists the quant_recipe.* extensions", o->scheme, ext);
    /* weight-only recipes: fp16 storage, or blocks of a 4-bit scheme */
    bool weight_only = !rc->activations;
    *block = rc->block_size > 0 ? (o->block_size ? o->block_size : rc->block_size) : 0;
    const char *refusal = NULL;
    if (weight_only && (!rc->weights || (!rc->fp16_storage && *block <= 0)))
        refusal = "quantizes neither activations nor weights in a form this tool writes";
    else if (o->block_size && rc->block_size <= 0)
        refusal = "is not block-wise: --block-size applies to block-wise schemes (int4)";
    else if (weight_only && o->per_channel)
        refusal = "quantizes weights only: --per-channel applies to the integer schemes (int8, uint8, int16x8)";
    if (refusal)
        return sy_status_create(SY_ERR_UNSUPPORTED, "scheme '%s' (%s) %s", o->scheme, rc->description, refusal);
    *out = rc;
    return NULL;
}

/* Everything one call owns. */
typedef struct qctx {
    qopts o;
    sy_env *env;
    const char *model_name;
    wgraph g;
    qrun q;
    uint8_t *file, *buf;
    sy_model *model;
    sy_session *s;
    q_samples samples;
    float **ref; /* [sample * n_out] reference outputs */
    size_t *ref_n;
    size_t n_orig_out;
    size_t widened; /* float16 initializers widened to float32 (quant_widen.c) */
    sy_quantize_report r;
} qctx;

/* A model output as floats: float32 borrowed, float16 converted into *tmp
 * (malloc'd, the caller frees); NULL for other types or out of memory. */
static const float *output_floats(const sy_tensor *t, float **tmp)
{
    *tmp = NULL;
    if (t->dtype == SY_DT_FLOAT32)
        return t->data;
    if (t->dtype != SY_DT_FLOAT16)
        return NULL;
    size_t n = (size_t)sy_tensor_numel(t);
    if (!(*tmp = malloc(n * 4 + 4)))
        return NULL;
    for (size_t i = 0; i < n; i++)
        (*tmp)[i] = sy_f16_to_f32(((const uint16_t *)t->data)[i]);
    return *tmp;
}

static sy_status *oom(void) { return sy_status_create(SY_ERR_OUT_OF_MEMORY, "quantize: out of memory"); }

/* a refusal (1) or out of memory (-1) of the internal steps */
static sy_status *step_failed(int rc, const char *err)
{
    if (rc > 0 || (err && err[0]))
        return sy_status_create(SY_ERR_UNSUPPORTED, "%s", err);
    return oom();
}

static sy_status *load_samples(qctx *c, const sy_calib_source *src, size_t n_in)
{
    if (!src || src->struct_size < offsetof(sy_calib_source, dir) + sizeof src->dir)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "quantize: no calibration source (or its struct_size is 0)");
    if (src->dir) {
        char err[512] = "";
        if (q_find_samples(&c->g.pl, src->dir, n_in, &c->samples, err, sizeof err))
            return err[0] ? sy_status_create(SY_ERR_NOT_FOUND, "%s", err) : oom();
        return NULL;
    }
    if (!FITS(src, sy_calib_source, n_samples) || !src->tensors || !src->n_samples)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT,
                                "quantize: the calibration source names neither a folder nor tensors");
    for (size_t i = 0; i < src->n_samples * n_in; i++)
        if (!src->tensors[i])
            return sy_status_create(SY_ERR_INVALID_ARGUMENT, "quantize: calibration tensor %zu (sample %zu, input "
                                    "%zu) is NULL", i, i / n_in, i % n_in);
    c->samples.n = src->n_samples;
    c->samples.tensors = src->tensors;
    c->samples.n_inputs = n_in;
    return NULL;
}

/* The folder of the model (its external data). */
static char *model_dir(const char *path)
{
    char *base = strdup(path);
    char *slash = base ? strrchr(base, '/') : NULL;
    if (slash) {
        *slash = '\0';
        return base;
    }
    free(base);
    return strdup(".");
}

/* The model's bytes decoded into the working graph, external data read in
 * (the output is written elsewhere and must stand alone; the external
 * weights are weights to quantize too); the Conv folds. */
static sy_status *decode(qctx *c, const void *data, size_t size, const char *model_path)
{
    c->r.input_bytes = size;
    c->g.model = onnx__model_proto__unpack(NULL, size, data);
    if (!c->g.model || !c->g.model->graph)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: not an ONNX model (protobuf decoding failed)",
                                c->model_name);
    char *dir = model_path ? model_dir(model_path) : NULL;
    if (model_path && !dir)
        return oom();
    char err[1024] = "";
    size_t n_inlined = 0;
    int rc = q_inline_external(c->g.model, dir, size, &n_inlined, err, sizeof err);
    free(dir);
    if (rc > 0)
        return sy_status_create(SY_ERR_UNSUPPORTED, "%s: %s", c->model_name, err);
    if (rc < 0)
        return oom();
    if (!q_load_graph(&c->g))
        return oom();
    size_t n_wide = 0;
    rc = q_widen_f16(&c->g, &n_wide, err, sizeof err);
    if (rc > 0)
        return sy_status_create(SY_ERR_UNSUPPORTED, "%s: %s", c->model_name, err);
    if (rc < 0)
        return oom();
    c->widened = n_wide;
    int nf = q_fold_conv_affine(&c->g);
    if (nf < 0)
        return oom();
    c->r.conv_folds = nf;
    return NULL;
}

/* Calibration: a copy of the model whose every node output is a graph
 * output runs over the samples; observers see every float value, the
 * first sample's values are kept (constants), and the original outputs are
 * the fp32 reference of the evaluation. */
static sy_status *calibrate(qctx *c, const sy_calib_source *src, const char *model_path, bool weight_only)
{
    wgraph *g = &c->g;
    qrun *q = &c->q;
    sy_status *st = NULL;
    size_t n_extra = 0, cap_extra = g->model->graph->n_input + 1;
    for (size_t i = 0; i < g->n_nodes; i++)
        cap_extra += g->nodes[i].nout;
    char **extra = tl_alloc(&g->pl, cap_extra * sizeof *extra);
    if (!extra)
        return oom();
    for (size_t i = 0; i < g->model->graph->n_input; i++) {
        const char *nm = g->model->graph->input[i]->name;
        if (!q_find_init(g, nm) && !q_is_graph_output(g, nm))
            extra[n_extra++] = (char *)nm;
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead)
            for (size_t k = 0; k < g->nodes[i].nout; k++)
                if (g->nodes[i].out[k][0] && !q_is_graph_output(g, g->nodes[i].out[k]))
                    extra[n_extra++] = g->nodes[i].out[k];
    size_t blen = 0;
    c->buf = q_pack_model(g, extra, n_extra, &blen);
    if (!c->buf)
        return oom();
    char *dir = model_path ? model_dir(model_path) : NULL;
    if (model_path && !dir)
        return oom();
    st = sy_model_load_buffer(c->env, c->buf, blen, c->model_name, dir ? dir : ".", &c->model);
    free(dir);
    if (st)
        return tl_status_prefix(st, "quantize: loading the calibration copy of the model");
    size_t n_in = sy_model_input_count(c->model), n_out = sy_model_output_count(c->model);
    c->n_orig_out = g->model->graph->n_output;
    SY_TRY(load_samples(c, src, n_in));
    c->r.n_samples = c->samples.n;
    st = sy_session_create(c->env, c->model, NULL, &c->s);
    if (st)
        return tl_status_prefix(st, "quantize: calibration session");
    q->n_vals = n_out;
    q->vals = calloc(n_out + 1, sizeof *q->vals);
    c->ref = calloc(c->samples.n * c->n_orig_out + 1, sizeof *c->ref);
    c->ref_n = calloc(c->samples.n * c->n_orig_out + 1, sizeof *c->ref_n);
    if (!q->vals || !c->ref || !c->ref_n)
        return oom();
    for (size_t o = 0; o < n_out; o++) {
        sy_value_info vi = {.struct_size = sizeof vi};
        sy_model_output_info(c->model, o, &vi);
        if (!(q->vals[o].name = tl_strdup(&g->pl, vi.name)))
            return oom();
    }
    char msg[1024];
    char wide[128] = "";
    if (c->widened)
        snprintf(wide, sizeof wide, ", float16 model widened to float32 (%zu initializer%s; float16 inputs and "
                 "outputs kept)", c->widened, c->widened == 1 ? "" : "s");
    snprintf(msg, sizeof msg, "quantize: %s, scheme %s%s, %s observer, %zu calibration sample%s, %d conv fold%s%s",
             c->model_name, c->o.scheme, c->o.per_channel ? " (per-channel weights)" : "",
             c->o.method == SY_CALIB_PERCENTILE ? "percentile" : "minmax", c->samples.n,
             c->samples.n == 1 ? "" : "s", c->r.conv_folds, c->r.conv_folds == 1 ? "" : "s", wide);
    say(&c->o, "calibrating", 0, c->samples.n, msg);
    for (size_t si = 0; si < c->samples.n; si++) {
        st = q_feed(c->s, &c->samples, si);
        if (!st)
            st = sy_session_run(c->s);
        if (st) {
            char nb[64];
            return tl_status_prefix(st, "%s", q_sample_name(&c->samples, si, nb, sizeof nb));
        }
        for (size_t o = 0; o < n_out; o++) {
            const sy_tensor *t = NULL;
            if (sy_session_get_output(c->s, o, &t) || !t)
                continue;
            vinfo *v = &q->vals[o];
            size_t numel = (size_t)sy_tensor_numel(t);
            if (!v->seen) {
                v->seen = true;
                v->dtype = t->dtype;
                v->rank = t->rank;
                memcpy(v->dims, t->dims, sizeof v->dims);
                v->numel = numel;
                if (t->dtype == SY_DT_FLOAT32) {
                    v->data = tl_alloc(&g->pl, numel * 4 + 4);
                    if (!v->data)
                        return oom();
                    memcpy(v->data, t->data, numel * 4);
                    /* weight-only recipes observe no activation */
                    st = weight_only ? NULL : q->rc->observer_new(q->rc->activations, c->o.method, c->o.pct, &v->obs);
                    if (st)
                        return tl_status_prefix(st, "quantize: observer");
                }
            } else if (t->dtype == SY_DT_FLOAT32 && (numel != v->numel || memcmp(v->data, t->data, numel * 4))) {
                v->varies = true;
            }
            if (v->obs && (st = q->rc->activations->observer_update(v->obs, t)))
                return tl_status_prefix(st, "quantize: observer");
            if (o < c->n_orig_out && (t->dtype == SY_DT_FLOAT32 || t->dtype == SY_DT_FLOAT16)) {
                /* the reference of the evaluation: the float model's output
                 * (a float16 model's in its float32 form, rounded to its
                 * float16 output) */
                float *r = malloc(numel * 4 + 4);
                if (!r)
                    return oom();
                float *tmp = NULL;
                const float *v = output_floats(t, &tmp);
                if (!v) {
                    free(r);
                    return oom();
                }
                memcpy(r, v, numel * 4);
                free(tmp);
                c->ref[si * c->n_orig_out + o] = r;
                c->ref_n[si * c->n_orig_out + o] = numel;
            }
        }
        say(&c->o, "calibrating", si + 1, c->samples.n, NULL);
    }
    if (c->samples.n == 1)
        for (size_t o = 0; o < n_out; o++)
            q->vals[o].varies = true; /* one sample cannot tell constants apart: trust the graph */
    sy_session_release(c->s);
    c->s = NULL;
    sy_model_release(c->model);
    c->model = NULL;
    free(c->buf);
    c->buf = NULL;
    return NULL;
}

static size_t count_quantize(const wgraph *g)
{
    size_t k = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        k += !g->nodes[i].dead && !strcmp(g->nodes[i].op, "QuantizeLinear");
    return k;
}

/* Opset, then the rewrite the recipe asks for. */
static sy_status *transform(qctx *c, bool weight_only, int32_t block)
{
    wgraph *g = &c->g;
    qrun *q = &c->q;
    char err[512] = "";
    /* the nodes' outputs for the opset upgrade (node order of the working graph) */
    const vinfo **outs = tl_alloc(&g->pl, (g->n_nodes + 1) * sizeof *outs);
    if (!outs)
        return oom();
    for (size_t i = 0; i < g->n_nodes; i++)
        outs[i] = g->nodes[i].nout ? q_vfind(q->vals, q->n_vals, g->nodes[i].out[0]) : NULL;
    int up = q_upgrade_opset(g, outs, err, sizeof err);
    /* int16/uint16 in QuantizeLinear/DequantizeLinear, like 4-bit blocks,
     * exist from opset 21 on; other runtimes refuse them at 13 */
    bool wide = q->rc->activations &&
                (q->rc->activations->storage == SY_DT_INT16 || q->rc->activations->storage == SY_DT_UINT16);
    if (up == 0 && (block > 0 || wide))
        up = q_raise_opset_21(g, err, sizeof err);
    if (up)
        return step_failed(up, err);
    c->r.weight_only = weight_only;
    c->r.block_size = block;
    size_t q_before = count_quantize(g);
    int rc = weight_only ? q_rewrite_weights(q, block, &c->r.weight_tensors) : q_rewrite_qdq(q);
    if (rc)
        return step_failed(rc, q->err);
    if (!weight_only && count_quantize(g) == q_before) {
        /* writing the float model again under an int8 name would mislead */
        return sy_status_create(SY_ERR_UNSUPPORTED, "nothing to quantize: no float32 value reaches an op that "
                                "folds into an integer kernel; nothing was written");
    }
    c->r.opset = g->opset;
    return NULL;
}

/* The written model (still under its temporary name) over the samples
 * against the fp32 outputs. */
static sy_status *evaluate(qctx *c, const char *tmp_path)
{
    sy_status *st = sy_model_load(c->env, tmp_path, &c->model);
    if (!st)
        st = sy_session_create(c->env, c->model, NULL, &c->s);
    if (st)
        return tl_status_prefix(st, "quantize: loading the written model");
    double max_abs = 0.0, num = 0.0, den = 0.0;
    size_t agree = 0, compared = 0;
    for (size_t si = 0; si < c->samples.n; si++) {
        st = q_feed(c->s, &c->samples, si);
        if (!st)
            st = sy_session_run(c->s);
        if (st)
            return tl_status_prefix(st, "quantize: running the written model");
        for (size_t o = 0; o < c->n_orig_out && o < sy_session_output_count(c->s); o++) {
            const sy_tensor *t = NULL;
            const float *r = c->ref[si * c->n_orig_out + o];
            if (sy_session_get_output(c->s, o, &t) || !t || !r ||
                (size_t)sy_tensor_numel(t) != c->ref_n[si * c->n_orig_out + o])
                continue;
            float *tmp = NULL;
            const float *y = output_floats(t, &tmp);
            if (!y) {
                if (t->dtype == SY_DT_FLOAT16)
                    return oom();
                continue;
            }
            size_t n = c->ref_n[si * c->n_orig_out + o];
            for (size_t i = 0; i < n; i++) {
                double d = fabs((double)y[i] - r[i]);
                if (d > max_abs)
                    max_abs = d;
                num += d * d;
                den += (double)r[i] * r[i];
            }
            if (o == 0) {
                compared++;
                agree += argmax(y, n) == argmax(r, n);
            }
            free(tmp);
        }
        say(&c->o, "evaluating", si + 1, c->samples.n, NULL);
    }
    c->r.evaluated = 1;
    c->r.max_abs_error = max_abs;
    c->r.relative_error = den > 0 ? sqrt(num / den) : 0.0;
    c->r.argmax_agree = agree;
    c->r.argmax_compared = compared;
    return NULL;
}

static void qctx_free(qctx *c)
{
    sy_session_release(c->s);
    sy_model_release(c->model);
    for (size_t v = 0; c->q.vals && v < c->q.n_vals; v++)
        if (c->q.vals[v].obs)
            c->q.rc->activations->observer_release(c->q.vals[v].obs);
    free(c->q.vals);
    if (c->ref)
        for (size_t i = 0; i < c->samples.n * c->n_orig_out; i++)
            free(c->ref[i]);
    free(c->ref);
    free(c->ref_n);
    free(c->buf);
    if (c->g.model)
        onnx__model_proto__free_unpacked(c->g.model, NULL);
    free(c->file);
    tl_pool_free(&c->g.pl);
}

sy_status *sy_quantize(sy_env *env, const char *model_path, const void *model_data, size_t model_size,
                       const sy_quantize_options *opts, const sy_calib_source *calib, const char *out_path,
                       sy_quantize_report *report)
{
    if (!env || !out_path || (!model_path && !model_data))
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_quantize: env, a model (path or data) and out_path "
                                "are required");
    if (model_data && !model_size)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_quantize: model_data of 0 bytes");
    qctx *c = calloc(1, sizeof *c);
    if (!c)
        return oom();
    c->env = env;
    c->model_name = model_path ? model_path : "model";
    c->r.struct_size = sizeof c->r;
    int32_t block = 0;
    const sy_quant_recipe *rc = NULL;
    sy_status *st = read_options(opts, &c->o);
    if (!st)
        st = find_recipe(env, &c->o, &rc, &block);
    if (st)
        goto out;
    bool weight_only = !rc->activations;
    /* the QDQ rewrite puts pairs where the integer kernels' table says */
    const sy_qdq_patterns *pt = sy_get_extension(env, SY_QDQ_PATTERNS_EXTENSION, SY_QDQ_PATTERNS_VERSION);
    if (pt && (pt->struct_size < sizeof *pt || pt->pattern_size < SY_QDQ_PATTERN_V1_SIZE))
        pt = NULL;
    if (!weight_only && !pt) {
        st = sy_status_create(SY_ERR_NOT_FOUND, "scheme '%s': no loaded plugin publishes the %s table (ops_quant) that "
                              "says which ops fold into integer kernels", c->o.scheme, SY_QDQ_PATTERNS_EXTENSION);
        goto out;
    }
    c->q.rc = rc;
    c->q.pt = pt;
    c->q.per_channel = c->o.per_channel;
    c->q.method = c->o.method;
    c->q.pct = c->o.pct;
    c->q.g = &c->g;
    if (!model_data) {
        st = tl_read_file(model_path, &c->file, &model_size);
        if (st)
            goto out;
        model_data = c->file;
    }
    if (!(st = decode(c, model_data, model_size, model_path)))
        report_out(report, &c->r);
    if (!st && !(st = calibrate(c, calib, model_path, weight_only)))
        report_out(report, &c->r);
    if (!st)
        st = transform(c, weight_only, block);
    if (st)
        goto out;
    size_t blen = 0;
    c->buf = q_pack_model(&c->g, NULL, 0, &blen);
    if (!c->buf) {
        st = oom();
        goto out;
    }
    /* written under a temporary name, loaded and run from there, and renamed
     * only when that worked: a model that does not load is never left at
     * out_path */
    char tmp[4096];
    if ((st = tl_write_temp(out_path, c->buf, blen, NULL, 0, tmp, sizeof tmp)))
        goto out;
    c->r.output_bytes = blen;
    if (c->o.evaluate)
        st = evaluate(c, tmp);
    if (!st)
        st = tl_commit_temp(tmp, out_path);
    else
        unlink(tmp);
    if (!st)
        report_out(report, &c->r);
out:
    qctx_free(c);
    free(c);
    return st;
}
