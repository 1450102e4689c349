/*
 * tflk_einsum: ONNX Einsum, shared by cpu_ref (plugins/ops_math/einsum.c)
 * and riscv_mcu (host run and packages, ops-mcu.md Table B #60).
 *
 * tflk_einsum_plan parses the equation against the input shapes into a
 * plan of plain strides: letters a-z/A-Z are labels, "..." stands for extra
 * labels (right-aligned and broadcast across inputs as numpy does); a label
 * repeated in one term takes a diagonal (its strides add up); labels
 * missing from the output are summed; implicit mode (no "->") outputs the
 * ellipsis dims, then the labels occurring once, in character order. The
 * host calls it (the package ships the finished plan as a constant).
 *
 * tflk_einsum_run is one generic loop: the output labels form the outer
 * index, the summed labels the inner one; each input advances by its stride
 * per label. Floats multiply and accumulate in double (rounded once to the
 * output type, as cpu_ref always did), integers in 64 bits wrapping, then
 * truncated to the output's width (int8/int32 wrap as ONNX's integer math).
 */
#include "tflk.h"

/* ---- the plan ------------------------------------------------------------- */

#define LETTERS 52
#define MAX_LABELS (LETTERS + TFLK_EIN_RANK)
#define MAX_TERM (2 * TFLK_EIN_RANK)

/* a message into msg without stdio: strings, integers and one character */
typedef struct msgbuf {
    char *s;
    int32_t at, len;
} msgbuf;

static void put_c(msgbuf *m, char c)
{
    if (m->s && m->at + 1 < m->len) {
        m->s[m->at++] = c;
        m->s[m->at] = 0;
    }
}

static void put_s(msgbuf *m, const char *s)
{
    while (*s)
        put_c(m, *s++);
}

static void put_i(msgbuf *m, int64_t v)
{
    char d[24];
    int32_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    if (v < 0)
        put_c(m, '-');
    do {
        d[n++] = (char)('0' + (int)(u % 10u));
        u /= 10u;
    } while (u && n < 24);
    while (n)
        put_c(m, d[--n]);
}

static char label_char(int32_t l) { return l < 26 ? (char)('a' + l) : (l < LETTERS ? (char)('A' + l - 26) : '.'); }

static int32_t label_of(char c)
{
    if (c >= 'a' && c <= 'z')
        return c - 'a';
    if (c >= 'A' && c <= 'Z')
        return 26 + (c - 'A');
    return -1;
}

/* one term (letters and at most one "...", the marker -2) */
static int32_t parse_term(const char *s, int32_t len, int32_t *labels, int32_t *n, int32_t *has_ell, msgbuf *m)
{
    *n = 0;
    *has_ell = 0;
    for (int32_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == ' ')
            continue;
        if (c == '.') {
            if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
                return put_s(m, "equation: '.' must be part of \"...\""), TFLK_EIN_EINVAL;
            if (*has_ell)
                return put_s(m, "equation: a term may hold at most one \"...\""), TFLK_EIN_EINVAL;
            if (*n >= MAX_TERM)
                return put_s(m, "equation: term too long"), TFLK_EIN_EUNSUPPORTED;
            *has_ell = 1;
            labels[(*n)++] = -2;
            i += 2;
            continue;
        }
        int32_t l = label_of(c);
        if (l < 0) {
            put_s(m, "equation: '");
            put_c(m, c);
            put_s(m, "' is not a letter, '.', ',' or \"->\"");
            return TFLK_EIN_EINVAL;
        }
        if (*n >= MAX_TERM)
            return put_s(m, "equation: term too long"), TFLK_EIN_EUNSUPPORTED;
        labels[(*n)++] = l;
    }
    return 0;
}

