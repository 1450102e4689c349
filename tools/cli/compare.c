/* The accuracy debugger's engine: capture (observer), match, measure. */
#include "compare.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- capture ------------------------------------------------------------ */

static char *dup_str(const char *s)
{
    s = s ? s : "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static bool is_integer(sy_dtype dt)
{
    switch (dt) {
    case SY_DT_INT8: case SY_DT_UINT8: case SY_DT_INT16: case SY_DT_UINT16: case SY_DT_INT32: case SY_DT_UINT32:
    case SY_DT_INT64: case SY_DT_UINT64: case SY_DT_BOOL:
        return true;
    default:
        return false;
    }
}

static int64_t code_of(const sy_tensor *t, int64_t i)
{
    const void *d = t->data;
    switch (t->dtype) {
    case SY_DT_INT8: return ((const int8_t *)d)[i];
    case SY_DT_UINT8: case SY_DT_BOOL: return ((const uint8_t *)d)[i];
    case SY_DT_INT16: return ((const int16_t *)d)[i];
    case SY_DT_UINT16: return ((const uint16_t *)d)[i];
    case SY_DT_INT32: return ((const int32_t *)d)[i];
    case SY_DT_UINT32: return ((const uint32_t *)d)[i];
    case SY_DT_INT64: return ((const int64_t *)d)[i];
    case SY_DT_UINT64: { /* saturate what int64 cannot hold */
        uint64_t u = ((const uint64_t *)d)[i];
        return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
    }
    default: return 0;
    }
}

/* channel of element i for a per-axis quantized tensor */
static uint32_t channel_of(const cmp_value *v, int64_t i)
{
    if (v->q_axis < 0 || v->q_count <= 1)
        return 0;
    int64_t inner = 1;
    for (int32_t d = v->q_axis + 1; d < v->rank; d++)
        inner *= v->dims[d];
    int64_t ch = inner ? (i / inner) % v->dims[v->q_axis] : 0;
    return ch < (int64_t)v->q_count ? (uint32_t)ch : 0;
}

static bool capture_tensor(cmp_value *v, const sy_tensor *t)
{
    v->dtype = t->dtype;
    v->rank = t->rank;
    memcpy(v->dims, t->dims, sizeof v->dims);
    v->n = sy_tensor_numel(t);
    if (!t->data || sy_dtype_size(t->dtype) == 0 || t->dtype == SY_DT_STRING) {
        v->n = -1; /* packed or string: not compared element by element */
        return true;
    }
    const sy_quant_params *q = t->quant;
    bool quant = q && is_integer(t->dtype) && t->dtype != SY_DT_BOOL && q->count >= 1 && q->scales &&
                 q->block_size == 0 && (q->count == 1 || (q->axis >= 0 && q->axis < t->rank));
    v->real = malloc((size_t)(v->n ? v->n : 1) * sizeof *v->real);
    if (!v->real)
        return false;
    if (is_integer(t->dtype)) {
        v->codes = malloc((size_t)(v->n ? v->n : 1) * sizeof *v->codes);
        if (!v->codes)
            return false;
        for (int64_t i = 0; i < v->n; i++)
            v->codes[i] = code_of(t, i);
    }
    if (quant) {
        v->quantized = true;
        v->q_axis = q->count == 1 ? -1 : q->axis;
        v->q_count = q->count;
        v->q_scales = malloc(q->count * sizeof *v->q_scales);
        if (!v->q_scales)
            return false;
        memcpy(v->q_scales, q->scales, q->count * sizeof *v->q_scales);
        for (int64_t i = 0; i < v->n; i++) {
            uint32_t c = channel_of(v, i);
            int64_t zp = q->zero_points ? q->zero_points[c] : 0;
            v->real[i] = (float)((double)(v->codes[i] - zp) * (double)q->scales[c]);
        }
    } else {
        for (int64_t i = 0; i < v->n; i++)
            v->real[i] = (float)cli_tensor_elem(t, i);
    }
    return true;
}

static void value_free(cmp_value *v)
{
    free(v->name);
    free(v->node);
    free(v->op);
    free(v->provider);
    free(v->real);
    free(v->codes);
    free(v->q_scales);
}

static void on_output(void *user, const sy_node_output *o)
{
    cmp_capture *c = user;
    if (c->oom)
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        cmp_value *grown = realloc(c->v, cap * sizeof *grown);
        if (!grown) {
            c->oom = true;
            return;
        }
        c->v = grown;
        c->cap = cap;
    }
    cmp_value *v = &c->v[c->n];
    memset(v, 0, sizeof *v);
    v->name = dup_str(o->tensor->name);
    v->node = dup_str(o->node_name);
    v->op = dup_str(o->op);
    v->provider = dup_str(o->provider);
    v->node_index = o->node;
    v->partition = o->partition;
    v->partition_nodes = o->partition_nodes;
    /* a DequantizeLinear's float output is exact arithmetic on codes: its
     * error is judged in LSBs of the scale it applied (input 1, per tensor) */
    if (!strcmp(o->op, "DequantizeLinear") && o->n_inputs >= 2 && o->inputs[1] &&
        o->inputs[1]->dtype == SY_DT_FLOAT32 && o->inputs[1]->data && sy_tensor_numel(o->inputs[1]) == 1)
        memcpy(&v->dq_scale, o->inputs[1]->data, sizeof v->dq_scale);
    if (!v->name || !v->node || !v->op || !v->provider || !capture_tensor(v, o->tensor)) {
        value_free(v);
        c->oom = true;
        return;
    }
    c->n++;
}

