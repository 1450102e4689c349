/*
 * The FP32 training package's layers that take their shapes from the
 * request's geom (mcu_train_f32.c writes the rest of the package): Abs, a
 * constant Pad, a Slice, a Transpose, ReduceSum and ReduceMean, the
 * element-wise layers and a Concat of two values (tflk_concat_run forward,
 * trk_concat_grad backward). Each is
 * checked against its shapes here, then written as static descriptors, a
 * forward call in tflk's float kernels (tflk_unary_f32, tflk_pad_run,
 * tflk_strided_copy, tflk_reduce_run) and a backward call in trk.c
 * (trk_abs_grad, trk_pad_grad, trk_slice_grad or trk_slice_step_grad, trk_transpose_grad,
 * trk_reduce_grad, trk_eltwise_grad, trk_div_grad, trk_div_bcast_grad for a Div of two activations
 * broadcast against each other). Shapes are batch first, rank <= 8, and static: every
 * stride and offset is the host's arithmetic, the device only copies.
 */
#include "mcu_train_f32_geom.h"

#define P mcu_tr_P

static int64_t numel(int32_t rank, const int32_t *d)
{
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= d[i];
    return n;
}

/* a Slice's step on axis d (0, a request from before steps: 1) */
static int32_t step_of(const sy_mcu_f32_geom *G, int32_t d) { return G->step[d] ? G->step[d] : 1; }

static bool stepped(const sy_mcu_f32_geom *G)
{
    for (int32_t d = 0; d < G->rank; d++)
        if (step_of(G, d) != 1)
            return true;
    return false;
}

static void strides_of(int32_t rank, const int32_t *dims, int32_t *st)
{
    for (int32_t d = rank - 1, s = 1; d >= 0; d--) {
        st[d] = s;
        s *= dims[d];
    }
}

bool mcu_f32_geom_kind(int32_t kind) { return kind >= SY_MCU_F32_ABS && kind <= SY_MCU_F32_CONCAT; }

/* a Concat's axis: geom.axes' one bit; -1 when it is not one bit of a non-batch axis below the rank */
static int32_t concat_axis(const sy_mcu_f32_geom *G)
{
    for (int32_t a = 1; a < G->rank; a++)
        if (G->axes == 1u << a)
            return a;
    return -1;
}

/* a Concat as tflk_concat's rows: `outer` rows of the input's ra elements then the other's rb */
static void concat_rows(const sy_mcu_f32_geom *G, int64_t *outer, int64_t *ra, int64_t *rb)
{
    const int32_t a = concat_axis(G);
    int64_t inner = 1;
    *outer = 1;
    for (int32_t d = 0; d < a; d++)
        *outer *= G->idims[d];
    for (int32_t d = a + 1; d < G->rank; d++)
        inner *= G->idims[d];
    *ra = (int64_t)G->idims[a] * inner;
    *rb = (int64_t)(G->odims[a] - G->idims[a]) * inner;
}
bool mcu_f32_elt_kind(int32_t kind) { return kind >= SY_MCU_F32_ADD && kind <= SY_MCU_F32_DIV; }

/* tflk_binary's and trk_eltwise_grad's op */
static const char *elt_op(int32_t kind)
{
    return kind == SY_MCU_F32_ADD   ? "TFLK_ADD"
           : kind == SY_MCU_F32_SUB ? "TFLK_SUB"
           : kind == SY_MCU_F32_MUL ? "TFLK_MUL"
                                    : "TFLK_DIV";
}

/* a Div by or of a constant, or of two activations: the constant (the other operand) is broadcast
 * (geom.start holds its dims, 1 where broadcast; all 0 from an older request: the input's), or the
 * input is (odims larger than idims somewhere) */
static bool div_bcast(const sy_mcu_f32_geom *G, int32_t kind)
{
    bool b = false;
    for (int32_t d = 0; kind == SY_MCU_F32_DIV && d < G->rank; d++)
        b |= (G->start[d] != 0 && G->start[d] != G->odims[d]) || G->odims[d] != G->idims[d];
    return b;
}

bool mcu_f32_div2_bcast(const sy_mcu_f32_geom *G, int32_t kind) { return G->residual && div_bcast(G, kind); }

int64_t mcu_f32_other_numel(const sy_mcu_f32_geom *G, int32_t kind, int64_t n_in)
{
    return mcu_f32_div2_bcast(G, kind) ? numel(G->rank, G->start) : n_in;
}