int32_t tflk_einsum_plan(tflk_einsum *p, const char *eq, int32_t n_in, const int32_t *rank,
                         const int64_t *const *dims, char *msg, int32_t msg_len)
{
    msgbuf m = {msg, 0, msg_len};
    if (msg && msg_len > 0)
        msg[0] = 0;
    if (n_in < 1 || n_in > TFLK_EIN_IN) {
        put_s(&m, "Einsum takes 1 to ");
        put_i(&m, TFLK_EIN_IN);
        put_s(&m, " inputs");
        return TFLK_EIN_EUNSUPPORTED;
    }
    for (int32_t k = 0; k < n_in; k++)
        if (rank[k] < 0 || rank[k] > TFLK_EIN_RANK)
            return put_s(&m, "an input's rank exceeds 8"), TFLK_EIN_EUNSUPPORTED;
    int32_t eqlen = 0, arrow = -1;
    while (eq[eqlen]) {
        if (arrow < 0 && eq[eqlen] == '-' && eq[eqlen + 1] == '>')
            arrow = eqlen;
        eqlen++;
    }
    int32_t lhs_len = arrow >= 0 ? arrow : eqlen;
    int32_t raw[TFLK_EIN_IN][MAX_TERM], raw_n[TFLK_EIN_IN], ell[TFLK_EIN_IN];
    int32_t t = 0, start = 0, rc;
    for (int32_t i = 0; i <= lhs_len; i++)
        if (i == lhs_len || eq[i] == ',') {
            if (t >= n_in) {
                put_s(&m, "equation has more terms than the ");
                put_i(&m, n_in);
                put_s(&m, " inputs");
                return TFLK_EIN_ESHAPE;
            }
            if ((rc = parse_term(eq + start, i - start, raw[t], &raw_n[t], &ell[t], &m)) != 0)
                return rc;
            t++;
            start = i + 1;
        }
    if (t != n_in) {
        put_s(&m, "equation has ");
        put_i(&m, t);
        put_s(&m, " terms but the node has ");
        put_i(&m, n_in);
        put_s(&m, " inputs");
        return TFLK_EIN_ESHAPE;
    }
    int32_t n_ell = 0;
    for (int32_t k = 0; k < n_in; k++) {
        int32_t letters = raw_n[k] - ell[k];
        if (ell[k] && rank[k] - letters > n_ell)
            n_ell = rank[k] - letters;
    }
    int64_t size[MAX_LABELS];
    int32_t count[MAX_LABELS], term[TFLK_EIN_IN][MAX_TERM], term_len[TFLK_EIN_IN];
    for (int32_t l = 0; l < MAX_LABELS; l++) {
        size[l] = -1;
        count[l] = 0;
    }
    for (int32_t k = 0; k < n_in; k++) {
        int32_t letters = raw_n[k] - ell[k], e_n = ell[k] ? rank[k] - letters : 0;
        if (e_n < 0 || (!ell[k] && letters != rank[k])) {
            put_s(&m, "equation term ");
            put_i(&m, k);
            put_s(&m, " has ");
            put_i(&m, letters);
            put_s(&m, " labels but input ");
            put_i(&m, k);
            put_s(&m, " has rank ");
            put_i(&m, rank[k]);
            return TFLK_EIN_ESHAPE;
        }
        int32_t q = 0;
        for (int32_t i = 0; i < raw_n[k]; i++)
            if (raw[k][i] == -2)
                for (int32_t e = 0; e < e_n; e++)
                    term[k][q++] = LETTERS + (n_ell - e_n) + e;
            else
                term[k][q++] = raw[k][i];
        term_len[k] = q;
        for (int32_t d = 0; d < q; d++) {
            int32_t l = term[k][d];
            int64_t dim = dims[k][d];
            int32_t ell_label = l >= LETTERS; /* ellipsis dims broadcast */
            count[l]++;
            if (size[l] < 0 || (ell_label && size[l] == 1))
                size[l] = dim;
            else if (dim != size[l] && !(ell_label && dim == 1)) {
                put_s(&m, "label '");
                put_c(&m, label_char(l));
                put_s(&m, "' has size ");
                put_i(&m, size[l]);
                put_s(&m, " in one input and ");
                put_i(&m, dim);
                put_s(&m, " in input ");
                put_i(&m, k);
                return TFLK_EIN_ESHAPE;
            }
        }
    }
    int32_t out[MAX_TERM], out_len = 0, in_out[MAX_LABELS];
    for (int32_t l = 0; l < MAX_LABELS; l++)
        in_out[l] = 0;
    if (arrow >= 0) {
        int32_t oraw[MAX_TERM], on, oell;
        if ((rc = parse_term(eq + arrow + 2, eqlen - arrow - 2, oraw, &on, &oell, &m)) != 0)
            return rc;
        for (int32_t i = 0; i < on; i++) {
            if (oraw[i] == -2) {
                for (int32_t e = 0; e < n_ell; e++)
                    out[out_len++] = LETTERS + e;
                continue;
            }
            int32_t l = oraw[i];
            if (!count[l] || in_out[l]) {
                put_s(&m, "output label '");
                put_c(&m, label_char(l));
                put_s(&m, count[l] ? "' is repeated" : "' does not occur in any input");
                return TFLK_EIN_ESHAPE;
            }
            in_out[l] = 1;
            out[out_len++] = l;
        }
    } else {
        for (int32_t e = 0; e < n_ell; e++)
            out[out_len++] = LETTERS + e;
        for (int32_t c = 0; c < LETTERS; c++) {
            int32_t l = c < 26 ? 26 + c : c - 26; /* character order: A..Z then a..z */
            if (count[l] == 1)
                out[out_len++] = l;
        }
    }
    for (int32_t i = 0; i < out_len; i++)
        in_out[out[i]] = 1;
    if (out_len > TFLK_EIN_RANK)
        return put_s(&m, "the output's rank exceeds 8"), TFLK_EIN_EUNSUPPORTED;
    int32_t sum[MAX_LABELS], n_sum = 0;
    for (int32_t l = 0; l < MAX_LABELS; l++)
        if (count[l] && !in_out[l])
            sum[n_sum++] = l;
    if (n_sum > TFLK_EIN_SUM) {
        put_s(&m, "more than ");
        put_i(&m, TFLK_EIN_SUM);
        put_s(&m, " summed labels");
        return TFLK_EIN_EUNSUPPORTED;
    }
    /* sizes and strides in int32 (the MCU's index type): every tensor below 2^31 elements */
    int64_t total = 1;
    for (int32_t i = 0; i < out_len; i++)
        total *= size[out[i]] < 0 ? 1 : size[out[i]];
    for (int32_t k = 0; k < n_in; k++) {
        int64_t e = 1;
        for (int32_t d = 0; d < rank[k]; d++)
            e *= dims[k][d];
        if (e > INT32_MAX)
            return put_s(&m, "an input has 2^31 elements or more"), TFLK_EIN_EUNSUPPORTED;
    }
    if (total > INT32_MAX)
        return put_s(&m, "the output has 2^31 elements or more"), TFLK_EIN_EUNSUPPORTED;
    int64_t sum_total = 1;
    for (int32_t i = 0; i < n_sum; i++)
        sum_total *= size[sum[i]];
    if (sum_total > INT32_MAX)
        return put_s(&m, "2^31 or more terms per output element"), TFLK_EIN_EUNSUPPORTED;
    tflk_einsum z = {0};
    *p = z;
    p->n_in = n_in;
    p->n_out = out_len;
    p->n_sum = n_sum;
    for (int32_t i = 0; i < out_len; i++)
        p->out_dims[i] = (int32_t)(size[out[i]] < 0 ? 1 : size[out[i]]);
    for (int32_t i = 0; i < n_sum; i++)
        p->sum_dims[i] = (int32_t)size[sum[i]];
    for (int32_t k = 0; k < n_in; k++) {
        int64_t st = 1, lab[MAX_LABELS];
        for (int32_t l = 0; l < MAX_LABELS; l++)
            lab[l] = 0;
        for (int32_t d = term_len[k] - 1; d >= 0; d--) {
            if (dims[k][d] != 1 || size[term[k][d]] == 1) /* a broadcast dim of 1 does not advance */
                lab[term[k][d]] += st;
            st *= dims[k][d];
        }
        for (int32_t i = 0; i < out_len; i++)
            p->out_stride[k][i] = (int32_t)lab[out[i]];
        for (int32_t i = 0; i < n_sum; i++)
            p->sum_stride[k][i] = (int32_t)lab[sum[i]];
    }
    return 0;
}

