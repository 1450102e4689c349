/* llm_ref: the forward pass (llm_ref.h). */
#include "llm_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ref_free(ref_model *m)
{
    free(m->data);
    free(m->x);
    free(m->xb);
    free(m->xb2);
    free(m->hb);
    free(m->hb2);
    free(m->q);
    free(m->att);
    free(m->logits);
    free(m->kc);
    free(m->vc);
    memset(m, 0, sizeof *m);
}

/* 0 on success; -1 with a message naming the file */
int ref_load(const char *path, ref_model *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%.300s: cannot open", path);
        return -1;
    }
    int32_t h[7];
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (size < 28 || fread(h, 4, 7, f) != 7) {
        fclose(f);
        snprintf(err, errlen, "%.300s: too short for a llama2.c header", path);
        return -1;
    }
    m->dim = h[0];
    m->hidden = h[1];
    m->n_layers = h[2];
    m->n_heads = h[3];
    m->n_kv = h[4];
    m->vocab = h[5] < 0 ? -h[5] : h[5];
    m->seq_len = h[6];
    if (m->dim <= 0 || m->dim > 65536 || m->hidden <= 0 || m->n_layers <= 0 || m->n_layers > 1024 || m->n_heads <= 0 ||
        m->n_kv <= 0 || m->n_heads % m->n_kv || m->dim % m->n_heads || m->vocab <= 0 || m->seq_len <= 0 ||
        m->seq_len > 1 << 20) {
        fclose(f);
        snprintf(err, errlen, "%.300s: header is not a llama2.c checkpoint", path);
        return -1;
    }
    m->hd = m->dim / m->n_heads;
    m->kv_dim = m->hd * m->n_kv;
    size_t L = (size_t)m->n_layers, D = (size_t)m->dim, Hd = (size_t)m->hidden, KV = (size_t)m->kv_dim;
    size_t n = (size_t)m->vocab * D + L * D + L * D * D + 2 * L * KV * D + L * D * D + L * D + 3 * L * Hd * D + D +
               (size_t)m->seq_len * (size_t)m->hd;
    if (h[5] < 0)
        n += (size_t)m->vocab * D;
    if ((size_t)size != 28 + n * 4) {
        fclose(f);
        snprintf(err, errlen, "%.300s: %ld bytes, the header needs %zu", path, size, 28 + n * 4);
        return -1;
    }
    m->data = malloc(n * 4);
    if (!m->data || fread(m->data, 4, n, f) != n) {
        fclose(f);
        ref_free(m);
        snprintf(err, errlen, "%.300s: read failed", path);
        return -1;
    }
    fclose(f);
    const float *p = m->data;
    m->tok = p;
    p += (size_t)m->vocab * D;
    m->rms_att = p;
    p += L * D;
    m->wq = p;
    p += L * D * D;
    m->wk = p;
    p += L * KV * D;
    m->wv = p;
    p += L * KV * D;
    m->wo = p;
    p += L * D * D;
    m->rms_ffn = p;
    p += L * D;
    m->w1 = p;
    p += L * Hd * D;
    m->w2 = p;
    p += L * D * Hd;
    m->w3 = p;
    p += L * Hd * D;
    m->rms_final = p;
    p += D;
    p += (size_t)m->seq_len * (size_t)m->hd; /* freq_cis_real + imag */
    m->cls = h[5] > 0 ? m->tok : p;
    m->x = calloc(D, 4);
    m->xb = calloc(D, 4);
    m->xb2 = calloc(D, 4);
    m->hb = calloc(Hd, 4);
    m->hb2 = calloc(Hd, 4);
    m->q = calloc(D, 4);
    m->att = calloc((size_t)m->n_heads * (size_t)m->seq_len, 4);
    m->logits = calloc((size_t)m->vocab, 4);
    m->kc = calloc(L * (size_t)m->seq_len * KV, 4);
    m->vc = calloc(L * (size_t)m->seq_len * KV, 4);
    if (!m->x || !m->xb || !m->xb2 || !m->hb || !m->hb2 || !m->q || !m->att || !m->logits || !m->kc || !m->vc) {
        ref_free(m);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static void rmsnorm(float *o, const float *x, const float *w, int n)
{
    float ss = 0.0f;
    for (int j = 0; j < n; j++)
        ss += x[j] * x[j];
    ss /= (float)n;
    ss += 1e-5f;
    ss = 1.0f / sqrtf(ss);
    for (int j = 0; j < n; j++)
        o[j] = w[j] * (ss * x[j]);
}

/* y[d] = W[d, n] x[n] */
static void matvec(float *y, const float *x, const float *w, int n, int d)
{
    for (int i = 0; i < d; i++) {
        float v = 0.0f;
        const float *row = w + (size_t)i * (size_t)n;
        for (int j = 0; j < n; j++)
            v += row[j] * x[j];
        y[i] = v;
    }
}

/* logits of `token` at position `pos` (positions must come in order) */
float *ref_forward(ref_model *m, int token, int pos)
{
    int D = m->dim, KV = m->kv_dim, hd = m->hd, Hd = m->hidden, G = m->n_heads / m->n_kv;
    memcpy(m->x, m->tok + (size_t)token * (size_t)D, (size_t)D * 4);
    for (int l = 0; l < m->n_layers; l++) {
        size_t lo = (size_t)l * (size_t)m->seq_len * (size_t)KV;
        float *k = m->kc + lo + (size_t)pos * (size_t)KV, *v = m->vc + lo + (size_t)pos * (size_t)KV;
        rmsnorm(m->xb, m->x, m->rms_att + (size_t)l * (size_t)D, D);
        matvec(m->q, m->xb, m->wq + (size_t)l * (size_t)D * (size_t)D, D, D);
        matvec(k, m->xb, m->wk + (size_t)l * (size_t)KV * (size_t)D, D, KV);
        matvec(v, m->xb, m->wv + (size_t)l * (size_t)KV * (size_t)D, D, KV);
        for (int i = 0; i < D; i += 2) {
            float freq = 1.0f / powf(10000.0f, (float)(i % hd) / (float)hd);
            float a = (float)pos * freq, c = cosf(a), s = sinf(a);
            for (int t = 0; t < (i < KV ? 2 : 1); t++) {
                float *vec = t == 0 ? m->q : k;
                float v0 = vec[i], v1 = vec[i + 1];
                vec[i] = v0 * c - v1 * s;
                vec[i + 1] = v0 * s + v1 * c;
            }
        }
        for (int h = 0; h < m->n_heads; h++) {
            const float *q = m->q + h * hd;
            float *att = m->att + (size_t)h * (size_t)m->seq_len;
            int kvh = h / G;
            float mx = -INFINITY;
            for (int t = 0; t <= pos; t++) {
                const float *kt = m->kc + lo + (size_t)t * (size_t)KV + (size_t)kvh * (size_t)hd;
                float sc = 0.0f;
                for (int i = 0; i < hd; i++)
                    sc += q[i] * kt[i];
                att[t] = sc / sqrtf((float)hd);
                mx = att[t] > mx ? att[t] : mx;
            }
            float sum = 0.0f;
            for (int t = 0; t <= pos; t++) {
                att[t] = expf(att[t] - mx);
                sum += att[t];
            }
            for (int t = 0; t <= pos; t++)
                att[t] /= sum;
            float *o = m->xb + h * hd;
            memset(o, 0, (size_t)hd * 4);
            for (int t = 0; t <= pos; t++) {
                const float *vt = m->vc + lo + (size_t)t * (size_t)KV + (size_t)kvh * (size_t)hd;
                for (int i = 0; i < hd; i++)
                    o[i] += att[t] * vt[i];
            }
        }
        matvec(m->xb2, m->xb, m->wo + (size_t)l * (size_t)D * (size_t)D, D, D);
        for (int i = 0; i < D; i++)
            m->x[i] += m->xb2[i];
        rmsnorm(m->xb, m->x, m->rms_ffn + (size_t)l * (size_t)D, D);
        matvec(m->hb, m->xb, m->w1 + (size_t)l * (size_t)Hd * (size_t)D, D, Hd);
        matvec(m->hb2, m->xb, m->w3 + (size_t)l * (size_t)Hd * (size_t)D, D, Hd);
        for (int i = 0; i < Hd; i++) {
            float a = m->hb[i];
            a = a * (1.0f / (1.0f + expf(-a)));
            m->hb[i] = a * m->hb2[i];
        }
        matvec(m->xb, m->hb, m->w2 + (size_t)l * (size_t)D * (size_t)Hd, Hd, D);
        for (int i = 0; i < D; i++)
            m->x[i] += m->xb[i];
    }
    rmsnorm(m->x, m->x, m->rms_final, D);
    matvec(m->logits, m->x, m->cls, D, m->vocab);
    return m->logits;
}

int ref_argmax(const float *x, int n)
{
    int b = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[b])
            b = i;
    return b;
}

