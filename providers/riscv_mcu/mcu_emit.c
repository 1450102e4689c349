/*
 * The package `switchyard codegen` writes, from the record of one host run
 * of the riscv_mcu kernels (riscv_mcu.c): the same kernel sources (embedded
 * in this plugin at build time, so a package always carries the code the
 * host ran), one parameter constant per node, the weights as const arrays,
 * and a run function that calls the kernels in execution order on buffers
 * at the offsets the core planned in the "mcu_sram" arena. No malloc, no
 * OS: the application passes the workspace to PF_model_create.
 *
 *   DIR/include/PF_model.h     the API and the sizes (mcu_emit_api.c; PF: --prefix, "sy")
 *   DIR/src/model.c            weights, parameters, PF_model_predict and the API
 *   DIR/src/main.c             test main: input0.bin (or the built-in test
 *                              input), one run, outputs in hex, instret/cycle
 *   DIR/src/test_input.c       the input of the host run
 *   DIR/kernels/               tflk.h, sy_fixedpoint.h and the kernel files the model needs
 *   DIR/CMakeLists.txt, DIR/toolchain-riscv32.cmake, DIR/README.md
 *   DIR/expected_output.txt    what the host run printed, in main's format
 */
#include "mcu.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>

#define H mcu_H

/* ---- small output helpers ------------------------------------------------- */

typedef mcu_out out;
#define P mcu_P

void mcu_P(mcu_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(o->f, fmt, ap) < 0)
        o->failed = true;
    va_end(ap);
}

static const char *ffmt(char *buf, size_t len, float v)
{
    if (isnan(v))
        snprintf(buf, len, "NAN");
    else if (isinf(v))
        snprintf(buf, len, v < 0 ? "-INFINITY" : "INFINITY");
    else
        snprintf(buf, len, "%af", (double)v);
    return buf;
}

static sy_status *mkdir_p(const char *path)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen: path too long: %s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0777) && errno != EEXIST)
                return H->status_new(SY_ERR_IO, "codegen: cannot create %s: %s", tmp, strerror(errno));
            *p = '/';
        }
    if (mkdir(tmp, 0777) && errno != EEXIST)
        return H->status_new(SY_ERR_IO, "codegen: cannot create %s: %s", tmp, strerror(errno));
    return NULL;
}

sy_status *mcu_open_out(const char *dir, const char *rel, mcu_out *o)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    o->failed = false;
    o->f = fopen(path, "w");
    if (!o->f)
        return H->status_new(SY_ERR_IO, "codegen: cannot write %s: %s", path, strerror(errno));
    return NULL;
}

sy_status *mcu_close_out(const char *dir, const char *rel, mcu_out *o)
{
    bool bad = o->failed | (fclose(o->f) != 0);
    o->f = NULL;
    if (bad)
        return H->status_new(SY_ERR_IO, "codegen: writing %s/%s failed", dir, rel);
    return NULL;
}

/* ---- the layout of the record -------------------------------------------------- */

typedef struct blob {
    const void *data;
    size_t nbytes;
    sy_dtype dtype;
    char sym[24];
} blob;

typedef struct layout {
    const uint8_t *base; /* the arena's offset 0 */
    size_t end;          /* the highest byte used + 1 */
    blob *blobs;
    uint32_t n_blobs, cap_blobs;
    size_t flash_weights; /* bytes of weight arrays */
    size_t flash_params;  /* bytes of parameter constants */
    bool used[MK__COUNT];
    size_t ws_bytes;
    /* the Unique nodes in call order: their count slots in the model handle */
    uint32_t n_uq;
    uint32_t uq_rec[MCU_API_MAX_COUNTS];
    int32_t uq_bound[MCU_API_MAX_COUNTS];
} layout;

static void consider(layout *L, const void *p, size_t n)
{
    if (!p || !n)
        return;
    if (!L->base || (const uint8_t *)p < L->base)
        L->base = p;
}

static sy_status *offset_of(const layout *L, const void *p, size_t n, size_t ws_bytes, const char *what, size_t *off)
{
    const uint8_t *q = p;
    if (!q || q < L->base || (size_t)(q - L->base) + n > ws_bytes)
        return H->status_new(SY_ERR_INTERNAL,
                             "codegen: buffer '%s' (%zu bytes) lies outside the %zu-byte mcu_sram arena the core planned",
                             what ? what : "", n, ws_bytes);
    *off = (size_t)(q - L->base);
    return NULL;
}

static const char *ctype(sy_dtype dt)
{
    switch (dt) {
    case SY_DT_FLOAT32: return "float";
    case SY_DT_INT8: return "int8_t";
    case SY_DT_INT16: return "int16_t";
    case SY_DT_INT32: return "int32_t";
    case SY_DT_UINT8:
    case SY_DT_BOOL: return "uint8_t";
    case SY_DT_INT64: return "int64_t";
    default: return NULL;
    }
}

/* the symbol of a weight array (added once per buffer) */
static sy_status *blob_sym(layout *L, const void *data, size_t nbytes, sy_dtype dt, const char **sym)
{
    *sym = "NULL";
    if (!data)
        return NULL;
    for (uint32_t i = 0; i < L->n_blobs; i++)
        if (L->blobs[i].data == data && L->blobs[i].dtype == dt) {
            if (nbytes > L->blobs[i].nbytes)
                L->blobs[i].nbytes = nbytes;
            *sym = L->blobs[i].sym;
            return NULL;
        }
    if (!ctype(dt))
        return H->status_new(SY_ERR_UNSUPPORTED, "codegen: weights of dtype %s", sy_dt_name(dt));
    if (L->n_blobs == L->cap_blobs) {
        uint32_t cap = L->cap_blobs ? 2 * L->cap_blobs : 64;
        blob *g = realloc(L->blobs, cap * sizeof *g);
        if (!g)
            return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
        L->blobs = g;
        L->cap_blobs = cap;
    }
    blob *b = &L->blobs[L->n_blobs];
    b->data = data;
    b->nbytes = nbytes;
    b->dtype = dt;
    snprintf(b->sym, sizeof b->sym, "w%u", L->n_blobs);
    L->n_blobs++;
    *sym = b->sym;
    return NULL;
}

static void emit_blob(out *o, const blob *b)
{
    size_t es = sy_dt_size(b->dtype);
    size_t n = es ? b->nbytes / es : 0;
    P(o, "static const %s %s[%zu] = {", ctype(b->dtype), b->sym, n ? n : 1);
    char fb[48];
    for (size_t i = 0; i < n; i++) {
        if (i % 16 == 0)
            P(o, "\n   ");
        switch (b->dtype) {
        case SY_DT_FLOAT32: {
            float v;
            memcpy(&v, (const uint8_t *)b->data + i * 4, 4);
            P(o, " %s,", ffmt(fb, sizeof fb, v));
            break;
        }
        case SY_DT_INT8: P(o, " %d,", ((const int8_t *)b->data)[i]); break;
        case SY_DT_UINT8:
        case SY_DT_BOOL: P(o, " %u,", ((const uint8_t *)b->data)[i]); break;
        case SY_DT_INT64: {
            int64_t v;
            memcpy(&v, (const uint8_t *)b->data + i * 8, 8);
            if (v == INT64_MIN)
                P(o, " (-9223372036854775807LL - 1),");
            else
                P(o, " %lldLL,", (long long)v);
            break;
        }
        case SY_DT_INT16: {
            int16_t v;
            memcpy(&v, (const uint8_t *)b->data + i * 2, 2);
            P(o, " %d,", v);
            break;
        }
        default: {
            int32_t v;
            memcpy(&v, (const uint8_t *)b->data + i * 4, 4);
            if (v == INT32_MIN)
                P(o, " (-2147483647 - 1),");
            else
                P(o, " %d,", v);
            break;
        }
        }
    }
    if (!n)
        P(o, " 0");
    P(o, "\n};\n");
}

static void emit_i32s(out *o, const char *sym, const int32_t *v, int32_t n)
{
    P(o, "static const int32_t %s[%d] = {", sym, n ? n : 1);
    for (int32_t i = 0; i < n; i++)
        P(o, "%s%d,", i % 16 == 0 ? "\n    " : " ", v[i]);
    P(o, "\n};\n");
}

static void emit_f32s(out *o, const char *sym, const float *v, int32_t n)
{
    char fb[48];
    P(o, "static const float %s[%d] = {", sym, n ? n : 1);
    for (int32_t i = 0; i < n; i++)
        P(o, "%s%s,", i % 8 == 0 ? "\n    " : " ", ffmt(fb, sizeof fb, v[i]));
    P(o, "\n};\n");
}

static const char *act_str(char *buf, size_t len, const tflk_act *a)
{
    char lo[48], hi[48];
    snprintf(buf, len, "{%d, %s, %s}", a->kind, ffmt(lo, sizeof lo, a->lo), ffmt(hi, sizeof hi, a->hi));
    return buf;
}

/* the record input whose data is `p` (for the size and dtype of a weight) */
static const mcu_buf *find_in(const mcu_rec *r, const void *p)
{
    for (uint32_t i = 0; i < r->n_in; i++)
        if (r->in[i].data == p && p)
            return &r->in[i];
    return NULL;
}

static sy_status *emit_qt(out *o, layout *L, const mcu_rec *r, const tflk_qtensor *q, uint32_t node, const char *tag,
                          char *expr, size_t len)
{
    const char *sym = "NULL";
    if (q->data) {
        const mcu_buf *b = find_in(r, q->data);
        if (!b)
            return H->status_new(SY_ERR_INTERNAL, "codegen: LSTM tensor %s of node %u is not among its inputs", tag, node);
        SY_TRY(blob_sym(L, b->data, b->nbytes, b->dtype, &sym));
    }
    char scales[40] = "NULL", zps[40] = "NULL";
    if (q->count) {
        snprintf(scales, sizeof scales, "n%u_%s_s", node, tag);
        emit_f32s(o, scales, q->scales, q->count);
        L->flash_params += (size_t)q->count * 4;
        if (q->zps) {
            snprintf(zps, sizeof zps, "n%u_%s_z", node, tag);
            emit_i32s(o, zps, q->zps, q->count);
            L->flash_params += (size_t)q->count * 4;
        }
    }
    snprintf(expr, len, "{%s, %d, %d, %d, %s, %s}", sym, q->dtype, q->count, q->row_len, scales, zps);
    return NULL;
}

static void emit_rqs(out *o, const char *sym, const qk_rq *r, int32_t n)
{
    P(o, "static const qk_rq %s[%d] = {", sym, n ? n : 1);
    for (int32_t i = 0; i < n; i++)
        P(o, "\n    {%d, %a, %d, %d, %d, %d, %d},", r[i].mode, r[i].real_mult, r[i].mult, r[i].shift, r[i].zp, r[i].lo,
          r[i].hi);
    if (!n)
        P(o, "{0, 0.0, 0, 0, 0, 0, 0}");
    P(o, "\n};\n");
}

/* QRNN: the arrays qrnn_params built (requantizers, zero points, bias, the
 * activation tables), the qk_rnn constant and the call */
static sy_status *emit_qrnn(out *o, out *calls, layout *L, const mcu_rec *r, uint32_t i, size_t xo, size_t yo)
{
    const qk_rnn *p = &r->k->u.qrnn.k;
    const size_t nh = (size_t)p->ndir * (size_t)p->hidden;
    if (r->n_in <= QRNN_R || !r->in[QRNN_W].is_const || !r->in[QRNN_R].is_const || r->n_out < 2 || !r->out[1].data ||
        !r->scratch)
        return H->status_new(SY_ERR_INTERNAL, "codegen: QRNN node %u needs constant W and R, Y_h and its scratch", i);
    const char *wsym, *rsym;
    SY_TRY(blob_sym(L, r->in[QRNN_W].data, r->in[QRNN_W].nbytes, r->in[QRNN_W].dtype, &wsym));
    SY_TRY(blob_sym(L, r->in[QRNN_R].data, r->in[QRNN_R].nbytes, r->in[QRNN_R].dtype, &rsym));
    size_t yho = 0, so = 0, lo = 0, ho = 0;
    SY_TRY(offset_of(L, r->out[1].data, r->out[1].nbytes, L->ws_bytes, r->out[1].name, &yho));
    SY_TRY(offset_of(L, r->scratch, r->scratch_bytes, L->ws_bytes, "scratch", &so));
    char lexpr[64] = "NULL", hexpr[64] = "NULL";
    const mcu_buf *lb = r->n_in > QRNN_LENS && r->in[QRNN_LENS].data ? &r->in[QRNN_LENS] : NULL;
    const mcu_buf *hb = r->n_in > QRNN_H0 && r->in[QRNN_H0].data ? &r->in[QRNN_H0] : NULL;
    if (lb && lb->is_const) {
        const char *sym;
        SY_TRY(blob_sym(L, lb->data, lb->nbytes, lb->dtype, &sym));
        snprintf(lexpr, sizeof lexpr, "(const int32_t *)%s", sym);
    } else if (lb) {
        SY_TRY(offset_of(L, lb->data, lb->nbytes, L->ws_bytes, lb->name, &lo));
        snprintf(lexpr, sizeof lexpr, "(const int32_t *)(ws + %zu)", lo);
    }
    if (hb && hb->is_const) {
        const char *sym;
        SY_TRY(blob_sym(L, hb->data, hb->nbytes, hb->dtype, &sym));
        snprintf(hexpr, sizeof hexpr, "%s", sym);
    } else if (hb) {
        SY_TRY(offset_of(L, hb->data, hb->nbytes, L->ws_bytes, hb->name, &ho));
        snprintf(hexpr, sizeof hexpr, "ws + %zu", ho);
    }
    char sx[32], sh[32], sh0[32], swz[32] = "NULL", srz[32] = "NULL", sb[32] = "NULL", slut[32];
    snprintf(sx, sizeof sx, "n%u_rqx", i);
    snprintf(sh, sizeof sh, "n%u_rqh", i);
    snprintf(sh0, sizeof sh0, "n%u_rqh0", i);
    snprintf(slut, sizeof slut, "n%u_lut", i);
    emit_rqs(o, sx, p->rq_x, (int32_t)nh);
    emit_rqs(o, sh, p->rq_h, (int32_t)nh);
    if (p->rq_h0)
        emit_rqs(o, sh0, p->rq_h0, (int32_t)nh);
    emit_i32s(o, slut, p->lut, (int32_t)((size_t)p->ndir * QK_RNN_LUT));
    if (p->w_zp) {
        snprintf(swz, sizeof swz, "n%u_wz", i);
        emit_i32s(o, swz, p->w_zp, p->n_wzp);
    }
    if (p->r_zp) {
        snprintf(srz, sizeof srz, "n%u_rz", i);
        emit_i32s(o, srz, p->r_zp, p->n_rzp);
    }
    if (p->bias) {
        snprintf(sb, sizeof sb, "n%u_b", i);
        emit_i32s(o, sb, p->bias, (int32_t)nh);
    }
    L->flash_params += sizeof(qk_rnn) + nh * (3 * sizeof(qk_rq) + 4) + (size_t)p->ndir * QK_RNN_LUT * 4 +
                       (size_t)(p->n_wzp + p->n_rzp) * 4;
    P(o, "static const qk_rnn n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d,\n"
         "    %s, %s, %s, %s, %s, %s, {%d, %d}, %s};\n",
      i, p->seq, p->batch, p->input, p->hidden, p->ndir, p->reverse, p->xdt, p->wdt, p->rdt, p->ydt, p->h0dt, p->x_zp,
      p->y_zp, p->h0_zp, p->y_lo, p->y_hi, p->n_wzp, p->n_rzp, swz, srz, sb, sx, sh, p->rq_h0 ? sh0 : "NULL",
      p->clip[0], p->clip[1], slut);
    P(calls, "    qk_rnn_run(&n%u, ws + %zu, %s, %s, %s, %s, ws + %zu, ws + %zu, (int32_t *)(ws + %zu));\n", i, xo, wsym,
      rsym, lexpr, hexpr, yo, yho, so);
    L->used[MK_QUANT] = true; /* qk_rnn.c calls qk.c's requantizer: the package needs qk.c too */
    return NULL;
}

