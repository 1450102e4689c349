/*
 * test_npu: a second provider, for tests only. It is a real plugin loaded
 * through the ABI, with its own memory domain "npu_sram" (alignment 128) and
 * a declared op subset, so that the core's partitioning, boundary copies,
 * host-bounce fallback and per-domain memory planning are exercised the way
 * a hardware provider would exercise them. Its kernels are plain fp32 C, plus
 * QAdd and QMul (domain switchyard.quant, schema from ops_quant; int8/uint8)
 * that requantize with the SDK's sy_requant in the form the host resolves for
 * the node (its `requant` attribute): a compiled program bakes that form in,
 * so only the core's compatibility string keeps a cache made under one form
 * from running under another. QAdd takes equal input scales only (one
 * requantizer over (a-za)+(b-zb)); nodes with act_min/act_max are declined.
 *
 * [plugin.test_npu]
 *   capacity = BYTES        size of npu_sram (0 or absent: unlimited). The
 *                           core copies the domain when the provider is
 *                           registered, so this is a plugin key.
 * [provider.test_npu]
 *   ops = Add,Mul,Relu      the ops it takes (default: all three; QAdd and
 *                           QMul have kernels too, taken only when listed)
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
#include <math.h>
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

static bool is_quant_domain(const sy_node *n)
{
    const char *d = H->node_domain(n);
    return d && !strcmp(d, "switchyard.quant");
}

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
    float f;
    if (is_quant_domain(node) &&
        (H->attr_float(node, "act_min", &f) || H->attr_float(node, "act_max", &f))) {
        claim->take = false;
        claim->reason = SY_REASON_ATTRIBUTE;
        snprintf(claim->text, sizeof claim->text, "fused activation bounds (act_min/act_max) are not supported");
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
 * the program owns) and, for the integer ops, the requantization form it was
 * compiled with. The serialized form is (op, form) per instruction; the ops
 * are checked again against the partition's nodes when loaded, the form is
 * taken from the cache as a real compiled binary would. */
enum { REF_IN = 0, REF_OUT = 1, REF_TMP = 2, REF_NONE = 3 };
enum { OP_ADD, OP_MUL, OP_RELU, OP_QADD, OP_QMUL };
#define NPU_MAX_IN 8 /* QAdd/QMul: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp */
typedef struct npu_ref {
    uint8_t kind;
    uint32_t index;
} npu_ref;
typedef struct npu_instr {
    uint8_t op;   /* OP_* */
    uint8_t form; /* sy_rq_mode of OP_QADD/OP_QMUL; 0 otherwise */
    uint32_t n_in;
    npu_ref in[NPU_MAX_IN], out;
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

static int op_code(const sy_node *n)
{
    const char *op = H->node_op(n);
    if (is_quant_domain(n))
        return !strcmp(op, "QAdd") ? OP_QADD : !strcmp(op, "QMul") ? OP_QMUL : -1;
    return !strcmp(op, "Add") ? OP_ADD : !strcmp(op, "Mul") ? OP_MUL : !strcmp(op, "Relu") ? OP_RELU : -1;
}

/* The form the host resolves for node n (recorded by the core for explain
 * and the compile cache). */
static sy_status *node_form(const sy_node *n, uint8_t *form)
{
    const char *v = NULL;
    size_t len = 0;
    char buf[32];
    sy_rq_mode m = SY_RQ_ONNX;
    if (H->attr_string(n, "requant", &v, &len)) {
        snprintf(buf, sizeof buf, "%.*s", (int)(len < 31 ? len : 31), v);
        if (!sy_rq_mode_parse(buf, &m))
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "test_npu: node '%s': requant = \"%s\": expected onnx or gemmlowp",
                                 H->node_name(n), buf);
    }
    *form = (uint8_t)m;
    return NULL;
}

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

/* Build the program from the partition; `ops` (from a cache: n_ops (op,
 * form) pairs) must match its nodes, and its forms are used as they are. */
