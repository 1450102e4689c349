/*
 * sy_llm_export: a llama2.c checkpoint + tokenizer -> an LLM bundle
 * (docs/llm.md): ONNX graphs `prompt_arA_clC_i_of_N.onnx` /
 * `token_ar1_clC_i_of_N.onnx` (llm_graph.c) whose weights live once in
 * `weights.bin` (ONNX external data, llm_checkpoint.c), `bundle.ini`, and
 * `tokenizer.bin`.
 */
#include "llm_internal.h"
#include "tl_files.h"

#include <switchyard/sy_sdk.h> /* SY_TRY */
#include <switchyard/sy_tools.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct xopts {
    int shards, n_ar, n_cl;
    int ar[SY_LLM_EXPORT_MAX_VARIANTS], cl[SY_LLM_EXPORT_MAX_VARIANTS];
    bool fp16, onnx_attention;
    bool cl_default; /* the default CL list: clamped to seq_len, not refused (as --help says) */
    sy_tools_progress_fn progress;
    void *user;
} xopts;

#define FITS(o, field) ((o)->struct_size >= offsetof(sy_llm_export_options, field) + sizeof((o)->field))

/* one list of AR or CL values: 1 .. max each, ascending, no repeats */
static sy_status *check_list(const char *what, const int *v, int n, int max)
{
    if (n < 0 || n > SY_LLM_EXPORT_MAX_VARIANTS)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "--%s: %d values, expected 1 to %d", what, n,
                                SY_LLM_EXPORT_MAX_VARIANTS);
    for (int i = 0; i < n; i++)
        if (v[i] < 1 || v[i] > max || (i && v[i] <= v[i - 1]))
            return sy_status_create(SY_ERR_INVALID_ARGUMENT, "--%s: value %d (%d) is not in 1..%d or not ascending",
                                    what, i, v[i], max);
    return NULL;
}

static sy_status *read_options(const sy_llm_export_options *o, xopts *x)
{
    memset(x, 0, sizeof *x);
    x->shards = 1;
    x->n_ar = 2;
    x->ar[0] = 1;
    x->ar[1] = 128;
    x->n_cl = 3;
    x->cl[0] = 128;
    x->cl[1] = 256;
    x->cl[2] = 512;
    x->cl_default = true;
    if (!o)
        return NULL;
    if (FITS(o, shards) && o->shards)
        x->shards = o->shards;
    if (FITS(o, ar) && o->n_ar) {
        SY_TRY(check_list("ar", o->ar, o->n_ar, 1 << 16));
        x->n_ar = o->n_ar;
        memcpy(x->ar, o->ar, sizeof x->ar);
    }
    if (FITS(o, cl) && o->n_cl) {
        SY_TRY(check_list("cl", o->cl, o->n_cl, 1 << 20));
        x->n_cl = o->n_cl;
        memcpy(x->cl, o->cl, sizeof x->cl);
        x->cl_default = false;
    }
    if (FITS(o, fp16))
        x->fp16 = o->fp16 != 0;
    if (FITS(o, onnx_attention))
        x->onnx_attention = o->onnx_attention != 0;
    if (FITS(o, progress_user)) {
        x->progress = o->progress;
        x->user = o->progress_user;
    }
    return NULL;
}

static int write_bundle_ini(ectx *e, const char *dir, const xopts *o, int32_t vocab)
{
    char ini[2048], path[4200];
    int maxcl = 0;
    for (int i = 0; i < o->n_cl; i++)
        maxcl = o->cl[i] > maxcl ? o->cl[i] : maxcl;
    int n = snprintf(ini, sizeof ini,
                     "# Switchyard LLM bundle (docs/llm.md). AR, CL and shards come from the graph names.\n"
                     "[llm]\n"
                     "format = switchyard-llm-bundle\n"
                     "version = 1\n"
                     "architecture = llama\n"
                     "weights = %s\n"
                     "weights_dtype = %s\n"
                     "tokenizer = %s\n"
                     "tokenizer_type = llama2c\n"
                     "n_vocab = %d\n"
                     "context_size = %d\n"
                     "bos_token = 1\n"
                     "eos_token = 1\n"
                     "pad_token = 1\n"
                     "rope_theta = 10000\n"
                     "rope_pairing = interleaved\n"
                     "mask_value = -1e9\n",
                     LLM_WEIGHTS_FILE, o->fp16 ? "float16" : "float32", LLM_TOKENIZER_FILE, vocab, maxcl);
    snprintf(path, sizeof path, "%s/bundle.ini", dir);
    return llm_take(e, tl_write_atomic(path, ini, (size_t)n, NULL, 0));
}