/* the switchyard.quant kinds and Quantize/DequantizeLinear (qk.c) */
static sy_status *emit_qnode(out *o, out *calls, layout *L, const mcu_rec *r, uint32_t i, size_t xo, size_t yo)
{
    const mcu_node *k = r->k;
    char fb[48];
    const char *wsym = "NULL";
    char rq[32], bias[32], zp[32];
    snprintf(rq, sizeof rq, "n%u_rq", i);
    snprintf(bias, sizeof bias, "n%u_bias", i);
    snprintf(zp, sizeof zp, "n%u_zp", i);
    /* the weights / second operand: input q_w (mcu.h), in flash or (a
     * runtime B of QLinearMatMul / MatMulInteger / ConvInteger) the workspace */
    const uint32_t wi = (uint32_t)k->q_w;
    char wx[64];
    if (k->kind == MK_QCONV || k->kind == MK_QTCONV || k->kind == MK_QMM || k->kind == MK_QADD) {
        if (r->n_in <= wi || !r->in[wi].data)
            return H->status_new(SY_ERR_INTERNAL, "codegen: node %u has no second operand", i);
        if (r->in[wi].is_const) {
            SY_TRY(blob_sym(L, r->in[wi].data, r->in[wi].nbytes, r->in[wi].dtype, &wsym));
        } else if (k->kind != MK_QADD) {
            size_t wo = 0;
            SY_TRY(offset_of(L, r->in[wi].data, r->in[wi].nbytes, L->ws_bytes, r->in[wi].name, &wo));
            snprintf(wx, sizeof wx, "ws + %zu", wo);
            wsym = wx;
        }
    }
    if ((k->kind == MK_QCONV || k->kind == MK_QTCONV || k->kind == MK_QMM) && k->q_n) {
        emit_rqs(o, rq, k->q_rq, k->q_n);
        emit_i32s(o, bias, k->q_bias, k->q_n);
        L->flash_params += (size_t)k->q_n * (sizeof(qk_rq) + 4);
    }
    if ((k->kind == MK_QCONV || k->kind == MK_QTCONV || k->kind == MK_QMM) && k->q_nzp) {
        emit_i32s(o, zp, k->q_zp, k->q_nzp);
        L->flash_params += (size_t)k->q_nzp * 4;
    }
    if (!k->q_n) { /* ConvInteger / MatMulInteger: the int32 sums, no requantizer or bias */
        snprintf(rq, sizeof rq, "NULL");
        snprintf(bias, sizeof bias, "NULL");
    }
    const char *zps = k->q_nzp ? zp : "NULL";
    switch (k->kind) {
    case MK_QCONV:
    case MK_QTCONV: { /* QConvTranspose: the same qk_conv, W [C_in, C_out, kh, kw] (qk.h) */
        const qk_conv *p = &k->u.qconv;
        P(o, "static const qk_conv n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d,\n"
             "    %d, %d, %d, %d, %d, %s, %s, %s};\n",
          i, p->n, p->c, p->ih, p->iw, p->oc, p->oh, p->ow, p->kh, p->kw, p->sh, p->sw, p->dh, p->dw, p->pt, p->pl,
          p->group, p->xdt, p->wdt, p->ydt, p->x_zp, p->n_wzp, zps, bias, rq);
        L->flash_params += sizeof(qk_conv);
        P(calls, "    %s(&n%u, ws + %zu, %s, ws + %zu);\n",
          k->kind == MK_QTCONV ? "qk_conv_transpose_run" : "qk_conv_run", i, xo, wsym, yo);
        break;
    }
    case MK_QMM: {
        const qk_mm *p = &k->u.qmm;
        P(o, "static const qk_mm n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %s, %s, %s, %d};\n", i, p->batch, p->m,
          p->k, p->nn, p->adt, p->bdt, p->ydt, p->a_zp, p->n_bzp, p->trans_b, zps, bias, rq, p->b_batched);
        L->flash_params += sizeof(qk_mm);
        P(calls, "    qk_matmul_run(&n%u, ws + %zu, %s, ws + %zu);\n", i, xo, wsym, yo);
        break;
    }
    case MK_QPOOL:
    case MK_QAVGPOOL: {
        const qk_pool *p = &k->u.qpool;
        P(o, "static const qk_pool n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d,\n"
             "    %d, %d, %d, %d, %d, {%d, %a, %d, %d, %d, %d, %d}};\n",
          i, p->nc, p->ih, p->iw, p->oh, p->ow, p->kh, p->kw, p->sh, p->sw, p->dh, p->dw, p->pt, p->pl, p->xdt, p->ydt,
          p->x_zp, p->y_zp, p->same, p->rq.mode, p->rq.real_mult, p->rq.mult, p->rq.shift, p->rq.zp, p->rq.lo, p->rq.hi);
        L->flash_params += sizeof(qk_pool);
        P(calls, "    qk_%spool_run(&n%u, ws + %zu, ws + %zu);\n", k->kind == MK_QPOOL ? "max" : "avg", i, xo, yo);
        break;
    }
    case MK_QNORM: {
        const tflk_norm *p = &k->u.qn.p;
        char f2[48], f3[48];
        if (!r->scratch)
            return H->status_new(SY_ERR_INTERNAL, "codegen: QNorm node %u has no scratch", i);
        size_t so = 0;
        SY_TRY(offset_of(L, r->scratch, r->scratch_bytes, L->ws_bytes, "scratch", &so));
        const char *ps[4] = {"NULL", "NULL", "NULL", "NULL"}; /* scale, B, mean, var */
        for (uint32_t j = 5; j < 9 && j < r->n_in; j++)
            if (r->in[j].data)
                SY_TRY(blob_sym(L, r->in[j].data, r->in[j].nbytes, r->in[j].dtype, &ps[j - 5]));
        P(calls, "    qk_dequantize_run(%d, ws + %zu, %d, %s, %d, (float *)(ws + %zu));\n", k->u.qn.n, xo, k->u.qn.xdt,
          ffmt(f2, sizeof f2, k->u.qn.sx), k->u.qn.zx, so);
        if (k->u.qn.lp) { /* LpNormalization: tflk_reduce.c */
            const tflk_axisop *ax = &k->u.qn.ax;
            char a[160];
            P(o, "static const tflk_axisop n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %d, 0.0f, 0.0f, 0, 0, %s};\n", i,
              ax->op, ax->mode, ax->outer, ax->len, ax->inner, ax->flags, ax->k, ax->idx64, ax->esize,
              act_str(a, sizeof a, &ax->act));
            L->flash_params += sizeof(tflk_axisop);
            P(calls, "    tflk_axis_run(&n%u, ws + %zu, (void *)(ws + %zu), NULL);\n", i, so,
              so + (size_t)k->u.qn.n * sizeof(float));
            L->used[MK_AXIS] = true; /* tflk_reduce.c */
        } else {
            P(o, "static const tflk_norm n%u = {%d, %d, %d, %d, %d, %d, %s};\n", i, p->mode, p->outer, p->groups,
              p->inner, p->n_scale, p->n_bias, ffmt(fb, sizeof fb, p->eps));
            L->flash_params += sizeof(tflk_norm);
            P(calls, "    tflk_norm_run(&n%u, (const float *)(ws + %zu), (const float *)%s, (const float *)%s, (const float "
                     "*)%s, (const float *)%s, (float *)(ws + %zu), NULL, NULL);\n",
              i, so, ps[0], ps[1], ps[2], ps[3], so + (size_t)k->u.qn.n * sizeof(float));
        }
        P(calls, "    qk_quantize_run(%d, (const float *)(ws + %zu), %s, %d, %d, ws + %zu);\n", k->u.qn.n,
          so + (size_t)k->u.qn.n * sizeof(float), ffmt(f3, sizeof f3, k->u.qn.sy), k->u.qn.zy, k->u.qn.ydt, yo);
        L->used[MK_QUANT] = true; /* qk.c's (de)quantizers */
        break;
    }
    case MK_QSOFTMAX: {
        const qk_softmax *p = &k->u.qsm;
        char f2[48];
        if (!r->scratch)
            return H->status_new(SY_ERR_INTERNAL, "codegen: QSoftmax node %u has no scratch", i);
        size_t so = 0;
        SY_TRY(offset_of(L, r->scratch, r->scratch_bytes, L->ws_bytes, "scratch", &so));
        P(o, "static const qk_softmax n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %s, %s, %d};\n", i, p->outer, p->len,
          p->inner, p->xdt, p->ydt, p->y_zp, p->lo, p->hi, ffmt(fb, sizeof fb, p->sx), ffmt(f2, sizeof f2, p->sy), p->log);
        L->flash_params += sizeof(qk_softmax);
        P(calls, "    qk_softmax_run(&n%u, ws + %zu, ws + %zu, (float *)(ws + %zu));\n", i, xo, yo, so);
        L->used[MK_QUANT] = true; /* qk_softmax.c calls qk.c's quantizer */
        break;
    }
    case MK_QADD: {
        const qk_add_bc *bc = &k->u.qadd;
        const qk_add *p = &bc->q;
        const bool walk = p->binner < 0; /* any broadcast: qk_add_bc_run's stride walk */
        char f2[48];
        char f3[48];
        P(o, "static const %s n%u = {%s%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %s, %s, %d, %d, %d, %d, %d, %d,\n"
             "    %d, %s, %d%s",
          walk ? "qk_add_bc" : "qk_add", i, walk ? "{" : "", p->n, p->nb, p->adt, p->bdt, p->ydt, p->mode, p->za, p->zb,
          p->zy, p->lo, p->hi, ffmt(fb, sizeof fb, p->ra), ffmt(f2, sizeof f2, p->rb), p->m1, p->s1, p->m2, p->s2,
          p->mo, p->so, p->op, ffmt(f3, sizeof f3, p->rm), p->binner, walk ? "}" : "};\n");
        if (walk)
            P(o, ",\n    {%d, %d, %d, %d}, {%d, %d, %d, %d}, {%d, %d, %d, %d}};\n", bc->yd[0], bc->yd[1], bc->yd[2],
              bc->yd[3], bc->as[0], bc->as[1], bc->as[2], bc->as[3], bc->bs[0], bc->bs[1], bc->bs[2], bc->bs[3]);
        L->flash_params += walk ? sizeof(qk_add_bc) : sizeof(qk_add);
        char bexpr[64];
        if (r->in[wi].is_const) {
            snprintf(bexpr, sizeof bexpr, "%s", wsym);
        } else {
            size_t bo = 0;
            SY_TRY(offset_of(L, r->in[wi].data, r->in[wi].nbytes, L->ws_bytes, r->in[wi].name, &bo));
            snprintf(bexpr, sizeof bexpr, "ws + %zu", bo);
        }
        char aexpr[64];
        if (r->in[0].is_const) {
            const char *asym = NULL;
            SY_TRY(blob_sym(L, r->in[0].data, r->in[0].nbytes, r->in[0].dtype, &asym));
            snprintf(aexpr, sizeof aexpr, "%s", asym);
        } else {
            snprintf(aexpr, sizeof aexpr, "ws + %zu", xo);
        }
        P(calls, "    qk_add%s_run(&n%u, %s, %s, ws + %zu);\n", walk ? "_bc" : "", i, aexpr, bexpr, yo);
        break;
    }
    case MK_QUANT:
        P(calls, "    qk_quantize_run(%d, (const float *)(ws + %zu), %s, %d, %d, ws + %zu);\n", k->u.qdq.n, xo,
          ffmt(fb, sizeof fb, k->u.qdq.scale), k->u.qdq.zp, k->u.qdq.dt, yo);
        break;
    case MK_DEQUANT:
        P(calls, "    qk_dequantize_run(%d, ws + %zu, %d, %s, %d, (float *)(ws + %zu));\n", k->u.qdq.n, xo, k->u.qdq.dt,
          ffmt(fb, sizeof fb, k->u.qdq.scale), k->u.qdq.zp, yo);
        break;
    case MK_QRNN: /* qk_rnn.c; W and R in flash, lengths and initial_h in the workspace */
        SY_TRY(emit_qrnn(o, calls, L, r, i, xo, yo));
        break;
    default: break;
    }
    return NULL;
}

/* input i of a record as a C expression: its weight array in flash or its
 * place in the workspace */
static sy_status *operand(layout *L, const mcu_rec *r, uint32_t i, char *buf, size_t len)
{
    if (i >= r->n_in || !r->in[i].data) {
        snprintf(buf, len, "NULL");
        return NULL;
    }
    const mcu_buf *b = &r->in[i];
    if (b->is_const) {
        const char *sym;
        SY_TRY(blob_sym(L, b->data, b->nbytes, b->dtype, &sym));
        snprintf(buf, len, "(const void *)%s", sym);
        return NULL;
    }
    size_t off = 0;
    SY_TRY(offset_of(L, b->data, b->nbytes, L->ws_bytes, b->name, &off));
    snprintf(buf, len, "(const void *)(ws + %zu)", off);
    return NULL;
}

/* a tflk_binary's initializer (emit_bin_struct, emit_bin8f_struct) */
static void bin_init(out *o, const tflk_binary *p)
{
    char a[160];
    P(o, "{%d, %d, {%d, %d, %d, %d, %d, %d}, {%d, %d, %d, %d, %d, %d},\n"
         "    {%d, %d, %d, %d, %d, %d}, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %s}",
      p->op, p->rank, p->dims[0], p->dims[1], p->dims[2], p->dims[3], p->dims[4], p->dims[5], p->sa[0], p->sa[1],
      p->sa[2], p->sa[3], p->sa[4], p->sa[5], p->sb[0], p->sb[1], p->sb[2], p->sb[3], p->sb[4], p->sb[5], p->z1,
      p->z2, p->zo, p->m1, p->s1, p->m2, p->s2, p->mo, p->so, p->lo, p->hi, p->rq_single, p->one, p->om1, p->om2,
      p->osh, act_str(a, sizeof a, &p->act));
}

static void emit_bin_struct(out *o, layout *L, uint32_t i, const tflk_binary *p)
{
    P(o, "static const tflk_binary n%u = ", i);
    bin_init(o, p);
    P(o, ";\n");
    L->flash_params += sizeof(tflk_binary);
}

static void emit_bin8f_struct(out *o, layout *L, uint32_t i, const tflk_bin8f *p)
{
    char f1[48], f2[48], f3[48];
    P(o, "static const tflk_bin8f n%u = {", i);
    bin_init(o, &p->w);
    P(o, ", %s, %s, %s, %d};\n", ffmt(f1, sizeof f1, p->s1), ffmt(f2, sizeof f2, p->s2), ffmt(f3, sizeof f3, p->so),
      p->b_f32);
    L->flash_params += sizeof(tflk_bin8f);
}

