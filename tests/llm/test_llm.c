/*
 * The golden ladder of spec/llm.md sections 3-4 on the real stories260K
 * checkpoint, through the public API + the "llm" extension only:
 *
 *   files        header, sizes and sha256 of stories260K.bin / tok512.bin
 *   encode       encode("Once upon a time") = [1, 403, 407, 261, 378]
 *   greedy_bos   greedy from BOS: the 64 reference ids, 346 ids ending with 1,
 *                and id for id the same as the plain C forward pass below
 *   logits       top-5 after BOS and after the prompt within 1e-3 of the
 *                golden values and of the plain C forward pass
 *   prompt       the continuation after the prompt is the reference from 432
 *   variants     AR in {1, 4, 16, 32, 128}, 1/2/3/6 shards (6 = LM-head-only
 *                shard), CL promotion 128 -> 256 -> 512, fused (default) and
 *                plain ONNX (--attention onnx) attention: identical ids
 *   state        save/restore (file and buffer) reproduces the continuation,
 *                greedy and sampled
 *   context      a CL-32 bundle stops with "context exhausted" and the partial output
 *   stop/utf8    stop strings, stream pieces, UTF-8-safe decoding
 *   bad inputs   corrupted checkpoint, misnamed graph, missing graph: refused
 *                with a message naming the file or graph
 *
 * usage: test_llm SHARED_DIR SWITCHYARD_CLI WORK_DIR
 */
#include "llm_ref.h" /* the plain C forward pass (tools/bench/llm_ref, sy_llm_ref) */
#include "sy_test.h"

#include <switchyard/switchyard.h>
#include <switchyard/ext/sy_llm.h>

#include <sha2.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const int REF64[64] = {403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338,
                              401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426, 385,
                              328, 432, 358, 394, 261, 370, 432, 352, 266, 268, 388, 426, 338, 391, 266, 267,
                              337, 335, 312, 432, 398, 312, 286, 267, 414, 270, 333, 415, 426, 13,  438, 310};

static char g_model[512], g_tok[512], g_cli[512], g_work[512];
static sy_env *g_env;
static const sy_llm_api *g_llm;
static ref_model g_ref;
static int g_ref_ids[600];
static int g_n_ref;

/* ---- helpers ------------------------------------------------------------------ */
static int run_cmd(const char *cmd, char *out, size_t out_len)
{
    char full[8300];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p)
        return -1;
    size_t n = 0;
    if (out && out_len)
        out[0] = '\0';
    char buf[512];
    while (fgets(buf, sizeof buf, p)) {
        size_t l = strlen(buf);
        if (out && n + l + 1 < out_len) {
            memcpy(out + n, buf, l + 1);
            n += l;
        }
    }
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *bundle_path(const char *name)
{
    static char paths[16][1100];
    static int next;
    char *p = paths[next++ % 16];
    snprintf(p, 1100, "%s/%s", g_work, name);
    return p;
}

static int export_bundle(const char *name, const char *args)
{
    char cmd[8192], out[4096];
    snprintf(cmd, sizeof cmd, "'%s' llm-export '%s' '%s' -o '%s' --quiet %s", g_cli, g_model, g_tok, bundle_path(name), args);
    int rc = run_cmd(cmd, out, sizeof out);
    if (rc)
        fprintf(stderr, "export %s failed (%d): %s\n", name, rc, out);
    return rc;
}

static sy_llm_runner *open_runner(const char *name)
{
    sy_llm_runner *r = NULL;
    sy_status *st = g_llm->runner_create(g_env, bundle_path(name), NULL, &r);
    if (st) {
        fprintf(stderr, "runner_create(%s): %s\n", name, sy_status_get_message(st));
        sy_status_free(st);
        return NULL;
    }
    return r;
}

static bool gen(sy_llm_runner *r, const char *prompt, const int32_t *ids, size_t n, const sy_llm_params *p,
                sy_llm_result *res)
{
    res->struct_size = sizeof *res;
    sy_status *st = prompt ? g_llm->generate(r, prompt, p, res) : g_llm->generate_ids(r, ids, n, p, res);
    if (st) {
        fprintf(stderr, "generate: %s\n", sy_status_get_message(st));
        sy_status_free(st);
        return false;
    }
    return true;
}

