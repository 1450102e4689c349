/*
 * test_npu: a second provider, for tests only. It is a real plugin loaded
 * through the ABI, with its own memory domain "npu_sram" (alignment 128) and
 * a declared op subset, so that the core's partitioning, boundary copies,
 * host-bounce fallback and per-domain memory planning are exercised the way
 * a hardware provider would exercise them. Its kernels are plain fp32 C.
 *
 * [plugin.test_npu]
 *   capacity = BYTES        size of npu_sram (0 or absent: unlimited). The
 *                           core copies the domain when the provider is
 *                           registered, so this is a plugin key.
 * [provider.test_npu]
 *   ops = Add,Mul,Relu      the ops it takes (default: all three)
 *   decline_dtype = float32 decline nodes whose input 0 has this dtype
 *   can_copy = true|false   offer the pairwise copy to/from host (default
 *                           true); false makes the core bounce through host
 *   pin_mul = OFFSET        pin output 0 of every Mul it prepares at this
 *                           byte offset of npu_sram (node_pin_output)
 *   fuse = none|all|compile none (default); all: every node it took in one
 *                           fused group (convex or not: the core must check);
 *                           compile: the same group, compiled into one
 *                           program run in place of the kernels, with a
 *                           serialized form for the compile cache
 */
#include "switchyard/sy_sdk.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

static const sy_host_api *H;

static sy_memory_domain_def npu_domain = {
    .struct_size = sizeof(sy_memory_domain_def),
    .name = "npu_sram",
    .alignment = 128,
    .capacity = 0,
    .host_visible = true,
};

#define NPU_MAX_OPS 16

typedef struct npu_state {
    char ops[NPU_MAX_OPS][32];
    uint32_t n_ops;
    char ops_text[96];
    sy_dtype decline_dtype; /* SY_DT_UNDEFINED: none */
    bool can_copy;
    int fuse; /* 0 none, 1 all, 2 compile */
    int64_t pin_mul; /* -1 none */
    char compat[160];
} npu_state;

static bool parse_bool(const char *v, bool *out)
{
    if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "on"))
        *out = true;
    else if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "off"))
        *out = false;
    else
        return false;
    return true;
}

static sy_status *parse_ops(npu_state *s, const char *v)
{
    s->n_ops = 0;
    const char *p = v;
    while (*p) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        const char *start = p;
        while (*p && *p != ',' && !isspace((unsigned char)*p))
            p++;
        size_t len = (size_t)(p - start);
        if (!len)
            break;
        if (s->n_ops == NPU_MAX_OPS || len >= sizeof s->ops[0])
            return H->status_new(SY_ERR_INVALID_CONFIG, "[provider.test_npu] ops = '%s': at most %d names of < 32 chars",
                                 v, NPU_MAX_OPS);
        memcpy(s->ops[s->n_ops], start, len);
        s->ops[s->n_ops][len] = '\0';
        s->n_ops++;
    }
    snprintf(s->ops_text, sizeof s->ops_text, "%s", v);
    return NULL;
}

static sy_status *npu_create(const sy_options *opts, void **state)
{
    npu_state *s = calloc(1, sizeof *s);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "test_npu: out of memory");
    s->can_copy = true;
    s->decline_dtype = SY_DT_UNDEFINED;
    s->pin_mul = -1;
    sy_status *st = parse_ops(s, "Add,Mul,Relu");
    const char *v;
    if (!st && opts && (v = H->option_get(opts, "ops")))
        st = parse_ops(s, v);
    if (!st && opts && (v = H->option_get(opts, "can_copy")) && !parse_bool(v, &s->can_copy))
        st = H->status_new(SY_ERR_INVALID_CONFIG, "[provider.test_npu] can_copy = '%s': expected true or false", v);
    if (!st && opts && (v = H->option_get(opts, "decline_dtype"))) {
        for (int dt = 1; dt < SY_DT__COUNT; dt++)
            if (!strcmp(sy_dt_name((sy_dtype)dt), v))
                s->decline_dtype = (sy_dtype)dt;
        if (s->decline_dtype == SY_DT_UNDEFINED)
            st = H->status_new(SY_ERR_INVALID_CONFIG, "[provider.test_npu] decline_dtype = '%s': unknown dtype", v);
    }
    if (!st && opts && (v = H->option_get(opts, "pin_mul"))) {
        char *end;
        long long off = strtoll(v, &end, 10);
        if (!*v || *end || off < 0)
            st = H->status_new(SY_ERR_INVALID_CONFIG, "[provider.test_npu] pin_mul = '%s': expected a byte offset", v);
        else
            s->pin_mul = off;
    }
    if (!st && opts && (v = H->option_get(opts, "fuse"))) {
        if (!strcmp(v, "none"))
            s->fuse = 0;
        else if (!strcmp(v, "all"))
            s->fuse = 1;
        else if (!strcmp(v, "compile"))
            s->fuse = 2;
        else
            st = H->status_new(SY_ERR_INVALID_CONFIG, "[provider.test_npu] fuse = '%s': expected none, all or compile", v);
    }
    if (st) {
        free(s);
        return st;
    }
    /* what a compiled program depends on: the provider and its options */
    snprintf(s->compat, sizeof s->compat, "test_npu 0.1.0 ops=%s fuse=%d", s->ops_text, s->fuse);
    *state = s;
    return NULL;
}

