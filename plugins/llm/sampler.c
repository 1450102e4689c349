/*
 * The sampler chain: repetition penalty over the last N accepted ids ->
 * temperature -> softmax -> top-k -> top-p -> min-p -> a draw from a seeded
 * xorshift64* generator. Temperature <= 0 is the greedy fast path (argmax,
 * first index on ties), after the penalty when one is set.
 */
#include "llm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint32_t llm_rng_u32(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (uint32_t)((*s * UINT64_C(0x2545F4914F6CDD1D)) >> 32);
}

static float rng_f32(uint64_t *s) { return (float)(llm_rng_u32(s) >> 8) / 16777216.0f; }

sy_status *llm_sampler_init(llm_sampler *s, int32_t vocab)
{
    memset(s, 0, sizeof *s);
    s->vocab = vocab;
    s->work = malloc((size_t)vocab * sizeof *s->work);
    s->cand = malloc((size_t)vocab * sizeof *s->cand);
    if (!s->work || !s->cand) {
        llm_sampler_free(s);
        return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm sampler: out of memory");
    }
    return NULL;
}

void llm_sampler_free(llm_sampler *s)
{
    free(s->work);
    free(s->cand);
    free(s->hist);
    memset(s, 0, sizeof *s);
}

void llm_sampler_clear(llm_sampler *s)
{
    s->n_hist = 0;
    s->rng = s->cfg.seed ? s->cfg.seed : UINT64_C(0x9E3779B97F4A7C15);
}

void llm_sampler_configure(llm_sampler *s, const llm_sampler_cfg *cfg)
{
    if (s->configured && !memcmp(&s->cfg, cfg, sizeof *cfg))
        return; /* unchanged: the penalty history and RNG carry across turns */
    s->cfg = *cfg;
    s->configured = true;
    llm_sampler_clear(s);
}

void llm_sampler_accept(llm_sampler *s, int32_t id)
{
    size_t cap = s->cfg.last_n > 0 ? (size_t)s->cfg.last_n : 64;
    if (s->cap_hist < cap) {
        int32_t *g = realloc(s->hist, cap * sizeof *g);
        if (!g)
            return; /* the penalty then sees a shorter window */
        s->hist = g;
        s->cap_hist = cap;
    }
    if (s->n_hist == cap) {
        memmove(s->hist, s->hist + 1, (cap - 1) * sizeof *s->hist);
        s->n_hist--;
    }
    s->hist[s->n_hist++] = id;
}

static int32_t argmax(const float *x, int32_t n)
{
    int32_t best = 0;
    float m = x[0];
    for (int32_t i = 1; i < n; i++)
        if (x[i] > m) {
            m = x[i];
            best = i;
        }
    return best;
}

static int cmp_prob_desc(const void *a, const void *b)
{
    const llm_prob *x = a, *y = b;
    if (x->p > y->p)
        return -1;
    if (x->p < y->p)
        return 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int32_t llm_sampler_sample(llm_sampler *s, const float *logits)
{
    const llm_sampler_cfg *c = &s->cfg;
    int32_t V = s->vocab;
    bool penalty = c->rep_penalty > 0.0f && c->rep_penalty != 1.0f && s->n_hist;
    if (c->temperature <= 0.0f && !penalty)
        return argmax(logits, V); /* greedy fast path: no copy */
    float *x = s->work;
    memcpy(x, logits, (size_t)V * sizeof *x);
    if (penalty) {
        /* each distinct id once (llama.cpp rule) */
        for (size_t i = 0; i < s->n_hist; i++) {
            int32_t id = s->hist[i];
            bool seen = false;
            for (size_t k = 0; k < i && !seen; k++)
                seen = s->hist[k] == id;
            if (seen || id < 0 || id >= V)
                continue;
            x[id] = x[id] > 0 ? x[id] / c->rep_penalty : x[id] * c->rep_penalty;
        }
    }
    if (c->temperature <= 0.0f)
        return argmax(x, V);
    float m = x[0];
    for (int32_t i = 1; i < V; i++)
        m = x[i] > m ? x[i] : m;
    double sum = 0;
    for (int32_t i = 0; i < V; i++) {
        x[i] = expf((x[i] - m) / c->temperature);
        sum += x[i];
    }
    int32_t n = V;
    llm_prob *cd = s->cand;
    for (int32_t i = 0; i < V; i++) {
        cd[i].p = (float)(x[i] / sum);
        cd[i].id = i;
    }
    bool filters = (c->top_k > 0 && c->top_k < V) || (c->top_p > 0.0f && c->top_p < 1.0f) || c->min_p > 0.0f;
    if (filters) {
        qsort(cd, (size_t)V, sizeof *cd, cmp_prob_desc);
        if (c->top_k > 0 && c->top_k < n)
            n = c->top_k;
        if (c->top_p > 0.0f && c->top_p < 1.0f) {
            double cum = 0, total = 0;
            for (int32_t i = 0; i < n; i++)
                total += cd[i].p;
            for (int32_t i = 0; i < n; i++) {
                cum += cd[i].p;
                if (cum >= c->top_p * total) {
                    n = i + 1;
                    break;
                }
            }
        }
        if (c->min_p > 0.0f) {
            float floor_p = c->min_p * cd[0].p;
            int32_t k = 1;
            while (k < n && cd[k].p >= floor_p)
                k++;
            n = k;
        }
    }
    double total = 0;
    for (int32_t i = 0; i < n; i++)
        total += cd[i].p;
    double r = (double)rng_f32(&s->rng) * total, cum = 0;
    for (int32_t i = 0; i < n; i++) {
        cum += cd[i].p;
        if (r < cum)
            return cd[i].id;
    }
    return cd[n - 1].id;
}