bool mcu_f32_div_stretched(const sy_mcu_f32_geom *G, int32_t kind)
{
    bool b = false;
    for (int32_t d = 0; kind == SY_MCU_F32_DIV && !G->residual && d < G->rank; d++)
        b |= G->odims[d] != G->idims[d];
    return b;
}

int64_t mcu_f32_elt_w_numel(const sy_mcu_f32_geom *G, int32_t kind, int64_t n_in)
{
    return div_bcast(G, kind) ? numel(G->rank, G->start) : n_in;
}

bool mcu_f32_geom_ok(const sy_mcu_f32_geom *G, int32_t kind, int64_t n_in, int64_t n_out)
{
    const int32_t r = G->rank;
    if (r < 1 || r > SY_MCU_F32_MAX_RANK || G->idims[0] != 1 || G->odims[0] != 1)
        return false;
    for (int32_t d = 0; d < r; d++)
        if (G->idims[d] < 1 || G->odims[d] < 1)
            return false;
    if (numel(r, G->idims) != n_in || numel(r, G->odims) != n_out)
        return false;
    bool seen[SY_MCU_F32_MAX_RANK] = {false};
    const int32_t cat = kind == SY_MCU_F32_CONCAT ? concat_axis(G) : -1;
    if (kind == SY_MCU_F32_CONCAT && (cat < 0 || !G->residual))
        return false;
    for (int32_t d = 0; d < r; d++) {
        const int32_t i = G->idims[d], o = G->odims[d], s = G->start[d];
        switch (kind) {
        case SY_MCU_F32_DIV:
            /* broadcast: each of the input's and the constant's (the other operand's) dims the
             * output's or 1, the output the larger */
            if (div_bcast(G, kind) ? (o != i && i != 1) || (s != 1 && s != o) || o != (i > s ? i : s) : o != i)
                return false;
            break;
        case SY_MCU_F32_ABS:
        case SY_MCU_F32_ADD:
        case SY_MCU_F32_SUB:
        case SY_MCU_F32_MUL:
            if (o != i)
                return false;
            break;
        case SY_MCU_F32_PAD: /* the leading pads and the trailing ones, none negative */
            if (s < 0 || o < i + s)
                return false;
            break;
        case SY_MCU_F32_SLICE: /* the last element read, start + (o - 1)·step, inside */
            if (s < 0 || step_of(G, d) < 1 || s + (int64_t)(o - 1) * step_of(G, d) >= i)
                return false;
            break;
        case SY_MCU_F32_CONCAT: /* the other's part of the axis at least 1 */
            if (d == cat ? o <= i : o != i)
                return false;
            break;
        case SY_MCU_F32_TRANSPOSE:
            if (G->perm[d] < 0 || G->perm[d] >= r || seen[G->perm[d]] || o != G->idims[G->perm[d]])
                return false;
            seen[G->perm[d]] = true;
            break;
        default: /* Reduce */
            if (o != ((G->axes >> d) & 1u ? 1 : i))
                return false;
            break;
        }
    }
    return kind != SY_MCU_F32_REDUCE_SUM && kind != SY_MCU_F32_REDUCE_MEAN ? true : (G->axes >> r) == 0;
}

void mcu_f32_concat_forward(tout *o, const sy_mcu_f32_geom *G, uint32_t i, const char *in, const char *oth,
                            bool in_place)
{
    if (in_place) { /* over the input's buffer: its rows moved apart, the other's copied between them */
        int64_t outer, ra, rb;
        concat_rows(G, &outer, &ra, &rb);
        P(o, "    trk_concat_in_place(%lld, %lld, %lld, %d, %s, %s);\n", (long long)outer, (long long)ra,
          (long long)rb, (int)G->const_first, oth, in);
        return;
    }
    P(o, "    tflk_concat_run(&cc%u, (const void *const[]){%s, %s}, a%u);\n", i, G->const_first ? oth : in,
      G->const_first ? in : oth, i);
}

void mcu_f32_concat_backward(tout *o, const sy_mcu_f32_geom *G, uint32_t j, bool pending)
{
    int64_t outer, ra, rb;
    concat_rows(G, &outer, &ra, &rb);
    /* the input's part into h, the other's into gp<j> (NULL: not wanted), in the operands' order */
    char gp[24] = "NULL";
    if (pending)
        snprintf(gp, sizeof gp, "gp%u", j);
    if (G->const_first)
        P(o, "    trk_concat_grad(%lld, %lld, %lld, g, %s, h);\n", (long long)outer, (long long)rb, (long long)ra, gp);
    else
        P(o, "    trk_concat_grad(%lld, %lld, %lld, g, h, %s);\n", (long long)outer, (long long)ra, (long long)rb, gp);
    P(o, "    sw = g, g = h, h = sw;\n");
}