static void npu_destroy(void *state) { free(state); }

static void npu_check_node(void *state, const sy_node *node, sy_claim *claim)
{
    const npu_state *s = state;
    const char *op = H->node_op(node);
    bool known = false;
    for (uint32_t i = 0; i < s->n_ops; i++)
        if (!strcmp(s->ops[i], op))
            known = true;
    if (!known) {
        claim->take = false;
        claim->reason = SY_REASON_OP_UNSUPPORTED;
        snprintf(claim->text, sizeof claim->text, "op %.48s is outside the configured subset (ops = %s)", op,
                 s->ops_text);
        return;
    }
    const sy_tensor *in0 = H->node_input(node, 0);
    if (s->decline_dtype != SY_DT_UNDEFINED && in0 && in0->dtype == s->decline_dtype) {
        claim->take = false;
        claim->reason = SY_REASON_DTYPE;
        snprintf(claim->text, sizeof claim->text, "input dtype %s is declined (decline_dtype = %s)",
                 sy_dt_name(in0->dtype), sy_dt_name(s->decline_dtype));
        return;
    }
    claim->take = true;
    claim->reason = SY_REASON_TAKEN;
}

static bool npu_can_copy(void *state, const char *src_domain, const char *dst_domain)
{
    const npu_state *s = state;
    if (!s->can_copy)
        return false;
    bool src_npu = !strcmp(src_domain, npu_domain.name), dst_npu = !strcmp(dst_domain, npu_domain.name);
    bool src_host = !strcmp(src_domain, "host"), dst_host = !strcmp(dst_domain, "host");
    return (src_npu && dst_host) || (src_host && dst_npu);
}

static sy_status *npu_copy(void *state, const sy_tensor *src, sy_tensor *dst)
{
    (void)state;
    if (src->nbytes != dst->nbytes)
        return H->status_new(SY_ERR_INTERNAL, "test_npu copy: %zu bytes into %zu", src->nbytes, dst->nbytes);
    if (src->nbytes)
        memcpy(dst->data, src->data, src->nbytes);
    return NULL;
}

/* ---- fused partitions (ABI 1.1) --------------------------------------------
 * A compiled partition is a tiny program: per member node its op and where
 * its operands live (a partition input, a partition output, or a temporary
 * the program owns). The serialized form is the op sequence, checked again
 * against the partition's nodes when loaded. */
enum { REF_IN = 0, REF_OUT = 1, REF_TMP = 2 };
typedef struct npu_ref {
    uint8_t kind;
    uint32_t index;
} npu_ref;
typedef struct npu_instr {
    uint8_t op; /* 0 Add, 1 Mul, 2 Relu */
    uint32_t n_in;
    npu_ref in[2], out;
} npu_instr;
typedef struct npu_program {
    npu_instr *code;
    uint32_t n_code;
    sy_tensor *tmp; /* temporaries: shapes from the nodes, data owned */
    uint32_t n_tmp;
} npu_program;

static sy_status *npu_group(void *state, const sy_node *const *nodes, uint32_t n, uint32_t *group_of)
{
    const npu_state *s = state;
    (void)nodes;
    for (uint32_t i = 0; i < n; i++)
        group_of[i] = s->fuse ? 1 : 0;
    return NULL;
}

static int op_code(const char *op) { return !strcmp(op, "Add") ? 0 : !strcmp(op, "Mul") ? 1 : !strcmp(op, "Relu") ? 2 : -1; }

static void program_free(npu_program *pg)
{
    if (!pg)
        return;
    for (uint32_t t = 0; t < pg->n_tmp; t++)
        free(pg->tmp[t].data);
    free(pg->tmp);
    free(pg->code);
    free(pg);
}

static bool find_ref(const sy_partition *p, const npu_program *pg, const sy_tensor *const *tmp_src, const sy_tensor *t,
                     npu_ref *r)
{
    for (uint32_t i = 0; i < p->n_inputs; i++)
        if (p->inputs[i] == t)
            return *r = (npu_ref){REF_IN, i}, true;
    for (uint32_t i = 0; i < p->n_outputs; i++)
        if (p->outputs[i] == t)
            return *r = (npu_ref){REF_OUT, i}, true;
    for (uint32_t i = 0; i < pg->n_tmp; i++)
        if (tmp_src[i] == t)
            return *r = (npu_ref){REF_TMP, i}, true;
    return false;
}

