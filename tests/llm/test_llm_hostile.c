/*
 * Hostile LLM bundles, made here from a tiny llama2.c checkpoint this test
 * writes itself (dim 16, 1 layer, vocabulary 64, seq_len 128: no shared
 * data needed):
 *
 *   export_clamp  llm-export without --cl on a seq_len-128 checkpoint clamps
 *                 the default CL list (--help says so) instead of refusing 256
 *   vocab<259     a character without a token: the byte-fallback id byte+3 is
 *                 outside a 64-entry vocabulary: refused, not read out of bounds
 *   bos/pad/eos   bundle.ini ids outside the vocabulary: refused at load
 *   last_n        a saved state whose penalty window is 2^31-1 (8 GiB reserved)
 *   fifo          bundle.ini and the tokenizer as FIFOs: refused, not waited on
 *   kv_dtype      a graph whose KV input is float16: the refusal names the dtype
 *
 * usage: test_llm_hostile SWITCHYARD_CLI PLUGIN_DIR WORK_DIR
 */
#include "onnx.pb-c.h"
#include "sy_test.h"

#include <switchyard/switchyard.h>
#include <switchyard/ext/sy_llm.h>

#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { DIM = 16, HID = 32, LAYERS = 1, HEADS = 2, VOCAB = 64, SEQ = 128 };

static char g_cli[512], g_work[512], g_ckpt[600], g_tok[600];
static sy_env *g_env;
static const sy_llm_api *g_llm;

static bool write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(p, 1, n, f) == n;
    return (fclose(f) == 0) && ok;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static int run(const char *cmd, char *out, size_t len)
{
    char full[8300];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p)
        return -1;
    size_t n = 0;
    out[0] = '\0';
    char line[512];
    while (fgets(line, sizeof line, p)) {
        size_t l = strlen(line);
        if (n + l + 1 < len) {
            memcpy(out + n, line, l + 1);
            n += l;
        }
    }
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* a llama2.c checkpoint with small deterministic weights, and a tokenizer of
 * 64 pieces: <unk> <s> </s>, ' ', a..z, ' a'..' z', then a few merges */
static bool make_model(void)
{
    int64_t head = DIM / HEADS, kvd = head * HEADS;
    size_t n = (size_t)(VOCAB * DIM + LAYERS * DIM + LAYERS * DIM * DIM + 2 * LAYERS * kvd * DIM +
                        LAYERS * DIM * DIM + LAYERS * DIM + 3 * LAYERS * HID * DIM + DIM + SEQ * head);
    int32_t hdr[7] = {DIM, HID, LAYERS, HEADS, HEADS, VOCAB, SEQ};
    float *w = malloc(n * sizeof *w);
    if (!w)
        return false;
    for (size_t i = 0; i < n; i++)
        w[i] = 0.05f * sinf((float)i * 0.37f);
    snprintf(g_ckpt, sizeof g_ckpt, "%s/tiny.bin", g_work);
    FILE *f = fopen(g_ckpt, "wb");
    bool ok = f && fwrite(hdr, 4, 7, f) == 7 && fwrite(w, sizeof *w, n, f) == n;
    ok = f && fclose(f) == 0 && ok;
    free(w);
    snprintf(g_tok, sizeof g_tok, "%s/tiny_tok.bin", g_work);
    f = fopen(g_tok, "wb");
    if (!f)
        return false;
    int32_t maxlen = 8;
    fwrite(&maxlen, 4, 1, f);
    for (int i = 0; i < VOCAB; i++) {
        char piece[8];
        if (i == 0)
            strcpy(piece, "<unk>");
        else if (i == 1)
            strcpy(piece, "<s>");
        else if (i == 2)
            strcpy(piece, "</s>");
        else if (i == 3)
            strcpy(piece, " ");
        else if (i < 30)
            snprintf(piece, sizeof piece, "%c", 'a' + (i - 4));
        else if (i < 56)
            snprintf(piece, sizeof piece, " %c", 'a' + (i - 30));
        else
            snprintf(piece, sizeof piece, "%c%c", 'a' + (i - 56), 'a' + (i - 55));
        float score = -(float)i;
        int32_t len = (int32_t)strlen(piece);
        fwrite(&score, 4, 1, f);
        fwrite(&len, 4, 1, f);
        fwrite(piece, 1, (size_t)len, f);
    }
    return fclose(f) == 0 && ok;
}

