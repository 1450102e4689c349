/*
 * ops_math / einsum.c: Einsum (12) for every numeric dtype.
 *
 * The equation is parsed once into labels: letters a-z/A-Z, and the dims an
 * ellipsis stands for as extra labels (right-aligned and broadcast across
 * inputs as numpy does). Repeated labels in one term take a diagonal; labels
 * missing from the output are summed. Implicit mode (no "->") outputs the
 * ellipsis dims, then the labels that occur once, in character order.
 *
 * The kernel is one generic loop: the output labels form the outer index,
 * the summed labels the inner one; each input advances by the sum of its
 * strides over the positions carrying a label (so a diagonal is one stride).
 * Floats accumulate in double, integers in int64 (wrapping).
 */
#include "math_internal.h"

#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */

#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

#define EIN_MAX_IN 8
#define EIN_LETTERS 52
#define EIN_MAX_LABELS (EIN_LETTERS + SY_MAX_RANK)
#define EIN_MAX_TERM (2 * SY_MAX_RANK)

typedef struct ein_plan {
    int32_t n_in;
    int32_t term_len[EIN_MAX_IN];
    int32_t term[EIN_MAX_IN][EIN_MAX_TERM]; /* label per input dim */
    int32_t out_len;
    int32_t out[EIN_MAX_TERM];              /* label per output dim */
    int32_t n_sum;
    int32_t sum[EIN_MAX_LABELS];            /* summed labels */
    int64_t size[EIN_MAX_LABELS];           /* size per label (-1: unused) */
    /* element strides per input for output dims and summed labels */
    int64_t out_stride[EIN_MAX_IN][EIN_MAX_TERM];
    int64_t sum_stride[EIN_MAX_IN][EIN_MAX_LABELS];
} ein_plan;

static int label_of(char c)
{
    if (c >= 'a' && c <= 'z')
        return c - 'a';
    if (c >= 'A' && c <= 'Z')
        return 26 + (c - 'A');
    return -1;
}

/* Parse one term (letters and at most one "...") into labels; the ellipsis
 * becomes the marker -2. */
static sy_status *parse_term(const char *s, size_t len, int32_t *labels, int32_t *n, bool *has_ell)
{
    *n = 0;
    *has_ell = false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == ' ')
            continue;
        if (c == '.') {
            if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
                return ERR(SY_ERR_INVALID_ARGUMENT, "equation: '.' must be part of \"...\"");
            if (*has_ell)
                return ERR(SY_ERR_INVALID_ARGUMENT, "equation: a term may hold at most one \"...\"");
            *has_ell = true;
            if (*n >= EIN_MAX_TERM)
                return ERR(SY_ERR_UNSUPPORTED, "equation: term too long");
            labels[(*n)++] = -2;
            i += 2;
            continue;
        }
        int l = label_of(c);
        if (l < 0)
            return ERR(SY_ERR_INVALID_ARGUMENT, "equation: '%c' is not a letter, '.', ',' or \"->\"", c);
        if (*n >= EIN_MAX_TERM)
            return ERR(SY_ERR_UNSUPPORTED, "equation: term too long");
        labels[(*n)++] = l;
    }
    return NULL;
}

/* Expand a parsed term against a rank: the ellipsis marker becomes ell
 * labels right-aligned to `n_ell_total`. */
static sy_status *expand_term(const int32_t *raw, int32_t n_raw, bool has_ell, int32_t rank, int32_t n_ell_total,
                              int32_t *out, int32_t *n_out, int input)
{
    int32_t letters = n_raw - (has_ell ? 1 : 0);
    int32_t ell = has_ell ? rank - letters : 0;
    if (ell < 0 || (!has_ell && letters != rank)) {
        if (input >= 0)
            return ERR(SY_ERR_SHAPE, "equation term %d has %d labels but input %d has rank %d", input, (int)letters,
                       input, (int)rank);
        return ERR(SY_ERR_SHAPE, "equation output term is inconsistent");
    }
    if (letters + ell > EIN_MAX_TERM || ell > n_ell_total)
        return ERR(SY_ERR_UNSUPPORTED, "equation: too many dims");
    int32_t k = 0;
    for (int32_t i = 0; i < n_raw; i++) {
        if (raw[i] == -2) {
            for (int32_t e = 0; e < ell; e++)
                out[k++] = EIN_LETTERS + (n_ell_total - ell) + e;
        } else {
            out[k++] = raw[i];
        }
    }
    *n_out = k;
    return NULL;
}

