/*
 * switchyard codegen MODEL --target ws63|hi3066 -o DIR: a standalone C99
 * package for a HiSpark RISC-V MCU. The riscv_mcu provider takes every
 * node (strict: a node it declines is an error naming the rule), the core
 * plans the one static workspace in its "mcu_sram" domain, the session
 * runs once on the host with the riscv_mcu kernels while the plugin records
 * them into that session's capture, and the plugin's "riscv_mcu.codegen"
 * extension writes the package with that run's input and outputs as its
 * test vector.
 */
#include "cli.h"
#include <switchyard/ext/sy_mcu_codegen.h>

#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: switchyard codegen MODEL --target ws63|hi3066 -o DIR [options]\n"
            "\n"
            "Writes a standalone C99 package for a HiSpark RISC-V MCU (rv32imfc): the model with its\n"
            "weights as const arrays, the workspace size the core planned, only the kernels the model\n"
            "needs, a small API (include/sy_model.h), a test main (semihosting under QEMU), a CMake\n"
            "toolchain file, and expected_output.txt from a host run of the same kernels.\n"
            "\n"
            "  --target T          ws63 (606 KB SRAM, 4 MB flash) or hi3066 (64 KB SRAM, 512 KB flash)\n"
            "  -o, --output DIR    the package folder (created)\n"
            "  --sram-budget B     workspace budget in bytes (K/M suffix); default ws63 303K, hi3066 48K\n"
            "  --flash-budget B    weights budget; default the chip's flash\n"
            "  --rules R           seed (default): ops-mcu.md Table A as the seed states it;\n"
            "                      tflm: also an int8 depth multiplier > 1 and the LSTM\n"
            "  --input NAME=FILE   an input (.npy or .pb); others get a deterministic pattern\n"
            "  --prefix P          the package's public names: include/P_model.h, P_model_create,\n"
            "                      P_MODEL_WORKSPACE_BYTES ... (a-z, 0-9, _; default sy), so several\n"
            "                      models link into one image\n"
            "  --config INI        use this configuration instead (it must configure\n"
            "                      [provider.riscv_mcu]; then --target and the budgets are not allowed)\n"
            "\n"
            "  --train             a training package instead (ws63 only): MODEL is an int8 QDQ model;\n"
            "                      its last fully connected layers train on the device with QAS-INT8,\n"
            "                      one step per sample; with --data DIR (the training split, as\n"
            "                      'switchyard train --data' reads it: IDX files or .npy/.pb folders),\n"
            "                      --trainable last:K|bias:K (default last:1), --steps N (default 200),\n"
            "                      --lr LR (0.01), --momentum M (0.9), --sram-budget B (default the chip's),\n"
            "                      --front auto|device|host: the frozen front (the layers before the\n"
            "                      trained ones) as an inference package in DIR/front run on the device\n"
            "                      before each step, or on the host with its codes as the samples; auto\n"
            "                      (default): the device when riscv_mcu places the whole front\n"
            "  --train --mode fp32 an FP32 training package: MODEL is a float model (a chain of depthwise\n"
            "                      Conv, Relu, Flatten, Concat, Gemm, ... docs/training.md) trained whole on\n"
            "                      the device, batch 1, as 'switchyard train --target ws63' trains it;\n"
            "                      --trainable all|last:K|bias (default all), --steps N (default 100),\n"
            "                      --lr LR (0.01), --optimizer sgd|adam (sgd), --momentum M (0),\n"
            "                      --weight-decay W (0), --sram-budget B, --config INI (the host trainer's)\n");
}

static sy_tensor *read_input(const char *file, sy_status **st)
{
    sy_tensor *t = NULL;
    *st = sy_tensor_read_file(file, &t);
    return t;
}