static void test_export_clamp(void)
{
    char cmd[8192], out[4096];
    snprintf(cmd, sizeof cmd, "'%s' llm-export '%s' '%s' -o '%s/clamped' --quiet", g_cli, g_ckpt, g_tok, g_work);
    int rc = run(cmd, out, sizeof out);
    CHECK(rc == 0, "llm-export with the default CL list on a seq_len-%d checkpoint: rc %d: %s", SEQ, rc, out);
    char path[700];
    snprintf(path, sizeof path, "%s/clamped/token_ar1_cl128_1_of_1.onnx", g_work);
    CHECK(access(path, R_OK) == 0, "the CL-128 decode graph exists");
    snprintf(path, sizeof path, "%s/clamped/token_ar1_cl256_1_of_1.onnx", g_work);
    CHECK(access(path, R_OK) != 0, "no CL-256 graph past seq_len");
    /* an explicit --cl past seq_len is still an error */
    snprintf(cmd, sizeof cmd, "'%s' llm-export '%s' '%s' -o '%s/never' --cl 256 --quiet", g_cli, g_ckpt, g_tok,
             g_work);
    rc = run(cmd, out, sizeof out);
    CHECK(rc != 0 && strstr(out, "--cl 256 exceeds the checkpoint's seq_len 128"), "explicit --cl 256: %s", out);
}

static char g_bundle[700];

static sy_status *open_runner(const char *dir, sy_llm_runner **r)
{
    *r = NULL;
    return g_llm->runner_create(g_env, dir, "threads=1", r);
}

