/*
 * my_npu: the Switchyard plugin template. A provider for an imaginary NPU,
 * with three fp32 kernels (Add with broadcasting, Relu, 2-D MatMul), its own
 * memory domain with copies to and from host memory, options read from its
 * INI section, capability answers with reason codes, and profiling events.
 * Copy this project, rename "my_npu", and replace the kernels with calls
 * into your hardware's runtime. docs/plugin-guide.md walks through it.
 *
 * INI:
 *   [switchyard]
 *   plugins   = /path/to/libsy_my_npu.so
 *   providers = my_npu, cpu_ref
 *   [provider.my_npu]
 *   ops          = Add, Relu, MatMul   the ops it takes (default: all three)
 *   max_elements = 1048576             decline a node whose output has more
 *                                      elements (0 or absent: no limit)
 */
#include <switchyard/sy_sdk.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The host API table injected in init: the plugin's only way into the core.
 * It stays valid until fini. */
static const sy_host_api *H;

/* ---- the provider ------------------------------------------------------------------ */

/* Where my_npu's tensors live. The core plans one arena per domain and puts
 * a copy node where a tensor crosses domains. host_visible: the CPU can
 * read it (a real NPU's device memory would say false). */
static const sy_memory_domain_def my_npu_memory = {
    .struct_size = sizeof(sy_memory_domain_def),
    .name = "my_npu_mem",
    .alignment = 64,
    .capacity = 0, /* unlimited; a real device states its size */
    .host_visible = true,
};

enum { OP_ADD = 1u << 0, OP_RELU = 1u << 1, OP_MATMUL = 1u << 2 };

/* per-environment state of the provider, made by create() from the options */
typedef struct my_npu {
    unsigned ops;         /* OP_* taken */
    int64_t max_elements; /* 0: no limit */
} my_npu;

static unsigned op_bit(const char *name, size_t len)
{
    if (len == 3 && !strncmp(name, "Add", 3))
        return OP_ADD;
    if (len == 4 && !strncmp(name, "Relu", 4))
        return OP_RELU;
    if (len == 6 && !strncmp(name, "MatMul", 6))
        return OP_MATMUL;
    return 0;
}

static sy_status *parse_ops(const char *v, unsigned *out)
{
    *out = 0;
    for (const char *p = v; *p;) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        size_t len = 0;
        while (p[len] && p[len] != ',' && !isspace((unsigned char)p[len]))
            len++;
        if (!len)
            break;
        unsigned bit = op_bit(p, len);
        if (!bit)
            return H->status_new(SY_ERR_INVALID_CONFIG,
                                 "[provider.my_npu] ops = '%s': '%.*s' is not one of Add, Relu, MatMul", v, (int)len, p);
        *out |= bit;
        p += len;
    }
    return NULL;
}

/* Options arrive already checked against option_keys: an unknown key never
 * gets here (the core refuses it by name). Values are ours to validate. */
static sy_status *my_npu_create(const sy_options *opts, void **state)
{
    my_npu *s = calloc(1, sizeof *s);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "my_npu: out of memory");
    s->ops = OP_ADD | OP_RELU | OP_MATMUL;
    const char *v = H->option_get(opts, "ops"); /* NULL when absent or opts NULL */
    sy_status *st = v ? parse_ops(v, &s->ops) : NULL;
    if (!st && (v = H->option_get(opts, "max_elements"))) {
        char *end;
        errno = 0;
        long long n = strtoll(v, &end, 10);
        if (!*v || *end || errno || n < 0)
            st = H->status_new(SY_ERR_INVALID_CONFIG, "[provider.my_npu] max_elements = '%s': expected an integer >= 0", v);
        s->max_elements = n;
    }
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static void my_npu_destroy(void *state) { free(state); }

/* The capability answer, per node: take it, or decline with a reason code
 * and a text naming the rule. Only asked for nodes that have a my_npu
 * kernel (op, opset range, dtype, and the kernel's own accepts()). */
