/*
 * ops_random: the random generators of the default ONNX domain, cpu_ref
 * kernels (float16 / float32 / float64 outputs):
 *
 *   RandomUniform (1)      shape attribute, uniform in [low, high)
 *   RandomUniformLike (1)  shape of the input, dtype attribute or the input's
 *   RandomNormal (1)       shape attribute, mean + scale * N(0, 1)
 *   RandomNormalLike (1)
 *   Bernoulli (15)         y = 1 with probability input[i], else 0
 *
 * Each node of each session owns its generator (xoshiro256**, seeded by
 * splitmix64). With the `seed` attribute the sequence is reproducible: the
 * same model gives the same values in every session, and a session's runs
 * continue the sequence (sy_session_reset restarts it). Without a seed the
 * generator starts from the clock and the node's address. The schemas are
 * stateful, so the core never folds or merges these nodes.
 */
#include "switchyard/sy_sdk.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

#define OUT_TYPES (SY_DT_BIT(SY_DT_FLOAT16) | SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_FLOAT64))

typedef enum { R_UNIFORM, R_NORMAL, R_BERNOULLI } rand_kind;

typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* uniform double in [0, 1) with 53 random bits */
static double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

typedef struct rand_state {
    rand_kind kind;
    sy_dtype out_dt;
    double a, b; /* low, high | mean, scale */
    bool seeded;
    uint64_t seed;
    rng g;
} rand_state;

static const char *op_of(const sy_node *n) { return H->node_op(n); }
static bool is_like(const sy_node *n) { return strstr(op_of(n), "Like") != NULL; }

/* the output dtype: the dtype attribute, else (Like, Bernoulli) the input's, else float32 */
static sy_status *out_dtype(const sy_node *n, sy_dtype *dt)
{
    bool like = is_like(n) || !strcmp(op_of(n), "Bernoulli");
    const sy_tensor *x = like ? H->node_input(n, 0) : NULL;
    int64_t v = sy_attr_int_or(H, n, "dtype", x ? (int64_t)x->dtype : (int64_t)SY_DT_FLOAT32);
    *dt = (sy_dtype)v;
    bool bern = !strcmp(op_of(n), "Bernoulli");
    if (v < 0 || v >= SY_DT__COUNT ||
        (!(OUT_TYPES & SY_DT_BIT(*dt)) && !(bern && (sy_dt_is_int(*dt) || *dt == SY_DT_BOOL || sy_dt_is_float(*dt)))))
        return ERR(SY_ERR_TYPE, "%s cannot produce dtype %lld (%s)", op_of(n), (long long)v,
                   sy_dt_name((sy_dtype)(v >= 0 && v < SY_DT__COUNT ? v : 0)));
    return NULL;
}

static sy_status *infer_random(sy_node *n)
{
    sy_dtype dt;
    SY_TRY(out_dtype(n, &dt));
    const char *op = op_of(n);
    if (!strcmp(op, "Bernoulli") || is_like(n)) {
        const sy_tensor *x;
        SY_TRY(sy_need_input(H, n, 0, &x));
        if (!strcmp(op, "Bernoulli") && !sy_dt_is_float(x->dtype))
            return ERR(SY_ERR_TYPE, "Bernoulli's input (probabilities) must be a float type, got %s",
                       sy_dt_name(x->dtype));
        return H->node_set_output(n, 0, dt, x->rank, x->dims);
    }
    int64_t dims[SY_MAX_RANK];
    int64_t r = sy_attr_ints_copy(H, n, "shape", dims, SY_MAX_RANK);
    if (r < 0)
        return ERR(SY_ERR_INVALID_MODEL, "%s needs the shape attribute", op);
    if (r > SY_MAX_RANK)
        return ERR(SY_ERR_SHAPE, "shape has %lld dims, at most %d are supported", (long long)r, SY_MAX_RANK);
    for (int64_t i = 0; i < r; i++)
        if (dims[i] < 0)
            return ERR(SY_ERR_SHAPE, "shape[%lld] = %lld is negative", (long long)i, (long long)dims[i]);
    return H->node_set_output(n, 0, dt, (int32_t)r, dims);
}

static void rand_reset(void *state)
{
    rand_state *s = state;
    rng_seed(&s->g, s->seeded ? s->seed : H->now_ns() ^ (uint64_t)(uintptr_t)s);
}