/* a copy of the clamped bundle whose bundle.ini has `line` appended */
static const char *bundle_with(const char *name, const char *ini_extra)
{
    static char dir[800];
    snprintf(dir, sizeof dir, "%s/%s", g_work, name);
    char cmd[8192], out[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", dir, g_bundle, dir);
    if (run(cmd, out, sizeof out) != 0)
        return NULL;
    if (ini_extra) {
        char path[900];
        snprintf(path, sizeof path, "%s/bundle.ini", dir);
        const char *base = read_text(path);
        char text[8192];
        /* the [llm] keys replace the same keys of the base */
        snprintf(text, sizeof text, "%s%s", base ? base : "", ini_extra);
        write_file(path, text, strlen(text));
    }
    return dir;
}

static void test_vocab_small(void)
{
    sy_llm_runner *r = NULL;
    sy_status *st = open_runner(g_bundle, &r);
    REQUIRE(st == NULL, "runner: %s", st ? sy_status_get_message(st) : "");
    int32_t ids[64];
    size_t n = 0;
    st = g_llm->encode(r, "ab ba", true, ids, 64, &n);
    CHECK(st == NULL && n >= 2 && ids[0] == 1, "plain text encodes: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    /* 'Z' has no token; its fallback <0x5A> would be id 93 of 64 */
    st = g_llm->encode(r, "aZ", false, ids, 64, &n);
    CHECK(st && strstr(sy_status_get_message(st), "byte 0x5a has no token") &&
              strstr(sy_status_get_message(st), "id 93 is outside the vocabulary of 64"),
          "byte fallback past the vocabulary: %s", st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    g_llm->runner_release(r);
}

static void test_special_ids(void)
{
    static const struct {
        const char *name, *line, *want;
    } cases[] = {
        {"bos", "bos_token = 100000\n", "bos_token = 100000 is outside the vocabulary (0..63)"},
        {"pad", "pad_token = 64\n", "pad_token = 64 is outside the vocabulary (0..63)"},
        {"eos", "eos_token = 2, -5\n", "eos_token = -5 is outside the vocabulary (0..63)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char base[900];
        snprintf(base, sizeof base, "%s/bundle.ini", g_bundle);
        const char *text = read_text(base);
        REQUIRE(text, "read bundle.ini");
        /* drop the key from the base, then append the hostile value */
        char out[8192] = "";
        size_t o = 0;
        const char *key_end = strchr(cases[i].line, ' ');
        size_t kl = (size_t)(key_end - cases[i].line);
        for (const char *p = text; *p;) {
            const char *nl = strchr(p, '\n');
            size_t l = nl ? (size_t)(nl - p) + 1 : strlen(p);
            if (strncmp(p, cases[i].line, kl) || (p[kl] != ' ' && p[kl] != '='))
                o += (size_t)snprintf(out + o, sizeof out - o, "%.*s", (int)l, p);
            p += l;
        }
        snprintf(out + o, sizeof out - o, "%s", cases[i].line);
        const char *dir = bundle_with(cases[i].name, NULL);
        REQUIRE(dir, "copy bundle");
        char path[900];
        snprintf(path, sizeof path, "%s/bundle.ini", dir);
        write_file(path, out, strlen(out));
        sy_llm_runner *r = NULL;
        sy_status *st = open_runner(dir, &r);
        CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_MODEL && strstr(sy_status_get_message(st), cases[i].want),
              "%s: %s", cases[i].name, st ? sy_status_get_message(st) : "accepted");
        sy_status_free(st);
        if (r)
            g_llm->runner_release(r);
    }
}

static void test_last_n(void)
{
    sy_llm_runner *r = NULL;
    sy_status *st = open_runner(g_bundle, &r);
    REQUIRE(st == NULL, "runner: %s", st ? sy_status_get_message(st) : "");
    void *buf = NULL;
    size_t size = 0;
    st = g_llm->save_state_buffer(r, &buf, &size);
    REQUIRE(st == NULL && size > 72, "save state");
    /* magic 8, version 4, 9 x i32 header, 5 x f32/i32 sampler fields, then last_n */
    int32_t huge = INT32_MAX;
    memcpy((uint8_t *)buf + 68, &huge, 4);
    st = g_llm->load_state_buffer(r, buf, size);
    CHECK(st && strstr(sy_status_get_message(st), "penalty window last_n 2147483647"), "last_n 2^31-1: %s",
          st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    g_llm->free_buffer(buf);
    sy_llm_params p = {.struct_size = sizeof p, .max_tokens = 1, .penalty_last_n = INT32_MAX};
    sy_llm_result res = {.struct_size = sizeof res};
    st = g_llm->generate(r, "ab", &p, &res);
    CHECK(st && strstr(sy_status_get_message(st), "penalty_last_n 2147483647 is over the maximum window"),
          "generate with penalty_last_n 2^31-1: %s", st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    g_llm->runner_release(r);
}

static void test_fifo(void)
{
    const char *names[] = {"bundle.ini", "tokenizer.bin"};
    for (int i = 0; i < 2; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "fifo%d", i);
        const char *dir = bundle_with(nm, NULL);
        REQUIRE(dir, "copy bundle");
        char path[900];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
        REQUIRE(mkfifo(path, 0600) == 0, "mkfifo");
        alarm(30); /* a hang fails here */
        sy_llm_runner *r = NULL;
        sy_status *st = open_runner(dir, &r);
        alarm(0);
        CHECK(st && strstr(sy_status_get_message(st), "not a regular file"), "%s as a FIFO: %s", names[i],
              st ? sy_status_get_message(st) : "accepted");
        sy_status_free(st);
        if (r)
            g_llm->runner_release(r);
    }
}

/* the decode graph with its KV inputs declared float16 */
static void test_kv_dtype(void)
{
    const char *dir = bundle_with("kv16", NULL);
    REQUIRE(dir, "copy bundle");
    char path[900];
    snprintf(path, sizeof path, "%s/token_ar1_cl128_1_of_1.onnx", dir);
    FILE *f = fopen(path, "rb");
    REQUIRE(f, "open graph");
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)sz);
    bool ok = b && fread(b, 1, (size_t)sz, f) == (size_t)sz;
    fclose(f);
    REQUIRE(ok, "read graph");
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, (size_t)sz, b);
    free(b);
    REQUIRE(m && m->graph, "unpack");
    int changed = 0;
    for (size_t i = 0; i < m->graph->n_input; i++) {
        Onnx__ValueInfoProto *vi = m->graph->input[i];
        if (strstr(vi->name, "past_key") && vi->type && vi->type->tensor_type) {
            vi->type->tensor_type->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;
            changed++;
        }
    }
    size_t len = onnx__model_proto__get_packed_size(m);
    uint8_t *out = malloc(len);
    onnx__model_proto__pack(m, out);
    onnx__model_proto__free_unpacked(m, NULL);
    ok = write_file(path, out, len);
    free(out);
    REQUIRE(changed > 0 && ok, "a past_key input to change (%d)", changed);
    sy_llm_runner *r = NULL;
    sy_status *st = open_runner(dir, &r);
    CHECK(st && strstr(sy_status_get_message(st), "has dtype float16; this runner supports float32 KV"),
          "float16 KV named: %s", st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    if (r)
        g_llm->runner_release(r);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_llm_hostile CLI PLUGIN_DIR WORK_DIR\n");
        return 2;
    }
    snprintf(g_cli, sizeof g_cli, "%s", argv[1]);
    snprintf(g_work, sizeof g_work, "%s", argv[3]);
    mkdir(g_work, 0755);
    char ini[1024];
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = %s\n", argv[2]);
    sy_status *st = sy_env_create_from_string(ini, NULL, &g_env);
    if (st) {
        fprintf(stderr, "env: %s\n", sy_status_get_message(st));
        return 1;
    }
    g_llm = sy_get_extension(g_env, SY_LLM_EXTENSION_NAME, SY_LLM_EXTENSION_VERSION);
    if (!g_llm || !make_model()) {
        fprintf(stderr, "no llm extension, or cannot write the tiny model\n");
        return 1;
    }
    snprintf(g_bundle, sizeof g_bundle, "%s/clamped", g_work);
    RUN_TEST(test_export_clamp);
    RUN_TEST(test_vocab_small);
    RUN_TEST(test_special_ids);
    RUN_TEST(test_last_n);
    RUN_TEST(test_fifo);
    RUN_TEST(test_kv_dtype);
    sy_env_release(g_env);
    return SY_TEST_MAIN_RESULT();
}