sy_status *cmp_capture_session(sy_session *s, cmp_capture *out)
{
    sy_session_set_observer(s, on_output, out);
    sy_status *st = sy_session_run(s);
    sy_session_set_observer(s, NULL, NULL);
    if (!st && out->oom)
        st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory while copying the node outputs (%zu values kept)",
                              out->n);
    return st;
}

/* which node is in which fused partition (bisect of a partition's value) */
static sy_status *capture_partitions(sy_session *s, cmp_capture *out)
{
    size_t n = sy_session_node_count(s);
    out->node_names = calloc(n ? n : 1, sizeof *out->node_names);
    out->node_partition = calloc(n ? n : 1, sizeof *out->node_partition);
    if (!out->node_names || !out->node_partition)
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "compare: out of memory for %zu nodes", n);
    out->n_nodes = n;
    for (size_t i = 0; i < n; i++) {
        sy_node_placement pl = {.struct_size = sizeof pl};
        out->node_partition[i] = sy_session_node_partition(s, i);
        if (sy_session_node_placement(s, i, &pl) && !(out->node_names[i] = dup_str(pl.name)))
            return sy_status_create(SY_ERR_OUT_OF_MEMORY, "compare: out of memory for node names");
    }
    return NULL;
}

sy_status *cmp_capture_env(sy_env *env, const char *model, const char *requant, const sy_placement_override *pins,
                           uint32_t n_pins, const cli_inputs *in, cmp_capture *out)
{
    sy_model *m = NULL;
    sy_session *s = NULL;
    sy_status *st = sy_model_load(env, model, &m);
    sy_session_options so = {.struct_size = sizeof so, .strict = -1, .requant = requant, .placements = pins,
                             .n_placements = n_pins};
    if (!st)
        st = sy_session_create(env, m, &so, &s);
    if (!st) {
        cli_inputs quiet = *in;
        quiet.quiet = 1;
        st = cli_feed_inputs(s, m, &quiet, stderr);
    }
    if (!st)
        st = capture_partitions(s, out);
    if (!st)
        st = cmp_capture_session(s, out);
    sy_session_release(s);
    sy_model_release(m);
    return st;
}

sy_status *cmp_capture_run(const cmp_side *side, const cli_inputs *in, cmp_capture *out)
{
    sy_env *env = NULL;
    sy_status *st = side->config || !side->ini_text ? cli_env(side->config, &env)
                                                    : sy_env_create_from_string(side->ini_text, NULL, &env);
    if (!st)
        st = cmp_capture_env(env, side->model, side->requant, side->pins, side->n_pins, in, out);
    sy_env_release(env);
    return st;
}