static sy_status *prepare_random(sy_node *n, void **state)
{
    rand_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = out_dtype(n, &s->out_dt);
    if (st) {
        free(s);
        return st;
    }
    const char *op = op_of(n);
    s->kind = !strcmp(op, "Bernoulli") ? R_BERNOULLI : strstr(op, "Normal") ? R_NORMAL : R_UNIFORM;
    if (s->kind == R_UNIFORM) {
        s->a = sy_attr_float_or(H, n, "low", 0.0f);
        s->b = sy_attr_float_or(H, n, "high", 1.0f);
        if (!(s->a <= s->b)) {
            double lo = s->a, hi = s->b;
            free(s);
            return ERR(SY_ERR_INVALID_MODEL, "low (%g) must not exceed high (%g)", lo, hi);
        }
    } else if (s->kind == R_NORMAL) {
        s->a = sy_attr_float_or(H, n, "mean", 0.0f);
        s->b = sy_attr_float_or(H, n, "scale", 1.0f);
    }
    s->seeded = sy_attr_has(H, n, "seed", SY_ATTR_FLOAT);
    if (s->seeded) {
        float f = sy_attr_float_or(H, n, "seed", 0.0f);
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        s->seed = bits;
    }
    rand_reset(s);
    *state = s;
    return NULL;
}

static sy_status *run_random(void *state, const sy_kernel_io *io)
{
    rand_state *s = state;
    sy_tensor *y = io->outputs[0];
    int64_t n = sy_tensor_numel(y);
    const sy_tensor *p = s->kind == R_BERNOULLI ? io->inputs[0] : NULL;
    for (int64_t i = 0; i < n; i++) {
        if (s->kind == R_UNIFORM) {
            /* a + (b - a) u can round up to b in the output type: draw again
             * (rejection keeps the distribution uniform on [a, b)) */
            double v = s->a;
            for (int tries = 0; tries < 64; tries++) {
                sy_store_f64(y->data, s->out_dt, (size_t)i, s->a + (s->b - s->a) * rng_unit(&s->g));
                v = sy_load_f64(y->data, s->out_dt, (size_t)i);
                if (v < s->b || !(s->b > s->a))
                    break;
                v = s->a;
            }
            sy_store_f64(y->data, s->out_dt, (size_t)i, v);
        } else if (s->kind == R_NORMAL) {
            double u1 = 1.0 - rng_unit(&s->g), u2 = rng_unit(&s->g); /* u1 in (0, 1] */
            sy_store_f64(y->data, s->out_dt, (size_t)i,
                         s->a + s->b * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
        } else {
            double pr = sy_load_f64(p->data, p->dtype, (size_t)i);
            sy_store_f64(y->data, s->out_dt, (size_t)i, rng_unit(&s->g) < pr ? 1.0 : 0.0);
        }
    }
    return NULL;
}

#define ATTR(n, t) {n, SY_ATTR_##t, false}
static const sy_attr_def a_uni[] = {ATTR("dtype", INT), ATTR("high", FLOAT), ATTR("low", FLOAT), ATTR("seed", FLOAT),
                                    {"shape", SY_ATTR_INTS, true}};
static const sy_attr_def a_uni_like[] = {ATTR("dtype", INT), ATTR("high", FLOAT), ATTR("low", FLOAT),
                                         ATTR("seed", FLOAT)};
static const sy_attr_def a_norm[] = {ATTR("dtype", INT), ATTR("mean", FLOAT), ATTR("scale", FLOAT), ATTR("seed", FLOAT),
                                     {"shape", SY_ATTR_INTS, true}};
static const sy_attr_def a_norm_like[] = {ATTR("dtype", INT), ATTR("mean", FLOAT), ATTR("scale", FLOAT),
                                          ATTR("seed", FLOAT)};
static const sy_attr_def a_bern[] = {ATTR("dtype", INT), ATTR("seed", FLOAT)};

#define RS(op, since, ni, attrs) SY_SCHEMA(op, since, ni, ni, 1, 1, SY_ATTRS(attrs), infer_random, SY_NO_INPLACE, SY_SCHEMA_STATEFUL)
static const sy_op_schema schemas[] = {
    RS("RandomUniform", 1, 0, a_uni),      RS("RandomUniformLike", 1, 1, a_uni_like),
    RS("RandomNormal", 1, 0, a_norm),      RS("RandomNormalLike", 1, 1, a_norm_like),
    RS("Bernoulli", 15, 1, a_bern),
};

#define RK(op)                                                                                                     \
    {sizeof(sy_kernel_def), "", op, 1, 0, "cpu_ref", 0, -1, SY_KERNEL_STATEFUL, NULL, prepare_random, run_random,   \
     sy_release_free, rand_reset}
static const sy_kernel_def kernels[] = {
    RK("RandomUniform"), RK("RandomUniformLike"), RK("RandomNormal"), RK("RandomNormalLike"), RK("Bernoulli"),
};

static sy_status *random_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

static void random_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_random",
    .version = "0.1.0",
    .description = "random generators (RandomUniform/Normal[Like], Bernoulli), cpu_ref kernels",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = random_init,
    .fini = random_fini,
};

SY_PLUGIN_DEFINE(desc)
