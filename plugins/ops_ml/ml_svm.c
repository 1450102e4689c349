/*
 * SVMRegressor and SVMClassifier (ai.onnx.ml 1), cpu_ref kernels. Where the
 * spec is silent (which scores Z holds, how labels are picked), ONNX
 * Runtime's behaviour is followed.
 *
 * Kernels K(x, v) with kernel_params [gamma, coef0, degree] (absent: 0):
 * LINEAR x.v, POLY (gamma x.v + coef0)^degree, RBF exp(-gamma |x - v|^2),
 * SIGMOID tanh(gamma x.v + coef0).
 *
 * SVMRegressor: with n_supports > 0, y = sum_v coefficients[v] K(x, sv_v)
 * + rho[0]; else (liblinear) y = x.coefficients + rho[0]. one_class maps y
 * to +1 / -1. post_transform is applied to y as the spec says (ONNX
 * Runtime reads it but applies none; NONE, what converters write, agrees).
 *
 * SVMClassifier, K classes (labels):
 *   - vectors_per_class given (SVC): one score per class pair (i < j),
 *     s_ij = sum over i's vectors of coefficients[j-1][v] K(x, sv_v) + sum
 *     over j's vectors of coefficients[i][v] K(x, sv_v) + rho[pair], a vote
 *     for i when s_ij > 0 else for j; the label has the most votes (the
 *     first on ties). Without prob_a/prob_b, Z holds the pair scores
 *     (K = 2: two columns, [-s, s] for NONE, else [1 - p, p] with
 *     p = logistic(s) for LOGISTIC, probit(s) for PROBIT, else s); with them,
 *     Z holds K probabilities by the pairwise coupling of Wu, Lin and Weng
 *     (libsvm's multiclass_probability) over the pair sigmoids
 *     1 / (1 + exp(s A + B)) kept within [1e-7, 1 - 1e-7].
 *   - else (liblinear): Z[k] = x.coefficients[k] + rho[0], the label of
 *     the highest score; for K = 2 ONNX Runtime's rule: label 1 when the
 *     highest score is > 0 (>= 0.5 when every coefficient is >= 0).
 *   Then post_transform on the K (or pair) scores of a row.
 */
#include "ml_internal.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H;
#define ML "ai.onnx.ml"
#define OOM() H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory")
#define NUM4 (SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_FLOAT64) | SY_DT_BIT(SY_DT_INT64) | SY_DT_BIT(SY_DT_INT32))

enum { K_LINEAR, K_POLY, K_RBF, K_SIGMOID };

typedef struct svm {
    bool classifier, svc, one_class, have_proba, all_positive;
    int kernel, post;
    double gamma, coef0, degree;
    int64_t c;          /* features */
    int64_t nv;         /* support vectors (SVC) */
    int64_t k;          /* classes (classifier) */
    int64_t npairs;     /* k (k - 1) / 2 */
    int64_t zcols;
    const float *sv, *coef, *rho, *pa, *pb;
    int64_t *start;     /* per class: its first support vector (owned) */
    const int64_t *vpc; /* vectors_per_class */
    ml_labels lab;
} svm;

static void svm_free(void *p)
{
    svm *m = p;
    if (m)
        free(m->start);
    free(m);
}

static sy_status *floats(const sy_node *n, const char *name, const float **v, int64_t *cnt)
{
    size_t k = 0;
    if (!H->attr_floats(n, name, v, &k))
        *v = NULL, k = 0;
    *cnt = (int64_t)k;
    return NULL;
}