/* Build the program from the partition; `ops` (from a cache) must match. */
static sy_status *build_program(const sy_partition *p, const uint8_t *ops, uint32_t n_ops, void **compiled)
{
    if (ops && n_ops != p->n_nodes)
        return H->status_new(SY_ERR_INVALID_MODEL, "test_npu: cached program has %u instructions, the partition %u nodes",
                             n_ops, p->n_nodes);
    npu_program *pg = calloc(1, sizeof *pg);
    const sy_tensor **tmp_src = calloc(p->n_nodes + 1, sizeof *tmp_src);
    if (pg) {
        pg->code = calloc(p->n_nodes + 1, sizeof *pg->code);
        pg->tmp = calloc(p->n_nodes + 1, sizeof *pg->tmp);
    }
    if (!pg || !tmp_src || !pg->code || !pg->tmp) {
        program_free(pg);
        free(tmp_src);
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "test_npu: out of memory");
    }
    sy_status *st = NULL;
    for (uint32_t k = 0; k < p->n_nodes && !st; k++) {
        const sy_node *nd = p->nodes[k];
        int code = op_code(H->node_op(nd));
        if (code < 0 || (ops && ops[k] != code)) {
            st = H->status_new(SY_ERR_INVALID_MODEL, "test_npu: node '%s' (%s) does not match the program", H->node_name(nd),
                               H->node_op(nd));
            break;
        }
        npu_instr *ins = &pg->code[pg->n_code++];
        ins->op = (uint8_t)code;
        ins->n_in = H->node_num_inputs(nd) < 2 ? H->node_num_inputs(nd) : 2;
        const sy_tensor *out = H->node_output(nd, 0);
        if (!find_ref(p, pg, tmp_src, out, &ins->out)) {
            sy_tensor *t = &pg->tmp[pg->n_tmp];
            *t = *out;
            t->data = malloc(out->nbytes ? out->nbytes : 1);
            if (!t->data) {
                st = H->status_new(SY_ERR_OUT_OF_MEMORY, "test_npu: out of memory");
                break;
            }
            tmp_src[pg->n_tmp] = out;
            ins->out = (npu_ref){REF_TMP, pg->n_tmp++};
        }
        for (uint32_t i = 0; i < ins->n_in && !st; i++)
            if (!find_ref(p, pg, tmp_src, H->node_input(nd, i), &ins->in[i]))
                st = H->status_new(SY_ERR_INTERNAL, "test_npu: input %u of '%s' is neither a partition input nor produced in it",
                                   i, H->node_name(nd));
    }
    free(tmp_src);
    if (st) {
        program_free(pg);
        return st;
    }
    *compiled = pg;
    return NULL;
}

static sy_status *npu_compile(void *state, const sy_partition *p, void **compiled)
{
    const npu_state *s = state;
    if (s->fuse != 2) {
        *compiled = NULL;
        return NULL;
    }
    return build_program(p, NULL, 0, compiled);
}

static sy_status *run_binary(void *state, const sy_kernel_io *io);
static sy_status *run_relu(void *state, const sy_kernel_io *io);
static const sy_bcast_fn binary_fns[2];

static sy_status *npu_run_compiled(void *compiled, const sy_kernel_io *io)
{
    npu_program *pg = compiled;
    for (uint32_t k = 0; k < pg->n_code; k++) {
        const npu_instr *ins = &pg->code[k];
        const sy_tensor *in[2] = {NULL, NULL};
        for (uint32_t i = 0; i < ins->n_in; i++)
            in[i] = ins->in[i].kind == REF_IN ? io->inputs[ins->in[i].index]
                    : ins->in[i].kind == REF_OUT ? io->outputs[ins->in[i].index]
                                                 : &pg->tmp[ins->in[i].index];
        sy_tensor *out = ins->out.kind == REF_OUT ? io->outputs[ins->out.index] : &pg->tmp[ins->out.index];
        sy_tensor *outs[1] = {out};
        sy_kernel_io sub = {sizeof sub, ins->n_in, 1, in, outs, NULL, 0, io->run};
        sy_status *st = ins->op == 2 ? run_relu(NULL, &sub) : run_binary((void *)&binary_fns[ins->op], &sub);
        if (st)
            return st;
    }
    return NULL;
}

static void npu_release_compiled(void *compiled) { program_free(compiled); }