void cmp_capture_free(cmp_capture *c)
{
    for (size_t i = 0; i < c->n; i++)
        value_free(&c->v[i]);
    free(c->v);
    for (size_t i = 0; i < c->n_nodes; i++)
        free(c->node_names[i]);
    free(c->node_names);
    free(c->node_partition);
    memset(c, 0, sizeof *c);
}

/* ---- tolerances --------------------------------------------------------- */

void cmp_tol_default(cmp_tol *t)
{
    t->f32 = 1e-4;
    t->f16 = 1e-2;
    t->bf16 = 4e-2;
    t->quant = 0.1;
    t->lsb = 1;
    t->integer = 0;
}

bool cmp_tol_parse(cmp_tol *t, const char *text)
{
    const char *eq = strchr(text, '=');
    if (!eq)
        return false;
    char *end;
    double v = strtod(eq + 1, &end);
    if (end == eq + 1 || *end || !(v >= 0) || isinf(v))
        return false;
    size_t k = (size_t)(eq - text);
    static const struct {
        const char *key;
        size_t off;
    } keys[] = {{"float32", offsetof(cmp_tol, f32)},  {"float16", offsetof(cmp_tol, f16)},
                {"bfloat16", offsetof(cmp_tol, bf16)}, {"quantized", offsetof(cmp_tol, quant)},
                {"lsb", offsetof(cmp_tol, lsb)},        {"integer", offsetof(cmp_tol, integer)}};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strlen(keys[i].key) == k && !strncmp(text, keys[i].key, k)) {
            *(double *)(void *)((char *)t + keys[i].off) = v;
            return true;
        }
    return false;
}

/* ---- matching and measuring ------------------------------------------- */

/* The float value a quantizer-derived name stands for: "t__q12" -> "t".
 * false when the name has no such suffix. */
static bool qdq_base(const char *name, char *buf, size_t len)
{
    static const char *const tags[] = {"__dq", "__q", "__f"};
    const char *cut = NULL;
    for (size_t k = 0; k < sizeof tags / sizeof *tags && !cut; k++) {
        const char *p = name, *hit = NULL;
        while ((p = strstr(p, tags[k]))) {
            hit = p;
            p++;
        }
        if (!hit)
            continue;
        const char *d = hit + strlen(tags[k]);
        if (!*d)
            continue;
        while (isdigit((unsigned char)*d))
            d++;
        if (!*d)
            cut = hit;
    }
    if (!cut || (size_t)(cut - name) + 1 > len)
        return false;
    memcpy(buf, name, (size_t)(cut - name));
    buf[cut - name] = '\0';
    return true;
}

static const cmp_value *find_value(const cmp_capture *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->v[i].name, name))
            return &c->v[i];
    return NULL;
}

static bool same_shape(const cmp_value *a, const cmp_value *b)
{
    if (a->rank != b->rank || a->n != b->n)
        return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return false;
    return true;
}

static bool is_float16(sy_dtype d) { return d == SY_DT_FLOAT16; }