static void ints(tout *o, const char *sym, uint32_t i, const int32_t *v, int32_t n)
{
    P(o, "static const int32_t %s%u[%d] = {", sym, i, n);
    for (int32_t d = 0; d < n; d++)
        P(o, "%s%ld", d ? ", " : "", (long)v[d]);
    P(o, "};\n");
}

/* "{a, b, c}" for a descriptor's array field */
static void field(tout *o, const char *name, const int32_t *v, int32_t n)
{
    P(o, ", .%s = {", name);
    for (int32_t d = 0; d < n; d++)
        P(o, "%s%ld", d ? ", " : "", (long)v[d]);
    P(o, "}");
}

void mcu_f32_geom_decl(tout *o, int32_t kind, const sy_mcu_f32_geom *G, uint32_t i, bool backward)
{
    const int32_t r = G->rank;
    int32_t is[SY_MCU_F32_MAX_RANK], st[SY_MCU_F32_MAX_RANK];
    strides_of(r, G->idims, is);
    if (kind == SY_MCU_F32_CONCAT) {
        int64_t outer, ra, rb;
        concat_rows(G, &outer, &ra, &rb);
        /* the operands' rows in their order; no activation (the clamp to ±inf is skipped) */
        P(o, "static const int32_t cr%u[2] = {%lld, %lld};\n"
             "static const tflk_concat cc%u = {.n = 2, .outer = %lld, .esize = 4, .is_f32 = 1, .rows = cr%u, "
             ".act = {0, -INFINITY, INFINITY}};\n",
          i, (long long)(G->const_first ? rb : ra), (long long)(G->const_first ? ra : rb), i, (long long)outer, i);
        return;
    }
    if (div_bcast(G, kind)) {
        /* the output's walk, the constant's strides 0 on its broadcast axes and the input's on the axes
         * it is stretched on */
        int32_t xs[SY_MCU_F32_MAX_RANK], os[SY_MCU_F32_MAX_RANK];
        strides_of(r, G->start, st);
        strides_of(r, G->odims, os);
        for (int32_t d = 0; d < r; d++) {
            st[d] = G->start[d] == 1 ? 0 : st[d];
            xs[d] = G->idims[d] == 1 && G->odims[d] > 1 ? 0 : is[d];
        }
        P(o, "/* the %s [", G->residual ? "other operand" : "constant");
        for (int32_t d = 0; d < r; d++)
            P(o, "%s%ld", d ? ", " : "", (long)G->start[d]);
        P(o, "] broadcast with the input */\nstatic const tflk_binary el%u = {.op = TFLK_DIV, .rank = %d", i, r);
        field(o, "dims", G->odims, r);
        field(o, "sa", G->const_first ? st : xs, r);
        field(o, "sb", G->const_first ? xs : st, r);
        P(o, ", .act = {0, -INFINITY, INFINITY}};\n");
        if (backward && G->residual) {
            /* two activations: trk_div_bcast_grad's shapes, the output's, the input's, the other's */
            ints(o, "yd", i, G->odims, r);
            ints(o, "xd", i, G->idims, r);
            ints(o, "od", i, G->start, r);
        }
        if (!backward || !mcu_f32_div_stretched(G, kind))
            return;
        /* the input stretched: dy (the output's shape) divided at the output's strides by the divisor
         * (x / c: c; c / x: x, after dy·y), then summed over the stretched axes into the input's shape */
        P(o, "static const tflk_binary eb%u = {.op = TFLK_DIV, .rank = %d", i, r);
        field(o, "dims", G->odims, r);
        field(o, "sa", os, r);
        field(o, "sb", G->const_first ? xs : st, r);
        P(o, ", .act = {0, -INFINITY, INFINITY}};\n");
        if (G->const_first)
            P(o, "static const tflk_binary em%u = {.op = TFLK_MUL, .rank = 1, .dims = {%lld}, .sa = {1}, .sb = {1}, "
                 ".act = {0, -INFINITY, INFINITY}};\nstatic const tflk_unary un%u = {.kind = TFLK_U_NEG};\n",
              i, (long long)numel(r, G->odims), i);
        tflk_reduce rp = {0};
        int64_t dims[SY_MCU_F32_MAX_RANK] = {0};
        uint32_t mask = 0;
        for (int32_t d = 0; d < r; d++) {
            dims[d] = G->odims[d];
            mask |= (G->odims[d] != G->idims[d] ? 1u : 0u) << d;
        }
        (void)tflk_reduce_plan(&rp, r, dims, mask); /* cannot fail: rank <= 8, sizes checked */
        P(o, "static const tflk_reduce rg%u = {.kind = TFLK_R_SUM, .mode = TFLK_RQ_F32, .onnx = 1, .nk = %d, "
             ".nr = %d", i, rp.nk, rp.nr);
        if (rp.nk) {
            field(o, "kd", rp.kd, rp.nk);
            field(o, "ks", rp.ks, rp.nk);
        }
        field(o, "rd", rp.rd, rp.nr);
        field(o, "rs", rp.rs, rp.nr);
        P(o, "};\n");
        return;
    }
    if (mcu_f32_elt_kind(kind)) {
        /* one flat walk: the same shape on both sides, no broadcasting */
        P(o, "static const tflk_binary el%u = {.op = %s, .rank = 1, .dims = {%lld}, .sa = {1}, .sb = {1}, "
             ".act = {0, -INFINITY, INFINITY}};\n",
          i, elt_op(kind), (long long)numel(r, G->idims));
        return;
    }
    switch (kind) {
    case SY_MCU_F32_ABS:
        P(o, "static const tflk_unary un%u = {.kind = TFLK_U_ABS};\n", i);
        break;
    case SY_MCU_F32_PAD: {
        uint8_t b[4];
        memcpy(b, &G->value, 4); /* the constant's bytes: host and rv32 are both little-endian */
        P(o, "/* the constant %a */\nstatic const tflk_pad pd%u = {.rank = %d, .esize = 4, .mode = 0", (double)G->value,
          i, r);
        field(o, "odims", G->odims, r);
        field(o, "idims", G->idims, r);
        field(o, "before", G->start, r);
        P(o, ", .fill = {%u, %u, %u, %u}};\n", b[0], b[1], b[2], b[3]);
        break;
    }
    case SY_MCU_F32_SLICE:
        /* the output's elements read the input at its strides times the steps from the window's corner */
        for (int32_t d = 0; d < r; d++)
            st[d] = is[d] * step_of(G, d);
        P(o, "static const tflk_strided sl%u = {.rank = %d, .esize = 4", i, r);
        field(o, "dims", G->odims, r);
        field(o, "st", st, r);
        P(o, "};\n");
        break;
    case SY_MCU_F32_TRANSPOSE:
        for (int32_t d = 0; d < r; d++)
            st[d] = is[G->perm[d]];
        P(o, "static const tflk_strided tp%u = {.rank = %d, .esize = 4", i, r);
        field(o, "dims", G->odims, r);
        field(o, "st", st, r);
        P(o, "};\n");
        break;
    default: { /* Reduce: the kept and reduced dims planned here, as the riscv_mcu kernels plan theirs */
        tflk_reduce rp = {0};
        int64_t dims[SY_MCU_F32_MAX_RANK] = {0};
        for (int32_t d = 0; d < r; d++)
            dims[d] = G->idims[d];
        (void)tflk_reduce_plan(&rp, r, dims, G->axes); /* cannot fail: rank <= 8, sizes checked */
        P(o, "static const tflk_reduce rd%u = {.kind = %s, .mode = TFLK_RQ_F32, .onnx = 1, .nk = %d, .nr = %d", i,
          kind == SY_MCU_F32_REDUCE_SUM ? "TFLK_R_SUM" : "TFLK_R_MEAN", rp.nk, rp.nr);
        if (rp.nk) {
            field(o, "kd", rp.kd, rp.nk);
            field(o, "ks", rp.ks, rp.nk);
        }
        if (rp.nr) {
            field(o, "rd", rp.rd, rp.nr);
            field(o, "rs", rp.rs, rp.nr);
        }
        P(o, "};\n");
        break;
    }
    }
    if (!backward || kind == SY_MCU_F32_ABS)
        return;
    /* the backward's shapes */
    ints(o, "xd", i, G->idims, r);
    if (kind == SY_MCU_F32_PAD || kind == SY_MCU_F32_SLICE) {
        ints(o, "yd", i, G->odims, r);
        ints(o, "st", i, G->start, r);
    }
    if (kind == SY_MCU_F32_SLICE && stepped(G)) {
        int32_t sp[SY_MCU_F32_MAX_RANK];
        for (int32_t d = 0; d < r; d++)
            sp[d] = step_of(G, d);
        ints(o, "sp", i, sp, r);
    }
    if (kind == SY_MCU_F32_TRANSPOSE)
        ints(o, "pm", i, G->perm, r);
}