/* Build the plan from the equation and the input shapes. */
static sy_status *ein_build(const sy_node *n, const sy_tensor *const *ins, int32_t n_in, ein_plan *p)
{
    const char *eq;
    size_t eqlen;
    if (!H->attr_string(n, "equation", &eq, &eqlen))
        return ERR(SY_ERR_INVALID_ARGUMENT, "attribute 'equation' is required");
    if (n_in > EIN_MAX_IN)
        return ERR(SY_ERR_UNSUPPORTED, "Einsum with more than %d inputs is not supported", EIN_MAX_IN);
    memset(p, 0, sizeof *p);
    p->n_in = n_in;
    const char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : eqlen;
    int32_t raw[EIN_MAX_IN][EIN_MAX_TERM], raw_n[EIN_MAX_IN];
    bool ell[EIN_MAX_IN];
    int32_t t = 0;
    size_t start = 0;
    for (size_t i = 0; i <= lhs_len; i++) {
        if (i == lhs_len || eq[i] == ',') {
            if (t >= n_in)
                return ERR(SY_ERR_SHAPE, "equation has more terms than the %d inputs", (int)n_in);
            SY_TRY(parse_term(eq + start, i - start, raw[t], &raw_n[t], &ell[t]));
            t++;
            start = i + 1;
        }
    }
    if (t != n_in)
        return ERR(SY_ERR_SHAPE, "equation has %d terms but the node has %d inputs", (int)t, (int)n_in);
    int32_t n_ell = 0;
    for (int32_t k = 0; k < n_in; k++) {
        int32_t letters = raw_n[k] - (ell[k] ? 1 : 0);
        if (ell[k] && ins[k]->rank - letters > n_ell)
            n_ell = ins[k]->rank - letters;
    }
    for (int32_t l = 0; l < EIN_MAX_LABELS; l++)
        p->size[l] = -1;
    int count[EIN_MAX_LABELS] = {0};
    for (int32_t k = 0; k < n_in; k++) {
        SY_TRY(expand_term(raw[k], raw_n[k], ell[k], ins[k]->rank, n_ell, p->term[k], &p->term_len[k], k));
        for (int32_t d = 0; d < p->term_len[k]; d++) {
            int32_t l = p->term[k][d];
            int64_t dim = ins[k]->dims[d];
            count[l]++;
            bool ell_label = l >= EIN_LETTERS; /* ellipsis dims broadcast */
            if (p->size[l] < 0 || (ell_label && p->size[l] == 1))
                p->size[l] = dim;
            else if (dim != p->size[l] && !(ell_label && dim == 1))
                return ERR(SY_ERR_SHAPE, "label '%c' has size %lld in one input and %lld in input %d",
                           l < 26 ? 'a' + l : (l < EIN_LETTERS ? 'A' + l - 26 : '.'), (long long)p->size[l],
                           (long long)dim, (int)k);
        }
    }
    /* output labels */
    bool in_out[EIN_MAX_LABELS] = {false};
    if (arrow) {
        int32_t oraw[EIN_MAX_TERM], on;
        bool oell;
        SY_TRY(parse_term(arrow + 2, eqlen - lhs_len - 2, oraw, &on, &oell));
        p->out_len = 0;
        for (int32_t i = 0; i < on; i++) {
            if (oraw[i] == -2) {
                for (int32_t e = 0; e < n_ell; e++)
                    p->out[p->out_len++] = EIN_LETTERS + e;
                continue;
            }
            int32_t l = oraw[i];
            if (!count[l])
                return ERR(SY_ERR_SHAPE, "output label '%c' does not occur in any input",
                           l < 26 ? 'a' + l : 'A' + l - 26);
            if (in_out[l])
                return ERR(SY_ERR_SHAPE, "output label '%c' is repeated", l < 26 ? 'a' + l : 'A' + l - 26);
            p->out[p->out_len++] = l;
        }
        for (int32_t i = 0; i < p->out_len; i++)
            in_out[p->out[i]] = true;
    } else {
        for (int32_t e = 0; e < n_ell; e++)
            p->out[p->out_len++] = EIN_LETTERS + e;
        for (int r = 0; r < EIN_LETTERS; r++) {
            int32_t l = r < 26 ? 26 + r : r - 26; /* character order: A..Z then a..z */
            if (count[l] == 1)
                p->out[p->out_len++] = l;
        }
        for (int32_t i = 0; i < p->out_len; i++)
            in_out[p->out[i]] = true;
    }
    if (p->out_len > SY_MAX_RANK)
        return ERR(SY_ERR_UNSUPPORTED, "output rank %d exceeds %d", (int)p->out_len, SY_MAX_RANK);
    p->n_sum = 0;
    for (int32_t l = 0; l < EIN_MAX_LABELS; l++)
        if (count[l] && !in_out[l])
            p->sum[p->n_sum++] = l;
    /* strides */
    for (int32_t k = 0; k < n_in; k++) {
        int64_t st[SY_MAX_RANK];
        sy_strides(ins[k]->rank, ins[k]->dims, st);
        int64_t lab_stride[EIN_MAX_LABELS] = {0};
        for (int32_t d = 0; d < p->term_len[k]; d++)
            if (ins[k]->dims[d] != 1 || p->size[p->term[k][d]] == 1)
                lab_stride[p->term[k][d]] += st[d];
        for (int32_t i = 0; i < p->out_len; i++)
            p->out_stride[k][i] = lab_stride[p->out[i]];
        for (int32_t i = 0; i < p->n_sum; i++)
            p->sum_stride[k][i] = lab_stride[p->sum[i]];
    }
    return NULL;
}