static void my_npu_check_node(void *state, const sy_node *node, sy_claim *claim)
{
    const my_npu *s = state;
    const char *op = H->node_op(node);
    if (!(s->ops & op_bit(op, strlen(op)))) {
        claim->take = false;
        claim->reason = SY_REASON_POLICY;
        snprintf(claim->text, sizeof claim->text, "%s is not in [provider.my_npu] ops", op);
        return;
    }
    const sy_tensor *out = H->node_output(node, 0);
    int64_t n = out ? sy_tensor_numel(out) : 0;
    if (s->max_elements && n > s->max_elements) {
        claim->take = false;
        claim->reason = SY_REASON_MEMORY;
        snprintf(claim->text, sizeof claim->text, "output has %lld elements, over max_elements = %lld", (long long)n,
                 (long long)s->max_elements);
        return;
    }
    claim->take = true;
    claim->reason = SY_REASON_TAKEN;
}

/* Copies between host memory and my_npu_mem. A real device would DMA. */
static bool my_npu_can_copy(void *state, const char *src, const char *dst)
{
    (void)state;
    bool src_dev = !strcmp(src, my_npu_memory.name), dst_dev = !strcmp(dst, my_npu_memory.name);
    return (src_dev && !strcmp(dst, "host")) || (dst_dev && !strcmp(src, "host"));
}

static sy_status *my_npu_copy(void *state, const sy_tensor *src, sy_tensor *dst)
{
    (void)state;
    if (src->nbytes != dst->nbytes)
        return H->status_new(SY_ERR_INTERNAL, "my_npu copy of '%s': %zu bytes into %zu", src->name ? src->name : "?",
                             src->nbytes, dst->nbytes);
    if (src->nbytes)
        memcpy(dst->data, src->data, src->nbytes);
    return NULL;
}

static const char *const provider_keys[] = {"ops", "max_elements", NULL};

static const sy_provider_def my_npu_provider = {
    .struct_size = sizeof(sy_provider_def),
    .name = "my_npu",
    .description = "template NPU provider: Add, Relu, MatMul (fp32) on its own memory domain",
    .flags = 0, /* SY_PROVIDER_EMULATOR if it emulated absent hardware */
    .domain = &my_npu_memory,
    .option_keys = provider_keys,
    .create = my_npu_create,
    .destroy = my_npu_destroy,
    .check_node = my_npu_check_node,
    .can_copy = my_npu_can_copy,
    .copy = my_npu_copy,
};

/* ---- kernels ---------------------------------------------------------------------- */

/* Per session and node: what prepare() computed, so run() does no lookups. */
typedef struct kernel_state {
    const char *name; /* the node's name (valid while the model is loaded) */
    int64_t m, k, n;  /* MatMul sizes */
} kernel_state;

static sy_status *prepare_common(sy_node *node, void **state)
{
    kernel_state *ks = H->alloc(sizeof *ks, 8);
    if (!ks)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "my_npu: out of memory");
    memset(ks, 0, sizeof *ks);
    ks->name = H->node_name(node);
    *state = ks;
    return NULL;
}

static void release_state(void *state) { H->free(state); }

/* One profiling event per kernel run, with modelled cycles: what a real
 * provider would read from its device's counters. Cheap when profiling is off. */
static void profile(const sy_kernel_io *io, const kernel_state *ks, uint64_t t0, int64_t cycles)
{
    if (!H->profiling_enabled(io->run))
        return;
    sy_profile_event ev = {
        .struct_size = sizeof ev,
        .name = ks->name,
        .category = "my_npu",
        .start_ns = t0,
        .duration_ns = H->now_ns() - t0,
        .cycles = cycles,
    };
    H->profile_event(io->run, &ev);
}

/* Add: numpy broadcasting through the SDK's iterator (sy_sdk.h). The core
 * may hand the same buffer as input and output (in-place): this is safe. */
SY_BINARY_FN(add_f32, float, float, float, SY_LD_ID, SY_LD_ID, x + y)

static sy_status *run_add(void *state, const sy_kernel_io *io)
{
    uint64_t t0 = H->now_ns();
    SY_TRY(sy_bcast_apply(H, 2, io->inputs, io->outputs[0], add_f32, NULL));
    profile(io, state, t0, sy_tensor_numel(io->outputs[0]));
    return NULL;
}

static sy_status *run_relu(void *state, const sy_kernel_io *io)
{
    uint64_t t0 = H->now_ns();
    const float *x = io->inputs[0]->data;
    float *y = io->outputs[0]->data;
    int64_t n = sy_tensor_numel(io->outputs[0]);
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f || x[i] != x[i] ? x[i] : 0.0f; /* as cpu_ref: NaN stays NaN, -0 gives +0 */
    profile(io, state, t0, n);
    return NULL;
}