static void top5(const float *x, int n, int *ids, float *vals)
{
    for (int k = 0; k < 5; k++) {
        int b = -1;
        for (int i = 0; i < n; i++) {
            bool used = false;
            for (int j = 0; j < k; j++)
                used |= ids[j] == i;
            if (!used && (b < 0 || x[i] > x[b]))
                b = i;
        }
        ids[k] = b;
        vals[k] = x[b];
    }
}

/* ---- tests --------------------------------------------------------------------- */
static void t_files(void)
{
    struct stat sm, stk;
    REQUIRE(stat(g_model, &sm) == 0 && stat(g_tok, &stk) == 0, "model files present");
    CHECK(sm.st_size == 1056540, "stories260K.bin is %lld bytes", (long long)sm.st_size);
    CHECK(stk.st_size == 6227, "tok512.bin is %lld bytes", (long long)stk.st_size);
    char hex[65];
    CHECK(SHA256File(g_model, hex) && !strcmp(hex, "b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696"),
          "sha256 of stories260K.bin: %s", hex);
    CHECK(SHA256File(g_tok, hex) && !strcmp(hex, "037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312"),
          "sha256 of tok512.bin: %s", hex);
    FILE *f = fopen(g_model, "rb");
    REQUIRE(f, "open");
    int32_t h[7];
    CHECK(fread(h, 4, 7, f) == 7, "header read");
    fclose(f);
    CHECK(h[0] == 64 && h[1] == 172 && h[2] == 5 && h[3] == 8 && h[4] == 4 && h[5] == 512 && h[6] == 512,
          "header %d %d %d %d %d %d %d", h[0], h[1], h[2], h[3], h[4], h[5], h[6]);
}

static void t_encode(void)
{
    sy_llm_runner *r = open_runner("default");
    REQUIRE(r, "runner");
    int32_t ids[16];
    size_t n = 0;
    sy_status *st = g_llm->encode(r, "Once upon a time", true, ids, 16, &n);
    CHECK(!st, "encode");
    sy_status_free(st);
    int want[5] = {1, 403, 407, 261, 378};
    CHECK(n == 5, "encode gave %zu ids", n);
    for (size_t i = 0; i < 5 && i < n; i++)
        CHECK(ids[i] == want[i], "id %zu is %d, want %d", i, ids[i], want[i]);
    /* decode round trip (byte-fallback tokens for non-ASCII) */
    const char *text = "Lily saw a caf\xc3\xa9 \xe2\x98\x83!";
    int32_t ids2[64];
    st = g_llm->encode(r, text, false, ids2, 64, &n);
    CHECK(!st, "encode utf8");
    sy_status_free(st);
    char buf[128];
    size_t len;
    st = g_llm->decode(r, ids2, n, buf, sizeof buf, &len);
    CHECK(!st, "decode");
    sy_status_free(st);
    CHECK(!strcmp(buf, " Lily saw a caf\xc3\xa9 \xe2\x98\x83!") || !strcmp(buf, text), "round trip gave '%s'", buf);
    /* an incomplete UTF-8 sequence is never emitted as raw bytes */
    int32_t half[1] = {0xE2 + 3};
    st = g_llm->decode(r, half, 1, buf, sizeof buf, &len);
    CHECK(!st && !strcmp(buf, "\xef\xbf\xbd"), "a dangling lead byte decodes to U+FFFD, got %zu bytes", len);
    sy_status_free(st);
    g_llm->runner_release(r);
}