void mcu_f32_geom_forward(tout *o, int32_t kind, const sy_mcu_f32_geom *G, uint32_t i, const char *in)
{
    const int32_t r = G->rank;
    int32_t is[SY_MCU_F32_MAX_RANK];
    strides_of(r, G->idims, is);
    int64_t off = 0;
    if (mcu_f32_elt_kind(kind)) {
        if (G->const_first)
            P(o, "    tflk_binary_f32(&el%u, w%u, %s, a%u);\n", i, i, in, i);
        else
            P(o, "    tflk_binary_f32(&el%u, %s, w%u, a%u);\n", i, in, i, i);
        return;
    }
    switch (kind) {
    case SY_MCU_F32_ABS:
        P(o, "    tflk_unary_f32(&un%u, %s, a%u, %lld);\n", i, in, i, (long long)numel(r, G->idims));
        break;
    case SY_MCU_F32_PAD:
        P(o, "    tflk_pad_run(&pd%u, %s, a%u);\n", i, in, i);
        break;
    case SY_MCU_F32_SLICE:
        for (int32_t d = 0; d < r; d++)
            off += (int64_t)G->start[d] * is[d];
        P(o, "    tflk_strided_copy(&sl%u, %s + %lld, a%u);\n", i, in, (long long)off, i);
        break;
    case SY_MCU_F32_TRANSPOSE:
        P(o, "    tflk_strided_copy(&tp%u, %s, a%u);\n", i, in, i);
        break;
    default:
        P(o, "    tflk_reduce_run(&rd%u, %s, a%u);\n", i, in, i);
        break;
    }
}