static void emit_strided(out *o, const char *sym, const tflk_strided *p)
{
    P(o, "static const tflk_strided %s = {%d, %d, {%d, %d, %d, %d, %d, %d}, {%d, %d, %d, %d, %d, %d}};\n", sym,
      p->rank, p->esize, p->dims[0], p->dims[1], p->dims[2], p->dims[3], p->dims[4], p->dims[5], p->st[0], p->st[1],
      p->st[2], p->st[3], p->st[4], p->st[5]);
}

/* the kinds of mcu_shape.c (x: input 0 as an expression, yo: output 0's offset) */
static sy_status *emit_shape_node(out *o, out *calls, layout *L, const mcu_rec *r, uint32_t i, const char *x, size_t yo)
{
    const mcu_node *k = r->k;
    char a[96] = "NULL", b[96] = "NULL", c3[160], fb[48];
    /* only the operands a kernel reads: no unused weight array (Resize's sizes, FILL's dims, OneHot's depth) */
    bool uses_a = k->kind == MK_NORM || (k->kind == MK_FILL && k->u.fill.in >= 0) || k->kind == MK_REVSEQ ||
                  k->kind == MK_SELECT || k->kind == MK_GATHER_EL;
    bool uses_b = (k->kind == MK_NORM && !(k->u.nrm.mode == TFLK_NORM_LAYER && !k->u.nrm.n_bias)) ||
                  k->kind == MK_SELECT || k->kind == MK_ONEHOT;
    if (uses_a)
        SY_TRY(operand(L, r, 1, a, sizeof a));
    if (uses_b)
        SY_TRY(operand(L, r, 2, b, sizeof b));
    switch (k->kind) {
    case MK_RESIZE: {
        const tflk_resize *p = &k->u.rz;
        char f2[48];
        P(o, "static const tflk_resize n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %s, %s};\n", i, p->n,
          p->ih, p->iw, p->c, p->oh, p->ow, p->esize, p->linear, p->ac, p->hp, p->onnx, p->coord, p->nearest,
          ffmt(fb, sizeof fb, p->sh), ffmt(f2, sizeof f2, p->sw));
        L->flash_params += sizeof(tflk_resize);
        P(calls, "    tflk_resize_run(&n%u, %s, (void *)(ws + %zu));\n", i, x, yo);
        return NULL;
    }
    case MK_NORM: {
        const tflk_norm *p = &k->u.nrm;
        char mo[48] = "NULL", io[48] = "NULL", d3[96] = "NULL", d4[96] = "NULL";
        for (uint32_t v = 1; v < 3 && v < r->n_out; v++)
            if (r->out[v].data && r->out[v].nbytes) {
                size_t off = 0;
                SY_TRY(offset_of(L, r->out[v].data, r->out[v].nbytes, L->ws_bytes, r->out[v].name, &off));
                snprintf(v == 1 ? mo : io, sizeof mo, "(float *)(ws + %zu)", off);
            }
        if (p->mode == TFLK_NORM_BATCH) {
            SY_TRY(operand(L, r, 3, d3, sizeof d3));
            SY_TRY(operand(L, r, 4, d4, sizeof d4));
        }
        P(o, "static const tflk_norm n%u = {%d, %d, %d, %d, %d, %d, %s};\n", i, p->mode, p->outer, p->groups, p->inner,
          p->n_scale, p->n_bias, ffmt(fb, sizeof fb, p->eps));
        L->flash_params += sizeof(tflk_norm);
        P(calls, "    tflk_norm_run(&n%u, %s, %s, %s, %s, %s, (float *)(ws + %zu), %s, %s);\n", i, x, a,
          p->mode == TFLK_NORM_LAYER && !p->n_bias ? "NULL" : b, d3, d4, yo, mo, io);
        return NULL;
    }
    case MK_CONST:
    case MK_FILL: {
        const char *sym = NULL;
        if (k->kind == MK_CONST || k->u.fill.in < 0) {
            size_t nb = k->kind == MK_CONST ? r->out[0].nbytes : (size_t)k->u.fill.esize;
            SY_TRY(blob_sym(L, k->own, nb ? nb : 1, nb % 4 == 0 ? SY_DT_INT32 : SY_DT_UINT8, &sym));
            snprintf(c3, sizeof c3, "(const void *)%s", sym);
        } else {
            snprintf(c3, sizeof c3, "%s", a);
        }
        L->used[MK_CONST] = true; /* tflk_shape.c */
        if (k->kind == MK_CONST)
            P(calls, "    tflk_copy(ws + %zu, %s, %zu);\n", yo, c3, r->out[0].nbytes);
        else
            P(calls, "    tflk_fill(ws + %zu, %s, %d, %d);\n", yo, c3, k->u.fill.esize, k->u.fill.n);
        return NULL;
    }
    case MK_CAST:
        P(calls, "    tflk_cast(%d, %d, %s, ws + %zu, %d);\n", k->u.cast.from, k->u.cast.to, x, yo, k->u.cast.n);
        return NULL;
    case MK_REVSEQ: {
        const tflk_revseq *p = &k->u.rs;
        P(o, "static const tflk_revseq n%u = {%d, %d, %d, %d, %d, %d};\n", i, p->d0, p->d1, p->inner, p->esize,
          p->seq_axis, p->len64);
        L->flash_params += sizeof(tflk_revseq);
        P(calls, "    if (tflk_revseq_run(&n%u, %s, %s, (void *)(ws + %zu), NULL))\n        return -1;\n", i, x, a, yo);
        return NULL;
    }
    case MK_TRILU: {
        const tflk_trilu *p = &k->u.tri;
        P(o, "static const tflk_trilu n%u = {%d, %d, %d, %d, %d, %d};\n", i, p->batches, p->rows, p->cols, p->k,
          p->upper, p->esize);
        L->flash_params += sizeof(tflk_trilu);
        P(calls, "    tflk_trilu_run(&n%u, %s, (void *)(ws + %zu));\n", i, x, yo);
        return NULL;
    }
    case MK_SELECT: {
        const tflk_select *p = &k->u.sel3;
        P(o, "static const tflk_select n%u = {%d, %d, {%d, %d, %d, %d, %d, %d}, {%d, %d, %d, %d, %d, %d},\n"
             "    {%d, %d, %d, %d, %d, %d}, {%d, %d, %d, %d, %d, %d}};\n",
          i, p->rank, p->esize, p->dims[0], p->dims[1], p->dims[2], p->dims[3], p->dims[4], p->dims[5], p->sc[0],
          p->sc[1], p->sc[2], p->sc[3], p->sc[4], p->sc[5], p->sa[0], p->sa[1], p->sa[2], p->sa[3], p->sa[4], p->sa[5],
          p->sb[0], p->sb[1], p->sb[2], p->sb[3], p->sb[4], p->sb[5]);
        L->flash_params += sizeof(tflk_select);
        P(calls, "    tflk_select_run(&n%u, %s, %s, %s, (void *)(ws + %zu));\n", i, x, a, b, yo);
        return NULL;
    }
    case MK_ONEHOT: {
        const tflk_onehot *p = &k->u.oh;
        char off[96];
        if (p->onnx) {
            snprintf(off, sizeof off, "%s", b);
            snprintf(c3, sizeof c3, "(const unsigned char *)%s + %d", b, p->esize);
        } else {
            snprintf(c3, sizeof c3, "%s", b);
            SY_TRY(operand(L, r, 3, off, sizeof off));
        }
        P(o, "static const tflk_onehot n%u = {%d, %d, %d, %d, %d, %d};\n", i, p->outer, p->depth, p->inner, p->esize,
          p->idx64, p->onnx);
        L->flash_params += sizeof(tflk_onehot);
        P(calls, "    tflk_onehot_run(&n%u, %s, %s, %s, (void *)(ws + %zu));\n", i, x, c3, off, yo);
        return NULL;
    }
    case MK_UNIQUE: { /* a data-dependent length: the outputs sit at their bound, the count is the run's */
        bool tfl = !strcmp(k->op, "UNIQUE");
        if (!k->u.uq.bounded)
            return H->status_new(SY_ERR_UNSUPPORTED, "codegen: %s '%s': a package plans Y, indices and counts at "
                                 "their bound, which needs them to be terminal graph outputs (ops-mcu.md %s: \"must be "
                                 "terminal graph outputs\"); here a node reads one, so the session infers them at run "
                                 "time", k->op, k->name, tfl ? "Table A #86" : "Table B #109");
        const tflk_unique *p = &k->u.uq.p;
        char ob[3][64];
        for (uint32_t j = 1; j <= 3; j++) {
            snprintf(ob[j - 1], sizeof ob[j - 1], "NULL");
            if (j < r->n_out && r->out[j].data) {
                size_t oo = 0;
                SY_TRY(offset_of(L, r->out[j].data, r->out[j].nbytes, L->ws_bytes, r->out[j].name, &oo));
                snprintf(ob[j - 1], sizeof ob[j - 1], "(void *)(ws + %zu)", oo);
            }
        }
        if (!r->scratch)
            return H->status_new(SY_ERR_INTERNAL, "codegen: %s node %u has no scratch", k->op, i);
        size_t so = 0;
        SY_TRY(offset_of(L, r->scratch, r->scratch_bytes, L->ws_bytes, "scratch", &so));
        P(o, "static const tflk_unique n%u = {%d, %d, %d, %d, %d, %d};\n", i, p->outer, p->n_items, p->inner, p->dt,
          p->sorted, p->idx64);
        if (L->n_uq == MCU_API_MAX_COUNTS)
            return H->status_new(SY_ERR_UNSUPPORTED, "codegen: more than %d Unique nodes", MCU_API_MAX_COUNTS);
        uint32_t slot = L->n_uq++;
        L->uq_rec[slot] = i;
        L->uq_bound[slot] = p->n_items;
        L->flash_params += sizeof(tflk_unique);
        /* TFLite: (values, idx), idx is the inverse; ONNX: (Y, indices, inverse_indices, counts) */
        if (tfl)
            P(calls, "    m->count[%u] = tflk_unique_run(&n%u, %s, (void *)(ws + %zu), NULL, %s, NULL, (void *)(ws + %zu));\n",
              slot, i, x, yo, ob[0], so);
        else
            P(calls, "    m->count[%u] = tflk_unique_run(&n%u, %s, (void *)(ws + %zu), %s, %s, %s, (void *)(ws + %zu));\n",
              slot, i, x, yo, ob[0], ob[1], ob[2], so);
        return NULL;
    }
    case MK_EINSUM: {
        const tflk_einsum *p = &k->u.ein.p;
        P(o, "static const tflk_einsum n%u = {%d, %d, %d, {", i, p->n_in, p->n_out, p->n_sum);
        for (int j = 0; j < TFLK_EIN_RANK; j++)
            P(o, "%s%d", j ? ", " : "", p->out_dims[j]);
        P(o, "}, {");
        for (int j = 0; j < TFLK_EIN_SUM; j++)
            P(o, "%s%d", j ? ", " : "", p->sum_dims[j]);
        P(o, "},\n    {");
        for (int q = 0; q < TFLK_EIN_IN; q++) {
            P(o, "%s{", q ? ", " : "");
            for (int j = 0; j < TFLK_EIN_RANK; j++)
                P(o, "%s%d", j ? ", " : "", p->out_stride[q][j]);
            P(o, "}");
        }
        P(o, "},\n    {");
        for (int q = 0; q < TFLK_EIN_IN; q++) {
            P(o, "%s{", q ? ", " : "");
            for (int j = 0; j < TFLK_EIN_SUM; j++)
                P(o, "%s%d", j ? ", " : "", p->sum_stride[q][j]);
            P(o, "}");
        }
        P(o, "}};\n");
        L->flash_params += sizeof(tflk_einsum);
        P(calls, "    {\n        const void *in[%d];\n", p->n_in);
        for (int32_t j = 0; j < p->n_in; j++) {
            char e[96];
            SY_TRY(operand(L, r, (uint32_t)j, e, sizeof e));
            P(calls, "        in[%d] = %s;\n", j, e);
        }
        P(calls, "        tflk_einsum_run(&n%u, %d, in, (void *)(ws + %zu));\n    }\n", i, k->u.ein.dt, yo);
        return NULL;
    }
    case MK_GATHER_EL: {
        const tflk_scatter_el *p = &k->u.sel;
        P(o, "static const tflk_scatter_el n%u = {%d, %d, %d, %d, %d, {%d, %d, %d, %d, %d, %d}, {%d, %d, %d, %d, %d, %d}};\n",
          i, p->rank, p->axis, p->esize, p->idx64, p->total, p->idims[0], p->idims[1], p->idims[2], p->idims[3],
          p->idims[4], p->idims[5], p->ydims[0], p->ydims[1], p->ydims[2], p->ydims[3], p->ydims[4], p->ydims[5]);
        L->flash_params += sizeof(tflk_scatter_el);
        P(calls, "    if (tflk_gather_el_run(&n%u, %s, %s, (void *)(ws + %zu), NULL))\n        return -1;\n", i, x, a, yo);
        return NULL;
    }
    default: return H->status_new(SY_ERR_INTERNAL, "codegen: node %u: kind %d has no emitter", i, (int)k->kind);
    }
}