static sy_status *svm_build(const sy_node *n, bool classifier, svm **out)
{
    const sy_tensor *x = H->node_input(n, 0);
    svm *m = calloc(1, sizeof *m);
    if (!m)
        return OOM();
    sy_status *st = NULL;
    m->classifier = classifier;
    m->c = x->rank == 2 ? x->dims[1] : x->dims[0];
    const char *ks;
    size_t kl;
    static const char *knames[] = {"LINEAR", "POLY", "RBF", "SIGMOID"};
    m->kernel = -1;
    if (!H->attr_string(n, "kernel_type", &ks, &kl))
        ks = "LINEAR", kl = 6;
    for (int i = 0; i < 4; i++)
        if (kl == strlen(knames[i]) && !memcmp(ks, knames[i], kl))
            m->kernel = i;
    int64_t ncoef, nrho, nsv, nkp, npa, npb;
    const float *kp;
    floats(n, "coefficients", &m->coef, &ncoef);
    floats(n, "rho", &m->rho, &nrho);
    floats(n, "support_vectors", &m->sv, &nsv);
    floats(n, "kernel_params", &kp, &nkp);
    floats(n, "prob_a", &m->pa, &npa);
    floats(n, "prob_b", &m->pb, &npb);
    if (m->kernel < 0) {
        st = H->status_new(SY_ERR_INVALID_MODEL, "attribute kernel_type = '%.*s' is not LINEAR, POLY, RBF or SIGMOID",
                           (int)kl, ks);
        goto fail;
    }
    if (nkp && nkp != 3) {
        st = H->status_new(SY_ERR_INVALID_MODEL, "attribute kernel_params has %lld values; [gamma, coef0, degree] are "
                           "needed", (long long)nkp);
        goto fail;
    }
    if (nkp)
        m->gamma = kp[0], m->coef0 = kp[1], m->degree = kp[2];
    if (!ncoef) {
        st = H->status_new(SY_ERR_INVALID_MODEL, "attribute coefficients is required (non-empty)");
        goto fail;
    }
    if (!nrho) {
        st = H->status_new(SY_ERR_INVALID_MODEL, "attribute rho is required (non-empty)");
        goto fail;
    }
    if ((st = ml_post_transform_attr(H, n, &m->post)))
        goto fail;
    if (!classifier) {
        m->nv = sy_attr_int_or(H, n, "n_supports", 0);
        m->one_class = sy_attr_int_or(H, n, "one_class", 0) != 0;
        m->svc = m->nv > 0;
        if (m->nv < 0)
            st = H->status_new(SY_ERR_INVALID_MODEL, "attribute n_supports = %lld is negative", (long long)m->nv);
        else if (m->svc && nsv != m->nv * m->c)
            st = H->status_new(SY_ERR_INVALID_MODEL, "attribute support_vectors has %lld values; n_supports (%lld) x "
                               "features (%lld) are needed", (long long)nsv, (long long)m->nv, (long long)m->c);
        else if (ncoef != (m->svc ? m->nv : m->c))
            st = H->status_new(SY_ERR_INVALID_MODEL, "attribute coefficients has %lld values; %lld (%s) are needed",
                               (long long)ncoef, (long long)(m->svc ? m->nv : m->c),
                               m->svc ? "n_supports" : "the features of X");
        else if (nrho != 1)
            st = H->status_new(SY_ERR_INVALID_MODEL, "attribute rho has %lld values; 1 is needed", (long long)nrho);
        if (st)
            goto fail;
        if (!m->svc)
            m->kernel = K_LINEAR; /* liblinear: a weight vector, as ONNX Runtime */
        m->zcols = 1;
        *out = m;
        return NULL;
    }
    if ((st = ml_labels_read(H, n, &m->lab)))
        goto fail;
    m->k = m->lab.n;
    m->npairs = m->k * (m->k - 1) / 2;
    size_t nvpc = 0;
    if (!H->attr_ints(n, "vectors_per_class", &m->vpc, &nvpc))
        nvpc = 0;
    m->svc = nvpc > 0;
    if (npa != npb) {
        st = H->status_new(SY_ERR_INVALID_MODEL, "attributes prob_a (%lld values) and prob_b (%lld) differ in length",
                           (long long)npa, (long long)npb);
        goto fail;
    }
    if (m->svc) {
        if ((int64_t)nvpc != m->k) {
            st = H->status_new(SY_ERR_INVALID_MODEL, "attribute vectors_per_class has %zu values; one per class (%lld) "
                               "is needed", nvpc, (long long)m->k);
            goto fail;
        }
        m->start = malloc((size_t)m->k * sizeof *m->start);
        if (!m->start) {
            st = OOM();
            goto fail;
        }
        for (int64_t i = 0; i < m->k; i++) {
            if (m->vpc[i] < 0) {
                st = H->status_new(SY_ERR_INVALID_MODEL, "attribute vectors_per_class[%lld] = %lld is negative",
                                   (long long)i, (long long)m->vpc[i]);
                goto fail;
            }
            m->start[i] = m->nv;
            m->nv += m->vpc[i];
        }
        m->have_proba = npa > 0;
        if (nsv != m->nv * m->c)
            st = H->status_new(SY_ERR_INVALID_MODEL, "attribute support_vectors has %lld values; vectors (%lld) x "
                               "features (%lld) are needed", (long long)nsv, (long long)m->nv, (long long)m->c);
        else if (ncoef != (m->k - 1) * m->nv)
            st = H->status_new(SY_ERR_INVALID_MODEL, "attribute coefficients has %lld values; (classes - 1) x vectors "
                               "= %lld are needed", (long long)ncoef, (long long)((m->k - 1) * m->nv));
        else if (nrho != m->npairs)
            st = H->status_new(SY_ERR_INVALID_MODEL, "attribute rho has %lld values; one per class pair (%lld) is "
                               "needed", (long long)nrho, (long long)m->npairs);
        else if (npa && npa != m->npairs)
            st = H->status_new(SY_ERR_INVALID_MODEL, "attribute prob_a has %lld values; one per class pair (%lld) is "
                               "needed", (long long)npa, (long long)m->npairs);
        else if (m->k < 2)
            st = H->status_new(SY_ERR_INVALID_MODEL, "%lld class labels; an SVC needs 2 or more", (long long)m->k);
        if (st)
            goto fail;
        m->zcols = m->have_proba ? m->k : m->k > 2 ? m->npairs : 2;
    } else {
        m->kernel = K_LINEAR; /* liblinear: coefficients are one weight row per class */
        if (ncoef != m->k * m->c) {
            st = H->status_new(SY_ERR_INVALID_MODEL, "attribute coefficients has %lld values; classes (%lld) x features "
                               "(%lld) are needed", (long long)ncoef, (long long)m->k, (long long)m->c);
            goto fail;
        }
        m->zcols = m->k;
    }
    m->all_positive = true;
    for (int64_t i = 0; i < ncoef; i++)
        m->all_positive &= m->coef[i] >= 0.0f;
    *out = m;
    return NULL;
fail:
    svm_free(m);
    return st;
}