static void t_greedy_bos(void)
{
    sy_llm_runner *r = open_runner("default");
    REQUIRE(r, "runner");
    sy_llm_params p = sy_llm_params_default();
    sy_llm_result res;
    REQUIRE(gen(r, "", NULL, 0, &p, &res), "generate");
    CHECK(res.stop == SY_LLM_STOP_EOS, "stop reason %d", res.stop);
    CHECK(res.n_ids == 346, "%zu ids, want 346", res.n_ids);
    CHECK(res.n_ids && res.ids[res.n_ids - 1] == 1, "last id %d, want 1 (BOS)", res.n_ids ? res.ids[res.n_ids - 1] : -1);
    for (int i = 0; i < 64 && (size_t)i < res.n_ids; i++)
        CHECK(res.ids[i] == REF64[i], "id %d is %d, want %d", i, res.ids[i], REF64[i]);
    CHECK((size_t)g_n_ref == res.n_ids, "reference forward pass gave %d ids", g_n_ref);
    int diff = -1;
    for (int i = 0; i < g_n_ref && (size_t)i < res.n_ids; i++)
        if (res.ids[i] != g_ref_ids[i]) {
            diff = i;
            break;
        }
    CHECK(diff < 0, "first difference with the plain C forward pass at %d", diff);
    CHECK(!strncmp(res.text, "Once upon a time, there was a little girl named Lily.", 53), "text: %.60s", res.text);
    sy_llm_stats s = {.struct_size = sizeof s};
    CHECK(g_llm->stats(r, &s), "stats");
    CHECK(s.n_past == 346 && s.active_cl == 512 && s.restrides >= 2, "n_past %d, CL %d, %llu restrides", s.n_past,
          s.active_cl, (unsigned long long)s.restrides);
    CHECK(s.kv_bytes_in_use == 346u * 5 * 2 * 4 * 8 * 4, "KV in use %zu", s.kv_bytes_in_use);
    /* reset: the same story again */
    g_llm->reset(r);
    REQUIRE(gen(r, "", NULL, 0, &p, &res), "generate after reset");
    CHECK(res.n_ids == 346 && res.ids[0] == 403 && res.ids[63] == 310, "after reset: %zu ids", res.n_ids);
    g_llm->runner_release(r);
}

static void check_top5(const float *x, const int *want_ids, const float *want_vals, const char *what)
{
    int ids[5];
    float v[5];
    top5(x, 512, ids, v);
    for (int k = 0; k < 5; k++)
        CHECK(ids[k] == want_ids[k] && fabsf(v[k] - want_vals[k]) <= 1e-3f, "%s: top-%d (%d, %.4f), want (%d, %.4f)",
              what, k + 1, ids[k], v[k], want_ids[k], want_vals[k]);
}

static void t_logits(void)
{
    sy_llm_runner *r = open_runner("default");
    REQUIRE(r, "runner");
    int32_t bos = 1;
    sy_status *st = g_llm->prefill(r, &bos, 1);
    REQUIRE(!st, "prefill");
    const float *lg;
    size_t n;
    st = g_llm->logits(r, &lg, &n);
    REQUIRE(!st && n == 512, "logits");
    check_top5(lg, (const int[]){403, 385, 410, 317, 407}, (const float[]){17.0235f, 15.4062f, 13.1083f, 12.7692f, 12.4181f},
               "after BOS (golden)");
    ref_model m;
    char err[256];
    REQUIRE(!ref_load(g_model, &m, err, sizeof err), "%s", err);
    const float *rl = ref_forward(&m, 1, 0);
    float maxd = 0;
    for (int i = 0; i < 512; i++)
        maxd = fmaxf(maxd, fabsf(rl[i] - lg[i]));
    CHECK(maxd <= 1e-3f, "after BOS: max |plugin - plain C| = %g", maxd);
    int ids[5], rids[5];
    float v[5], rv[5];
    top5(lg, 512, ids, v);
    top5(rl, 512, rids, rv);
    for (int k = 0; k < 5; k++)
        CHECK(ids[k] == rids[k] && fabsf(v[k] - rv[k]) <= 1e-3f, "top-%d vs plain C", k + 1);
    /* after the 5-token prompt (pos 4), evaluated as one prefill chunk */
    g_llm->reset(r);
    int32_t pr[5] = {1, 403, 407, 261, 378};
    st = g_llm->prefill(r, pr, 5);
    REQUIRE(!st, "prefill prompt");
    st = g_llm->logits(r, &lg, &n);
    REQUIRE(!st, "logits");
    check_top5(lg, (const int[]){432, 383, 322, 353, 323}, (const float[]){17.7994f, 14.2813f, 9.7097f, 9.5873f, 9.1342f},
               "after the prompt (golden)");
    for (int i = 1; i < 5; i++)
        rl = ref_forward(&m, pr[i], i);
    maxd = 0;
    for (int i = 0; i < 512; i++)
        maxd = fmaxf(maxd, fabsf(rl[i] - lg[i]));
    CHECK(maxd <= 1e-3f, "after the prompt: max |plugin - plain C| = %g", maxd);
    ref_free(&m);
    g_llm->runner_release(r);
}