int cmd_codegen(int argc, char **argv)
{
    const char *model_path = NULL, *target = NULL, *dir = NULL, *sram = NULL, *flash = NULL, *rules = NULL,
               *config = NULL, *prefix = NULL;
    const char *pairs[16];
    int n_pairs = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--train"))
            return cmd_codegen_train(argc, argv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
#define OPT(name, var)                                                                                             \
    if (!strcmp(a, name)) {                                                                                        \
        if (!v)                                                                                                    \
            return cli_usage_error("codegen", "%s needs a value", name);                                           \
        var = v;                                                                                                   \
        i++;                                                                                                       \
        continue;                                                                                                  \
    }
        OPT("--target", target)
        OPT("-o", dir)
        OPT("--output", dir)
        OPT("--sram-budget", sram)
        OPT("--flash-budget", flash)
        OPT("--rules", rules)
        OPT("--config", config)
        OPT("--prefix", prefix)
#undef OPT
        if (!strcmp(a, "--input")) {
            if (!v || !strchr(v, '='))
                return cli_usage_error("codegen", "--input needs NAME=FILE");
            if (n_pairs == 16)
                return cli_usage_error("codegen", "at most 16 --input options");
            pairs[n_pairs++] = v;
            i++;
            continue;
        }
        if (a[0] == '-')
            return cli_usage_error("codegen", "unknown option '%s'", a);
        if (model_path)
            return cli_usage_error("codegen", "one model only ('%s' and '%s')", model_path, a);
        model_path = a;
    }
    if (!model_path || !dir)
        return cli_usage_error("codegen", "MODEL and -o DIR are required");
    if (config && (target || sram || flash || rules))
        return cli_usage_error("codegen", "--config replaces --target, --sram-budget, --flash-budget and --rules");
    if (!config && !target)
        return cli_usage_error("codegen", "--target ws63|hi3066 is required");

    sy_env *env = NULL;
    sy_status *st;
    if (config) {
        st = cli_env(config, &env);
    } else {
        char ini[1024];
        int n = snprintf(ini, sizeof ini,
                         "[switchyard]\nplugin_dirs = @default\nproviders = riscv_mcu\nstrict = true\nthreads = 1\n"
                         "[provider.riscv_mcu]\ntarget = %s\n",
                         target);
        if (sram)
            n += snprintf(ini + n, sizeof ini - (size_t)n, "sram_budget = %s\n", sram);
        if (flash)
            n += snprintf(ini + n, sizeof ini - (size_t)n, "flash_budget = %s\n", flash);
        if (rules)
            n += snprintf(ini + n, sizeof ini - (size_t)n, "rules = %s\n", rules);
        if (n >= (int)sizeof ini)
            return cli_usage_error("codegen", "option values too long");
        st = sy_env_create_from_string(ini, NULL, &env);
    }
    if (st)
        return cli_fail(st, "codegen: configuration");
    const sy_mcu_codegen_ext *ext = sy_get_extension(env, SY_MCU_EXT_NAME, SY_MCU_EXT_VERSION);
    if (!ext || !sy_mcu_ext_has_capture(ext)) {
        sy_env_release(env);
        return cli_fail(sy_status_create(SY_ERR_NOT_FOUND,
                                         ext ? "the riscv_mcu plugin is too old (extension '%s' without session "
                                               "captures)"
                                             : "the riscv_mcu plugin (extension '%s') is not loaded",
                                         SY_MCU_EXT_NAME),
                        "codegen");
    }
    sy_model *m = NULL;
    sy_session *s = NULL;
    sy_mcu_capture *cap = NULL;
    sy_tensor *ins[16] = {0};
    bool from_file[16] = {false};
    const sy_tensor *outs[16] = {0};
    sy_tensor out_named[16];
    int rc = 1;
    if ((st = sy_model_load(env, model_path, &m))) {
        rc = cli_fail(st, model_path);
        goto done;
    }
    size_t n_in = sy_model_input_count(m), n_out = sy_model_output_count(m);
    if (n_in > 16 || n_out > 16) {
        rc = cli_fail(sy_status_create(SY_ERR_UNSUPPORTED, "at most 16 inputs and outputs"), model_path);
        goto done;
    }
    sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = -1};
    if ((st = ext->session_create(ext, env, m, &so, &s, &cap))) {
        rc = cli_fail(st, "codegen: placing and planning the model on riscv_mcu");
        goto done;
    }
    for (size_t i = 0; i < n_in; i++) {
        sy_value_info vi = {.struct_size = sizeof vi};
        sy_model_input_info(m, i, &vi);
        const char *file = NULL;
        for (int p = 0; p < n_pairs; p++) {
            const char *eq = strchr(pairs[p], '=');
            if ((size_t)(eq - pairs[p]) == strlen(vi.name) && !strncmp(pairs[p], vi.name, strlen(vi.name)))
                file = eq + 1;
        }
        if (file) {
            ins[i] = read_input(file, &st);
            from_file[i] = true;
            if (st) {
                rc = cli_fail(st, file);
                goto done;
            }
            printf("input %zu '%s' from %s\n", i, vi.name, file);
        } else {
            ins[i] = cli_make_pattern_input(&vi);
            if (!ins[i]) {
                rc = cli_fail(sy_status_create(SY_ERR_UNSUPPORTED, "no deterministic input for '%s'", vi.name), "codegen");
                goto done;
            }
            printf("input %zu '%s': deterministic pattern (sin(0.1*i))\n", i, vi.name);
        }
        ins[i]->name = vi.name;
        if ((st = sy_session_set_input_by_index(s, i, ins[i], SY_INPUT_COPY))) {
            rc = cli_fail(st, "codegen: input");
            goto done;
        }
    }
    st = ext->capture_run(cap);
    if (st) {
        rc = cli_fail(st, "codegen: host run");
        goto done;
    }
    for (size_t i = 0; i < n_out; i++) {
        const sy_tensor *t = NULL;
        if ((st = sy_session_get_output(s, i, &t))) {
            rc = cli_fail(st, "codegen: output");
            goto done;
        }
        sy_value_info vi = {.struct_size = sizeof vi};
        sy_model_output_info(m, i, &vi);
        out_named[i] = *t;
        out_named[i].name = vi.name;
        outs[i] = &out_named[i];
    }
    size_t ws = 0;
    bool found = false;
    for (size_t d = 0; d < sy_session_memory_domain_count(s); d++) {
        sy_memory_report r = {.struct_size = sizeof r};
        if (sy_session_memory_report(s, d, &r) && r.domain && !strcmp(r.domain, "mcu_sram")) {
            ws = r.arena_bytes;
            found = true;
        }
    }
    if (!found) {
        /* no static plan: a shape known only at run time makes the session run node by node, and a
         * package's workspace is planned once. Unique's outputs are planned at their bound when nothing
         * but the application reads them (ABI 1.6), the seed's own rule for them */
        rc = cli_fail(sy_status_create(SY_ERR_UNSUPPORTED,
                                       "the session has no mcu_sram arena: a shape known only at run time makes "
                                       "it run node by node, while a package plans its workspace statically. A "
                                       "Unique's Y, indices and counts are planned at their bound only when no "
                                       "node reads them (ops-mcu.md Table A #86, Table B #109: they \"must be "
                                       "terminal graph outputs\"); other value-dependent shapes are not "
                                       "packaged (docs/mcu.md)"),
                      "codegen");
        goto done;
    }
    const char *base = strrchr(model_path, '/');
    sy_mcu_codegen_request req = {
        .struct_size = sizeof req,
        .dir = dir,
        .model_name = base ? base + 1 : model_path,
        .workspace_bytes = ws,
        .n_inputs = (uint32_t)n_in,
        .n_outputs = (uint32_t)n_out,
        .inputs = (const sy_tensor *const *)ins,
        .outputs = outs,
        .prefix = prefix,
    };
    char summary[512] = "";
    if ((st = ext->capture_emit(cap, &req, summary, sizeof summary))) {
        rc = cli_fail(st, "codegen");
        goto done;
    }
    printf("%s\n", summary);
    for (size_t i = 0; i < n_out; i++)
        cli_print_tensor_summary(stdout, "host output", outs[i]);
    /* CMake reads a relative CMAKE_TOOLCHAIN_FILE against the build folder,
     * so the command names it by its absolute path */
    char *abs = realpath(dir, NULL);
    printf("wrote %s: build with\n"
           "  cmake -S %s -B %s/build -DCMAKE_TOOLCHAIN_FILE=%s/toolchain-riscv32.cmake && cmake --build %s/build\n"
           "run with\n"
           "  qemu-system-riscv32 -machine virt -bios none -nographic -semihosting-config enable=on,target=native "
           "-icount shift=0 -kernel %s/build/sy_model_main.elf\n",
           dir, dir, dir, abs ? abs : dir, dir, dir);
    free(abs);
    rc = 0;
done:
    ext->capture_release(cap);
    for (size_t i = 0; i < 16; i++) {
        if (from_file[i])
            sy_tensor_free(ins[i]);
        else
            free(ins[i]);
    }
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
    return rc;
}