static double kern(const svm *m, const float *x, const float *v)
{
    double s = 0;
    if (m->kernel == K_RBF) {
        for (int64_t j = 0; j < m->c; j++) {
            double d = (double)x[j] - v[j];
            s += d * d;
        }
        return exp(-m->gamma * s);
    }
    for (int64_t j = 0; j < m->c; j++)
        s += (double)x[j] * v[j];
    if (m->kernel == K_POLY)
        return pow(m->gamma * s + m->coef0, m->degree);
    if (m->kernel == K_SIGMOID)
        return tanh(m->gamma * s + m->coef0);
    return s;
}

static sy_status *infer_svm(sy_node *n, bool classifier)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->dtype != SY_DT_FLOAT32 && x->dtype != SY_DT_FLOAT64 && x->dtype != SY_DT_INT64 && x->dtype != SY_DT_INT32)
        return H->status_new(SY_ERR_TYPE, "X must be float, double, int64 or int32, got %s", sy_dt_name(x->dtype));
    if (x->rank != 1 && x->rank != 2)
        return H->status_new(SY_ERR_SHAPE, "X must be [C] or [N, C], got rank %d", x->rank);
    svm *m;
    SY_TRY(svm_build(n, classifier, &m));
    int64_t N = x->rank == 2 ? x->dims[0] : 1, dz[2] = {N, m->zcols};
    bool strings = m->lab.strings;
    svm_free(m);
    if (!classifier)
        return H->node_set_output(n, 0, SY_DT_FLOAT32, 2, dz);
    SY_TRY(H->node_set_output(n, 0, strings ? SY_DT_STRING : SY_DT_INT64, 1, &N));
    return H->node_set_output(n, 1, SY_DT_FLOAT32, 2, dz);
}

static sy_status *infer_svr(sy_node *n) { return infer_svm(n, false); }
static sy_status *infer_svc(sy_node *n) { return infer_svm(n, true); }

static sy_status *prepare_svm(sy_node *n, bool classifier, void **state)
{
    svm *m;
    SY_TRY(svm_build(n, classifier, &m));
    /* a row as float (the kernels' inputs), kernel values, scores, votes, the coupling matrices */
    size_t k = (size_t)(m->k > 0 ? m->k : 1);
    size_t bytes = ((size_t)m->c + (size_t)m->nv) * sizeof(float) +
                   ((size_t)m->npairs + k + 2) * sizeof(double) + k * sizeof(int64_t) + (2 * k * k + 2 * k) * sizeof(float);
    H->node_set_scratch(n, bytes);
    *state = m;
    return NULL;
}

static sy_status *prepare_svr(sy_node *n, void **state) { return prepare_svm(n, false, state); }
static sy_status *prepare_svc(sy_node *n, void **state) { return prepare_svm(n, true, state); }