static void t_prompt(void)
{
    sy_llm_runner *r = open_runner("default");
    REQUIRE(r, "runner");
    sy_llm_params p = sy_llm_params_default();
    p.max_tokens = 60;
    sy_llm_result res;
    REQUIRE(gen(r, "Once upon a time", NULL, 0, &p, &res), "generate");
    CHECK(res.n_prompt == 5, "prompt tokens %zu", res.n_prompt);
    CHECK(res.stop == SY_LLM_STOP_LENGTH && res.n_ids == 60, "stop %d, %zu ids", res.stop, res.n_ids);
    for (int i = 0; i < 60 && (size_t)i < res.n_ids; i++)
        CHECK(res.ids[i] == REF64[i + 4], "continuation id %d is %d, want %d", i, res.ids[i], REF64[i + 4]);
    g_llm->runner_release(r);
}

/* a long prompt (the greedy story's first K ids) then 40 more: every bundle
 * must give the story's own continuation */
static void variant(const char *name, int K)
{
    sy_llm_runner *r = open_runner(name);
    CHECK(r, "runner %s", name);
    if (!r)
        return;
    int32_t pr[600];
    pr[0] = 1;
    for (int i = 0; i < K; i++)
        pr[i + 1] = g_ref_ids[i];
    sy_llm_params p = sy_llm_params_default();
    p.max_tokens = 40;
    sy_llm_result res;
    if (!gen(r, NULL, pr, (size_t)K + 1, &p, &res)) {
        CHECK(0, "generate on %s", name);
        g_llm->runner_release(r);
        return;
    }
    int bad = -1;
    for (size_t i = 0; i < res.n_ids && K + (int)i < g_n_ref; i++)
        if (res.ids[i] != g_ref_ids[K + (int)i]) {
            bad = (int)i;
            break;
        }
    CHECK(bad < 0 && res.n_ids > 0, "%s (prompt %d): first difference at %d of %zu", name, K + 1, bad, res.n_ids);
    sy_llm_stats s = {.struct_size = sizeof s};
    g_llm->stats(r, &s);
    sy_llm_info info = {.struct_size = sizeof info};
    g_llm->info(r, &info);
    printf("  %-10s shards %d AR max %d: %d positions, CL %d, %llu restrides, prefill %.0f tok/s, decode %.0f tok/s\n",
           name, info.n_shards, info.ar[info.n_ar - 1], s.n_past, s.active_cl, (unsigned long long)s.restrides,
           s.prefill_tok_s, s.decode_tok_s);
    g_llm->runner_release(r);
}

static void t_variants(void)
{
    /* every bundle but onnx_att uses the fused switchyard.llm CausalAttention */
    const char *names[] = {"default", "ar1", "ar4_s6", "ar16_s2", "ar32_s3", "ar128_s2", "onnx_att"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        variant(names[i], 300); /* crosses 128 and 256 */
        variant(names[i], 20);  /* short prompt, promotion during decode */
    }
}

static void t_state(void)
{
    sy_llm_runner *r = open_runner("ar16_s2");
    REQUIRE(r, "runner");
    for (int sampled = 0; sampled < 2; sampled++) {
        sy_llm_params p = sy_llm_params_default();
        if (sampled) {
            p.temperature = 0.9f;
            p.top_k = 40;
            p.top_p = 0.95f;
            p.repetition_penalty = 1.1f;
            p.seed = 7;
        }
        g_llm->reset(r);
        p.max_tokens = 100;
        sy_llm_result res;
        REQUIRE(gen(r, "Once upon a time", NULL, 0, &p, &res), "generate 100");
        int32_t whole[100];
        size_t nwhole = res.n_ids;
        memcpy(whole, res.ids, nwhole * sizeof *whole);
        g_llm->reset(r);
        p.max_tokens = 30;
        REQUIRE(gen(r, "Once upon a time", NULL, 0, &p, &res), "generate 30");
        char path[1200];
        snprintf(path, sizeof path, "%s/state.bin", g_work);
        sy_status *st = g_llm->save_state(r, path);
        REQUIRE(!st, "save_state");
        void *buf = NULL;
        size_t size = 0;
        st = g_llm->save_state_buffer(r, &buf, &size);
        REQUIRE(!st, "save_state_buffer");
        p.max_tokens = 70;
        REQUIRE(gen(r, "", NULL, 0, &p, &res), "continue");
        int32_t a[70];
        size_t na = res.n_ids;
        memcpy(a, res.ids, na * sizeof *a);
        if (!sampled) /* greedy: the split run equals the whole run */
            for (size_t i = 0; i < na && 30 + i < nwhole; i++)
                CHECK(a[i] == whole[30 + i], "split run id %zu", 30 + i);
        g_llm->reset(r);
        st = g_llm->load_state(r, path);
        REQUIRE(!st, "load_state");
        REQUIRE(gen(r, "", NULL, 0, &p, &res), "continue after load");
        CHECK(res.n_ids == na && !memcmp(res.ids, a, na * sizeof *a), "%s: restored continuation differs",
              sampled ? "sampled" : "greedy");
        st = g_llm->load_state_buffer(r, buf, size);
        REQUIRE(!st, "load_state_buffer");
        REQUIRE(gen(r, "", NULL, 0, &p, &res), "continue after buffer load");
        CHECK(res.n_ids == na && !memcmp(res.ids, a, na * sizeof *a), "buffer restore differs");
        /* a truncated state is refused, naming the file */
        FILE *f = fopen(path, "r+b");
        if (f) {
            CHECK(ftruncate(fileno(f), (off_t)(size / 2)) == 0, "truncate");
            fclose(f);
        }
        st = g_llm->load_state(r, path);
        CHECK(st && strstr(sy_status_get_message(st), path), "truncated state: %s", st ? sy_status_get_message(st) : "accepted");
        sy_status_free(st);
        g_llm->free_buffer(buf);
    }
    g_llm->runner_release(r);
}