/* the kinds of mcu_ops.c */
static sy_status *emit_ops_node(out *o, out *calls, layout *L, const mcu_rec *r, uint32_t i)
{
    const mcu_node *k = r->k;
    char x[96], b[96], c3[96], fb[48], f2[48], a[160];
    size_t yo = 0;
    P(o, "\n/* node %u: %s '%s' */\n", i, k->op, k->name);
    P(calls, "    /* %u %s '%s' */\n", i, k->op, k->name);
    L->used[k->kind] = true;
    if (k->kind == MK_CONST || k->kind == MK_FILL) /* they read no input 0 (Shape: only its dims) */
        snprintf(x, sizeof x, "NULL");
    else
        SY_TRY(operand(L, r, k->kind == MK_VIEW ? (uint32_t)k->view_in : 0, x, sizeof x));
    bool two = k->kind == MK_GATHER || k->kind == MK_GATHER_ND || k->kind == MK_SCATTER_ND ||
               k->kind == MK_MAXMIN_S8 || k->kind == MK_CMP_F32 || k->kind == MK_CMP_B || k->kind == MK_SHIFT_U8 || k->kind == MK_DIV_S8 || k->kind == MK_IDIV_S8 || k->kind == MK_PRELU_S8 || k->kind == MK_BIN8F_S8 ||
               k->kind == MK_SCATTER_ND_SET || k->kind == MK_SCATTER_EL;
    if (two) /* only the operands a kernel reads: no unused weight array */
        SY_TRY(operand(L, r, 1, b, sizeof b));
    if (k->kind == MK_SCATTER_ND_SET || k->kind == MK_SCATTER_EL)
        SY_TRY(operand(L, r, 2, c3, sizeof c3));
    if (k->kind != MK_VIEW)
        SY_TRY(offset_of(L, r->out[0].data, r->out[0].nbytes, L->ws_bytes, r->out[0].name, &yo));
    int32_t n = (int32_t)(r->in[0].nbytes / (sy_dt_size(r->in[0].dtype) ? sy_dt_size(r->in[0].dtype) : 1));
    switch (k->kind) {
    case MK_VIEW:
        for (int32_t v = 0; v < k->n_views && v < (int32_t)r->n_out; v++) {
            char sym[32];
            if (!r->out[v].nbytes)
                continue;
            SY_TRY(offset_of(L, r->out[v].data, r->out[v].nbytes, L->ws_bytes, r->out[v].name, &yo));
            snprintf(sym, sizeof sym, "n%u_v%d", i, v);
            emit_strided(o, sym, &k->views[v]);
            L->flash_params += sizeof(tflk_strided);
            P(calls, "    tflk_strided_copy(&%s, (const unsigned char *)%s + %lld, (void *)(ws + %zu));\n", sym, x,
              (long long)k->view_off[v], yo);
        }
        return NULL;
    case MK_PAD: {
        const tflk_pad *p = &k->u.pad;
        P(o, "static const tflk_pad n%u = {%d, %d, %d, {%d, %d, %d, %d, %d, %d}, {%d, %d, %d, %d, %d, %d},\n"
             "    {%d, %d, %d, %d, %d, %d}, {%u, %u, %u, %u}};\n",
          i, p->rank, p->esize, p->mode, p->odims[0], p->odims[1], p->odims[2], p->odims[3], p->odims[4], p->odims[5],
          p->idims[0], p->idims[1], p->idims[2], p->idims[3], p->idims[4], p->idims[5], p->before[0], p->before[1],
          p->before[2], p->before[3], p->before[4], p->before[5], p->fill[0], p->fill[1], p->fill[2], p->fill[3]);
        L->flash_params += sizeof(tflk_pad);
        P(calls, "    tflk_pad_run(&n%u, %s, (void *)(ws + %zu));\n", i, x, yo);
        return NULL;
    }
    case MK_CONCAT: {
        const tflk_concat *p = &k->u.cat;
        char rows[32], sc[32] = "NULL", bi[32] = "NULL";
        snprintf(rows, sizeof rows, "n%u_rows", i);
        emit_i32s(o, rows, p->rows, p->n);
        if (p->scale) {
            snprintf(sc, sizeof sc, "n%u_scale", i);
            snprintf(bi, sizeof bi, "n%u_bias", i);
            emit_f32s(o, sc, p->scale, p->n);
            emit_f32s(o, bi, p->bias, p->n);
        }
        P(o, "static const tflk_concat n%u = {%d, %d, %d, %d, %d, %s, %s, %s, %s};\n", i, p->n, p->outer, p->esize,
          p->out_zp, p->is_f32, rows, sc, bi, act_str(a, sizeof a, &p->act));
        L->flash_params += sizeof(tflk_concat) + (size_t)p->n * (p->scale ? 12 : 4);
        P(calls, "    {\n        const void *in[%d];\n", p->n);
        for (int32_t j = 0; j < p->n; j++) {
            char e[96];
            SY_TRY(operand(L, r, (uint32_t)j, e, sizeof e));
            P(calls, "        in[%d] = %s;\n", j, e);
        }
        P(calls, "        tflk_concat_run(&n%u, in, (void *)(ws + %zu));\n    }\n", i, yo);
        return NULL;
    }
    case MK_GATHER: {
        const tflk_gather *p = &k->u.gat;
        P(o, "static const tflk_gather n%u = {%d, %d, %d, %d, %d, %d, %d};\n", i, p->outer, p->dim, p->n_idx, p->inner,
          p->esize, p->idx64, p->wrap);
        L->flash_params += sizeof(tflk_gather);
        P(calls, "    if (tflk_gather_run(&n%u, %s, %s, (void *)(ws + %zu), NULL))\n        return -1;\n", i, x, b, yo);
        return NULL;
    }
    case MK_SCATTER_EL: {
        const tflk_scatter_el *p = &k->u.sel;
        P(o, "static const tflk_scatter_el n%u = {%d, %d, %d, %d, %d, {%d, %d, %d, %d, %d, %d}, {%d, %d, %d, %d, %d, %d}};\n",
          i, p->rank, p->axis, p->esize, p->idx64, p->total, p->idims[0], p->idims[1], p->idims[2], p->idims[3],
          p->idims[4], p->idims[5], p->ydims[0], p->ydims[1], p->ydims[2], p->ydims[3], p->ydims[4], p->ydims[5]);
        L->flash_params += sizeof(tflk_scatter_el);
        P(calls, "    if (tflk_scatter_el_run(&n%u, %s, %s, %s, (void *)(ws + %zu), NULL))\n        return -1;\n", i, x, b,
          c3, yo);
        return NULL;
    }
    case MK_GATHER_ND:
    case MK_SCATTER_ND:
    case MK_SCATTER_ND_SET: {
        const tflk_gather_nd *p = &k->u.gnd;
        P(o, "static const tflk_gather_nd n%u = {%d, %d, %d, %d, %d, %d, %d, {%d, %d, %d, %d, %d, %d},\n"
             "    {%d, %d, %d, %d, %d, %d}, %d};\n",
          i, p->n_tuples, p->nd, p->inner, p->esize, p->idx64, p->dtype, p->total, p->dims[0], p->dims[1], p->dims[2],
          p->dims[3], p->dims[4], p->dims[5], p->st[0], p->st[1], p->st[2], p->st[3], p->st[4], p->st[5], p->wrap);
        L->flash_params += sizeof(tflk_gather_nd);
        if (k->kind == MK_SCATTER_ND_SET) {
            P(calls, "    if (tflk_scatter_nd_set(&n%u, %s, %s, %s, (void *)(ws + %zu), NULL))\n        return -1;\n", i,
              x, b, c3, yo);
            return NULL;
        }
        P(calls, "    if (tflk_%s_run(&n%u, %s, %s, (void *)(ws + %zu), NULL))\n        return -1;\n",
          k->kind == MK_GATHER_ND ? "gather_nd" : "scatter_nd", i, x, b, yo);
        return NULL;
    }
    case MK_UNARY_F32:
        P(o, "static const tflk_unary n%u = {%d, %d, %s, %s};\n", i, k->u.un.kind, k->u.un.approx,
          ffmt(fb, sizeof fb, k->u.un.alpha), ffmt(f2, sizeof f2, k->u.un.beta));
        L->flash_params += sizeof(tflk_unary);
        P(calls, "    tflk_unary_f32(&n%u, %s, (float *)(ws + %zu), %d);\n", i, x, yo, n);
        return NULL;
    case MK_NOT_B: P(calls, "    tflk_not_b(%s, (void *)(ws + %zu), %d);\n", x, yo, n); return NULL;
    case MK_QUANTIZE_F32:
        P(calls, "    tflk_quantize_f32(%s, (int8_t *)(ws + %zu), %d, %s, %d);\n", x, yo, n,
          ffmt(fb, sizeof fb, k->u.tq.scale), k->u.tq.zp);
        return NULL;
    case MK_REQUANT_S8:
        P(calls, "    tflk_requantize_s8(%s, (int8_t *)(ws + %zu), %d, %d, %d, %d, %d);\n", x, yo, n, k->u.tq.in_zp,
          k->u.tq.zp, k->u.tq.mult, k->u.tq.shift);
        return NULL;
    case MK_DEQUANTIZE_S8:
        P(calls, "    tflk_dequantize_s8(%s, (float *)(ws + %zu), %d, %s, %d);\n", x, yo, n,
          ffmt(fb, sizeof fb, k->u.tq.scale), k->u.tq.zp);
        return NULL;
    case MK_DIV_S8:
        emit_bin_struct(o, L, i, &k->u.bin);
        P(calls, "    if (tflk_div_s8_run(&n%u, %s, %s, (void *)(ws + %zu)))\n        return -1;\n", i, x, b, yo);
        return NULL;
    case MK_PRELU_S8:
        emit_bin_struct(o, L, i, &k->u.bin);
        P(calls, "    tflk_prelu_s8(&n%u, %s, %s, (void *)(ws + %zu));\n", i, x, b, yo);
        return NULL;
    case MK_BIN8F_S8:
        emit_bin8f_struct(o, L, i, &k->u.b8f);
        P(calls, "    tflk_binary_s8f(&n%u, %s, %s, (void *)(ws + %zu));\n", i, x, b, yo);
        return NULL;
    case MK_IDIV_S8:
        emit_bin_struct(o, L, i, &k->u.bin);
        P(calls, "    if (tflk_idiv_s8_run(&n%u, %s, %s, (void *)(ws + %zu)))\n        return -1;\n", i, x, b, yo);
        return NULL;
    case MK_MAXMIN_S8:
    case MK_CMP_F32:
    case MK_CMP_B:
    case MK_SHIFT_U8:
        emit_bin_struct(o, L, i, &k->u.bin);
        P(calls, "    %s(&n%u, %s, %s, (void *)(ws + %zu));\n",
          k->kind == MK_MAXMIN_S8 ? "tflk_binary_s8_raw"
          : k->kind == MK_CMP_F32 ? "tflk_compare_f32"
          : k->kind == MK_SHIFT_U8 ? "tflk_shift_u8"
                                   : "tflk_compare_b",
          i, x, b, yo);
        return NULL;
    default: return emit_shape_node(o, calls, L, r, i, x, yo);
    }
}

static void emit_dims(out *o, const int32_t *v)
{
    P(o, "{%d, %d, %d, %d, %d, %d}", v[0], v[1], v[2], v[3], v[4], v[5]);
}

/* the kinds of mcu_reduce.c (tflk_reduce.c): the plan as a constant, one call */
static sy_status *emit_reduce_node(out *o, out *calls, layout *L, const mcu_rec *r, uint32_t i)
{
    const mcu_node *k = r->k;
    char x[96], fb[48], f2[48], a[160];
    size_t yo = 0, y2o = 0;
    P(o, "\n/* node %u: %s '%s' */\n", i, k->op, k->name);
    P(calls, "    /* %u %s '%s' */\n", i, k->op, k->name);
    L->used[k->kind] = true;
    SY_TRY(operand(L, r, 0, x, sizeof x));
    SY_TRY(offset_of(L, r->out[0].data, r->out[0].nbytes, L->ws_bytes, r->out[0].name, &yo));
    if (k->kind == MK_REDUCE) {
        const tflk_reduce *p = &k->u.red;
        P(o, "static const tflk_reduce n%u = {%d, %d, %d, %d, %d, ", i, p->kind, p->mode, p->onnx, p->nk, p->nr);
        emit_dims(o, p->kd);
        P(o, ", ");
        emit_dims(o, p->ks);
        P(o, ",\n    ");
        emit_dims(o, p->rd);
        P(o, ", ");
        emit_dims(o, p->rs);
        P(o, ", %d, %s, %s, %d, %d, {%d, %d, %d, %s}, {%d, %d, %d, %d}};\n", p->raw, ffmt(fb, sizeof fb, p->xs),
          ffmt(f2, sizeof f2, p->ys), p->xz, p->yz, p->r8.same, p->r8.in_zp, p->r8.out_zp,
          ffmt(a, sizeof a, p->r8.scale), p->p8.in_zp, p->p8.out_zp, p->p8.mult, p->p8.shift);
        L->flash_params += sizeof(tflk_reduce);
        P(calls, "    tflk_reduce_run(&n%u, %s, (void *)(ws + %zu));\n", i, x, yo);
        return NULL;
    }
    const tflk_axisop *p = &k->u.ax;
    bool two = r->n_out > 1 && r->out[1].data && r->out[1].nbytes;
    if (two)
        SY_TRY(offset_of(L, r->out[1].data, r->out[1].nbytes, L->ws_bytes, r->out[1].name, &y2o));
    P(o, "static const tflk_axisop n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %d, %s, %s, %d, %d, %s};\n", i, p->op,
      p->mode, p->outer, p->len, p->inner, p->flags, p->k, p->idx64, p->esize, ffmt(fb, sizeof fb, p->xs),
      ffmt(f2, sizeof f2, p->ys), p->xz, p->yz, act_str(a, sizeof a, &p->act));
    L->flash_params += sizeof(tflk_axisop);
    if (two)
        P(calls, "    tflk_axis_run(&n%u, %s, (void *)(ws + %zu), (void *)(ws + %zu));\n", i, x, yo, y2o);
    else
        P(calls, "    tflk_axis_run(&n%u, %s, (void *)(ws + %zu), NULL);\n", i, x, yo);
    return NULL;
}

/* parameters of node i as C, and the call that runs it */
/* the address `p` as a C expression: inside one of the record's constant
 * inputs or the node's prepared array (wt), as its symbol plus a float offset */
static sy_status *f32_expr(layout *L, const mcu_rec *r, const void *p, char *buf, size_t len)
{
    if (!p) {
        snprintf(buf, len, "NULL");
        return NULL;
    }
    const uint8_t *q = p;
    const void *base = NULL;
    size_t nbytes = 0;
    sy_dtype dt = SY_DT_FLOAT32;
    for (uint32_t i = 0; i < r->n_in && !base; i++) {
        const uint8_t *d = r->in[i].data;
        if (r->in[i].is_const && d && q >= d && q < d + r->in[i].nbytes) {
            base = d;
            nbytes = r->in[i].nbytes;
            dt = r->in[i].dtype;
        }
    }
    const uint8_t *w = (const uint8_t *)r->k->wt;
    if (!base && w && q >= w && q < w + r->k->wt_bytes) {
        base = w;
        nbytes = r->k->wt_bytes;
    }
    if (!base)
        return H->status_new(SY_ERR_INTERNAL, "codegen: a parameter of node '%s' is neither a weight nor prepared",
                             r->k->name);
    const char *sym;
    SY_TRY(blob_sym(L, base, nbytes, dt, &sym));
    snprintf(buf, len, "%s + %zu", sym, (size_t)(q - (const uint8_t *)base) / sizeof(float));
    return NULL;
}

/* ONNX LSTM (mcu_lstm.c): the fp32 tflk_lstm over W / R in flash and the
 * prepared bias and initial states, then Y_h and Y_c out of its scratch */
static sy_status *emit_lstm_onnx(out *o, out *calls, layout *L, const mcu_rec *r, uint32_t i, size_t so)
{
    const mcu_node *k = r->k;
    const tflk_lstm *p = &k->u.lstm;
    char a[160], e[12][96], f1[48], f2[48], f3[48];
    const tflk_qtensor *q[12] = {&p->wx[0], &p->wx[1], &p->wx[2], &p->wx[3], &p->wh[0], &p->wh[1],
                                 &p->wh[2], &p->wh[3], &p->b[0],  &p->b[1],  &p->b[2],  &p->b[3]};
    for (int j = 0; j < 12; j++)
        SY_TRY(f32_expr(L, r, q[j]->data, e[j], sizeof e[j]));
    char h0[96], c0[96];
    SY_TRY(f32_expr(L, r, p->h0.data, h0, sizeof h0));
    SY_TRY(f32_expr(L, r, p->c0.data, c0, sizeof c0));
#define QT(x) "{" x ", 1, 0, 0, NULL, NULL}"
#define Z "{NULL, 0, 0, 0, NULL, NULL}"
    /* x: fp32, its data the run's input (tflk_lstm_run sets it) */
    P(o, "static const tflk_lstm n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %s, %s, %s,\n    " QT("NULL") ",\n", i, p->n_cell,
      p->n_in, p->n_out, p->steps, p->batch, p->time_major, p->cifg, p->proj, act_str(a, sizeof a, &p->act),
      ffmt(f1, sizeof f1, p->cell_clip), ffmt(f2, sizeof f2, p->proj_clip));
    P(o, "    {" QT("%s") ", " QT("%s") ", " QT("%s") ", " QT("%s") "},\n", e[0], e[1], e[2], e[3]);
    P(o, "    {" QT("%s") ", " QT("%s") ", " QT("%s") ", " QT("%s") "},\n", e[4], e[5], e[6], e[7]);
    P(o, "    {" Z ", " Z ", " Z "},\n");
    P(o, "    {" QT("%s") ", " QT("%s") ", " QT("%s") ", " QT("%s") "},\n", e[8], e[9], e[10], e[11]);
    P(o, "    " Z ", " Z ", " QT("%s") ", " QT("%s") ",\n", h0, c0);
    P(o, "    %d, %s, %d, %d, %d};\n", p->y_dtype, ffmt(f3, sizeof f3, p->y_scale), p->y_zp, p->y_lo, p->y_hi);
#undef QT
#undef Z
    L->flash_params += sizeof(tflk_lstm);
    size_t xo = 0, yo = so + k->pre_floats * sizeof(float);
    SY_TRY(offset_of(L, r->in[0].data, r->in[0].nbytes, L->ws_bytes, r->in[0].name, &xo));
    if (r->n_out > 0 && r->out[0].data)
        SY_TRY(offset_of(L, r->out[0].data, r->out[0].nbytes, L->ws_bytes, r->out[0].name, &yo));
    P(calls, "    tflk_lstm_run(&n%u, ws + %zu, ws + %zu, (float *)(ws + %zu));\n", i, xo, yo, so);
    const size_t bh = (size_t)p->batch * (size_t)p->n_cell * sizeof(float);
    for (uint32_t j = 1; j <= 2; j++) /* Y_h, Y_c: the scratch's h, then c */
        if (r->n_out > j && r->out[j].data) {
            size_t oo = 0;
            SY_TRY(offset_of(L, r->out[j].data, r->out[j].nbytes, L->ws_bytes, r->out[j].name, &oo));
            P(calls, "    tflk_copy(ws + %zu, ws + %zu, %zu);\n", oo, so + (j - 1) * bh, bh);
        }
    return NULL;
}

