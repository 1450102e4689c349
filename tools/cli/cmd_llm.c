/*
 * switchyard llm: generate text with an LLM bundle through the "llm"
 * extension plugin (switchyard/ext/sy_llm.h). The CLI only fetches the extension table; all
 * LLM logic lives in plugins/llm.
 */
#include "cli.h"

#include <switchyard/ext/sy_llm.h>

#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f, "usage: switchyard llm --bundle DIR [--config INI] [--prompt TEXT | --prompt-ids 1,403,..] [--max-tokens N]\n"
               "                      [--temperature T] [--seed S] [--top-k K] [--top-p P] [--min-p P]\n"
               "                      [--repeat-penalty R] [--stop STR]... [--options K=V;...] [--ids] [--quiet]\n\n"
               "Streams the generated text of the bundle (see 'switchyard llm-export' and docs/llm.md),\n"
               "then prints time to first token, prefill and decode tokens/s, the time spent outside\n"
               "kernels and the KV bytes in use. Without --prompt it generates from BOS.\n"
               "Defaults: greedy (temperature 0), until EOS or the context is full.\n"
               "--ids prints the generated token ids; --quiet prints only the text.\n"
               "The providers come from the INI (--config), like every other command.\n");
}

static bool stream_cb(void *user, const char *piece, size_t len, int32_t token)
{
    (void)token;
    (void)user;
    fwrite(piece, 1, len, stdout);
    fflush(stdout);
    return true;
}

static double parse_double(const char *s, bool *ok)
{
    char *end;
    double v = strtod(s, &end);
    *ok = end != s && !*end;
    return v;
}

