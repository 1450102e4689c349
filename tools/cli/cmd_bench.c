/* switchyard bench: latency over repeated runs, and the memory report. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void help(FILE *f)
{
    fprintf(f, "usage: switchyard bench MODEL [--config INI] [--iters N] [--warmup N] [--threads N]\n"
               "                       [--trace FILE] [--input-dir DIR] [--requant onnx|gemmlowp|single_rounding]\n"
               "                       [--emulator-report]\n\n"
               "Runs MODEL --warmup times (default 3), then --iters times (default 20) and\n"
               "prints min / median / max milliseconds per inference, then for each memory\n"
               "domain the arena bytes, the lower bound (largest sum of bytes live at any\n"
               "step), their ratio, the breakdown, and the bytes a plan without reuse needs.\n"
               "With an emulated provider in the configuration (htp, lpai, aic) it also\n"
               "prints the modelled cycles and time per inference the emulators report.\n"
               "  --compiled FILE  load compiled partitions from a cache of 'switchyard compile'\n"
               "  --trace FILE   write a Chrome trace (Perfetto, chrome://tracing) of the timed runs\n"
               "  --requant FORM requantization of the integer kernels: onnx, gemmlowp or single_rounding\n"
               "  --emulator-report  after the figures, print each emulated provider's report\n"
               "                 (per node memory verdict, unit, cycles; modelled latency)\n"
               "Inputs: --input-dir as for 'run', else a deterministic pattern.\n");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int cmd_bench(int argc, char **argv)
{
    const char *config = NULL, *path = NULL, *trace = NULL, *compiled = NULL, *requant = NULL;
    long iters = 20, warmup = 3, threads = 0;
    cli_inputs in = {.quiet = 1};
    bool emu_report = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool v = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(a, "--config") && v) {
            config = argv[++i];
        } else if (!strcmp(a, "--compiled") && v) {
            compiled = argv[++i];
        } else if (!strcmp(a, "--requant") && v) {
            if (!(requant = cli_requant_arg("bench", argv[++i])))
                return 2;
        } else if (!strcmp(a, "--emulator-report")) {
            emu_report = true;
        } else if (!strcmp(a, "--trace") && v) {
            trace = argv[++i];
        } else if (!strcmp(a, "--input-dir") && v) {
            in.dir = argv[++i];
        } else if (!strcmp(a, "--iters") && v) {
            if ((iters = cli_parse_long(argv[++i], 1, 1000000)) < 0)
                return cli_usage_error("bench", "--iters expects an integer from 1 to 1000000, got '%s'", argv[i]);
        } else if (!strcmp(a, "--warmup") && v) {
            if ((warmup = cli_parse_long(argv[++i], 0, 1000000)) < 0)
                return cli_usage_error("bench", "--warmup expects an integer from 0 to 1000000, got '%s'", argv[i]);
        } else if (!strcmp(a, "--threads") && v) {
            if ((threads = cli_parse_long(argv[++i], 1, 256)) < 0)
                return cli_usage_error("bench", "--threads expects an integer from 1 to 256, got '%s'", argv[i]);
        } else if (a[0] != '-' && !path) {
            path = a;
        } else {
            return cli_usage_error("bench", "unexpected argument '%s'", a);
        }
    }
    if (!path)
        return cli_usage_error("bench", "a MODEL path is required");
    int rc = 1;
    sy_env *env = NULL;
    sy_model *m = NULL;
    sy_session *s = NULL;
    double *ms = calloc((size_t)iters, sizeof *ms);
    sy_status *st = cli_env(config, &env);
    if (st) {
        free(ms);
        return cli_fail(st, config ? config : "default configuration");
    }
    /* emulated providers report modelled cycles as profiling events: profile
     * when one of them is in the priority list, to sum the modelled time */
    bool emulated = false;
    for (size_t p = 0; p < sy_env_provider_count(env); p++)
        emulated |= sy_env_provider_is_emulator(env, p);
    sy_session_options so = {.struct_size = sizeof so, .threads = (int32_t)threads, .strict = -1,
                             .profiling = trace != NULL || emulated, .compiled_cache = compiled,
                             .requant = requant};
    if ((st = sy_model_load(env, path, &m)) || (st = sy_session_create(env, m, &so, &s)) ||
        (st = cli_feed_inputs(s, m, &in, stdout))) {
        rc = cli_fail(st, NULL);
        goto done;
    }
    for (long i = 0; i < warmup; i++)
        if ((st = sy_session_run(s))) {
            rc = cli_fail(st, NULL);
            goto done;
        }
    sy_session_profile_clear(s);
    for (long i = 0; i < iters; i++) {
        double t0 = now_ms();
        if ((st = sy_session_run(s))) {
            rc = cli_fail(st, NULL);
            goto done;
        }
        ms[i] = now_ms() - t0;
    }
    qsort(ms, (size_t)iters, sizeof *ms, cmp_double);
    printf("model: %s\n%ld runs after %ld warm-up: min %.3f ms, median %.3f ms, max %.3f ms per inference\n", path,
           iters, warmup, ms[0], ms[iters / 2], ms[iters - 1]);
    /* modelled time of emulated providers, summed over the timed runs */
    uint64_t cycles = 0, modelled_ns = 0;
    size_t n_emu = 0;
    for (size_t e = 0; e < sy_session_profile_event_count(s); e++) {
        sy_profile_event ev = {.struct_size = sizeof ev};
        if (sy_session_profile_event(s, e, &ev) && ev.category && !strcmp(ev.category, "emulated")) {
            n_emu++;
            modelled_ns += ev.duration_ns;
            if (ev.cycles > 0)
                cycles += (uint64_t)ev.cycles;
        }
    }
    if (n_emu)
        printf("modelled on the emulated target: %.0f cycles, %.3f ms per inference (%zu emulated events over %ld runs)\n",
               (double)cycles / (double)iters, (double)modelled_ns / 1e6 / (double)iters, n_emu, iters);
    for (size_t d = 0; d < sy_session_memory_domain_count(s); d++) {
        sy_memory_report r = {.struct_size = sizeof r};
        sy_session_memory_report(s, d, &r);
        printf("memory domain %s: arena %zu bytes, lower bound %zu bytes, ratio %.3f; naive plan %zu bytes (%.2fx the arena)\n",
               r.domain, r.arena_bytes, r.lower_bound, r.lower_bound ? (double)r.arena_bytes / (double)r.lower_bound : 1.0,
               r.naive_bytes, r.arena_bytes ? (double)r.naive_bytes / (double)r.arena_bytes : 0.0);
        printf("  breakdown: activations %zu, scratch %zu, persistent state %zu, copies %zu, packed weights %zu; "
               "model weights %zu (mapped, not in the arena)\n",
               r.activations, r.scratch, r.persistent, r.copies, r.packed_weights, r.weights);
    }
    if (emu_report)
        cli_print_emulator_reports(env);
    if (trace) {
        if ((st = sy_session_write_trace(s, trace))) {
            rc = cli_fail(st, NULL);
            goto done;
        }
        printf("wrote %s (%zu events)\n", trace, sy_session_profile_event_count(s));
    }
    rc = 0;
done:
    free(ms);
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
    return rc;
}