void mcu_f32_geom_backward(tout *o, int32_t kind, const sy_mcu_f32_geom *G, uint32_t j, const char *in)
{
    const int32_t r = G->rank;
    switch (kind) {
    case SY_MCU_F32_ABS: /* element by element: in place */
        P(o, "    trk_abs_grad(%lld, g, %s, g);\n", (long long)numel(r, G->idims), in);
        return;
    case SY_MCU_F32_PAD:
        P(o, "    trk_pad_grad(%d, xd%u, yd%u, st%u, g, h);\n", r, j, j, j);
        break;
    case SY_MCU_F32_SLICE:
        if (stepped(G))
            P(o, "    trk_slice_step_grad(%d, xd%u, yd%u, st%u, sp%u, g, h);\n", r, j, j, j, j);
        else
            P(o, "    trk_slice_grad(%d, xd%u, yd%u, st%u, g, h);\n", r, j, j, j);
        break;
    case SY_MCU_F32_TRANSPOSE:
        P(o, "    trk_transpose_grad(%d, xd%u, pm%u, g, h);\n", r, j, j);
        break;
    default: {
        /* the host's factor: Div(Cast(Size(Y)), Cast(Size(X))) in float; the sum's 1 multiplies exactly */
        float k = kind == SY_MCU_F32_REDUCE_MEAN ? (float)numel(r, G->odims) / (float)numel(r, G->idims) : 1.0f;
        P(o, "    trk_reduce_grad(%d, xd%u, 0x%lxu, %af, g, h);\n", r, j, (unsigned long)G->axes, (double)k);
        break;
    }
    }
    P(o, "    sw = g, g = h, h = sw;\n");
}