static sy_status *build_program(const sy_partition *p, const uint8_t *ops, uint32_t n_ops, void **compiled)
{
    if (ops && n_ops != p->n_nodes)
        return H->status_new(SY_ERR_INVALID_MODEL, "test_npu: cached program has %u instructions, the partition %u nodes",
                             n_ops, p->n_nodes);
    if (ops)
        for (uint32_t k = 0; k < n_ops; k++)
            if (ops[2 * k + 1] > SY_RQ_GEMMLOWP)
                return H->status_new(SY_ERR_INVALID_MODEL, "test_npu: cached instruction %u has requant form %u", k,
                                     ops[2 * k + 1]);
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
        int code = op_code(nd);
        if (code < 0 || (ops && ops[2 * k] != code)) {
            st = H->status_new(SY_ERR_INVALID_MODEL, "test_npu: node '%s' (%s) does not match the program", H->node_name(nd),
                               H->node_op(nd));
            break;
        }
        npu_instr *ins = &pg->code[pg->n_code++];
        ins->op = (uint8_t)code;
        uint32_t max_in = code >= OP_QADD ? NPU_MAX_IN : 2;
        ins->n_in = H->node_num_inputs(nd) < max_in ? H->node_num_inputs(nd) : max_in;
        if (code >= OP_QADD) {
            if (ops)
                ins->form = ops[2 * k + 1];
            else if ((st = node_form(nd, &ins->form)))
                break;
        }
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
            if (!H->node_input(nd, i))
                ins->in[i] = (npu_ref){REF_NONE, 0}; /* omitted optional input (a zero point) */
            else if (!find_ref(p, pg, tmp_src, H->node_input(nd, i), &ins->in[i]))
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
static sy_status *run_q(int op, sy_rq_mode form, const sy_kernel_io *io);
static const sy_bcast_fn binary_fns[2];

static sy_status *npu_run_compiled(void *compiled, const sy_kernel_io *io)
{
    npu_program *pg = compiled;
    for (uint32_t k = 0; k < pg->n_code; k++) {
        const npu_instr *ins = &pg->code[k];
        const sy_tensor *in[NPU_MAX_IN] = {NULL};
        for (uint32_t i = 0; i < ins->n_in; i++)
            in[i] = ins->in[i].kind == REF_NONE ? NULL
                    : ins->in[i].kind == REF_IN ? io->inputs[ins->in[i].index]
                    : ins->in[i].kind == REF_OUT ? io->outputs[ins->in[i].index]
                                                 : &pg->tmp[ins->in[i].index];
        sy_tensor *out = ins->out.kind == REF_OUT ? io->outputs[ins->out.index] : &pg->tmp[ins->out.index];
        sy_tensor *outs[1] = {out};
        sy_kernel_io sub = {sizeof sub, ins->n_in, 1, in, outs, NULL, 0, io->run};
        sy_status *st = ins->op >= OP_QADD    ? run_q(ins->op, (sy_rq_mode)ins->form, &sub)
                        : ins->op == OP_RELU ? run_relu(NULL, &sub)
                                             : run_binary((void *)&binary_fns[ins->op], &sub);
        if (st)
            return st;
    }
    return NULL;
}

static void npu_release_compiled(void *compiled) { program_free(compiled); }

static sy_status *npu_serialize(void *compiled, void **bytes, size_t *size)
{
    const npu_program *pg = compiled;
    uint8_t *b = H->alloc(2 * (size_t)pg->n_code + 1, 16);
    if (!b)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "test_npu: out of memory");
    for (uint32_t k = 0; k < pg->n_code; k++) {
        b[2 * k] = pg->code[k].op;
        b[2 * k + 1] = pg->code[k].form;
    }
    *bytes = b;
    *size = 2 * (size_t)pg->n_code;
    return NULL;
}

static sy_status *npu_deserialize(void *state, const sy_partition *p, const void *bytes, size_t size, void **compiled)
{
    (void)state;
    if (size % 2)
        return H->status_new(SY_ERR_INVALID_MODEL, "test_npu: cached program of %zu bytes (expected (op, form) pairs)", size);
    return build_program(p, bytes, (uint32_t)(size / 2), compiled);
}

static const char *npu_compat(void *state) { return ((const npu_state *)state)->compat; }

static const char *const provider_keys[] = {"ops", "decline_dtype", "can_copy", "fuse", "pin_mul", NULL};
static const char *const plugin_keys[] = {"capacity", NULL};

static const sy_provider_def npu_provider = {
    .struct_size = sizeof(sy_provider_def),
    .name = "test_npu",
    .description = "test provider: Add/Mul/Relu (and QAdd/QMul) subset on its own memory domain npu_sram",
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

/* ---- kernels (int8/uint8 QAdd, QMul) --------------------------------------
 * y = sy_rq_apply(acc) with acc = (a-za)+(b-zb) and multiplier sa/sy (QAdd,
 * sa == sb) or acc = (a-za)(b-zb) and sa*sb/sy (QMul): the SDK's
 * requantizer in either form, no arithmetic of its own. */
typedef struct q_ctx {
    int op;
    sy_dtype adt, bdt, ydt;
    int32_t za, zb;
    sy_requant rq;
} q_ctx;

static void q_loop(const void *ctx, const void *const *in, const int64_t *st, void *out, int64_t n)
{
    const q_ctx *c = ctx;
    for (int64_t i = 0; i < n; i++) {
        int64_t da = (int64_t)sy_q_load(in[0], c->adt, (size_t)(i * st[0])) - c->za;
        int64_t db = (int64_t)sy_q_load(in[1], c->bdt, (size_t)(i * st[1])) - c->zb;
        sy_q_store(out, c->ydt, (size_t)i, sy_rq_apply(&c->rq, c->op == OP_QADD ? da + db : da * db));
    }
}

static bool is_q8(sy_dtype dt) { return dt == SY_DT_INT8 || dt == SY_DT_UINT8; }

/* a per-tensor scale (float32, one element, > 0) */
static sy_status *q_scale(const sy_tensor *t, const char *what, float *out)
{
    if (!t || t->dtype != SY_DT_FLOAT32 || sy_tensor_numel(t) != 1 || !t->data)
        return H->status_new(SY_ERR_UNSUPPORTED, "test_npu: %s '%s' must be one float32 value", what,
                             t && t->name ? t->name : "?");
    *out = *(const float *)t->data;
    if (!(*out > 0.0f) || !isfinite(*out))
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "test_npu: %s '%s' = %g must be positive and finite", what,
                             t->name ? t->name : "?", (double)*out);
    return NULL;
}