static void t_context(void)
{
    sy_llm_runner *r = open_runner("cl32");
    REQUIRE(r, "runner");
    sy_llm_params p = sy_llm_params_default();
    sy_llm_result res;
    REQUIRE(gen(r, "", NULL, 0, &p, &res), "generate");
    CHECK(res.stop == SY_LLM_STOP_CONTEXT, "stop reason %d, want context exhausted", res.stop);
    CHECK(res.n_ids == 31, "%zu ids before the context was full (CL 32, AR 1 -> 31 positions)", res.n_ids);
    for (size_t i = 0; i < res.n_ids && i < 64; i++)
        CHECK(res.ids[i] == REF64[i], "partial id %zu", i);
    CHECK(res.text_len > 0, "partial text kept");
    /* a prompt that cannot fit is an error, not a crash */
    int32_t many[40];
    for (int i = 0; i < 40; i++)
        many[i] = 261;
    g_llm->reset(r);
    sy_status *st = g_llm->generate_ids(r, many, 40, &p, &res);
    CHECK(st && sy_status_get_code(st) == SY_ERR_CONTEXT_EXHAUSTED, "oversized prompt: %s",
          st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    g_llm->runner_release(r);
}

typedef struct stream_acc {
    char buf[8192];
    size_t n;
    int calls;
} stream_acc;

static bool on_piece(void *user, const char *piece, size_t len, int32_t token)
{
    (void)token;
    stream_acc *a = user;
    if (a->n + len < sizeof a->buf) {
        memcpy(a->buf + a->n, piece, len);
        a->n += len;
    }
    a->calls++;
    return a->calls < 1000;
}

static bool stop_after_5(void *user, const char *piece, size_t len, int32_t token)
{
    (void)piece;
    (void)len;
    (void)token;
    return ++*(int *)user < 5;
}

static void t_stop_stream(void)
{
    sy_llm_runner *r = open_runner("default");
    REQUIRE(r, "runner");
    const char *stops[] = {"Lily."};
    stream_acc acc = {0};
    sy_llm_params p = sy_llm_params_default();
    p.stop = stops;
    p.n_stop = 1;
    p.stream = on_piece;
    p.user = &acc;
    sy_llm_result res;
    REQUIRE(gen(r, "", NULL, 0, &p, &res), "generate");
    CHECK(res.stop == SY_LLM_STOP_STRING, "stop %d", res.stop);
    CHECK(!strcmp(res.text, "Once upon a time, there was a little girl named "), "text '%s'", res.text);
    CHECK(acc.n == res.text_len && !memcmp(acc.buf, res.text, acc.n), "streamed '%.*s'", (int)acc.n, acc.buf);
    g_llm->reset(r);
    int calls = 0;
    p.stop = NULL;
    p.n_stop = 0;
    p.stream = stop_after_5;
    p.user = &calls;
    REQUIRE(gen(r, "", NULL, 0, &p, &res), "generate");
    CHECK(res.stop == SY_LLM_STOP_USER && res.n_ids == 5, "user stop: %d after %zu ids", res.stop, res.n_ids);
    /* sampling is reproducible from its seed */
    sy_llm_params q = sy_llm_params_default();
    q.temperature = 1.0f;
    q.top_k = 40;
    q.min_p = 0.05f;
    q.max_tokens = 50;
    q.seed = 1234;
    int32_t first[50];
    size_t nf = 0;
    for (int k = 0; k < 2; k++) {
        g_llm->reset(r);
        REQUIRE(gen(r, "", NULL, 0, &q, &res), "sampled");
        if (k == 0) {
            nf = res.n_ids;
            memcpy(first, res.ids, nf * sizeof *first);
        } else {
            CHECK(res.n_ids == nf && !memcmp(first, res.ids, nf * sizeof *first), "same seed, same ids");
        }
    }
    g_llm->runner_release(r);
}

static void t_fp16(void)
{
    sy_llm_runner *r = open_runner("fp16");
    REQUIRE(r, "runner");
    sy_llm_params p = sy_llm_params_default();
    p.max_tokens = 16;
    sy_llm_result res;
    REQUIRE(gen(r, "", NULL, 0, &p, &res), "generate");
    int same = 0;
    for (size_t i = 0; i < res.n_ids; i++)
        same += res.ids[i] == REF64[i];
    CHECK(res.n_ids == 16 && same >= 8, "fp16 weights: %d of %zu ids as the fp32 reference", same, res.n_ids);
    g_llm->runner_release(r);
}

static void t_bad_inputs(void)
{
    char cmd[8192], out[4096], bad[1200];
    /* a truncated checkpoint */
    snprintf(bad, sizeof bad, "%s/truncated.bin", g_work);
    snprintf(cmd, sizeof cmd, "head -c 500000 '%s' > '%s'", g_model, bad);
    CHECK(run_cmd(cmd, NULL, 0) == 0, "truncate");
    snprintf(cmd, sizeof cmd, "'%s' llm-export '%s' '%s' -o '%s/never'", g_cli, bad, g_tok, g_work);
    int rc = run_cmd(cmd, out, sizeof out);
    CHECK(rc == 1 && strstr(out, bad) && strstr(out, "1056540"), "truncated checkpoint: rc %d, '%s'", rc, out);
    /* a corrupted header */
    snprintf(bad, sizeof bad, "%s/corrupt.bin", g_work);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && printf '\\377\\377\\377\\177' | dd of='%s' bs=1 seek=8 conv=notrunc status=none",
             g_model, bad, bad);
    CHECK(run_cmd(cmd, NULL, 0) == 0, "corrupt");
    snprintf(cmd, sizeof cmd, "'%s' llm-export '%s' '%s' -o '%s/never'", g_cli, bad, g_tok, g_work);
    rc = run_cmd(cmd, out, sizeof out);
    CHECK(rc == 1 && strstr(out, bad) && strstr(out, "header"), "corrupt header: rc %d, '%s'", rc, out);
    /* a tokenizer that does not match */
    snprintf(cmd, sizeof cmd, "'%s' llm-export '%s' '%s' -o '%s/never'", g_cli, g_model, g_model, g_work);
    rc = run_cmd(cmd, out, sizeof out);
    CHECK(rc == 1 && strstr(out, g_model), "checkpoint as tokenizer: rc %d, '%s'", rc, out);
    struct stat sb;
    CHECK(stat(bundle_path("never"), &sb) != 0 || S_ISDIR(sb.st_mode), "nothing half-written");

    /* a misnamed graph */
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s' && mv '%s/token_ar1_cl32_1_of_1.onnx' '%s/token_ar1-cl32_1_of_1.onnx'",
             bundle_path("misnamed"), bundle_path("cl32"), bundle_path("misnamed"), bundle_path("misnamed"),
             bundle_path("misnamed"));
    CHECK(run_cmd(cmd, NULL, 0) == 0, "copy");
    sy_llm_runner *r = NULL;
    sy_status *st = g_llm->runner_create(g_env, bundle_path("misnamed"), NULL, &r);
    CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_MODEL && strstr(sy_status_get_message(st), "token_ar1-cl32_1_of_1"),
          "misnamed graph: %s", st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    CHECK(!r, "no runner");
    /* a missing shard */
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s' && rm '%s/token_ar1_cl128_2_of_2.onnx'",
             bundle_path("missing"), bundle_path("ar16_s2"), bundle_path("missing"), bundle_path("missing"));
    CHECK(run_cmd(cmd, NULL, 0) == 0, "copy");
    st = g_llm->runner_create(g_env, bundle_path("missing"), NULL, &r);
    CHECK(st && strstr(sy_status_get_message(st), "token_ar1_cl128_2_of_2"), "missing graph: %s",
          st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    /* a graph that is not ONNX */
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s' && echo garbage > '%s/token_ar1_cl32_1_of_1.onnx'",
             bundle_path("garbage"), bundle_path("cl32"), bundle_path("garbage"), bundle_path("garbage"));
    CHECK(run_cmd(cmd, NULL, 0) == 0, "copy");
    st = g_llm->runner_create(g_env, bundle_path("garbage"), NULL, &r);
    CHECK(st && strstr(sy_status_get_message(st), "token_ar1_cl32_1_of_1"), "garbage graph: %s",
          st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    /* an unknown runner option */
    st = g_llm->runner_create(g_env, bundle_path("cl32"), "threads=1;colour=blue", &r);
    CHECK(st && strstr(sy_status_get_message(st), "colour"), "unknown option: %s", st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    /* a missing bundle */
    st = g_llm->runner_create(g_env, bundle_path("nowhere"), NULL, &r);
    CHECK(st && strstr(sy_status_get_message(st), "nowhere"), "missing bundle: %s", st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_llm SHARED_DIR SWITCHYARD_CLI WORK_DIR\n");
        return 2;
    }
    snprintf(g_model, sizeof g_model, "%s/models/llm/stories260K.bin", argv[1]);
    snprintf(g_tok, sizeof g_tok, "%s/models/llm/tok512.bin", argv[1]);
    snprintf(g_cli, sizeof g_cli, "%s", argv[2]);
    snprintf(g_work, sizeof g_work, "%s", argv[3]);
    if (access(g_model, R_OK) || access(g_tok, R_OK))
        SY_TEST_SKIP("the shared model %s is absent", g_model);
    mkdir(g_work, 0777);
    char err[512];
    if (ref_load(g_model, &g_ref, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    int token = 1;
    for (int pos = 0; pos < 512; pos++) {
        int next = ref_argmax(ref_forward(&g_ref, token, pos), g_ref.vocab);
        g_ref_ids[g_n_ref++] = next;
        if (next == 1)
            break;
        token = next;
    }
    ref_free(&g_ref);

    if (export_bundle("default", "") || export_bundle("ar1", "--ar 1 --cl 512") ||
        export_bundle("ar4_s6", "--ar 1,4 --shards 6") || export_bundle("ar16_s2", "--ar 1,16 --shards 2") ||
        export_bundle("ar32_s3", "--ar 1,32 --shards 3 --cl 128,256,512") ||
        export_bundle("ar128_s2", "--ar 1,128 --shards 2 --cl 256,512") || export_bundle("cl32", "--ar 1 --cl 32") ||
        export_bundle("fp16", "--dtype fp16 --cl 128") || export_bundle("onnx_att", "--ar 1,16 --attention onnx")) {
        fprintf(stderr, "cannot export the test bundles\n");
        return 1;
    }
    sy_status *st = sy_env_create(NULL, &g_env);
    if (st) {
        fprintf(stderr, "env: %s\n", sy_status_get_message(st));
        return 1;
    }
    g_llm = sy_get_extension(g_env, SY_LLM_EXTENSION_NAME, SY_LLM_EXTENSION_VERSION);
    if (!g_llm || g_llm->struct_size < sizeof *g_llm) {
        fprintf(stderr, "the 'llm' extension is not loaded\n");
        return 1;
    }
    RUN_TEST(t_files);
    RUN_TEST(t_encode);
    RUN_TEST(t_greedy_bos);
    RUN_TEST(t_logits);
    RUN_TEST(t_prompt);
    RUN_TEST(t_variants);
    RUN_TEST(t_state);
    RUN_TEST(t_context);
    RUN_TEST(t_stop_stream);
    RUN_TEST(t_fp16);
    RUN_TEST(t_bad_inputs);
    sy_env_release(g_env);
    return SY_TEST_MAIN_RESULT();
}