static sy_status *npu_serialize(void *compiled, void **bytes, size_t *size)
{
    const npu_program *pg = compiled;
    uint8_t *b = H->alloc(pg->n_code + 1, 16);
    if (!b)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "test_npu: out of memory");
    for (uint32_t k = 0; k < pg->n_code; k++)
        b[k] = pg->code[k].op;
    *bytes = b;
    *size = pg->n_code;
    return NULL;
}

static sy_status *npu_deserialize(void *state, const sy_partition *p, const void *bytes, size_t size, void **compiled)
{
    (void)state;
    return build_program(p, bytes, (uint32_t)size, compiled);
}

static const char *npu_compat(void *state) { return ((const npu_state *)state)->compat; }

static const char *const provider_keys[] = {"ops", "decline_dtype", "can_copy", "fuse", "pin_mul", NULL};
static const char *const plugin_keys[] = {"capacity", NULL};

static const sy_provider_def npu_provider = {
    .struct_size = sizeof(sy_provider_def),
    .name = "test_npu",
    .description = "test provider: Add/Mul/Relu subset on its own memory domain npu_sram",
    .flags = 0,
    .domain = &npu_domain,
    .option_keys = provider_keys,
    .create = npu_create,
    .destroy = npu_destroy,
    .check_node = npu_check_node,
    .can_copy = npu_can_copy,
    .copy = npu_copy,
    .group = npu_group,
    .compile = npu_compile,
    .run_compiled = npu_run_compiled,
    .release_compiled = npu_release_compiled,
    .serialize = npu_serialize,
    .deserialize = npu_deserialize,
    .compat = npu_compat,
};

/* ---- kernels (fp32) ------------------------------------------------------ */
SY_BINARY_FN(add_f32, float, float, float, SY_LD_ID, SY_LD_ID, x + y)
SY_BINARY_FN(mul_f32, float, float, float, SY_LD_ID, SY_LD_ID, x * y)

static const sy_bcast_fn binary_fns[2] = {add_f32, mul_f32};

static sy_status *prepare_binary(sy_node *n, void **state)
{
    bool mul = strcmp(H->node_op(n), "Add") != 0;
    *state = (void *)&binary_fns[mul ? 1 : 0];
    const npu_state *ps = H->node_provider_state(n);
    if (mul && ps && ps->pin_mul >= 0)
        return H->node_pin_output(n, 0, (uint64_t)ps->pin_mul);
    return NULL;
}

static sy_status *run_binary(void *state, const sy_kernel_io *io)
{
    return sy_bcast_apply(H, 2, io->inputs, io->outputs[0], *(const sy_bcast_fn *)state, NULL);
}

static sy_status *run_relu(void *state, const sy_kernel_io *io)
{
    (void)state;
    const float *x = io->inputs[0]->data;
    float *y = io->outputs[0]->data;
    int64_t n = sy_tensor_numel(io->outputs[0]);
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f || x[i] != x[i] ? x[i] : 0.0f; /* as cpu_ref: NaN stays NaN */
    return NULL;
}

static void release_nothing(void *state) { (void)state; }

#define NPU_KERNEL(op, since, prep, run_fn)                                                                        \
    {                                                                                                              \
        sizeof(sy_kernel_def), "", (op), (since), 0, "test_npu", SY_DT_BIT(SY_DT_FLOAT32), 0, 0u, NULL, (prep),    \
            (run_fn), release_nothing, NULL                                                                        \
    }

static const sy_kernel_def kernels[] = {
    NPU_KERNEL("Add", 7, prepare_binary, run_binary),
    NPU_KERNEL("Mul", 7, prepare_binary, run_binary),
    NPU_KERNEL("Relu", 6, sy_prepare_nothing, run_relu),
};

static sy_status *npu_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    H = host;
    npu_domain.capacity = 0;
    const char *v = opts ? host->option_get(opts, "capacity") : NULL;
    if (v) {
        char *end;
        unsigned long long cap = strtoull(v, &end, 10);
        if (!*v || *end)
            return host->status_new(SY_ERR_INVALID_CONFIG, "[plugin.test_npu] capacity = '%s': expected bytes", v);
        npu_domain.capacity = cap;
    }
    SY_TRY(sy_register_tables(host, p, NULL, 0, kernels, SY_COUNT_OF(kernels)));
    return host->register_provider(p, &npu_provider);
}

static void npu_fini(void) {}

static const sy_plugin_desc npu_desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "test_npu",
    .version = "0.1.0",
    .description = "test provider with its own memory domain and a declared op subset",
    .kinds = SY_PLUGIN_KIND_PROVIDER | SY_PLUGIN_KIND_OPS,
    .option_keys = plugin_keys,
    .init = npu_init,
    .fini = npu_fini,
};

SY_PLUGIN_DEFINE(npu_desc)