/* a per-tensor zero point of dtype dt (absent: 0) */
static sy_status *q_zp(const sy_tensor *t, sy_dtype dt, const char *what, int32_t *out)
{
    *out = 0;
    if (!t)
        return NULL;
    if (t->dtype != dt || sy_tensor_numel(t) != 1 || !t->data)
        return H->status_new(SY_ERR_UNSUPPORTED, "test_npu: %s '%s' must be one %s value", what,
                             t->name ? t->name : "?", sy_dt_name(dt));
    *out = sy_q_load(t->data, dt, 0);
    return NULL;
}

static sy_status *run_q(int op, sy_rq_mode form, const sy_kernel_io *io)
{
    const sy_tensor *in[NPU_MAX_IN] = {NULL};
    for (uint32_t i = 0; i < io->n_inputs && i < NPU_MAX_IN; i++)
        in[i] = io->inputs[i];
    sy_tensor *y = io->outputs[0];
    const char *opn = op == OP_QADD ? "QAdd" : "QMul";
    if (!in[0] || !in[3] || !y || !is_q8(in[0]->dtype) || !is_q8(in[3]->dtype) || !is_q8(y->dtype))
        return H->status_new(SY_ERR_UNSUPPORTED, "test_npu %s: a, b and y must be int8 or uint8", opn);
    q_ctx c = {.op = op, .adt = in[0]->dtype, .bdt = in[3]->dtype, .ydt = y->dtype};
    float sa, sb, sy;
    int32_t zy, lo, hi;
    SY_TRY(q_scale(in[1], "a_scale", &sa));
    SY_TRY(q_scale(in[4], "b_scale", &sb));
    SY_TRY(q_scale(in[6], "y_scale", &sy));
    SY_TRY(q_zp(in[2], c.adt, "a_zero_point", &c.za));
    SY_TRY(q_zp(in[5], c.bdt, "b_zero_point", &c.zb));
    SY_TRY(q_zp(in[7], c.ydt, "y_zero_point", &zy));
    if (op == OP_QADD && sa != sb)
        return H->status_new(SY_ERR_UNSUPPORTED, "test_npu QAdd: a_scale %g != b_scale %g (one requantizer needs equal scales)",
                             (double)sa, (double)sb);
    sy_q_storage_range(c.ydt, &lo, &hi);
    sy_rq_init(&c.rq, form, op == OP_QADD ? (double)sa / sy : (double)sa * sb / sy, zy, lo, hi);
    const sy_tensor *ab[2] = {in[0], in[3]};
    return sy_bcast_apply(H, 2, ab, y, q_loop, &c);
}

typedef struct q_state {
    int op;
    sy_rq_mode form;
} q_state;

static sy_status *prepare_q(sy_node *n, void **state)
{
    uint8_t form = 0; /* set by node_form (GCC -Os cannot tell) */
    SY_TRY(node_form(n, &form));
    q_state *s = malloc(sizeof *s);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "test_npu: out of memory");
    s->op = op_code(n);
    s->form = (sy_rq_mode)form;
    *state = s;
    return NULL;
}

static sy_status *run_q_kernel(void *state, const sy_kernel_io *io)
{
    const q_state *s = state;
    return run_q(s->op, s->form, io);
}

#define NPU_KERNEL(op, since, prep, run_fn)                                                                        \
    {                                                                                                              \
        sizeof(sy_kernel_def), "", (op), (since), 0, "test_npu", SY_DT_BIT(SY_DT_FLOAT32), 0, 0u, NULL, (prep),    \
            (run_fn), release_nothing, NULL                                                                        \
    }

#define NPU_QKERNEL(op)                                                                                            \
    {                                                                                                              \
        sizeof(sy_kernel_def), "switchyard.quant", (op), 1, 0, "test_npu", SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8), \
            0, 0u, NULL, prepare_q, run_q_kernel, free, NULL                                                       \
    }

static const sy_kernel_def kernels[] = {
    NPU_KERNEL("Add", 7, prepare_binary, run_binary),
    NPU_KERNEL("Mul", 7, prepare_binary, run_binary),
    NPU_KERNEL("Relu", 6, sy_prepare_nothing, run_relu),
    NPU_QKERNEL("QAdd"),
    NPU_QKERNEL("QMul"),
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