static void measure(cmp_row *r, const cmp_tol *tol, bool qdq)
{
    const cmp_value *a = r->a, *b = r->b;
    r->max_lsb = -1;
    r->codes_differ = 0;
    if (!same_shape(a, b) || a->n < 0 || b->n < 0) {
        r->shape_mismatch = true;
        r->past = true;
        r->max_abs = r->rel = NAN;
        r->cosine = NAN;
        r->tol_key = "shape";
        return;
    }
    double se = 0, sb = 0, sa = 0, dot = 0, mx = 0, lsb = 0;
    bool nan_seen = false;
    r->int_codes = a->codes && b->codes;
    /* one side quantized, the other float: the error in LSBs of the quantized one */
    const cmp_value *q = a->quantized && !b->codes ? a : b->quantized && !a->codes ? b : NULL;
    for (int64_t i = 0; i < a->n; i++) {
        double x = a->real[i], y = b->real[i], e = fabs(x - y);
        if (isnan(x) != isnan(y) || (isinf(x) || isinf(y) ? x != y : false))
            nan_seen = true;
        if (isnan(x) || isnan(y) || isinf(x) || isinf(y))
            continue;
        se += e * e;
        sa += x * x;
        sb += y * y;
        dot += x * y;
        if (e > mx)
            mx = e;
        if (r->int_codes) {
            int64_t dc = a->codes[i] - b->codes[i];
            if (dc) {
                r->codes_differ++;
                double adc = fabs((double)dc);
                if (adc > lsb)
                    lsb = adc;
            }
        } else if (q) {
            double s = q->q_scales[channel_of(q, i)];
            if (s > 0 && e / s > lsb)
                lsb = e / s;
        }
    }
    r->max_abs = mx;
    r->rel = sb > 0 ? sqrt(se) / sqrt(sb) : mx;
    r->cosine = sa > 0 && sb > 0 ? dot / (sqrt(sa) * sqrt(sb)) : (sa == 0 && sb == 0 ? 1.0 : 0.0);
    /* both sides dequantized codes with the same scale: in LSBs of it */
    bool dq = !r->int_codes && !q && a->dq_scale > 0 && a->dq_scale == b->dq_scale;
    if (dq) { /* a whole number of LSBs, up to the rounding of the products */
        lsb = mx / a->dq_scale;
        if (fabs(lsb - nearbyint(lsb)) < 1e-3)
            lsb = nearbyint(lsb);
    }
    if (r->int_codes || q || dq)
        r->max_lsb = lsb;
    if ((r->int_codes && a->quantized && b->quantized) || dq) {
        r->tol_key = "lsb";
        r->tol = tol->lsb;
        r->measure = lsb;
    } else if (r->int_codes) {
        r->tol_key = "integer";
        r->tol = tol->integer;
        r->measure = lsb;
    } else if (a->quantized || b->quantized || qdq) {
        /* a quantized model against its float original: every value carries
         * quantization error, also the float ones after a DequantizeLinear */
        r->tol_key = "quantized";
        r->tol = tol->quant;
        r->measure = r->rel;
    } else if (is_float16(a->dtype) || is_float16(b->dtype)) {
        r->tol_key = "float16";
        r->tol = tol->f16;
        r->measure = r->rel;
    } else if (a->dtype == SY_DT_BFLOAT16 || b->dtype == SY_DT_BFLOAT16) {
        r->tol_key = "bfloat16";
        r->tol = tol->bf16;
        r->measure = r->rel;
    } else {
        r->tol_key = "float32";
        r->tol = tol->f32;
        r->measure = r->rel;
    }
    r->past = nan_seen || r->measure > r->tol;
}

sy_status *cmp_compare(const cmp_capture *a, const cmp_capture *b, const cmp_tol *tol, bool qdq_names,
                       cmp_result *out)
{
    memset(out, 0, sizeof *out);
    out->first = -1;
    out->rows = calloc(a->n ? a->n : 1, sizeof *out->rows);
    bool *used = calloc(b->n ? b->n : 1, sizeof *used);
    if (!out->rows || !used) {
        free(out->rows);
        free(used);
        out->rows = NULL;
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "compare: out of memory for %zu rows", a->n);
    }
    for (size_t i = 0; i < a->n; i++) {
        cmp_row *r = &out->rows[out->n++];
        r->a = &a->v[i];
        r->b = find_value(b, a->v[i].name);
        char base[512];
        if (!r->b && qdq_names && qdq_base(a->v[i].name, base, sizeof base))
            r->b = find_value(b, base);
        if (!r->b) {
            out->unmatched_a++;
            continue;
        }
        used[r->b - b->v] = true;
        out->matched++;
        measure(r, tol, qdq_names);
        if (r->past) {
            out->past++;
            if (out->first < 0)
                out->first = (long)i;
        }
    }
    for (size_t j = 0; j < b->n; j++)
        out->unmatched_b += !used[j];
    free(used);
    return NULL;
}

void cmp_result_free(cmp_result *r)
{
    free(r->rows);
    memset(r, 0, sizeof *r);
}

long cmp_find_row(const cmp_result *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rows[i].a->name, name))
            return (long)i;
    return -1;
}
