/* switchyard llm-export: a llama2.c checkpoint -> an LLM bundle (docs/llm.md),
 * the command over sy_llm_export (switchyard/sy_tools.h). */
#include "cli.h"

#include <switchyard/sy_tools.h>

#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f, "usage: switchyard llm-export CHECKPOINT TOKENIZER -o DIR [--shards N] [--ar 1,32,128]\n"
               "                             [--cl 128,256,512] [--dtype fp32|fp16]\n"
               "                             [--attention fused|onnx] [--quiet]\n\n"
               "Writes an LLM bundle from a llama2.c checkpoint and tokenizer: ONNX graphs\n"
               "prompt_arA_clC_i_of_N.onnx (A > 1) and token_ar1_clC_i_of_N.onnx, one per\n"
               "(AR, CL, shard) with CL > AR, whose weights are stored once in weights.bin\n"
               "(ONNX external data shared by every graph), bundle.ini and tokenizer.bin.\n"
               "Defaults: --shards 1 --ar 1,128 --cl 128,256,512 (each at most the checkpoint's\n"
               "seq_len) --dtype fp32 --attention fused. --attention fused emits one\n"
               "switchyard.llm CausalAttention node per layer (plugins/ops_llm: reads only the\n"
               "unmasked KV columns, no Concat); onnx emits standard opset-17 ops only.\n"
               "Run the bundle with 'switchyard llm --bundle DIR'.\n");
}

/* "1,32,128" -> ascending unique list */
static int parse_list(const char *s, int *out, int cap, long max)
{
    int n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > max || (*end && *end != ','))
            return -1;
        int pos = 0;
        while (pos < n && out[pos] < v)
            pos++;
        if (pos == n || out[pos] != v) {
            if (n == cap)
                return -1;
            memmove(out + pos + 1, out + pos, (size_t)(n - pos) * sizeof *out);
            out[pos] = (int)v;
            n++;
        }
        p = *end ? end + 1 : end;
    }
    return n ? n : -1;
}

static void progress(void *user, const char *phase, size_t done, size_t total, const char *message)
{
    (void)user, (void)phase, (void)done, (void)total;
    if (message)
        printf("%s\n", message);
}

int cmd_llm_export(int argc, char **argv)
{
    /* n_cl 0: the library's default CL list, clamped to the checkpoint's seq_len */
    sy_llm_export_options o = {.struct_size = sizeof o, .shards = 1, .n_ar = 2, .ar = {1, 128}, .n_cl = 0,
                               .progress = progress};
    const char *pos[2] = {NULL, NULL}, *out_dir = NULL;
    int n_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
            out_dir = argv[++i];
        } else if (!strcmp(a, "--shards") && i + 1 < argc) {
            long v = cli_parse_long(argv[++i], 1, 1024);
            if (v < 0)
                return cli_usage_error("llm-export", "--shards needs a positive number, got '%s'", argv[i]);
            o.shards = (int)v;
        } else if (!strcmp(a, "--ar") && i + 1 < argc) {
            o.n_ar = parse_list(argv[++i], o.ar, SY_LLM_EXPORT_MAX_VARIANTS, 1 << 16);
            if (o.n_ar < 0)
                return cli_usage_error("llm-export", "--ar needs up to %d positive numbers like 1,32,128, got '%s'",
                                       SY_LLM_EXPORT_MAX_VARIANTS, argv[i]);
        } else if (!strcmp(a, "--cl") && i + 1 < argc) {
            o.n_cl = parse_list(argv[++i], o.cl, SY_LLM_EXPORT_MAX_VARIANTS, 1 << 20);
            if (o.n_cl < 0)
                return cli_usage_error("llm-export", "--cl needs up to %d positive numbers like 128,256,512, got '%s'",
                                       SY_LLM_EXPORT_MAX_VARIANTS, argv[i]);
        } else if (!strcmp(a, "--dtype") && i + 1 < argc) {
            const char *v = argv[++i];
            if (!strcmp(v, "fp32") || !strcmp(v, "float32"))
                o.fp16 = 0;
            else if (!strcmp(v, "fp16") || !strcmp(v, "float16"))
                o.fp16 = 1;
            else
                return cli_usage_error("llm-export", "--dtype is fp32 or fp16, got '%s'", v);
        } else if (!strcmp(a, "--attention") && i + 1 < argc) {
            const char *v = argv[++i];
            if (!strcmp(v, "fused"))
                o.onnx_attention = 0;
            else if (!strcmp(v, "onnx"))
                o.onnx_attention = 1;
            else
                return cli_usage_error("llm-export", "--attention is fused or onnx, got '%s'", v);
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            o.progress = NULL;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("llm-export", "unknown option '%s'", a);
        } else if (n_pos < 2) {
            pos[n_pos++] = a;
        } else {
            return cli_usage_error("llm-export", "unexpected argument '%s'", a);
        }
    }
    if (n_pos != 2 || !out_dir)
        return cli_usage_error("llm-export", "needs CHECKPOINT, TOKENIZER and -o DIR");
    sy_status *st = sy_llm_export(pos[0], pos[1], out_dir, &o);
    return st ? cli_fail(st, "llm-export") : 0;
}