/* the kinds of mcu_nn.c: TRANSPOSE_CONV / ConvTranspose, BATCH_MATMUL /
 * batched MatMul / Gemm transA, CONV_3D / 5-D Conv. ONNX forms carry their
 * prepared weights (wt, bt) and the channel-last copies (pre, post) */
static sy_status *emit_nn_node(out *o, out *calls, layout *L, const mcu_rec *r, uint32_t i)
{
    const mcu_node *k = r->k;
    char a[160], x[96], w[96], b[96];
    size_t yo = 0, so = 0;
    P(o, "\n/* node %u: %s '%s' */\n", i, k->op, k->name);
    P(calls, "    /* %u %s '%s' */\n", i, k->op, k->name);
    L->used[k->kind] = true;
    if (r->scratch && r->scratch_bytes)
        SY_TRY(offset_of(L, r->scratch, r->scratch_bytes, L->ws_bytes, "scratch", &so));
    if (k->kind == MK_LSTM_ONNX) {
        if (!r->scratch)
            return H->status_new(SY_ERR_INTERNAL, "codegen: LSTM node %u has no scratch", i);
        return emit_lstm_onnx(o, calls, L, r, i, so);
    }
    if (k->kind == MK_RNN_ONNX) { /* ONNX's arrays as they are, like the GRU's; Y and Y_h are outputs (rule 33) */
        const tflk_rnn *p = &k->u.rnn;
        char g[6][96], f[5][48];
        for (uint32_t j = 0; j < 6; j++)
            SY_TRY(operand(L, r, j, g[j], sizeof g[j]));
        if (!r->scratch || r->n_out < 2 || !r->out[0].data || !r->out[1].data)
            return H->status_new(SY_ERR_INTERNAL, "codegen: RNN node %u has no scratch or not both outputs", i);
        size_t yo = 0, ho = 0;
        SY_TRY(offset_of(L, r->out[0].data, r->out[0].nbytes, L->ws_bytes, r->out[0].name, &yo));
        SY_TRY(offset_of(L, r->out[1].data, r->out[1].nbytes, L->ws_bytes, r->out[1].name, &ho));
        P(o, "static const tflk_rnn n%u = {%d, %d, %d, %d, %d, %d, {%d, %d}, {%s, %s}, {%s, %s}, %s};\n", i,
          p->steps, p->batch, p->n_in, p->hidden, p->dirs, p->reverse, p->act[0], p->act[1],
          ffmt(f[0], sizeof f[0], p->alpha[0]), ffmt(f[1], sizeof f[1], p->alpha[1]),
          ffmt(f[2], sizeof f[2], p->beta[0]), ffmt(f[3], sizeof f[3], p->beta[1]), ffmt(f[4], sizeof f[4], p->clip));
        L->flash_params += sizeof(tflk_rnn);
        P(calls, "    tflk_rnn_f32(&n%u, %s, %s, %s, %s, %s, %s, (float *)(ws + %zu), (float *)(ws + %zu), "
                 "(float *)(ws + %zu));\n", i, g[0], g[1], g[2], g[3], g[4], g[5], yo, ho, so);
        return NULL;
    }
    if (k->kind == MK_GRU_ONNX) { /* ONNX's arrays as they are: W, R, B in flash, X and initial_h where they are */
        const tflk_gru *p = &k->u.gru;
        char g[5][96], yh[64] = "NULL";
        static const uint32_t at[5] = {0, 1, 2, 3, 5};
        for (int j = 0; j < 5; j++)
            SY_TRY(operand(L, r, at[j], g[j], sizeof g[j]));
        if (!r->scratch)
            return H->status_new(SY_ERR_INTERNAL, "codegen: GRU node %u has no scratch", i);
        size_t gy = so + k->pre_floats * sizeof(float);
        if (r->n_out > 0 && r->out[0].data)
            SY_TRY(offset_of(L, r->out[0].data, r->out[0].nbytes, L->ws_bytes, r->out[0].name, &gy));
        if (r->n_out > 1 && r->out[1].data) {
            size_t ho = 0;
            SY_TRY(offset_of(L, r->out[1].data, r->out[1].nbytes, L->ws_bytes, r->out[1].name, &ho));
            snprintf(yh, sizeof yh, "(float *)(ws + %zu)", ho);
        }
        P(o, "static const tflk_gru n%u = {%d, %d, %d, %d, %d, %d, %d};\n", i, p->steps, p->batch, p->n_in, p->hidden,
          p->dirs, p->reverse, p->lbr);
        L->flash_params += sizeof(tflk_gru);
        P(calls, "    tflk_gru_f32(&n%u, %s, %s, %s, %s, %s, (float *)(ws + %zu), %s, (float *)(ws + %zu));\n", i, g[0],
          g[1], g[2], g[3], g[4], gy, yh, so);
        return NULL;
    }
    SY_TRY(offset_of(L, r->out[0].data, r->out[0].nbytes, L->ws_bytes, r->out[0].name, &yo));
    const bool tconv = k->kind == MK_TCONV_S8 || k->kind == MK_TCONV_F32, onnx_w = k->wt != NULL;
    /* operands: TFLite TRANSPOSE_CONV is (output_shape, filter, input[, bias]) */
    const uint32_t xi = tconv && !k->nchw ? 2 : 0, bi = tconv && !k->nchw ? 3 : 2;
    SY_TRY(operand(L, r, xi, x, sizeof x));
    if (k->kind == MK_BMM_S8 || k->kind == MK_BMM_F32) {
        SY_TRY(operand(L, r, 1, w, sizeof w));
        snprintf(b, sizeof b, "NULL");
        if (k->bt) {
            const char *bs;
            SY_TRY(blob_sym(L, k->bt, k->bt_bytes, SY_DT_FLOAT32, &bs));
            snprintf(b, sizeof b, "%s", bs);
        }
    } else if (onnx_w) {
        const char *ws, *bs = "NULL";
        SY_TRY(blob_sym(L, k->wt, k->wt_bytes, SY_DT_FLOAT32, &ws));
        if (k->bt)
            SY_TRY(blob_sym(L, k->bt, k->bt_bytes, SY_DT_FLOAT32, &bs));
        snprintf(w, sizeof w, "%s", ws);
        snprintf(b, sizeof b, "%s", bs);
    } else {
        SY_TRY(operand(L, r, 1, w, sizeof w));
        SY_TRY(operand(L, r, bi, b, sizeof b));
    }
    size_t kx = 0, ky = yo;
    char xin[112];
    snprintf(xin, sizeof xin, "%s", x);
    if (k->nchw) {
        if (!r->scratch)
            return H->status_new(SY_ERR_INTERNAL, "codegen: NCHW node %u has no scratch", i);
        char sym[24];
        snprintf(sym, sizeof sym, "n%u_pre", i);
        emit_strided(o, sym, &k->pre);
        snprintf(sym, sizeof sym, "n%u_post", i);
        emit_strided(o, sym, &k->post);
        L->flash_params += 2 * sizeof(tflk_strided);
        L->used[MK_TRANSPOSE] = true;
        P(calls, "    tflk_strided_copy(&n%u_pre, %s, ws + %zu);\n", i, x, so);
        kx = so;
        ky = so + k->pre_floats * sizeof(float);
        snprintf(xin, sizeof xin, "(const void *)(ws + %zu)", kx);
    }
    switch (k->kind) {
    case MK_TCONV_S8:
    case MK_TCONV_F32: {
        const tflk_tconv *p = &k->u.tconv;
        char ms[32] = "NULL", ss[32] = "NULL";
        if (k->kind == MK_TCONV_S8) {
            snprintf(ms, sizeof ms, "n%u_mult", i);
            snprintf(ss, sizeof ss, "n%u_shift", i);
            emit_i32s(o, ms, p->mult, k->n_mult);
            emit_i32s(o, ss, p->shift, k->n_mult);
            L->flash_params += (size_t)k->n_mult * 8;
        }
        P(o, "static const tflk_tconv n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d,\n"
             "    %d, %d, %d, %d, %d, %s, %s, %s};\n",
          i, p->n, p->ih, p->iw, p->ic, p->oh, p->ow, p->oc, p->kh, p->kw, p->sh, p->sw, p->dh, p->dw, p->pt, p->pl,
          p->in_off, p->out_zp, p->lo, p->hi, p->per_channel, ms, ss, act_str(a, sizeof a, &p->act));
        L->flash_params += sizeof(tflk_tconv);
        if (k->kind == MK_TCONV_S8) {
            if (!r->scratch)
                return H->status_new(SY_ERR_INTERNAL, "codegen: TRANSPOSE_CONV node %u has no scratch", i);
            P(calls, "    tflk_tconv_s8(&n%u, %s, %s, %s, (int8_t *)(ws + %zu), (int32_t *)(ws + %zu));\n", i, xin, w, b,
              ky, so);
        } else {
            P(calls, "    tflk_tconv_f32(&n%u, %s, %s, %s, (float *)(ws + %zu));\n", i, xin, w, b, ky);
        }
        break;
    }
    case MK_BMM_S8:
    case MK_BMM_F32: {
        const tflk_bmm *p = &k->u.bmm;
        P(o, "static const tflk_bmm n%u = {%d, %d, %d, %d, %d, %d, %d, {%d, %d, %d, %d}, {%d, %d, %d, %d},\n"
             "    {%d, %d, %d, %d}, %d, %d, %d, %d, %d};\n",
          i, p->batches, p->m, p->n, p->k, p->adj_x, p->adj_y, p->rank, p->bdims[0], p->bdims[1], p->bdims[2],
          p->bdims[3], p->sa[0], p->sa[1], p->sa[2], p->sa[3], p->sb[0], p->sb[1], p->sb[2], p->sb[3], p->x_off,
          p->y_off, p->out_zp, p->mult, p->shift);
        L->flash_params += sizeof(tflk_bmm);
        if (k->kind == MK_BMM_S8)
            P(calls, "    tflk_bmm_s8(&n%u, %s, %s, (int8_t *)(ws + %zu));\n", i, xin, w, ky);
        else
            P(calls, "    tflk_bmm_f32(&n%u, %s, %s, %s, (float *)(ws + %zu));\n", i, xin, w, b, ky);
        break;
    }
    case MK_CONV3D_F32: { /* the int8 fields (in_off .. rq_single), unread by the fp32 kernel, spelled as zeros:
                             packages build with -Werror=missing-field-initializers */
        const tflk_conv3d *p = &k->u.c3;
        P(o, "static const tflk_conv3d n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d,\n"
             "    %d, %d, %d, %d, %d, %d, %d, %d, %d, %s,\n    0, 0, 0, 0, 0, NULL, NULL, 0};\n",
          i, p->n, p->id, p->ih, p->iw, p->ic, p->od, p->oh, p->ow, p->oc, p->kd, p->kh, p->kw, p->sd, p->sh, p->sw,
          p->dd, p->dh, p->dw, p->pd, p->pt, p->pl, act_str(a, sizeof a, &p->act));
        L->flash_params += sizeof(tflk_conv3d);
        P(calls, "    tflk_conv3d_f32(&n%u, %s, %s, %s, (float *)(ws + %zu));\n", i, xin, w, b, ky);
        break;
    }
    case MK_CONV3D_S8: {
        const tflk_conv3d *p = &k->u.c3;
        char ms[32], ss[32];
        snprintf(ms, sizeof ms, "n%u_mult", i);
        snprintf(ss, sizeof ss, "n%u_shift", i);
        emit_i32s(o, ms, p->mult, k->n_mult);
        emit_i32s(o, ss, p->shift, k->n_mult);
        L->flash_params += (size_t)k->n_mult * 8;
        P(o, "static const tflk_conv3d n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d,\n"
             "    %d, %d, %d, %d, %d, %d, %d, %d, %d, %s,\n    %d, %d, %d, %d, %d, %s, %s, %d};\n",
          i, p->n, p->id, p->ih, p->iw, p->ic, p->od, p->oh, p->ow, p->oc, p->kd, p->kh, p->kw, p->sd, p->sh, p->sw,
          p->dd, p->dh, p->dw, p->pd, p->pt, p->pl, act_str(a, sizeof a, &p->act), p->in_off, p->out_zp, p->lo, p->hi,
          p->per_channel, ms, ss, p->rq_single);
        L->flash_params += sizeof(tflk_conv3d);
        P(calls, "    tflk_conv3d_s8(&n%u, %s, %s, %s, (int8_t *)(ws + %zu));\n", i, xin, w, b, ky);
        break;
    }
    default: return H->status_new(SY_ERR_INTERNAL, "codegen: node %u: not a kind of mcu_nn.c", i);
    }
    if (k->nchw)
        P(calls, "    tflk_strided_copy(&n%u_post, ws + %zu, ws + %zu);\n", i, ky, yo);
    return NULL;
}

/* QConcat (qk_concat_run): its per-input arrays (codes per outer step, zero
 * points, copy flags, requantizers) and the data inputs 2, 5, 8, ... (the
 * others are y_scale, y_zp and the inputs' scales and zero points, which
 * the arrays hold), each in flash or the workspace */