int cmd_llm(int argc, char **argv)
{
    const char *bundle = NULL, *config = NULL, *prompt = "", *options = NULL, *prompt_ids = NULL;
    sy_llm_params p = sy_llm_params_default();
    const char *stops[16];
    uint32_t n_stops = 0;
    bool print_ids = false, quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has = i + 1 < argc, ok = true;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(a, "--bundle") && has) {
            bundle = argv[++i];
        } else if (!strcmp(a, "--config") && has) {
            config = argv[++i];
        } else if (!strcmp(a, "--prompt") && has) {
            prompt = argv[++i];
        } else if (!strcmp(a, "--prompt-ids") && has) {
            prompt_ids = argv[++i];
        } else if (!strcmp(a, "--options") && has) {
            options = argv[++i];
        } else if (!strcmp(a, "--max-tokens") && has) {
            long v = cli_parse_long(argv[++i], 0, 1L << 30);
            if (v < 0)
                return cli_usage_error("llm", "--max-tokens needs a number >= 0, got '%s'", argv[i]);
            p.max_tokens = (int32_t)v;
        } else if (!strcmp(a, "--top-k") && has) {
            long v = cli_parse_long(argv[++i], 0, 1L << 30);
            if (v < 0)
                return cli_usage_error("llm", "--top-k needs a number >= 0, got '%s'", argv[i]);
            p.top_k = (int32_t)v;
        } else if (!strcmp(a, "--seed") && has) {
            char *end;
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (end == argv[i] || *end)
                return cli_usage_error("llm", "--seed needs a non-negative integer, got '%s'", argv[i]);
            p.seed = v;
        } else if (!strcmp(a, "--temperature") && has) {
            p.temperature = (float)parse_double(argv[++i], &ok);
            if (!ok || p.temperature < 0)
                return cli_usage_error("llm", "--temperature needs a number >= 0, got '%s'", argv[i]);
        } else if (!strcmp(a, "--top-p") && has) {
            p.top_p = (float)parse_double(argv[++i], &ok);
            if (!ok || p.top_p < 0 || p.top_p > 1)
                return cli_usage_error("llm", "--top-p needs a number in [0, 1], got '%s'", argv[i]);
        } else if (!strcmp(a, "--min-p") && has) {
            p.min_p = (float)parse_double(argv[++i], &ok);
            if (!ok || p.min_p < 0 || p.min_p > 1)
                return cli_usage_error("llm", "--min-p needs a number in [0, 1], got '%s'", argv[i]);
        } else if (!strcmp(a, "--repeat-penalty") && has) {
            p.repetition_penalty = (float)parse_double(argv[++i], &ok);
            if (!ok || p.repetition_penalty <= 0)
                return cli_usage_error("llm", "--repeat-penalty needs a number > 0, got '%s'", argv[i]);
        } else if (!strcmp(a, "--stop") && has) {
            if (n_stops == 16)
                return cli_usage_error("llm", "at most 16 --stop strings");
            stops[n_stops++] = argv[++i];
        } else if (!strcmp(a, "--ids")) {
            print_ids = true;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = true;
        } else {
            return cli_usage_error("llm", "unexpected argument '%s'", a);
        }
    }
    if (!bundle)
        return cli_usage_error("llm", "--bundle DIR is required");
    p.stop = n_stops ? stops : NULL;
    p.n_stop = n_stops;
    p.stream = stream_cb;

    sy_env *env = NULL;
    sy_status *st = cli_env(config, &env);
    if (st)
        return cli_fail(st, config ? config : "default configuration");
    const sy_llm_api *llm = sy_get_extension(env, SY_LLM_EXTENSION_NAME, SY_LLM_EXTENSION_VERSION);
    if (!llm || llm->struct_size < sizeof *llm) {
        fprintf(stderr, "switchyard llm: no plugin provides the 'llm' extension v%u (is libsy_llm in the plugin "
                        "directory or listed in the INI?)\n",
                SY_LLM_EXTENSION_VERSION);
        sy_env_release(env);
        return 1;
    }
    sy_llm_runner *r = NULL;
    if ((st = llm->runner_create(env, bundle, options, &r))) {
        sy_env_release(env);
        return cli_fail(st, bundle);
    }
    sy_llm_result res = {.struct_size = sizeof res};
    if (prompt_ids) {
        /* "1,403,407": token ids instead of text (no BOS is added) */
        size_t cap = strlen(prompt_ids) / 2 + 2, n = 0;
        int32_t *ids = malloc(cap * sizeof *ids);
        const char *q = prompt_ids;
        bool bad = !ids;
        while (!bad && *q) {
            char *end;
            long v = strtol(q, &end, 10);
            if (end == q || v < 0 || v > 1L << 30 || n == cap || (*end && *end != ',')) {
                bad = true;
                break;
            }
            ids[n++] = (int32_t)v;
            q = *end ? end + 1 : end;
        }
        if (bad) {
            free(ids);
            llm->runner_release(r);
            sy_env_release(env);
            return cli_usage_error("llm", "--prompt-ids needs ids like 1,403,407");
        }
        st = llm->generate_ids(r, ids, n, &p, &res);
        free(ids);
    } else {
        st = llm->generate(r, prompt, &p, &res);
    }
    int rc = 0;
    if (st) {
        fputc('\n', stdout);
        rc = cli_fail(st, bundle);
    } else {
        static const char *const reasons[] = {"none", "eos", "length", "user", "stop string", "context exhausted"};
        sy_llm_stats s = {.struct_size = sizeof s};
        llm->stats(r, &s);
        sy_llm_info info = {.struct_size = sizeof info};
        llm->info(r, &info);
        fputc('\n', stdout);
        if (print_ids) {
            printf("ids:");
            for (size_t i = 0; i < res.n_ids; i++)
                printf(" %d", res.ids[i]);
            printf("\n");
        }
        if (!quiet) {
            uint64_t total = s.prefill_ns + s.decode_ns;
            fprintf(stderr,
                    "\n--- %zu prompt tokens, %zu generated, stop: %s\n"
                    "time to first token: %.3f ms\n"
                    "prefill: %llu tokens in %.3f ms (%.1f tok/s)\n"
                    "decode: %llu tokens in %.3f ms (%.1f tok/s)\n"
                    "outside kernels: %.3f ms of %.3f ms (%.1f%%: KV copies, mask, RoPE, sampling)\n"
                    "KV in use: %zu bytes (%d positions, CL %d); reserved %zu bytes\n"
                    "bundle: %d layers, %d shards, AR {",
                    res.n_prompt, res.n_ids, reasons[res.stop < 6 ? res.stop : 0], (double)s.ttft_ns / 1e6,
                    (unsigned long long)s.prefill_tokens, (double)s.prefill_ns / 1e6, s.prefill_tok_s,
                    (unsigned long long)s.decode_tokens, (double)s.decode_ns / 1e6, s.decode_tok_s,
                    (double)s.outside_ns / 1e6, (double)total / 1e6, total ? 100.0 * (double)s.outside_ns / (double)total : 0.0,
                    s.kv_bytes_in_use, s.n_past, s.active_cl, s.kv_bytes_reserved, info.n_layers, info.n_shards);
            for (int i = 0; i < info.n_ar; i++)
                fprintf(stderr, "%s%d", i ? "," : "", info.ar[i]);
            fprintf(stderr, "} CL {");
            for (int i = 0; i < info.n_cl; i++)
                fprintf(stderr, "%s%d", i ? "," : "", info.cl[i]);
            fprintf(stderr, "}, %llu KV restrides\n", (unsigned long long)s.restrides);
        }
    }
    llm->runner_release(r);
    sy_env_release(env);
    return rc;
}