/* ---- the run ---------------------------------------------------------------- */

static double ld_f(int32_t dt, const void *x, int32_t i)
{
    return dt == TFLK_F64 ? ((const double *)x)[i] : (double)((const float *)x)[i];
}

static uint64_t ld_i(int32_t dt, const void *x, int32_t i)
{
    switch (dt) {
    case TFLK_S8: return (uint64_t)(int64_t)((const int8_t *)x)[i];
    case TFLK_U8: return ((const uint8_t *)x)[i];
    case TFLK_S16: return (uint64_t)(int64_t)((const int16_t *)x)[i];
    case TFLK_U16: return ((const uint16_t *)x)[i];
    case TFLK_S32: return (uint64_t)(int64_t)((const int32_t *)x)[i];
    case TFLK_U32: return ((const uint32_t *)x)[i];
    default: return ((const uint64_t *)x)[i]; /* TFLK_S64, TFLK_U64 */
    }
}

static void st_i(int32_t dt, void *y, int32_t i, uint64_t v)
{
    switch (dt) { /* the low bits: two's complement wrapping */
    case TFLK_S8:
    case TFLK_U8: ((uint8_t *)y)[i] = (uint8_t)v; break;
    case TFLK_S16:
    case TFLK_U16: ((uint16_t *)y)[i] = (uint16_t)v; break;
    case TFLK_S32:
    case TFLK_U32: ((uint32_t *)y)[i] = (uint32_t)v; break;
    default: ((uint64_t *)y)[i] = v;
    }
}