static sy_status *infer_einsum(sy_node *n)
{
    uint32_t ni = H->node_num_inputs(n);
    if (ni < 1)
        return ERR(SY_ERR_INVALID_ARGUMENT, "Einsum needs at least one input");
    const sy_tensor *ins[EIN_MAX_IN];
    if (ni > EIN_MAX_IN)
        return ERR(SY_ERR_UNSUPPORTED, "Einsum with more than %d inputs is not supported", EIN_MAX_IN);
    for (uint32_t i = 0; i < ni; i++)
        SY_TRY(sy_need_input(H, n, i, &ins[i]));
    SY_TRY(sy_check_same_dtype(H, n, -1));
    ein_plan *p = malloc(sizeof *p);
    if (!p)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = ein_build(n, ins, (int32_t)ni, p);
    int64_t dims[SY_MAX_RANK];
    int32_t r = p->out_len;
    for (int32_t i = 0; !st && i < r; i++)
        dims[i] = p->size[p->out[i]] < 0 ? 1 : p->size[p->out[i]];
    free(p);
    if (st)
        return st;
    return H->node_set_output(n, 0, ins[0]->dtype, r, dims);
}

static sy_status *prepare_einsum(sy_node *n, void **state)
{
    uint32_t ni = H->node_num_inputs(n);
    const sy_tensor *ins[EIN_MAX_IN];
    for (uint32_t i = 0; i < ni && i < EIN_MAX_IN; i++)
        ins[i] = H->node_input(n, i);
    ein_plan *p = malloc(sizeof *p);
    if (!p)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = ein_build(n, ins, (int32_t)ni, p);
    if (st) {
        free(p);
        return st;
    }
    *state = p;
    return NULL;
}

static sy_status *run_einsum(void *state, const sy_kernel_io *io)
{
    const ein_plan *p = state;
    sy_tensor *y = io->outputs[0];
    sy_dtype dt = y->dtype;
    bool fl = sy_dt_is_float(dt);
    int64_t total = sy_tensor_numel(y);
    int64_t sum_total = 1;
    int64_t sum_dims[EIN_MAX_LABELS];
    for (int32_t i = 0; i < p->n_sum; i++) {
        sum_dims[i] = p->size[p->sum[i]];
        sum_total *= sum_dims[i];
    }
    int64_t oidx[SY_MAX_RANK] = {0};
    for (int64_t o = 0; o < total; o++) {
        int64_t base[EIN_MAX_IN];
        for (int32_t k = 0; k < p->n_in; k++) {
            base[k] = 0;
            for (int32_t i = 0; i < p->out_len; i++)
                base[k] += oidx[i] * p->out_stride[k][i];
        }
        double accf = 0;
        int64_t acci = 0;
        int64_t sidx[EIN_MAX_LABELS] = {0};
        for (int64_t s = 0; s < sum_total; s++) {
            double pf = 1;
            uint64_t pi = 1;
            for (int32_t k = 0; k < p->n_in; k++) {
                int64_t off = base[k];
                for (int32_t i = 0; i < p->n_sum; i++)
                    off += sidx[i] * p->sum_stride[k][i];
                if (fl)
                    pf *= sy_load_f64(io->inputs[k]->data, dt, (size_t)off);
                else
                    pi *= (uint64_t)sy_load_i64(io->inputs[k]->data, dt, (size_t)off);
            }
            if (fl)
                accf += pf;
            else
                acci = (int64_t)((uint64_t)acci + pi);
            for (int32_t i = p->n_sum - 1; i >= 0; i--) {
                if (++sidx[i] < sum_dims[i])
                    break;
                sidx[i] = 0;
            }
        }
        if (fl)
            sy_store_f64(y->data, dt, (size_t)o, accf);
        else
            sy_store_i64(y->data, dt, (size_t)o, acci);
        for (int32_t i = p->out_len - 1; i >= 0; i--) {
            if (++oidx[i] < y->dims[i])
                break;
            oidx[i] = 0;
        }
    }
    return NULL;
}

static const sy_attr_def a_einsum[] = {{"equation", SY_ATTR_STRING, true}};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("Einsum", 12, 1, -1, 1, 1, SY_ATTRS(a_einsum), infer_einsum, SY_NO_INPLACE, 0),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("Einsum", 1, 0, SY_DT_MASK_NUMERIC, 0, prepare_einsum, run_einsum, sy_release_free),
};

sy_status *math_einsum_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