static sy_status *emit_qconcat(out *o, out *calls, layout *L, const mcu_rec *r, uint32_t i)
{
    const mcu_node *k = r->k;
    const qk_concat *p = &k->u.qcat;
    size_t yo = 0;
    SY_TRY(offset_of(L, r->out[0].data, r->out[0].nbytes, L->ws_bytes, r->out[0].name, &yo));
    P(o, "\n/* node %u: %s '%s' */\n", i, k->op, k->name);
    P(calls, "    /* %u %s '%s' */\n", i, k->op, k->name);
    L->used[k->kind] = true;
    char inner[32], zx[32], cp[32], rq[32];
    snprintf(inner, sizeof inner, "n%u_inner", i);
    snprintf(zx, sizeof zx, "n%u_zx", i);
    snprintf(cp, sizeof cp, "n%u_copy", i);
    snprintf(rq, sizeof rq, "n%u_rq", i);
    emit_i32s(o, inner, p->inner, p->n);
    emit_i32s(o, zx, p->zx, p->n);
    emit_i32s(o, cp, p->copy, p->n);
    emit_rqs(o, rq, p->rq, p->n);
    P(o, "static const qk_concat n%u = {%d, %d, %d, %d, %d, %s, %s, %s, %s};\n", i, p->n, p->outer, p->yinner, p->xdt,
      p->ydt, inner, zx, cp, rq);
    L->flash_params += sizeof(qk_concat) + (size_t)p->n * (12 + sizeof(qk_rq));
    P(calls, "    {\n        const void *in[%d];\n", p->n);
    for (int32_t j = 0; j < p->n; j++) {
        char e[96];
        SY_TRY(operand(L, r, (uint32_t)(2 + 3 * j), e, sizeof e));
        P(calls, "        in[%d] = %s;\n", j, e);
    }
    P(calls, "        qk_concat_run(&n%u, in, ws + %zu);\n    }\n", i, yo);
    return NULL;
}

static sy_status *emit_node(out *o, out *calls, layout *L, const mcu_rec *r, uint32_t i, size_t ws_bytes)
{
    const mcu_node *k = r->k;
    char a[160];
    size_t xo = 0, yo = 0, so = 0;
    if (mcu_is_reduce_kind(k->kind))
        return emit_reduce_node(o, calls, L, r, i);
    if (k->kind >= MK_VIEW && k->kind < MK_QCONV)
        return emit_ops_node(o, calls, L, r, i);
    if (k->kind >= MK_TCONV_S8 && k->kind <= MK_RNN_ONNX)
        return emit_nn_node(o, calls, L, r, i);
    if (k->kind == MK_QCONCAT) /* input 0 is y_scale, a constant */
        return emit_qconcat(o, calls, L, r, i);
    /* a QAdd / QSub / QMul of a constant A (TFLite's ADD(k, x)): A in flash,
     * emit_qnode names it */
    if (!(k->kind == MK_QADD && r->in[0].is_const))
        SY_TRY(offset_of(L, r->in[0].data, r->in[0].nbytes, ws_bytes, r->in[0].name, &xo));
    SY_TRY(offset_of(L, r->out[0].data, r->out[0].nbytes, ws_bytes, r->out[0].name, &yo));
    if (r->scratch && r->scratch_bytes)
        SY_TRY(offset_of(L, r->scratch, r->scratch_bytes, ws_bytes, "scratch", &so));
    P(o, "\n/* node %u: %s '%s' */\n", i, k->op, k->name);
    P(calls, "    /* %u %s '%s' */\n", i, k->op, k->name);
    L->used[k->kind] = true;
    if (k->kind >= MK_QCONV)
        return emit_qnode(o, calls, L, r, i, xo, yo);
    const char *wsym = "NULL", *bsym = "NULL";
    if (k->wt) { /* ONNX: the weights and bias as prepared (mcu_onnx.c) */
        SY_TRY(blob_sym(L, k->wt, k->wt_bytes, SY_DT_FLOAT32, &wsym));
        if (k->bt)
            SY_TRY(blob_sym(L, k->bt, k->bt_bytes, SY_DT_FLOAT32, &bsym));
    } else if (k->kind == MK_CONV_S8 || k->kind == MK_CONV_F32 || k->kind == MK_FC_S8 || k->kind == MK_FC_F32) {
        SY_TRY(blob_sym(L, r->in[1].data, r->in[1].nbytes, r->in[1].dtype, &wsym));
        if (r->n_in > 2 && r->in[2].data)
            SY_TRY(blob_sym(L, r->in[2].data, r->in[2].nbytes, r->in[2].dtype, &bsym));
    }
    char ms[32] = "NULL", ss[32] = "NULL";
    if (k->kind == MK_CONV_S8 || k->kind == MK_FC_S8) {
        const int32_t *mult = k->kind == MK_CONV_S8 ? k->u.conv.mult : k->u.fc.mult;
        const int32_t *shift = k->kind == MK_CONV_S8 ? k->u.conv.shift : k->u.fc.shift;
        snprintf(ms, sizeof ms, "n%u_mult", i);
        snprintf(ss, sizeof ss, "n%u_shift", i);
        emit_i32s(o, ms, mult, k->n_mult);
        emit_i32s(o, ss, shift, k->n_mult);
        L->flash_params += (size_t)k->n_mult * 8;
    }
    const bool i8 = k->kind == MK_CONV_S8 || k->kind == MK_FC_S8 || k->kind == MK_POOL_S8 || k->kind == MK_SOFTMAX_S8 ||
                    k->kind == MK_LUT_S8;
    const char *et = i8 ? "int8_t" : "float";
    /* ONNX NCHW around the NHWC kernel: x into the scratch as NHWC, the
     * kernel's output after it, back into y as NCHW */
    size_t yfinal = yo;
    if (k->nchw) {
        if (!r->scratch)
            return H->status_new(SY_ERR_INTERNAL, "codegen: NCHW node %u has no scratch", i);
        for (int v = 0; v < 2; v++) {
            const tflk_strided *p = v ? &k->post : &k->pre;
            P(o, "static const tflk_strided n%u_%s = {%d, %d, {%d, %d, %d, %d, %d, %d}, {%d, %d, %d, %d, %d, %d}};\n",
              i, v ? "post" : "pre", p->rank, p->esize, p->dims[0], p->dims[1], p->dims[2], p->dims[3], p->dims[4],
              p->dims[5], p->st[0], p->st[1], p->st[2], p->st[3], p->st[4], p->st[5]);
        }
        L->flash_params += 2 * sizeof(tflk_strided);
        L->used[MK_TRANSPOSE] = true;
        P(calls, "    tflk_strided_copy(&n%u_pre, ws + %zu, ws + %zu);\n", i, xo, so);
        xo = so;
        yo = so + k->pre_floats * sizeof(float);
    }
    switch (k->kind) {
    case MK_CONV_S8:
    case MK_CONV_F32: {
        const tflk_conv *p = &k->u.conv;
        P(o,
          "static const tflk_conv n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d,\n"
          "    %d, %d, %d, %d, %d, %s, %s, %s, %d};\n",
          i, p->n, p->ih, p->iw, p->ic, p->oh, p->ow, p->oc, p->kh, p->kw, p->fic, p->depthwise, p->sh, p->sw, p->dh,
          p->dw, p->pt, p->pl, p->in_off, p->out_zp, p->lo, p->hi, p->per_channel, ms, ss, act_str(a, sizeof a, &p->act),
          p->rq_single);
        L->flash_params += sizeof(tflk_conv);
        P(calls, "    tflk_conv_%s(&n%u, (const %s *)(ws + %zu), %s, %s, (%s *)(ws + %zu));\n", i8 ? "s8" : "f32", i, et,
          xo, wsym, bsym, et, yo);
        break;
    }
    case MK_FC_S8:
    case MK_FC_F32: {
        const tflk_fc *p = &k->u.fc;
        P(o, "static const tflk_fc n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %d, %s, %s, %s, %d};\n", i, p->batches,
          p->units, p->depth, p->in_off, p->w_off, p->out_zp, p->lo, p->hi, p->per_channel, ms, ss,
          act_str(a, sizeof a, &p->act), p->rq_single);
        L->flash_params += sizeof(tflk_fc);
        P(calls, "    tflk_fc_%s(&n%u, (const %s *)(ws + %zu), %s, %s, (%s *)(ws + %zu));\n", i8 ? "s8" : "f32", i, et, xo,
          wsym, bsym, et, yo);
        break;
    }
    case MK_POOL_S8:
    case MK_POOL_F32: {
        const tflk_pool *p = &k->u.pool;
        P(o, "static const tflk_pool n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %s};\n", i,
          p->is_max, p->n, p->ih, p->iw, p->c, p->oh, p->ow, p->fh, p->fw, p->sh, p->sw, p->pt, p->pl, p->lo, p->hi,
          act_str(a, sizeof a, &p->act));
        L->flash_params += sizeof(tflk_pool);
        P(calls, "    tflk_pool_%s(&n%u, (const %s *)(ws + %zu), (%s *)(ws + %zu));\n", i8 ? "s8" : "f32", i, et, xo, et,
          yo);
        break;
    }
    case MK_SOFTMAX_S8:
    case MK_SOFTMAX_F32: {
        const tflk_softmax *p = &k->u.sm;
        char f1[48], f2[48], f3[48];
        /* the inner axis step (ONNX Softmax on an inner axis) and exp_fn
         * (ONNX: tflk_expf_d; else 0, tflk_expf); `store` is host-only */
        P(o, "static const tflk_softmax n%u = {%d, %d, %s, %d, %d, %d, %d, %s, %s, %d, %d, %d, %s, 0};\n", i, p->rows,
          p->depth, ffmt(f1, sizeof f1, p->beta), p->fixed, p->mult, p->left_shift, p->diff_min,
          ffmt(f2, sizeof f2, p->in_scale), ffmt(f3, sizeof f3, p->out_scale), p->in_zp, p->out_zp, p->inner,
          p->exp_fn == tflk_expf_d ? "tflk_expf_d" : "0");
        L->flash_params += sizeof(tflk_softmax);
        if (k->kind == MK_SOFTMAX_S8) {
            if (!p->fixed && !r->scratch)
                return H->status_new(SY_ERR_INTERNAL, "codegen: softmax node %u has no scratch", i);
            char sc[48] = "NULL";
            if (r->scratch)
                snprintf(sc, sizeof sc, "(float *)(ws + %zu)", so);
            P(calls, "    tflk_softmax_s8(&n%u, (const int8_t *)(ws + %zu), (int8_t *)(ws + %zu), %s);\n", i, xo, yo, sc);
        } else {
            P(calls, "    tflk_%ssoftmax_f32%s(&n%u, (const float *)(ws + %zu), (float *)(ws + %zu));\n",
              k->sm_log ? "log_" : "", k->sm_acc64 ? "_acc64" : "", i, xo, yo);
        }
        break;
    }
    case MK_LOGSM_S8: {
        const tflk_logsm8 *p = &k->u.lsm.p;
        P(o, "static const tflk_logsm8 n%u = {%d, %d, %d, %d, %d};\n", i, p->mult, p->left_shift, p->diff_min,
          p->rev_mult, p->rev_right_shift);
        L->flash_params += sizeof(tflk_logsm8);
        P(calls, "    tflk_log_softmax_s8(&n%u, (const int8_t *)(ws + %zu), (int8_t *)(ws + %zu), %d, %d);\n", i, xo, yo,
          k->u.lsm.rows, k->u.lsm.depth);
        break;
    }
    case MK_LSTM: {
        const tflk_lstm *p = &k->u.lstm;
        char x[256], wx[4][256], wh[4][256], pe[3][256], b[4][256], pw[256], pb[256], h0[256], c0[256], tag[16];
        tflk_qtensor xq = p->x;
        xq.data = NULL;
        SY_TRY(emit_qt(o, L, r, &xq, i, "x", x, sizeof x));
        for (int g = 0; g < 4; g++) {
            snprintf(tag, sizeof tag, "wx%d", g);
            SY_TRY(emit_qt(o, L, r, &p->wx[g], i, tag, wx[g], sizeof wx[g]));
            snprintf(tag, sizeof tag, "wh%d", g);
            SY_TRY(emit_qt(o, L, r, &p->wh[g], i, tag, wh[g], sizeof wh[g]));
            snprintf(tag, sizeof tag, "b%d", g);
            SY_TRY(emit_qt(o, L, r, &p->b[g], i, tag, b[g], sizeof b[g]));
        }
        for (int g = 0; g < 3; g++) {
            snprintf(tag, sizeof tag, "p%d", g);
            SY_TRY(emit_qt(o, L, r, &p->peep[g], i, tag, pe[g], sizeof pe[g]));
        }
        SY_TRY(emit_qt(o, L, r, &p->pw, i, "pw", pw, sizeof pw));
        SY_TRY(emit_qt(o, L, r, &p->pb, i, "pb", pb, sizeof pb));
        SY_TRY(emit_qt(o, L, r, &p->h0, i, "h0", h0, sizeof h0));
        SY_TRY(emit_qt(o, L, r, &p->c0, i, "c0", c0, sizeof c0));
        char f1[48], f2[48], f3[48];
        P(o, "static const tflk_lstm n%u = {%d, %d, %d, %d, %d, %d, %d, %d, %s, %s, %s,\n    %s,\n", i, p->n_cell,
          p->n_in, p->n_out, p->steps, p->batch, p->time_major, p->cifg, p->proj, act_str(a, sizeof a, &p->act),
          ffmt(f1, sizeof f1, p->cell_clip), ffmt(f2, sizeof f2, p->proj_clip), x);
        P(o, "    {%s, %s, %s, %s},\n    {%s, %s, %s, %s},\n", wx[0], wx[1], wx[2], wx[3], wh[0], wh[1], wh[2], wh[3]);
        P(o, "    {%s, %s, %s},\n    {%s, %s, %s, %s},\n    %s, %s, %s, %s,\n", pe[0], pe[1], pe[2], b[0], b[1], b[2],
          b[3], pw, pb, h0, c0);
        P(o, "    %d, %s, %d, %d, %d};\n", p->y_dtype, ffmt(f3, sizeof f3, p->y_scale), p->y_zp, p->y_lo, p->y_hi);
        L->flash_params += sizeof(tflk_lstm);
        P(calls, "    tflk_lstm_run(&n%u, ws + %zu, ws + %zu, (float *)(ws + %zu));\n", i, xo, yo, so);
        break;
    }
    case MK_LSTM8: {
        const tflk_lstm8 *p = &k->u.lstm8;
        const char *wx[4], *wh[4], *b[4], *h0, *c0;
        const void *ptrs[14] = {p->wx[0], p->wx[1], p->wx[2], p->wx[3], p->wh[0], p->wh[1], p->wh[2], p->wh[3],
                                p->b[0], p->b[1], p->b[2], p->b[3], p->h0, p->c0};
        const char **syms[14] = {&wx[0], &wx[1], &wx[2], &wx[3], &wh[0], &wh[1], &wh[2], &wh[3],
                                 &b[0], &b[1], &b[2], &b[3], &h0, &c0};
        for (int j = 0; j < 14; j++) {
            *syms[j] = "NULL";
            if (!ptrs[j])
                continue;
            const mcu_buf *bb = find_in(r, ptrs[j]);
            if (!bb)
                return H->status_new(SY_ERR_INTERNAL, "codegen: LSTM tensor %d of node %u is not among its inputs", j, i);
            SY_TRY(blob_sym(L, bb->data, bb->nbytes, bb->dtype, syms[j]));
        }
        if (!r->scratch)
            return H->status_new(SY_ERR_INTERNAL, "codegen: LSTM node %u has no scratch", i);
        P(o, "static const tflk_lstm8 n%u = {%d, %d, %d, %d, %d, %d, %d,\n", i, p->n_cell, p->n_in, p->steps, p->batch,
          p->time_major, p->x_off, p->h_off);
        P(o, "    {%s, %s, %s, %s}, {%s, %s, %s, %s}, {%s, %s, %s, %s},\n", wx[0], wx[1], wx[2], wx[3], wh[0], wh[1],
          wh[2], wh[3], b[0], b[1], b[2], b[3]);
        P(o, "    {%d, %d, %d, %d}, {%d, %d, %d, %d}, {%d, %d, %d, %d}, {%d, %d, %d, %d},\n", p->x_mult[0], p->x_mult[1],
          p->x_mult[2], p->x_mult[3], p->x_shift[0], p->x_shift[1], p->x_shift[2], p->x_shift[3], p->h_mult[0],
          p->h_mult[1], p->h_mult[2], p->h_mult[3], p->h_shift[0], p->h_shift[1], p->h_shift[2], p->h_shift[3]);
        P(o, "    %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %s, %s};\n", p->fc_mult, p->fc_shift, p->ic_mult,
          p->ic_shift, p->oh_mult, p->oh_shift, p->h_zp, p->cell_tanh_mult, p->cell_tanh_shift, p->cell_gate_sigmoid,
          p->cell_clip, h0, c0);
        L->flash_params += sizeof(tflk_lstm8);
        P(calls, "    tflk_lstm8_run(&n%u, (const int8_t *)(ws + %zu), (int8_t *)(ws + %zu), ws + %zu);\n", i, xo, yo, so);
        break;
    }
    case MK_BIN_S8:
    case MK_BIN_F32: {
        const tflk_binary *p = &k->u.bin;
        const char *bet = k->kind == MK_BIN_S8 ? "int8_t" : "float";
        char bx[64];
        const char *bsrc = bx;
        if (r->n_in < 2 || !r->in[1].data)
            return H->status_new(SY_ERR_INTERNAL, "codegen: node %u has no second operand", i);
        if (r->in[1].is_const) {
            SY_TRY(blob_sym(L, r->in[1].data, r->in[1].nbytes, r->in[1].dtype, &bsrc));
        } else {
            size_t bo = 0;
            SY_TRY(offset_of(L, r->in[1].data, r->in[1].nbytes, ws_bytes, r->in[1].name, &bo));
            snprintf(bx, sizeof bx, "(const %s *)(ws + %zu)", bet, bo);
        }
        emit_bin_struct(o, L, i, p);
        P(calls, "    tflk_binary_%s(&n%u, (const %s *)(ws + %zu), %s, (%s *)(ws + %zu));\n",
          k->kind == MK_BIN_S8 ? "s8" : "f32", i, bet, xo, bsrc, bet, yo);
        break;
    }
    case MK_TRANSPOSE: {
        const tflk_strided *p = &k->u.tr;
        P(o, "static const tflk_strided n%u = {%d, %d, {%d, %d, %d, %d, %d, %d}, {%d, %d, %d, %d, %d, %d}};\n", i,
          p->rank, p->esize, p->dims[0], p->dims[1], p->dims[2], p->dims[3], p->dims[4], p->dims[5], p->st[0], p->st[1],
          p->st[2], p->st[3], p->st[4], p->st[5]);
        L->flash_params += sizeof(tflk_strided);
        P(calls, "    tflk_strided_copy(&n%u, ws + %zu, ws + %zu);\n", i, xo, yo);
        break;
    }
    case MK_LUT_S8: {
        /* the host-built table of output codes, in flash */
        const char *lsym;
        SY_TRY(blob_sym(L, k->u.lut.lut, sizeof k->u.lut.lut, SY_DT_INT8, &lsym));
        if (k->u.lut.min_valid > -128) /* SQRT, RSQRT: a negative input is refused */
            P(calls, "    if (tflk_lut_s8_min(%s, %d, (const int8_t *)(ws + %zu), (int8_t *)(ws + %zu), %zu, NULL))\n"
                     "        return -1;\n", lsym, (int)k->u.lut.min_valid, xo, yo, r->in[0].nbytes);
        else
            P(calls, "    tflk_lut_s8(%s, (const int8_t *)(ws + %zu), (int8_t *)(ws + %zu), %zu);\n", lsym, xo, yo,
              r->in[0].nbytes);
        break;
    }
    case MK_COPY:
    default:
        P(calls, "    tflk_copy(ws + %zu, ws + %zu, %zu);\n", yo, xo,
          r->out[0].nbytes < r->in[0].nbytes ? r->out[0].nbytes : r->in[0].nbytes);
        break;
    }
    if (k->nchw)
        P(calls, "    tflk_strided_copy(&n%u_post, ws + %zu, ws + %zu);\n", i, yo, yfinal);
    return NULL;
}