void tflk_einsum_run(const tflk_einsum *p, int32_t dt, const void *const *in, void *y)
{
    const int32_t fl = dt == TFLK_F32 || dt == TFLK_F64;
    int32_t total = 1, sum_total = 1;
    for (int32_t i = 0; i < p->n_out; i++)
        total *= p->out_dims[i];
    for (int32_t i = 0; i < p->n_sum; i++)
        sum_total *= p->sum_dims[i];
    int32_t oidx[TFLK_EIN_RANK] = {0};
    for (int32_t o = 0; o < total; o++) {
        int32_t base[TFLK_EIN_IN];
        for (int32_t k = 0; k < p->n_in; k++) {
            base[k] = 0;
            for (int32_t i = 0; i < p->n_out; i++)
                base[k] += oidx[i] * p->out_stride[k][i];
        }
        double accf = 0.0;
        uint64_t acci = 0u;
        int32_t sidx[TFLK_EIN_SUM] = {0};
        for (int32_t s = 0; s < sum_total; s++) {
            double pf = 1.0;
            uint64_t pi = 1u;
            for (int32_t k = 0; k < p->n_in; k++) {
                int32_t off = base[k];
                for (int32_t i = 0; i < p->n_sum; i++)
                    off += sidx[i] * p->sum_stride[k][i];
                if (fl)
                    pf *= ld_f(dt, in[k], off);
                else
                    pi *= ld_i(dt, in[k], off);
            }
            if (fl)
                accf += pf;
            else
                acci += pi;
            for (int32_t i = p->n_sum - 1; i >= 0; i--) {
                if (++sidx[i] < p->sum_dims[i])
                    break;
                sidx[i] = 0;
            }
        }
        if (dt == TFLK_F64)
            ((double *)y)[o] = accf;
        else if (dt == TFLK_F32)
            ((float *)y)[o] = (float)accf;
        else
            st_i(dt, y, o, acci);
        for (int32_t i = p->n_out - 1; i >= 0; i--) {
            if (++oidx[i] < p->out_dims[i])
                break;
            oidx[i] = 0;
        }
    }
}