sy_status *sy_llm_export(const char *checkpoint, const char *tokenizer, const char *out_dir,
                         const sy_llm_export_options *opts)
{
    if (!checkpoint || !tokenizer || !out_dir)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_llm_export: checkpoint, tokenizer and out_dir are required");
    xopts o;
    SY_TRY(read_options(opts, &o));
    ectx e = {0};
    tl_pool pl = {0};
    uint8_t *cdata = NULL, *tdata = NULL;
    size_t csize = 0, tsize = 0;
    if (llm_take(&e, tl_read_file(checkpoint, &cdata, &csize)) || llm_take(&e, tl_read_file(tokenizer, &tdata, &tsize)))
        goto out;
    ckpt c;
    if (llm_parse_ckpt(&e, checkpoint, cdata, csize, &c))
        goto out;
    int32_t vocab = c.h.vocab_size > 0 ? c.h.vocab_size : -c.h.vocab_size;
    if (llm_check_tokenizer(&e, tokenizer, tdata, tsize, vocab))
        goto out;
    if (o.shards < 1 || o.shards > c.h.n_layers + 1) {
        llm_fail(&e, SY_ERR_INVALID_ARGUMENT,
                 "--shards %d: the model has %d layers (1 .. %d shards, the last may hold only the LM head)", o.shards,
                 c.h.n_layers, c.h.n_layers + 1);
        goto out;
    }
    bool has_ar1 = false;
    for (int i = 0; i < o.n_ar; i++)
        has_ar1 |= o.ar[i] == 1;
    if (!has_ar1 || !o.n_cl) {
        llm_fail(&e, SY_ERR_INVALID_ARGUMENT,
                 "--ar must include 1 (the decode graphs) and --cl must name at least one context length");
        goto out;
    }
    if (o.cl_default) {
        /* each default CL up to seq_len, or seq_len itself when none fits */
        int n = 0;
        for (int i = 0; i < o.n_cl; i++)
            if (o.cl[i] <= c.h.seq_len)
                o.cl[n++] = o.cl[i];
        if (!n && c.h.seq_len > 1)
            o.cl[n++] = c.h.seq_len;
        o.n_cl = n;
    }
    for (int i = 0; i < o.n_cl; i++)
        if (o.cl[i] > c.h.seq_len) {
            llm_fail(&e, SY_ERR_INVALID_ARGUMENT, "--cl %d exceeds the checkpoint's seq_len %d", o.cl[i], c.h.seq_len);
            goto out;
        }
    if (llm_take(&e, tl_mkdirs(out_dir)))
        goto out;
    wfile w = {.fp16 = o.fp16};
    if (llm_build_weights(&e, &pl, &c, &w) || llm_write_weights(&e, out_dir, &w))
        goto out;
    /* layers per shard: the first min(shards, n_layers) shards share the layers */
    int n_layer_shards = o.shards > c.h.n_layers ? c.h.n_layers : o.shards;
    size_t n_graphs = 0, total = 0;
    for (int a = 0; a < o.n_ar; a++)
        for (int ci = 0; ci < o.n_cl; ci++)
            total += o.ar[a] < o.cl[ci] ? (size_t)o.shards : 0;
    for (int a = 0; a < o.n_ar; a++)
        for (int ci = 0; ci < o.n_cl; ci++) {
            if (o.ar[a] >= o.cl[ci])
                continue; /* kv_len = CL - AR must be positive */
            for (int s = 1; s <= o.shards; s++) {
                llm_graph_spec gs = {.ar = o.ar[a], .cl = o.cl[ci], .shard = s, .n_shards = o.shards,
                                     .fused = !o.onnx_attention};
                gs.l0 = (s - 1) < n_layer_shards ? (int)((int64_t)c.h.n_layers * (s - 1) / n_layer_shards) : c.h.n_layers;
                gs.l1 = (s - 1) < n_layer_shards ? (int)((int64_t)c.h.n_layers * s / n_layer_shards) : c.h.n_layers;
                char path[4200], msg[4400];
                size_t n_nodes = 0, bytes = 0;
                if (llm_write_graph(&e, &pl, out_dir, &w, &c, &gs, path, sizeof path, &n_nodes, &bytes))
                    goto out;
                n_graphs++;
                if (o.progress) {
                    snprintf(msg, sizeof msg, "wrote %s (%zu nodes, %zu bytes)", path, n_nodes, bytes);
                    o.progress(o.user, "graph", n_graphs, total, msg);
                }
            }
        }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", out_dir, LLM_TOKENIZER_FILE);
    if (llm_take(&e, tl_write_atomic(path, tdata, tsize, NULL, 0)) || write_bundle_ini(&e, out_dir, &o, vocab))
        goto out;
    if (o.progress) {
        char msg[4400];
        snprintf(msg, sizeof msg, "bundle %s: %zu graphs, weights %zu bytes (%s), tokenizer %zu bytes", out_dir,
                 n_graphs, w.bytes, o.fp16 ? "float16" : "float32", tsize);
        o.progress(o.user, "bundle", 1, 1, msg);
    }
out:
    free(cdata);
    free(tdata);
    tl_pool_free(&pl);
    return e.st;
}