/* ---- the fixed files --------------------------------------------------------------- */

static const char *kernel_file(mcu_kind k)
{
    switch (k) {
    case MK_CONV_S8:
    case MK_CONV_F32: return "tflk_conv.c";
    case MK_FC_S8:
    case MK_FC_F32: return "tflk_fc.c";
    case MK_POOL_S8:
    case MK_POOL_F32: return "tflk_pool.c";
    case MK_SOFTMAX_S8:
    case MK_SOFTMAX_F32: return "tflk_softmax.c";
    case MK_LOGSM_S8: return "tflk_logsoftmax.c";
    case MK_LSTM:
    case MK_LSTM_ONNX: return "tflk_lstm.c";
    case MK_GRU_ONNX: return "tflk_gru.c";
    case MK_RNN_ONNX: return "tflk_rnn.c";
    case MK_LSTM8: return "tflk_lstm8.c";
    case MK_LUT_S8: return "tflk_lut.c";
    case MK_BIN_S8:
    case MK_BIN_F32: return "tflk_binary.c";
    case MK_TRANSPOSE:
    case MK_VIEW: return "tflk_strided.c";
    case MK_TCONV_S8:
    case MK_TCONV_F32: return "tflk_tconv.c";
    case MK_BMM_S8:
    case MK_BMM_F32: return "tflk_bmm.c";
    case MK_CONV3D_F32:
    case MK_CONV3D_S8: return "tflk_conv3d.c";
    case MK_PAD:
    case MK_CONCAT:
    case MK_GATHER:
    case MK_GATHER_ND:
    case MK_SCATTER_ND:
    case MK_SCATTER_ND_SET:
    case MK_SCATTER_EL: return "tflk_move.c";
    case MK_UNARY_F32:
    case MK_NOT_B:
    case MK_QUANTIZE_F32:
    case MK_REQUANT_S8:
    case MK_DEQUANTIZE_S8: return "tflk_unary.c";
    case MK_MAXMIN_S8:
    case MK_CMP_F32:
    case MK_CMP_B:
    case MK_SHIFT_U8:
    case MK_DIV_S8:
    case MK_IDIV_S8:
    case MK_PRELU_S8:
    case MK_BIN8F_S8: return "tflk_binary.c";
    case MK_RESIZE: return "tflk_resize.c";
    case MK_NORM: return "tflk_norm.c";
    case MK_CONST:
    case MK_FILL:
    case MK_CAST:
    case MK_REVSEQ:
    case MK_TRILU:
    case MK_SELECT:
    case MK_ONEHOT:
    case MK_GATHER_EL: return "tflk_shape.c";
    case MK_EINSUM: return "tflk_einsum.c";
    case MK_UNIQUE: return "tflk_unique.c";
    case MK_QCONV:
    case MK_QPOOL:
    case MK_QMM:
    case MK_QADD:
    case MK_QUANT:
    case MK_DEQUANT: return "qk.c";
    case MK_QRNN: return "qk_rnn.c";
    case MK_QAVGPOOL: return "qk.c";
    case MK_QSOFTMAX: return "qk_softmax.c";
    case MK_QTCONV:
    case MK_QCONCAT: return "qk.c";
    case MK_QNORM: return "tflk_norm.c";
    case MK_REDUCE:
    case MK_AXIS: return "tflk_reduce.c";
    default: return NULL;
    }
}

static sy_status *write_source(const char *dir, const char *name)
{
    for (unsigned i = 0; i < mcu_n_sources; i++)
        if (!strcmp(mcu_sources[i].name, name)) {
            char rel[128];
            snprintf(rel, sizeof rel, "kernels/%s", name);
            out o;
            SY_TRY(mcu_open_out(dir, rel, &o));
            P(&o, "%s", mcu_sources[i].text);
            return mcu_close_out(dir, rel, &o);
        }
    return H->status_new(SY_ERR_INTERNAL, "codegen: kernel source %s is not embedded in the plugin", name);
}

static void hex_line(out *o, const char *tag, uint32_t i, const sy_tensor *t)
{
    P(o, "%s%u %lu:", tag, i, (unsigned long)t->nbytes);
    for (size_t b = 0; b < t->nbytes; b++)
        P(o, " %02x", ((const uint8_t *)t->data)[b]);
    P(o, "\n");
}


/* The multiply-accumulates of one run: CONV_2D / DEPTHWISE_CONV_2D (every
 * output times its filter window, taps in the padding included, as MAC
 * counts are usually quoted), FULLY_CONNECTED and the LSTMs' gate matrices
 * (and projection); the other kernels count 0. The MCU report divides the
 * retired instructions by it. */
static uint64_t node_macs(const mcu_node *k)
{
    switch (k->kind) {
    case MK_CONV_S8:
    case MK_CONV_F32: {
        const tflk_conv *p = &k->u.conv;
        return (uint64_t)p->n * (uint64_t)p->oh * (uint64_t)p->ow * (uint64_t)p->oc * (uint64_t)p->kh *
               (uint64_t)p->kw * (uint64_t)p->fic;
    }
    case MK_FC_S8:
    case MK_FC_F32:
        return (uint64_t)k->u.fc.batches * (uint64_t)k->u.fc.units * (uint64_t)k->u.fc.depth;
    case MK_TCONV_S8:
    case MK_TCONV_F32: {
        const tflk_tconv *p = &k->u.tconv;
        return (uint64_t)p->n * (uint64_t)p->ih * (uint64_t)p->iw * (uint64_t)p->kh * (uint64_t)p->kw *
               (uint64_t)p->ic * (uint64_t)p->oc;
    }
    case MK_QTCONV: { /* QConvTranspose: every input pixel times its kernel window and output channels */
        const qk_conv *p = &k->u.qconv;
        return (uint64_t)p->n * (uint64_t)p->ih * (uint64_t)p->iw * (uint64_t)p->kh * (uint64_t)p->kw *
               (uint64_t)(p->c / p->group) * (uint64_t)p->oc;
    }
    case MK_BMM_S8:
    case MK_BMM_F32:
        return (uint64_t)k->u.bmm.batches * (uint64_t)k->u.bmm.m * (uint64_t)k->u.bmm.n * (uint64_t)k->u.bmm.k;
    case MK_RNN_ONNX: {
        const tflk_rnn *p = &k->u.rnn;
        return (uint64_t)p->steps * (uint64_t)p->dirs * (uint64_t)p->batch * (uint64_t)p->hidden *
               ((uint64_t)p->n_in + (uint64_t)p->hidden);
    }
    case MK_GRU_ONNX: {
        const tflk_gru *p = &k->u.gru;
        return (uint64_t)p->steps * (uint64_t)p->dirs * (uint64_t)p->batch * 3u * (uint64_t)p->hidden *
               ((uint64_t)p->n_in + (uint64_t)p->hidden);
    }
    case MK_CONV3D_F32:
    case MK_CONV3D_S8: {
        const tflk_conv3d *p = &k->u.c3;
        return (uint64_t)p->n * (uint64_t)p->od * (uint64_t)p->oh * (uint64_t)p->ow * (uint64_t)p->oc *
               (uint64_t)p->kd * (uint64_t)p->kh * (uint64_t)p->kw * (uint64_t)p->ic;
    }
    case MK_LSTM8: {
        const tflk_lstm8 *p = &k->u.lstm8;
        return (uint64_t)p->steps * (uint64_t)p->batch * 4u * (uint64_t)p->n_cell *
               ((uint64_t)p->n_in + (uint64_t)p->n_cell);
    }
    case MK_LSTM:
    case MK_LSTM_ONNX: {
        const tflk_lstm *p = &k->u.lstm;
        uint64_t per = (uint64_t)(p->cifg ? 3 : 4) * (uint64_t)p->n_cell * ((uint64_t)p->n_in + (uint64_t)p->n_out);
        if (p->proj)
            per += (uint64_t)p->n_out * (uint64_t)p->n_cell;
        return (uint64_t)p->steps * (uint64_t)p->batch * per;
    }
    default:
        return 0;
    }
}