/* 1 / (1 + exp(-v)) evaluated without overflow on either side */
static float logistic(float v)
{
    float e = 1.0f / (1.0f + expf(-fabsf(v)));
    return v < 0 ? 1.0f - e : e;
}

/* Pairwise coupling (Wu, Lin and Weng 2004, method 2, as in libsvm):
 * r[i][j] = P(class i | i or j); p = the K class probabilities, found by
 * the fixed-point iteration of the paper, in float as ONNX Runtime. */
static void couple(int64_t K, const float *r, float *p, float *Q, float *Qp)
{
    for (int64_t i = 0; i < K; i++) {
        p[i] = 1.0f / (float)K;
        Q[i * K + i] = 0;
        for (int64_t j = 0; j < K; j++) {
            if (j == i)
                continue;
            Q[i * K + i] += r[j * K + i] * r[j * K + i];
            if (j > i)
                Q[i * K + j] = -r[j * K + i] * r[i * K + j];
        }
        for (int64_t j = 0; j < i; j++)
            Q[i * K + j] = Q[j * K + i];
    }
    float eps = 0.005f / (float)K;
    for (int it = 0; it < 100; it++) {
        float pQp = 0;
        for (int64_t i = 0; i < K; i++) {
            Qp[i] = 0;
            for (int64_t j = 0; j < K; j++)
                Qp[i] += Q[i * K + j] * p[j];
            pQp += p[i] * Qp[i];
        }
        float err = 0;
        for (int64_t i = 0; i < K; i++) {
            float e = fabsf(Qp[i] - pQp);
            err = e > err ? e : err;
        }
        if (err < eps)
            break;
        for (int64_t i = 0; i < K; i++) {
            float diff = (-Qp[i] + pQp) / Q[i * K + i];
            p[i] += diff;
            pQp = (pQp + diff * (diff * Q[i * K + i] + 2 * Qp[i])) / (1 + diff) / (1 + diff);
            for (int64_t j = 0; j < K; j++) {
                Qp[j] = (Qp[j] + diff * Q[i * K + j]) / (1 + diff);
                p[j] /= (1 + diff);
            }
        }
    }
}

