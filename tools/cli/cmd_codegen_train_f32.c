/*
 * switchyard codegen --train --mode fp32 MODEL --target ws63 --data DIR -o DIR
 *                    [--trainable all|last:K|bias] [--steps N] [--lr LR]
 *                    [--optimizer sgd|adam] [--momentum M] [--weight-decay W]
 *                    [--sram-budget B] [--config INI]
 *
 * A ws63 package that runs FP32 training steps of a float ONNX model on the
 * device, batch 1: the host builds the training artifacts as `switchyard
 * train --target ws63` does (sy_train_build: seed 001 §4's FP32 rows checked)
 * into DIR/artifacts, reads them as a chain of layers (sy_train_chain_read),
 * takes the same N steps on the first N training samples in the host trainer
 * (sy_train_session_step, in the env of --config, else the default one) and hands the starting tensors, the samples and the
 * host's final tensors to the riscv_mcu plugin, which writes the package
 * (its "riscv_mcu.codegen" extension, emit_train_f32_env) with the host's
 * tensors as expected_output.txt.
 */
#include "cli.h"
#include "codegen_train_args.h"

#include <switchyard/ext/sy_mcu_codegen.h>
#include <switchyard/sy_train.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cmd_codegen_train_f32(int argc, char **argv)
{
    cg_train_args ca = {.trainable = "all", .steps = 100, .lr = 0.01f};
    const char *config = NULL;
    float wd = 0.0f;
    int optimizer = SY_TRAIN_SGD;
    for (int i = 1; i < argc; i++) {
        int taken = cg_train_arg(argc, argv, &i, &ca);
        if (taken < 0)
            return -taken;
        if (taken)
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool known = !strcmp(a, "--config") || !strcmp(a, "--optimizer") || !strcmp(a, "--weight-decay");
        if (!known)
            return cli_usage_error("codegen", "--train --mode fp32: unknown option '%s'", a);
        if (!v)
            return cli_usage_error("codegen", "%s needs a value", a);
        i++;
        if (!strcmp(a, "--config"))
            config = v;
        else if (!strcmp(a, "--weight-decay")) {
            if (cg_train_float(a, v, &wd))
                return 2;
        } else if (!strcmp(v, "sgd"))
            optimizer = SY_TRAIN_SGD;
        else if (!strcmp(v, "adam"))
            optimizer = SY_TRAIN_ADAM;
        else
            return cli_usage_error("codegen", "--optimizer: expected sgd or adam, got '%s'", v);
    }
    if (cg_train_finish(&ca))
        return 2;
    const char *model = ca.model, *target = ca.target, *dir = ca.dir, *data = ca.data, *trainable = ca.trainable;
    const long steps = ca.steps;
    const float lr = ca.lr, momentum = ca.momentum;
    sy_train_build_options bo = {.struct_size = sizeof bo, .loss = SY_TRAIN_LOSS_CROSS_ENTROPY,
                                 .optimizer = optimizer, .momentum = momentum, .weight_decay = wd, .target = target};
    if (!strcmp(trainable, "bias"))
        bo.trainable = SY_TRAIN_BIASES;
    else if (!strncmp(trainable, "last:", 5)) {
        long k = cli_parse_long(trainable + 5, 1, 1 << 20);
        if (k < 0)
            return cli_usage_error("codegen", "--trainable last:K: K must be a positive integer");
        bo.trainable = SY_TRAIN_LAST_K;
        bo.last_k = (int)k;
    } else if (strcmp(trainable, "all"))
        return cli_usage_error("codegen", "--mode fp32 --trainable: expected all, last:K or bias, got '%s'",
                               trainable);
    const unsigned long long budget = ca.sram_budget;

    sy_env *menv = NULL, *henv = NULL;
    sy_train_session *ts = NULL;
    sy_train_chain *ch = NULL;
    sy_dataset *train = NULL;
    sy_mcu_f32_layer *layers = NULL;
    sy_mcu_f32_geom *geom = NULL;
    float *samples = NULL, *rates = NULL;
    int32_t *labs = NULL, *w_kn = NULL;
    int rc = 1;
    sy_status *st;
    char ini[512], art[4096];
    snprintf(ini, sizeof ini,
             "[switchyard]\nplugin_dirs = @default\nproviders = riscv_mcu\n[provider.riscv_mcu]\ntarget = %s\n", target);
    if ((size_t)snprintf(art, sizeof art, "%s/artifacts", dir) >= sizeof art)
        return cli_usage_error("codegen", "-o: path too long");
    if ((st = cli_env(config, &henv)))
        return cli_fail(st, config ? config : "codegen --train: the default env");
    if ((st = sy_env_create_from_string(ini, NULL, &menv))) {
        sy_env_release(henv);
        return cli_fail(st, "codegen --train: configuration");
    }
    const sy_mcu_codegen_ext *ext = sy_get_extension(menv, SY_MCU_EXT_NAME, SY_MCU_EXT_VERSION);
    if (!ext || !sy_mcu_ext_has_capture(ext) || !sy_mcu_ext_has_train_f32(ext)) {
        rc = cli_fail(sy_status_create(SY_ERR_NOT_FOUND, "the riscv_mcu plugin has no FP32 training packages"),
                      "codegen");
        goto done;
    }
    /* the artifacts `switchyard train --target T` would build */
    bo.env = henv;
    sy_train_build_report rep = {.struct_size = sizeof rep};
    if ((st = sy_train_build(model, &bo, art, &rep))) {
        rc = cli_fail(st, model);
        goto done;
    }
    if ((st = sy_train_chain_read(art, &ch))) {
        rc = cli_fail(st, model);
        goto done;
    }
    if ((st = sy_train_session_create(henv, art, &ts))) {
        rc = cli_fail(st, art);
        goto done;
    }
    if ((st = sy_dataset_open(data, "train", &train))) {
        rc = cli_fail(st, "training data");
        goto done;
    }
    const sy_train_layer *first = &ch->layers[0];
    const int64_t px = sy_dataset_sample_numel(train);
    if (px != first->ic * first->ih * first->iw || sy_dataset_size(train) < steps) {
        rc = cli_fail(sy_status_create(SY_ERR_SHAPE, "%s: %lld training samples of %lld values; the model reads %lld "
                                                     "and --steps %ld needs as many samples",
                                       data, (long long)sy_dataset_size(train), (long long)px,
                                       (long long)(first->ic * first->ih * first->iw), steps),
                      "training data");
        goto done;
    }
    const int64_t classes = ch->layers[ch->n_layers - 1].oc;
    layers = calloc(ch->n_layers, sizeof *layers);
    geom = calloc(ch->n_layers, sizeof *geom);
    samples = malloc((size_t)(steps * px) * sizeof *samples);
    labs = malloc((size_t)steps * sizeof *labs);
    rates = malloc((size_t)steps * sizeof *rates);
    w_kn = calloc(ch->n_layers, sizeof *w_kn);
    if (!layers || !geom || !samples || !labs || !rates || !w_kn) {
        rc = cli_fail(sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory"), "codegen --train");
        goto done;
    }
    /* the host trainer's steps, one sample each, in order */
    for (long s = 0; s < steps; s++) {
        int64_t lab = 0;
        float *x = samples + s * px;
        if ((st = sy_dataset_batch(train, &(int64_t){s}, 1, classes, x, &lab))) {
            rc = cli_fail(st, "training data");
            goto done;
        }
        labs[s] = (int32_t)lab;
        /* Adam's bias-corrected rate of step T = s + 1, the expression of the train plugin's Adam kernel
         * (plugins/train/optim.c, libm's powf and sqrtf): the package reads it instead of recomputing it */
        const float t = (float)(s + 1);
        rates[s] = lr * sqrtf(1.0f - powf(ch->beta, t)) / (1.0f - powf(ch->alpha, t));
        sy_tensor tx = {.struct_size = sizeof tx, .dtype = SY_DT_FLOAT32, .data = x, .nbytes = (size_t)px * 4};
        int64_t sd[SY_MAX_RANK];
        int32_t sr = sy_dataset_sample_shape(train, sd);
        tx.rank = sr + 1 <= SY_MAX_RANK ? sr + 1 : SY_MAX_RANK;
        tx.dims[0] = 1;
        memcpy(tx.dims + 1, sd, (size_t)(tx.rank - 1) * sizeof *sd);
        sy_tensor tl = {.struct_size = sizeof tl, .dtype = SY_DT_INT64, .rank = 1, .dims = {1}, .data = &lab,
                        .nbytes = 8};
        float loss;
        if ((st = sy_train_session_step(ts, (const sy_tensor *[]){&tx, &tl}, 2, lr, &loss))) {
            rc = cli_fail(st, "codegen --train: host step");
            goto done;
        }
    }
    for (size_t i = 0; i < ch->n_layers; i++) {
        const sy_train_layer *L = &ch->layers[i];
        sy_mcu_f32_layer *D = &layers[i];
        *D = (sy_mcu_f32_layer){.kind = L->kind, .ic = (int32_t)L->ic, .ih = (int32_t)L->ih, .iw = (int32_t)L->iw,
                                .oc = (int32_t)L->oc, .oh = (int32_t)L->oh, .ow = (int32_t)L->ow,
                                .kh = (int32_t)L->kh, .kw = (int32_t)L->kw, .pt = (int32_t)L->pt,
                                .pl = (int32_t)L->pl, .w = L->w, .b = L->b, .w_numel = (int32_t)L->w_numel,
                                .b_numel = (int32_t)L->b_numel};
        /* the shapes at one rank: a Reduce's output with its reduced axes of size 1 (keepdims' form) */
        w_kn[i] = L->kind == SY_TRAIN_LAYER_GEMM && L->w_kn;
        sy_mcu_f32_geom *G = &geom[i];
        G->rank = L->in_rank;
        G->axes = L->axes;
        G->value = L->value;
        G->const_first = L->const_first;
        G->residual = L->residual;
        G->other = L->other;
        for (int32_t d = 0; d < L->in_rank && d < SY_MCU_F32_MAX_RANK; d++) {
            G->idims[d] = (int32_t)L->in_dims[d];
            G->odims[d] = L->kind == SY_TRAIN_LAYER_REDUCE_SUM || L->kind == SY_TRAIN_LAYER_REDUCE_MEAN
                              ? ((L->axes >> d) & 1u ? 1 : (int32_t)L->in_dims[d])
                          : L->out_rank == L->in_rank ? (int32_t)L->out_dims[d]
                                                      : 0; /* a reshape: the element count is all that matters */
            G->perm[d] = (int32_t)L->perm[d];
            /* a Div by (or of) a constant or of two activations: the constant's or the other operand's
             * dims, broadcast (geom.start's meaning for a Div) */
            G->start[d] = (int32_t)(L->kind == SY_TRAIN_LAYER_DIV ? L->w_dims[d] : L->start[d]);
            G->step[d] = (int32_t)L->step[d];
        }
        int64_t n = 0;
        if (L->w_name && (D->w_final = sy_train_session_tensor(ts, L->w_name, &n)))
            D->train_w = n == L->w_numel;
        if (L->b_name && (D->b_final = sy_train_session_tensor(ts, L->b_name, &n)))
            D->train_b = n == L->b_numel;
    }
    const char *base = strrchr(model, '/');
    sy_mcu_train_f32_request req = {
        .struct_size = sizeof req, .dir = dir, .model_name = base ? base + 1 : model, .n_layers = (uint32_t)ch->n_layers,
        .layers = layers, .optimizer = ch->optimizer == SY_TRAIN_ADAM ? 1 : 0, .lr = lr, .alpha = ch->alpha,
        .beta = ch->beta, .epsilon = ch->epsilon, .norm = ch->norm, .nesterov = ch->nesterov,
        .n_samples = (uint32_t)steps, .sample_numel = (int32_t)px, .samples = samples, .labels = labs,
        .sram_budget = budget, .rates = ch->optimizer == SY_TRAIN_ADAM ? rates : NULL, .geom = geom, .w_kn = w_kn,
        .geom_size = sizeof *geom};
    char summary[1024] = "";
    if ((st = ext->emit_train_f32_env(ext, &req, summary, sizeof summary))) {
        if (*summary)
            fprintf(stderr, "%s\n", summary);
        rc = cli_fail(st, "codegen --train");
        goto done;
    }
    printf("%s\nwrote %s: %ld FP32 steps of %zu layers (%zu tensors, %lld values trained); expected_output.txt is the "
           "host trainer's tensors after them\n",
           summary, dir, steps, ch->n_layers, rep.n_trainable, (long long)rep.trainable_elements);
    rc = 0;
done:
    free(layers);
    free(geom);
    free(samples);
    free(labs);
    free(rates);
    free(w_kn);
    sy_dataset_release(train);
    sy_train_session_release(ts);
    sy_train_chain_free(ch);
    sy_env_release(henv);
    sy_env_release(menv);
    return rc;
}