static sy_status *write_build(const char *dir, const mcu_chip *chip, const sy_mcu_codegen_request *req,
                              const layout *L, uint64_t stack, const char *pf)
{
    char up[MCU_API_PREFIX_MAX + 1];
    size_t n = 0;
    for (; pf[n] && n < MCU_API_PREFIX_MAX; n++)
        up[n] = (char)(pf[n] >= 'a' && pf[n] <= 'z' ? pf[n] - 'a' + 'A' : pf[n]);
    up[n] = '\0';
    out o;
    SY_TRY(mcu_open_out(dir, "CMakeLists.txt", &o));
    P(&o, "# Generated by switchyard codegen from %s for %s.\n"
          "# RISC-V: cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=toolchain-riscv32.cmake && cmake --build build\n"
          "# host:   cmake -S . -B build-host && cmake --build build-host\n"
          "cmake_minimum_required(VERSION 3.13)\nproject(sy_model C)\n"
          "set(CMAKE_C_STANDARD 99)\nset(CMAKE_C_STANDARD_REQUIRED ON)\nset(CMAKE_C_EXTENSIONS OFF)\n\n"
          "# the model: no malloc, no OS (include/*_model.h)\nadd_library(sy_model STATIC src/model.c kernels/tflk_math.c kernels/tflk_fixed.c",
      req->model_name, chip->name);
    bool seen[MK__COUNT] = {false};
    const char *files[MK__COUNT];
    unsigned nf = 0;
    for (int k = 0; k < MK__COUNT; k++) {
        const char *f = L->used[k] ? kernel_file((mcu_kind)k) : NULL;
        if (!f)
            continue;
        bool dup = false;
        for (unsigned j = 0; j < nf; j++)
            dup |= !strcmp(files[j], f);
        if (!dup) {
            files[nf] = f;
            seen[nf] = true;
            nf++;
            P(&o, " kernels/%s", f);
        }
    }
    (void)seen;
    P(&o, ")\ntarget_include_directories(sy_model PUBLIC include kernels)\n"
          "# -ffp-contract=off: no fused multiply-add, so the MCU computes the bits the host computed\n"
          "target_compile_options(sy_model PRIVATE -O2 -ffp-contract=off -ffunction-sections -fdata-sections -Wall -Wextra)\n\n"
          "# the test program (semihosting I/O under QEMU)\n"
          "add_executable(sy_model_main src/main.c src/test_input.c)\n"
          "target_link_libraries(sy_model_main PRIVATE sy_model)\n"
          "target_compile_options(sy_model_main PRIVATE -O2 -Wall -Wextra)\n"
          "if(CMAKE_SYSTEM_NAME STREQUAL \"Generic\")\n"
          "  # --gc-sections drops what the model does not call; the map attributes each linked byte to its object\n"
          "  target_link_options(sy_model_main PRIVATE -Wl,--gc-sections -Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/sy_model_main.map)\n"
          "  set_target_properties(sy_model_main PROPERTIES SUFFIX \".elf\")\nendif()\n");
    SY_TRY(mcu_close_out(dir, "CMakeLists.txt", &o));

    SY_TRY(mcu_open_out(dir, "toolchain-riscv32.cmake", &o));
    P(&o, "# %s: %s, %llu bytes SRAM, %llu bytes flash. Debian: gcc-riscv64-unknown-elf,\n"
          "# picolibc-riscv64-unknown-elf. The image links at QEMU virt's RAM (0x80000000):\n"
          "# 'flash' (text, rodata) first, then 'ram' (data, bss, stack), each the chip's size,\n"
          "# so an image that would not fit the chip does not link. The stack is %llu bytes\n"
          "# (*_MODEL_STACK_BYTES; the test main paints it and prints what the model used).\n",
      chip->name, chip->isa, (unsigned long long)chip->sram, (unsigned long long)chip->flash,
      (unsigned long long)stack);
    P(&o, "set(CMAKE_SYSTEM_NAME Generic)\nset(CMAKE_SYSTEM_PROCESSOR riscv32)\n"
          "set(SY_RISCV_PREFIX \"riscv64-unknown-elf-\" CACHE STRING \"cross toolchain prefix\")\n"
          "set(CMAKE_C_COMPILER ${SY_RISCV_PREFIX}gcc)\nset(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)\n"
          "set(SY_ARCH \"-march=rv32imfc -mabi=ilp32f\")\n"
          "set(CMAKE_C_FLAGS_INIT \"${SY_ARCH} --specs=picolibc.specs\")\n"
          "set(CMAKE_EXE_LINKER_FLAGS_INIT \"--oslib=semihost --crt0=semihost "
          "-Wl,--defsym=__flash=0x80000000 -Wl,--defsym=__flash_size=%llu "
          "-Wl,--defsym=__ram=0x%llx -Wl,--defsym=__ram_size=%llu -Wl,--defsym=__stack_size=%llu\")\n",
      (unsigned long long)chip->flash, 0x80000000ull + chip->flash, (unsigned long long)chip->sram,
      (unsigned long long)stack);
    SY_TRY(mcu_close_out(dir, "toolchain-riscv32.cmake", &o));

    SY_TRY(mcu_open_out(dir, "README.md", &o));
    P(&o, "# %s for %s (generated by `switchyard codegen`)\n\n"
          "A standalone C99 package: `include/%s_model.h` is the API (a `%s_model` handle created on a workspace\n"
          "of `%s_MODEL_WORKSPACE_BYTES` = %zu bytes, inputs and outputs by index or name with dtype, shape and\n"
          "quantization, predict; docs/mcu.md in the Switchyard tree); `src/model.c` holds the\n"
          "weights as `const` arrays and calls the kernels in `kernels/` (the same files the Switchyard host\n"
          "plugins run). No malloc, no OS.\n\n"
          "```sh\ncmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=toolchain-riscv32.cmake && cmake --build build\n"
          "qemu-system-riscv32 -machine virt -bios none -nographic -semihosting-config enable=on,target=native \\\n"
          "    -icount shift=0 -kernel build/sy_model_main.elf\n```\n\n"
          "`main` reads `input0.bin` from the current folder when present (else the built-in input of the host run),\n"
          "prints each output in hex, then the instructions and cycles of one `%s_model_predict`.\n"
          "`expected_output.txt` is what the host run of the riscv_mcu provider produced for the built-in input.\n",
      req->model_name, chip->name, pf, pf, up, req->workspace_bytes, pf);
    SY_TRY(mcu_close_out(dir, "README.md", &o));

    SY_TRY(mcu_open_out(dir, "expected_output.txt", &o));
    for (uint32_t i = 0; i < req->n_outputs; i++)
        hex_line(&o, "out", i, req->outputs[i]);
    return mcu_close_out(dir, "expected_output.txt", &o);
}

/* A graph output written by a Unique node at its bound (Y, indices or
 * counts; not inverse_indices or TFLite's idx, one per item): the record's
 * index and the bytes per unique item, else false */
static bool bounded_source(const mcu_capture *cap, uint32_t n_recs, const mcu_buf *b, uint32_t *rec, size_t *per,
                           int32_t *axis)
{
    for (uint32_t r = 0; r < n_recs; r++) {
        const mcu_rec *rc = &cap->recs[r];
        if (rc->k->kind != MK_UNIQUE || !rc->k->u.uq.bounded)
            continue;
        bool tfl = !strcmp(rc->k->op, "UNIQUE");
        for (uint32_t i = 0; i < rc->n_out; i++)
            if (rc->out[i].data == b->data && (tfl ? i == 0 : i != 2)) {
                int32_t n = rc->k->u.uq.p.n_items;
                *rec = r;
                *per = n > 0 ? rc->out[i].nbytes / (size_t)n : 0;
                *axis = i == 0 ? rc->k->u.uq.axis : 0; /* Y along ONNX's axis (0: the flattened input) */
                return true;
            }
    }
    return false;
}

static const mcu_buf *find_named(const mcu_capture *cap, const char *name, bool output)
{
    for (uint32_t r = 0; r < cap->n; r++) {
        const mcu_rec *rc = &cap->recs[r];
        uint32_t n = output ? rc->n_out : rc->n_in;
        for (uint32_t i = 0; i < n; i++) {
            const mcu_buf *b = output ? &rc->out[i] : &rc->in[i];
            if (!b->is_const && b->data && b->name && name && !strcmp(b->name, name))
                return b;
        }
    }
    return NULL;
}

sy_status *mcu_emit(const mcu_cfg *cfg, const mcu_capture *cap, const sy_mcu_codegen_request *req, char *summary,
                    size_t summary_len)
{
    if (!req || req->struct_size < sizeof *req || !req->dir)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "codegen: a request with a folder is required");
    if (!cfg->chip)
        return H->status_new(SY_ERR_INVALID_CONFIG, "codegen: [provider.riscv_mcu] target is not set");
    if (cap->overflow)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "codegen: the record of the run is incomplete (out of memory)");
    if (!cap->n)
        return H->status_new(SY_ERR_INVALID_ARGUMENT,
                             "codegen: no riscv_mcu kernel ran in the captured session (are its nodes placed on riscv_mcu?)");
    /* a node recorded twice means more than one run was captured: keep the first run */
    uint32_t n_recs = cap->n;
    for (uint32_t r = 1; r < cap->n; r++)
        if (cap->recs[r].k == cap->recs[0].k) {
            n_recs = r;
            break;
        }
    layout L;
    memset(&L, 0, sizeof L);
    L.ws_bytes = req->workspace_bytes;
    for (uint32_t r = 0; r < n_recs; r++) {
        const mcu_rec *rc = &cap->recs[r];
        for (uint32_t i = 0; i < rc->n_in; i++)
            if (!rc->in[i].is_const)
                consider(&L, rc->in[i].data, rc->in[i].nbytes);
        for (uint32_t i = 0; i < rc->n_out; i++)
            consider(&L, rc->out[i].data, rc->out[i].nbytes);
        consider(&L, rc->scratch, rc->scratch_bytes);
    }
    if (req->n_inputs > 16 || req->n_outputs > 16)
        return H->status_new(SY_ERR_UNSUPPORTED, "codegen: at most 16 inputs and 16 outputs");
    mcu_api api;
    memset(&api, 0, sizeof api);
    api.req = req;
    api.chip = cfg->chip;
    api.stack = cfg->stack_bytes;
    api.pf = req->struct_size >= offsetof(sy_mcu_codegen_request, prefix) + sizeof req->prefix && req->prefix
                 ? req->prefix
                 : "sy";
    sy_status *st = mcu_api_check_prefix(api.pf);
    for (uint32_t i = 0; i < req->n_inputs && !st; i++) {
        const mcu_buf *b = find_named(cap, req->inputs[i]->name, false);
        if (!b)
            st = H->status_new(SY_ERR_UNSUPPORTED, "codegen: input '%s' is not read by an MCU kernel",
                               req->inputs[i]->name ? req->inputs[i]->name : "");
        else if (b->nbytes != req->inputs[i]->nbytes)
            st = H->status_new(SY_ERR_INTERNAL, "codegen: input '%s' has %zu bytes in the workspace, %zu given",
                               b->name, b->nbytes, req->inputs[i]->nbytes);
        else
            st = offset_of(&L, b->data, b->nbytes, req->workspace_bytes, b->name, &api.in[i].off);
        api.in[i].bytes = req->inputs[i]->nbytes;
        api.in[i].slot = -1;
    }
    /* an output at its bound (Unique's): its buffer's bytes, the Unique's record (its slot once emitted) */
    uint32_t out_rec[16] = {0};
    for (uint32_t i = 0; i < req->n_outputs && !st; i++) {
        const mcu_buf *b = find_named(cap, req->outputs[i]->name, true);
        api.out[i].slot = -1;
        if (!b) {
            st = H->status_new(SY_ERR_UNSUPPORTED, "codegen: output '%s' is not written by an MCU kernel",
                               req->outputs[i]->name ? req->outputs[i]->name : "");
        } else {
            st = offset_of(&L, b->data, b->nbytes, req->workspace_bytes, b->name, &api.out[i].off);
            api.out[i].bytes = req->outputs[i]->nbytes;
            if (bounded_source(cap, n_recs, b, &out_rec[i], &api.out[i].per, &api.out[i].axis)) {
                api.out[i].bytes = b->nbytes;
                api.out[i].slot = 0; /* found; the slot below */
            }
        }
    }
    if (st)
        return st;
    char dir_inc[4200], dir_src[4200], dir_k[4200];
    snprintf(dir_inc, sizeof dir_inc, "%s/include", req->dir);
    snprintf(dir_src, sizeof dir_src, "%s/src", req->dir);
    snprintf(dir_k, sizeof dir_k, "%s/kernels", req->dir);
    SY_TRY(mkdir_p(dir_inc));
    SY_TRY(mkdir_p(dir_src));
    SY_TRY(mkdir_p(dir_k));

    /* model.c: parameters go to one stream, calls to another, weights last */
    out params = {tmpfile(), false}, calls = {tmpfile(), false}, model;
    if (!params.f || !calls.f) {
        if (params.f)
            fclose(params.f);
        if (calls.f)
            fclose(calls.f);
        return H->status_new(SY_ERR_IO, "codegen: no temporary file: %s", strerror(errno));
    }
    for (uint32_t r = 0; r < n_recs && !st; r++)
        st = emit_node(&params, &calls, &L, &cap->recs[r], r, req->workspace_bytes);
    for (uint32_t b = 0; b < L.n_blobs; b++)
        L.flash_weights += L.blobs[b].nbytes;
    api.n_counts = L.n_uq;
    for (uint32_t k = 0; k < L.n_uq; k++)
        api.count_bound[k] = L.uq_bound[k];
    for (uint32_t i = 0; i < req->n_outputs; i++)
        for (uint32_t k = 0; api.out[i].slot >= 0 && k < L.n_uq; k++)
            if (L.uq_rec[k] == out_rec[i])
                api.out[i].slot = (int32_t)k;
    if (!st && L.flash_weights > cfg->flash_budget)
        st = H->status_new(SY_ERR_BUDGET, "codegen: the weights need %zu bytes of flash, the flash budget is %llu (%s)",
                           L.flash_weights, (unsigned long long)cfg->flash_budget, cfg->chip->name);
    if (!st && req->workspace_bytes > cfg->sram_budget)
        st = H->status_new(SY_ERR_BUDGET, "codegen: the workspace needs %zu bytes, the SRAM budget is %llu (%s)",
                           req->workspace_bytes, (unsigned long long)cfg->sram_budget, cfg->chip->name);
    if (!st)
        st = mcu_open_out(req->dir, "src/model.c", &model);
    if (st) {
        fclose(params.f);
        fclose(calls.f);
        free(L.blobs);
        return st;
    }
    P(&model, "/* Generated by switchyard codegen from %s for %s (%s): do not edit.\n"
              " * %u nodes; weights %zu bytes (const, flash); workspace %zu bytes (SRAM). */\n",
      req->model_name, cfg->chip->name, cfg->chip->isa, n_recs, L.flash_weights, req->workspace_bytes);
    bool uses_qk = false;
    for (int k = MK_QCONV; k <= MK_QCONCAT; k++)
        uses_qk |= L.used[k];
    P(&model, "#include \"%s_model.h\"\n#include \"tflk.h\"\n%s\n#include <math.h> /* INFINITY, NAN: no libm call */\n"
              "#include <stdint.h>\n\n/* ---- weights ---- */\n", api.pf,
      uses_qk ? (L.used[MK_QRNN] ? "#include \"qk.h\"\n#include \"qk_rnn.h\"\n" : "#include \"qk.h\"\n") : "");
    for (uint32_t b = 0; b < L.n_blobs; b++)
        emit_blob(&model, &L.blobs[b]);
    P(&model, "\n/* ---- parameters ---- */");
    rewind(params.f);
    char buf[8192];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, params.f)) > 0)
        if (fwrite(buf, 1, got, model.f) != got)
            model.failed = true;
    fclose(params.f);
    mcu_api_model_c(&model, &api);
    /* the kernels' calls address the workspace as `ws` */
    P(&model, "int %s_model_predict(%s_model *m)\n{\n    if (!m || !m->ws)\n        return -1;\n"
              "    unsigned char *ws = m->ws;\n", api.pf, api.pf);
    rewind(calls.f);
    while ((got = fread(buf, 1, sizeof buf, calls.f)) > 0)
        if (fwrite(buf, 1, got, model.f) != got)
            model.failed = true;
    fclose(calls.f);
    P(&model, "    (void)ws;\n    return 0;\n}\n");
    mcu_api_model_c_tail(&model, &api);
    st = mcu_close_out(req->dir, "src/model.c", &model);
    for (uint32_t r = 0; r < n_recs; r++)
        api.macs += node_macs(cap->recs[r].k);
    if (!st)
        st = mcu_api_write_header(req->dir, &api);
    if (!st)
        st = mcu_api_write_main(req->dir, &api);
    if (!st)
        st = write_build(req->dir, cfg->chip, req, &L, cfg->stack_bytes, api.pf);
    if (!st)
        st = write_source(req->dir, "tflk.h");
    if (!st) /* the SDK's fixed-point primitives, which tflk.h and qk.c include */
        st = write_source(req->dir, "sy_fixedpoint.h");
    if (!st)
        st = write_source(req->dir, "tflk_math.c");
    if (!st) /* the fixed-point functions: gc-sections drops what the model does not call */
        st = write_source(req->dir, "tflk_fixed.c");
    if (!st && uses_qk)
        st = write_source(req->dir, "qk.h");
    if (!st && L.used[MK_QRNN])
        st = write_source(req->dir, "qk_rnn.h");
    const char *written[MK__COUNT];
    unsigned nw = 0;
    for (int k = 0; k < MK__COUNT && !st; k++) {
        const char *f = L.used[k] ? kernel_file((mcu_kind)k) : NULL;
        bool dup = false;
        for (unsigned j = 0; f && j < nw; j++)
            dup |= !strcmp(written[j], f);
        if (f && !dup) {
            written[nw++] = f;
            st = write_source(req->dir, f);
        }
    }
    if (!st && summary && summary_len)
        snprintf(summary, summary_len,
                 "target %s (%s): %u nodes, workspace %zu bytes of the %llu-byte SRAM budget, weights %zu bytes + "
                 "parameters %zu bytes of the %llu-byte flash budget, %u kernel files",
                 cfg->chip->name, cfg->chip->isa, n_recs, req->workspace_bytes,
                 (unsigned long long)cfg->sram_budget, L.flash_weights, L.flash_params,
                 (unsigned long long)cfg->flash_budget, nw + 2);
    free(L.blobs);
    return st;
}