static sy_status *run_svm(void *state, const sy_kernel_io *io)
{
    const svm *m = state;
    const sy_tensor *x = io->inputs[0];
    int64_t N = x->rank == 2 ? x->dims[0] : 1;
    size_t k = (size_t)(m->k > 0 ? m->k : 1);
    /* the 8-byte arrays first, so they stay aligned whatever the float counts */
    double *s = io->scratch; /* pair or class scores */
    int64_t *votes = (int64_t *)(void *)(s + m->npairs + k + 2);
    float *row = (float *)(void *)(votes + k), *kv = row + m->c;
    /* pair probabilities, the coupling matrix, p and Q p */
    float *probs = kv + m->nv, *Q = probs + k * k, *pk = Q + k * k, *qp = pk + k;
    sy_tensor *y = io->outputs[0];
    float *z = m->classifier ? io->outputs[1]->data : io->outputs[0]->data;
    for (int64_t r = 0; r < N; r++) {
        /* X as float, as ONNX Runtime feeds its kernels */
        for (int64_t j = 0; j < m->c; j++)
            row[j] = (float)sy_load_f64(x->data, x->dtype, (size_t)(r * m->c + j));
        for (int64_t v = 0; v < m->nv; v++)
            kv[v] = (float)kern(m, row, m->sv + v * m->c);
        float *zr = z + r * m->zcols;
        if (!m->classifier) {
            double t = m->rho[0];
            if (m->svc)
                for (int64_t v = 0; v < m->nv; v++)
                    t += (double)m->coef[v] * kv[v];
            else
                t += kern(m, row, m->coef);
            if (m->one_class)
                t = t > 0 ? 1.0 : -1.0;
            else
                ml_post_transform(m->post, &t, 1);
            zr[0] = (float)t;
            continue;
        }
        int64_t best = 0;
        if (!m->svc) {
            for (int64_t c = 0; c < m->k; c++)
                s[c] = (float)(kern(m, row, m->coef + c * m->c) + m->rho[0]);
            for (int64_t c = 1; c < m->k; c++)
                if (s[c] > s[best])
                    best = c;
            if (m->k == 2) { /* ONNX Runtime's binary rule on the highest score */
                double w = s[best];
                if ((m->all_positive && w >= 0.5) || (!m->all_positive && w > 0))
                    best = 1;
            }
            ml_label_store(&m->lab, y, r, best);
            ml_post_transform(m->post, s, m->k);
            for (int64_t c = 0; c < m->k; c++)
                zr[c] = (float)s[c];
            continue;
        }
        memset(votes, 0, k * sizeof *votes);
        int64_t pi = 0;
        for (int64_t i = 0; i < m->k - 1; i++)
            for (int64_t j = i + 1; j < m->k; j++, pi++) {
                double t = m->rho[pi];
                for (int64_t v = 0; v < m->vpc[i]; v++)
                    t += (double)m->coef[(j - 1) * m->nv + m->start[i] + v] * kv[m->start[i] + v];
                for (int64_t v = 0; v < m->vpc[j]; v++)
                    t += (double)m->coef[i * m->nv + m->start[j] + v] * kv[m->start[j] + v];
                s[pi] = (float)t;
                votes[t > 0 ? i : j]++;
            }
        for (int64_t c = 1; c < m->k; c++)
            if (votes[c] > votes[best])
                best = c;
        ml_label_store(&m->lab, y, r, best);
        if (m->have_proba) {
            int64_t K = m->k;
            memset(probs, 0, (size_t)(K * K) * sizeof *probs);
            pi = 0;
            for (int64_t i = 0; i < K - 1; i++)
                for (int64_t j = i + 1; j < K; j++, pi++) {
                    float v = 1.0f - logistic((float)s[pi] * m->pa[pi] + m->pb[pi]);
                    v = v < 1e-7f ? 1e-7f : v > 1 - 1e-7f ? 1 - 1e-7f : v;
                    probs[i * K + j] = v;
                    probs[j * K + i] = 1 - v;
                }
            couple(K, probs, pk, Q, qp);
            for (int64_t c = 0; c < K; c++)
                s[c] = pk[c];
            ml_post_transform(m->post, s, K);
            for (int64_t c = 0; c < K; c++)
                zr[c] = (float)s[c];
        } else if (m->k == 2) {
            double p = s[0];
            if (m->post == ML_PT_PROBIT || m->post == ML_PT_LOGISTIC)
                ml_post_transform(m->post, &p, 1);
            zr[0] = (float)(m->post == ML_PT_NONE ? -p : 1.0 - p);
            zr[1] = (float)p;
        } else {
            ml_post_transform(m->post, s, m->npairs);
            for (int64_t c = 0; c < m->npairs; c++)
                zr[c] = (float)s[c];
        }
    }
    return m->classifier ? ml_labels_own(H, io, &m->lab, y, N) : NULL;
}

#define A(nm, t) {nm, SY_ATTR_##t, false}
static const sy_attr_def a_svr[] = {A("coefficients", FLOATS), A("kernel_params", FLOATS), A("kernel_type", STRING),
                                    A("n_supports", INT),      A("one_class", INT),         A("post_transform", STRING),
                                    A("rho", FLOATS),          A("support_vectors", FLOATS)};
static const sy_attr_def a_svc[] = {
    A("classlabels_ints", INTS), A("classlabels_strings", STRINGS), A("coefficients", FLOATS),
    A("kernel_params", FLOATS), A("kernel_type", STRING),           A("post_transform", STRING),
    A("prob_a", FLOATS),         A("prob_b", FLOATS),               A("rho", FLOATS),
    A("support_vectors", FLOATS), A("vectors_per_class", INTS)};

static const sy_op_schema schemas[] = {
    {sizeof(sy_op_schema), ML, "SVMRegressor", 1, 1, 1, 1, 1, SY_ATTRS(a_svr), infer_svr, SY_NO_INPLACE, 0,
     "support vector regression / one-class SVM"},
    {sizeof(sy_op_schema), ML, "SVMClassifier", 1, 1, 1, 2, 2, SY_ATTRS(a_svc), infer_svc, SY_NO_INPLACE, 0,
     "support vector classifier: labels and scores"},
};

static const sy_kernel_def kernels[] = {
    {sizeof(sy_kernel_def), ML, "SVMRegressor", 1, 0, "cpu_ref", NUM4, 0, 0, NULL, prepare_svr, run_svm, svm_free,
     NULL},
    {sizeof(sy_kernel_def), ML, "SVMClassifier", 1, 0, "cpu_ref", NUM4, 0, 0, NULL, prepare_svc, run_svm, svm_free,
     NULL},
};

sy_status *ml_svm_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