/* MatMul takes only 2-D x 2-D: the kernel's accepts() declines the rest
 * with a reason, and the node falls back to the next provider. */
static bool matmul_accepts(const sy_node *node, char *why, size_t why_len)
{
    const sy_tensor *a = H->node_input(node, 0), *b = H->node_input(node, 1);
    if (a && b && a->rank == 2 && b->rank == 2)
        return true;
    if (why)
        snprintf(why, why_len, "my_npu MatMul takes 2-D inputs only (got rank %d and %d)", a ? a->rank : -1,
                 b ? b->rank : -1);
    return false;
}

static sy_status *prepare_matmul(sy_node *node, void **state)
{
    SY_TRY(prepare_common(node, state));
    kernel_state *ks = *state;
    const sy_tensor *a = H->node_input(node, 0), *b = H->node_input(node, 1);
    ks->m = a->dims[0];
    ks->k = a->dims[1];
    ks->n = b->dims[1];
    if (b->dims[0] != ks->k) { /* the schema's infer already checked; be defensive */
        H->free(ks);
        *state = NULL;
        return H->status_new(SY_ERR_SHAPE, "MatMul: inner dimensions %lld and %lld differ", (long long)ks->k,
                             (long long)b->dims[0]);
    }
    return NULL;
}

static sy_status *run_matmul(void *state, const sy_kernel_io *io)
{
    const kernel_state *ks = state;
    uint64_t t0 = H->now_ns();
    float *c = io->outputs[0]->data;
    if (ks->k == 0) { /* an empty sum: zeros */
        if (ks->m > 0 && ks->n > 0)
            memset(c, 0, (size_t)(ks->m * ks->n) * sizeof(float));
    } else if (ks->m && ks->n) {
        sy_gemm_f32(false, false, ks->m, ks->n, ks->k, 1.0f, io->inputs[0]->data, ks->k, io->inputs[1]->data, ks->n,
                    0.0f, c, ks->n);
    }
    profile(io, ks, t0, ks->m * ks->n * ks->k);
    return NULL;
}

/* A kernel: op (default domain ""), opset range, provider, accepted dtypes of
 * input `type_input`, and prepare/run/release. */
#define MY_KERNEL(op_, since_, accepts_, prepare_, run_)                                                           \
    {                                                                                                              \
        .struct_size = sizeof(sy_kernel_def), .domain = "", .op = (op_), .since_version = (since_),                \
        .until_version = 0, .provider = "my_npu", .type_mask = SY_DT_BIT(SY_DT_FLOAT32), .type_input = 0,          \
        .flags = 0, .accepts = (accepts_), .prepare = (prepare_), .run = (run_), .release = release_state,         \
        .reset = NULL,                                                                                             \
    }

static const sy_kernel_def kernels[] = {
    MY_KERNEL("Add", 7, NULL, prepare_common, run_add),
    MY_KERNEL("Relu", 6, NULL, prepare_common, run_relu),
    MY_KERNEL("MatMul", 1, matmul_accepts, prepare_matmul, run_matmul),
};

/* ---- the plugin ------------------------------------------------------------------ */

/* Register everything; the registrations are kept only if init returns NULL. */
static sy_status *my_npu_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts; /* [plugin.my_npu] declares no keys of its own */
    H = host;
    for (uint32_t i = 0; i < SY_COUNT_OF(kernels); i++)
        SY_TRY(host->register_kernel(p, &kernels[i]));
    return host->register_provider(p, &my_npu_provider);
}

/* init and fini run once per environment, but the library is loaded once
 * per process: two environments share its globals. Keep per-environment
 * data in the provider's state (create/destroy), and never clear globals
 * another environment may still use here. */
static void my_npu_fini(void) {}

static const sy_plugin_desc my_npu_desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "my_npu",
    .version = "0.1.0",
    .description = "template provider plugin (plugin_sdk/template)",
    .kinds = SY_PLUGIN_KIND_PROVIDER | SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = my_npu_init,
    .fini = my_npu_fini,
};

/* The one exported symbol: sy_plugin_query, returning &my_npu_desc. */
SY_PLUGIN_DEFINE(my_npu_desc)