void mcu_f32_elt_backward(tout *o, const sy_mcu_f32_layer *L, const sy_mcu_f32_geom *G, uint32_t j, const char *in,
                          const char *oth, bool dx, bool adam, bool pending)
{
    const int64_t n = numel(G->rank, G->idims);
    if (mcu_f32_div2_bcast(G, L->kind)) {
        /* two activations broadcast against each other: each operand's gradient summed over the axes
         * it is stretched on (the host's ReduceToShape), the input's into h, the other's into gp<j>
         * (NULL: not wanted); dy, the quotient a<j> and the divisor are read */
        char gp[24] = "NULL";
        if (pending)
            snprintf(gp, sizeof gp, "gp%u", j);
        if (G->const_first) /* y = other / input */
            P(o, "    trk_div_bcast_grad(%d, yd%u, od%u, xd%u, g, a%u, %s, %s, h);\n", G->rank, j, j, j, j, in, gp);
        else
            P(o, "    trk_div_bcast_grad(%d, yd%u, xd%u, od%u, g, a%u, %s, h, %s);\n", G->rank, j, j, j, j, oth, gp);
        P(o, "    sw = g, g = h, h = sw;\n");
        return;
    }
    if (G->residual) {
        /* the other activation is the "constant": its gradient waits in gp<j> (not wanted: NULL); the
         * input's is formed in place over dy (each element read first). x ∘ x is the same call, oth being
         * in: its second gradient reaches the input's layer through gp<j> as any residual's */
        char gp[24] = "NULL";
        if (pending)
            snprintf(gp, sizeof gp, "gp%u", j);
        if (L->kind == SY_MCU_F32_DIV) /* the divisor: the other operand, or the input when it is first */
            P(o, "    trk_div_grad(%lld, g, a%u, %s, %s, %s);\n", (long long)n, j, G->const_first ? in : oth,
              G->const_first ? gp : "g", G->const_first ? "g" : gp);
        else /* Mul: d(in) = dy·other, d(other) = dy·in; Add, Sub read neither */
            P(o, "    trk_eltwise_grad(%s, %d, %lld, g, %s, %s, g, %s);\n", elt_op(L->kind), (int)G->const_first,
              (long long)n, L->kind == SY_MCU_F32_MUL ? in : "NULL", L->kind == SY_MCU_F32_MUL ? oth : "NULL", gp);
        return;
    }
    if (mcu_f32_div_stretched(G, L->kind)) {
        /* the input stretched by broadcasting: the host's Div(dy, c) (x / c) or −((dy·y) / x) (c / x)
         * at the output's shape, in place over dy, then its ReduceToShape, the sum over the stretched
         * axes, into h (the negation after the sum: the same bits, a sum of negated floats is the
         * negated sum) */
        if (G->const_first)
            P(o, "    tflk_binary_f32(&em%u, g, a%u, g);\n    tflk_binary_f32(&eb%u, g, %s, g);\n", j, j, j, in);
        else
            P(o, "    tflk_binary_f32(&eb%u, g, w%u, g);\n", j, j);
        P(o, "    tflk_reduce_run(&rg%u, g, h);\n", j);
        if (G->const_first)
            P(o, "    tflk_unary_f32(&un%u, h, h, %lld);\n", j, (long long)n);
        P(o, "    sw = g, g = h, h = sw;\n");
        return;
    }
    if (L->kind == SY_MCU_F32_DIV && G->const_first) {
        /* y = c / x: the host's -((dy·y) / x) (Mul, Div, Neg; c is never trained), in place over dy;
         * x has the output's shape, so its ReduceToShape sums nothing */
        P(o, "    trk_div_grad(%lld, g, a%u, %s, NULL, g);\n", (long long)n, j, in);
        return;
    }
    if (div_bcast(G, L->kind)) {
        /* x / c, c broadcast: the host's Div(dy, c) at the output's shape (x's: nothing to sum), in
         * place over dy by el<j>'s walk (dy has x's strides) */
        P(o, "    tflk_binary_f32(&el%u, g, w%u, g);\n", j, j);
        return;
    }
    /* dx in place over dy (each element read first), the constant's gradient into gw<j> (the arena's); then its update
     * (after dx: dx reads the constant before the step, as the host's gradients do) */
    char gw[24] = "NULL";
    if (L->train_w)
        snprintf(gw, sizeof gw, "gw%u", j);
    P(o, "    trk_eltwise_grad(%s, %d, %lld, g, %s, w%u, %s, %s);\n", elt_op(L->kind), (int)G->const_first,
      (long long)n, L->kind == SY_MCU_F32_MUL && L->train_w ? in : "NULL", j, dx ? "g" : "NULL", gw);
    char s2[24] = "NULL";
    if (adam)
        snprintf(s2, sizeof s2, "w%u_s2", j);
    if (L->train_w)
        P(o, "    trk_opt_step(&o, %lld, w%u, gw%u, w%u_s1, %s, w%u, w%u_s1, %s);\n", (long long)n, j, j, j, s2, j, j,
          s2);
}
