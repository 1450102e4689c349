/*
 * switchyard codegen --train MODEL --target ws63 --data DIR -o DIR
 *                    [--trainable last:K|bias:K] [--steps N] [--lr LR]
 *                    [--momentum M] [--sram-budget B] [--front auto|device|host]
 *
 * A ws63 package that runs QAS-INT8 training steps on the device: the int8
 * QDQ MODEL's last fully connected and 3x3 Conv layers (sy_qas_session_*,
 * the ws63 QAS rows of seed 001 §4 checked), one step per sample over the first N
 * training samples of DIR (IDX or .npy/.pb folders: sy_dataset, as
 * `switchyard train --data` reads them). The frozen front (the layers before
 * the first trained one) runs on the device by default: it is written as an
 * inference package of its own in DIR/front (the riscv_mcu capture of the
 * front's session, the int8 kernels of `switchyard codegen`, strict: every
 * front node on riscv_mcu under the seed's rules), and the package runs it
 * on each sample before the step. The samples are the image's int8 codes
 * when the front begins with its input's QuantizeLinear (that node runs
 * here, the rest on the device), else the model's inputs. With --front host
 * the whole front runs here and its output codes are the samples; --front
 * auto (the default) takes the device when riscv_mcu places the front and
 * says why not otherwise, --front device refuses then. The host trainer
 * takes the same N steps, and its final state is the package's
 * expected_output.txt. The
 * riscv_mcu plugin writes the package (its "riscv_mcu.codegen" extension,
 * emit_train_env), checking the step's RAM plan against the chip of its
 * environment.
 */
#include "cli.h"
#include "codegen_train_args.h"

#include <switchyard/ext/sy_mcu_codegen.h>
#include <switchyard/sy_train.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct layer_copy {
    sy_mcu_train_layer d;
    int8_t *w;
    int32_t *b;
    float *ws;
} layer_copy;

static bool copy_layer(const sy_qas_layer_info *in, layer_copy *c)
{
    size_t ok = (size_t)in->o * (size_t)in->k, o = (size_t)in->o;
    c->w = malloc(ok);
    c->b = in->bias ? malloc(o * 4) : NULL;
    c->ws = malloc(o * 4);
    if (!c->w || !c->ws || (in->bias && !c->b))
        return false;
    memcpy(c->w, in->w, ok);
    if (in->bias)
        memcpy(c->b, in->bias, o * 4);
    memcpy(c->ws, in->w_scale, o * 4);
    c->d = (sy_mcu_train_layer){.k = in->k, .o = in->o, .x_scale = in->x_scale, .y_scale = in->y_scale,
                                .x_zp = in->x_zp, .y_zp = in->y_zp, .relu = in->relu, .w_scale = c->ws, .w = c->w,
                                .bias = c->b};
    return true;
}

int cmd_codegen_train(int argc, char **argv)
{
    cg_train_args ca = {.trainable = "last:1", .steps = 200, .lr = 0.01f, .momentum = 0.9f};
    bool front_device = true, front_auto = true;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--mode")) {
            if (!strcmp(argv[i + 1], "fp32"))
                return cmd_codegen_train_f32(argc, argv);
            if (strcmp(argv[i + 1], "qas-int8"))
                return cli_usage_error("codegen", "--train --mode: expected fp32 or qas-int8, got '%s'", argv[i + 1]);
        }
    for (int i = 1; i < argc; i++) {
        int taken = cg_train_arg(argc, argv, &i, &ca);
        if (taken < 0)
            return -taken;
        if (taken)
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--front"))
            return cli_usage_error("codegen", "--train: unknown option '%s'", a);
        if (!v || (strcmp(v, "auto") && strcmp(v, "device") && strcmp(v, "host")))
            return cli_usage_error("codegen", "--train --front: expected auto, device or host, got '%s'", v ? v : "");
        front_auto = !strcmp(v, "auto");
        front_device = strcmp(argv[++i], "host") != 0;
    }
    if (cg_train_finish(&ca))
        return 2;
    const char *model = ca.model, *target = ca.target, *dir = ca.dir, *data = ca.data, *trainable = ca.trainable;
    const long steps = ca.steps;
    const float lr = ca.lr, momentum = ca.momentum;
    sy_qas_options qo = {.struct_size = sizeof qo, .last_k = 1, .momentum = momentum, .target = target};
    if (!strncmp(trainable, "last:", 5) || !strncmp(trainable, "bias:", 5)) {
        long k = cli_parse_long(trainable + 5, 1, 16);
        if (k < 0)
            return cli_usage_error("codegen", "--trainable: K must be an integer from 1 to 16");
        qo.last_k = (int)k;
        qo.biases_only = trainable[0] == 'b';
    } else
        return cli_usage_error("codegen", "--trainable: expected last:K or bias:K, got '%s'", trainable);

    sy_env *menv = NULL, *henv = NULL;
    sy_qas_session *qs = NULL;
    sy_dataset *train = NULL;
    layer_copy lc[16];
    size_t nl = 0;
    bool nhwc = false;
    int8_t *samples = NULL;
    unsigned char *inputs = NULL; /* the front's inputs of the steps, for the front on the device */
    /* the image's codes instead, when the front begins with its input's
     * QuantizeLinear: that node runs here (qm, qsn), the rest on the device */
    sy_model *qm = NULL;
    sy_session *qsn = NULL;
    sy_dtype in_dt = SY_DT_FLOAT32;
    size_t in_bytes = 0;
    sy_model *fm = NULL;
    sy_session *fs = NULL;
    sy_mcu_capture *cap = NULL;
    char front_dir[4096] = "", front_summary[512] = "";
    uint64_t front_ws = 0;
    int32_t *labs = NULL;
    float *x = NULL;
    int rc = 1;
    sy_status *st;
    /* the target's env: the plugin's extension, configured for the chip */
    char ini[512];
    int n = snprintf(ini, sizeof ini,
                     "[switchyard]\nplugin_dirs = @default\nproviders = riscv_mcu\n[provider.riscv_mcu]\ntarget = %s\n",
                     target);
    (void)n;
    const unsigned long long budget = ca.sram_budget;
    /* the host's env runs the trainer; the target's env only writes the
     * package (the chip is that env's, whatever else the process loads) */
    if ((st = cli_env(NULL, &henv)))
        return cli_fail(st, "codegen --train: the default env");
    if ((st = sy_env_create_from_string(ini, NULL, &menv))) {
        sy_env_release(henv);
        return cli_fail(st, "codegen --train: configuration");
    }
    const sy_mcu_codegen_ext *ext = sy_get_extension(menv, SY_MCU_EXT_NAME, SY_MCU_EXT_VERSION);
    if (!ext || !sy_mcu_ext_has_capture(ext)) {
        rc = cli_fail(sy_status_create(SY_ERR_NOT_FOUND, "the riscv_mcu plugin has no training packages"), "codegen");
        goto done;
    }
    if ((st = sy_qas_session_create(henv, model, &qo, &qs, NULL))) {
        rc = cli_fail(st, model);
        goto done;
    }
    if ((st = sy_dataset_open(data, "train", &train))) {
        rc = cli_fail(st, "training data");
        goto done;
    }
    if (sy_dataset_size(train) < steps) {
        rc = cli_fail(sy_status_create(SY_ERR_SHAPE, "%s: %lld training samples, --steps %ld needs as many", data,
                                       (long long)sy_dataset_size(train), steps),
                      "training data");
        goto done;
    }
    nl = sy_qas_session_layer_count(qs);
    for (size_t i = 0; i < nl; i++) {
        sy_qas_layer_info li = {.struct_size = sizeof li};
        memset(&lc[i], 0, sizeof lc[i]);
        if (!sy_qas_session_layer(qs, i, &li) || !copy_layer(&li, &lc[i])) {
            nl = i + 1;
            rc = cli_fail(sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory"), "codegen --train");
            goto done;
        }
        /* an int8 TFLite CONV_2D (between NHWC layout Transposes): the
         * session's chain is all NHWC or all NCHW Convs, and the package
         * permutes the samples and the following Gemm's columns (nhwc) */
        nhwc |= li.nhwc;
        if (li.nhwc && li.pool) { /* the host session trains it; the package pools NCHW codes only */
            nl = i + 1;
            rc = cli_fail(sy_status_create(SY_ERR_UNSUPPORTED, "the MaxPool after node '%s' (Conv): an int8 TFLite "
                                           "MAX_POOL_2D (NHWC codes); the QAS-INT8 training package does not train "
                                           "through an NHWC MaxPool yet (the host session does: switchyard train "
                                           "--mode qas-int8; an ONNX QDQ MaxPool in NCHW packages)", li.name),
                          "codegen --train");
            goto done;
        }
    }
    /* a sample's codes: the first layer's input (a Conv's [c, h, w] is known once the front has run) */
    const int64_t px = sy_dataset_sample_numel(train);
    int64_t K = 0;
    labs = malloc((size_t)steps * 4);
    x = malloc((size_t)px * 4);
    size_t qlen = 0, alen = 0;
    const uint8_t *qb = front_device ? sy_qas_session_front_onnx(qs, SY_QAS_FRONT_INPUT_Q, &qlen) : NULL;
    if (qb && !sy_qas_session_front_onnx(qs, SY_QAS_FRONT_AFTER_INPUT_Q, &alen)) {
        /* nothing but the image's quantization: its codes are the samples */
        printf("the frozen front is the input's QuantizeLinear alone: the samples are the image's codes, computed "
               "on the host\n");
        front_device = false;
        qb = NULL;
    }
    if (qb && ((st = sy_model_load_buffer(henv, qb, qlen, "qas front input quantization", NULL, &qm)) ||
               (st = sy_session_create(henv, qm, NULL, &qsn)))) {
        rc = cli_fail(st, "codegen --train: the front's input QuantizeLinear");
        goto done;
    }
    in_bytes = (size_t)px * (qb ? 1 : 4);
    inputs = front_device ? malloc((size_t)steps * in_bytes) : NULL;
    if (!labs || !x || (front_device && !inputs)) {
        rc = cli_fail(sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory"), "codegen --train");
        goto done;
    }
    /* the front's codes of each sample, then the host's step on it */
    for (long s = 0; s < steps; s++) {
        int64_t lab = 0;
        if ((st = sy_dataset_batch(train, &(int64_t){s}, 1, 0, x, &lab))) {
            rc = cli_fail(st, "training data");
            goto done;
        }
        labs[s] = (int32_t)lab;
        if (inputs && !qsn)
            memcpy(inputs + (size_t)s * in_bytes, x, in_bytes);
        sy_tensor tx = {.struct_size = sizeof tx, .dtype = SY_DT_FLOAT32, .data = x, .nbytes = (size_t)px * 4};
        int64_t sd[SY_MAX_RANK];
        int32_t sr = sy_dataset_sample_shape(train, sd);
        tx.rank = sr + 1 <= SY_MAX_RANK ? sr + 1 : SY_MAX_RANK;
        tx.dims[0] = 1;
        memcpy(tx.dims + 1, sd, (size_t)(tx.rank - 1) * sizeof *sd);
        sy_tensor tl = {.struct_size = sizeof tl, .dtype = SY_DT_INT64, .rank = 1, .dims = {1}, .data = &lab,
                        .nbytes = 8};
        const sy_tensor *codes = NULL;
        float loss;
        if (qsn) {
            const sy_tensor *qc = NULL;
            if ((st = sy_session_set_input_by_index(qsn, 0, &tx, SY_INPUT_BORROW)) || (st = sy_session_run(qsn)) ||
                (st = sy_session_get_output(qsn, 0, &qc))) {
                rc = cli_fail(st, "codegen --train: the front's input QuantizeLinear");
                goto done;
            }
            if (qc->nbytes != in_bytes || (qc->dtype != SY_DT_INT8 && qc->dtype != SY_DT_UINT8)) {
                rc = cli_fail(sy_status_create(SY_ERR_SHAPE, "the front's input QuantizeLinear gave %zu bytes of %s "
                                               "for sample %ld, expected %zu int8 or uint8 codes", qc->nbytes,
                                               sy_dtype_name(qc->dtype), s, in_bytes),
                              "codegen --train");
                goto done;
            }
            in_dt = qc->dtype;
            memcpy(inputs + (size_t)s * in_bytes, qc->data, in_bytes);
        }
        if ((st = sy_qas_session_front(qs, (const sy_tensor *[]){&tx}, 1, &codes))) {
            rc = cli_fail(st, "codegen --train: the front");
            goto done;
        }
        if (!samples) {
            K = (int64_t)codes->nbytes;
            if (K < 1 || K > (1 << 24) || !(samples = malloc((size_t)(steps * K)))) {
                rc = cli_fail(sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory for %ld samples of %lld bytes",
                                               steps, (long long)K), "codegen --train");
                goto done;
            }
        }
        if ((int64_t)codes->nbytes != K) {
            rc = cli_fail(sy_status_create(SY_ERR_SHAPE, "the front gave %zu codes for sample %ld, %lld before",
                                           codes->nbytes, s, (long long)K), "codegen --train");
            goto done;
        }
        memcpy(samples + s * K, codes->data, (size_t)K);
        if ((st = sy_qas_session_step(qs, (const sy_tensor *[]){&tx, &tl}, 2, lr, &loss, NULL))) {
            rc = cli_fail(st, "codegen --train: host step");
            goto done;
        }
    }
    sy_mcu_train_layer layers[16];
    sy_mcu_train_conv convs[16];
    sy_mcu_train_pool pools[16];
    int32_t perms[16 * 4];
    for (size_t i = 0; i < nl; i++) {
        sy_qas_layer_info li = {.struct_size = sizeof li};
        sy_qas_session_layer(qs, i, &li);
        pools[i] = (sy_mcu_train_pool){.pool = li.pool, .kh = li.pool_kh, .kw = li.pool_kw, .sh = li.pool_sh,
                                       .sw = li.pool_sw, .pt = li.pool_pt, .pl = li.pool_pl, .oh = li.pool_oh,
                                       .ow = li.pool_ow};
        for (int d = 0; d < 4; d++) /* a Transpose of the Conv's codes before this layer: its permutation */
            perms[4 * i + d] = li.transpose ? li.tperm[d] : 0;
        convs[i] = (sy_mcu_train_conv){.conv = li.conv, .c = li.ic, .h = li.ih, .w = li.iw, .oh = li.oh, .ow = li.ow,
                                       .kh = li.kh, .kw = li.kw, .sh = li.sh, .sw = li.sw, .pt = li.pt, .pl = li.pl};
        layers[i] = lc[i].d;
        layers[i].w_final = li.w;
        layers[i].bias_final = li.bias;
        layers[i].w_master_final = li.w_master;
        layers[i].b_master_final = li.b_master;
    }
    const char *base = strrchr(model, '/');
    if (front_device) {
        /* the front as an inference package of its own: the session the
         * host trainer runs, now on riscv_mcu with its kernels recording */
        size_t flen = 0;
        const uint8_t *fb =
            sy_qas_session_front_onnx(qs, qsn ? SY_QAS_FRONT_AFTER_INPUT_Q : SY_QAS_FRONT_ALL, &flen);
        if (!fb || (st = sy_model_load_buffer(menv, fb, flen, "qas front", NULL, &fm))) {
            rc = cli_fail(st ? st : sy_status_create(SY_ERR_INTERNAL, "the QAS session kept no front"),
                          "codegen --train: the front on the device");
            goto done;
        }
        if (sy_model_input_count(fm) != 1 || sy_model_output_count(fm) != 1) {
            rc = cli_fail(sy_status_create(SY_ERR_UNSUPPORTED, "the front has %zu inputs and %zu outputs; on the "
                                           "device it takes one input (use --front host)",
                                           sy_model_input_count(fm), sy_model_output_count(fm)),
                          "codegen --train: the front on the device");
            goto done;
        }
        /* strict: a node riscv_mcu declines would run nowhere on the device */
        sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = 1};
        if ((st = ext->session_create(ext, menv, fm, &so, &fs, &cap))) {
            if (!front_auto) {
                rc = cli_fail(st, "codegen --train --front device: placing the front on riscv_mcu (or --front host)");
                goto done;
            }
            printf("the frozen front stays on the host (the samples are its codes): riscv_mcu does not place it: "
                   "%s\n", sy_status_get_message(st));
            sy_status_free(st);
            st = NULL;
            sy_model_release(fm);
            fm = NULL;
            front_device = false;
        }
    }
    /* the front's package request: written after the training files, so a
     * refused plan writes nothing */
    sy_tensor tx = {.struct_size = sizeof tx}, yo = {.struct_size = sizeof yo};
    const sy_tensor *fin[1] = {&tx}, *fout[1] = {&yo};
    sy_mcu_codegen_request creq = {.struct_size = sizeof creq, .dir = front_dir, .model_name = "the frozen front",
                                   .n_inputs = 1, .n_outputs = 1, .inputs = fin, .outputs = fout,
                                   .prefix = "front"};
    if (front_device) {
        sy_value_info vi = {.struct_size = sizeof vi}, vo = {.struct_size = sizeof vo};
        /* the capture runs sample 0; its codes must be the host trainer's */
        sy_model_input_info(fm, 0, &vi);
        sy_model_output_info(fm, 0, &vo);
        tx.name = vi.name;
        tx.dtype = in_dt;
        tx.data = inputs;
        tx.nbytes = in_bytes;
        int64_t sd[SY_MAX_RANK];
        int32_t sr = sy_dataset_sample_shape(train, sd);
        tx.rank = sr + 1 <= SY_MAX_RANK ? sr + 1 : SY_MAX_RANK;
        tx.dims[0] = 1;
        memcpy(tx.dims + 1, sd, (size_t)(tx.rank - 1) * sizeof *sd);
        const sy_tensor *fy = NULL;
        if ((st = sy_session_set_input_by_index(fs, 0, &tx, SY_INPUT_COPY)) || (st = ext->capture_run(cap)) ||
            (st = sy_session_get_output(fs, 0, &fy))) {
            rc = cli_fail(st, "codegen --train: the front's host run on riscv_mcu");
            goto done;
        }
        if (fy->nbytes != (size_t)K || memcmp(fy->data, samples, (size_t)K)) {
            rc = cli_fail(sy_status_create(SY_ERR_INTERNAL, "the front's codes on riscv_mcu differ from the host "
                                           "trainer's for sample 0 (%zu and %lld bytes): use --front host",
                                           fy->nbytes, (long long)K),
                          "codegen --train: the front on the device");
            goto done;
        }
        for (size_t d = 0; d < sy_session_memory_domain_count(fs); d++) {
            sy_memory_report mr = {.struct_size = sizeof mr};
            if (sy_session_memory_report(fs, d, &mr) && mr.domain && !strcmp(mr.domain, "mcu_sram"))
                front_ws = mr.arena_bytes;
        }
        if (!front_ws) {
            rc = cli_fail(sy_status_create(SY_ERR_UNSUPPORTED, "the front's session has no mcu_sram arena (no "
                                           "static plan): use --front host"),
                          "codegen --train: the front on the device");
            goto done;
        }
        yo = *fy;
        yo.name = vo.name;
        snprintf(front_dir, sizeof front_dir, "%s/front", dir);
        creq.workspace_bytes = (size_t)front_ws;
    }
    sy_mcu_train_request req = {.struct_size = sizeof req, .dir = dir, .model_name = base ? base + 1 : model,
                                .n_layers = (uint32_t)nl, .layers = layers, .biases_only = qo.biases_only,
                                .lr = lr, .momentum = momentum, .n_samples = (uint32_t)steps, .samples = samples,
                                .labels = labs, .sram_budget = budget, .convs = convs,
                                .front_prefix = front_device ? "front" : NULL, .front_workspace_bytes = front_ws,
                                .front_input_bytes = front_device ? (uint64_t)in_bytes : 0, .front_inputs = inputs,
                                .nhwc = nhwc, .pools = pools, .perms = perms};
    char summary[1024] = "";
    if ((st = ext->emit_train_env(ext, &req, summary, sizeof summary))) {
        if (*summary)
            fprintf(stderr, "%s\n", summary);
        rc = cli_fail(st, "codegen --train");
        goto done;
    }
    if (front_device && (st = ext->capture_emit(cap, &creq, front_summary, sizeof front_summary))) {
        rc = cli_fail(st, "codegen --train: writing the front");
        goto done;
    }
    if (front_device)
        printf("the front (front/): %s\n", front_summary);
    printf("%s\nwrote %s: %ld QAS-INT8 steps of %zu layers%s; expected_output.txt is the host trainer's state "
           "after them\n",
           summary, dir, steps, nl, front_device ? " after the frozen front (front/), all on the device" : "");
    rc = 0;
done:
    for (size_t i = 0; i < nl; i++) {
        free(lc[i].w);
        free(lc[i].b);
        free(lc[i].ws);
    }
    free(samples);
    free(inputs);
    sy_session_release(qsn);
    sy_model_release(qm);
    if (ext && cap)
        ext->capture_release(cap);
    sy_session_release(fs);
    sy_model_release(fm);
    free(labs);
    free(x);
    sy_dataset_release(train);
    sy_qas_session_release(qs);
    sy_env_release(henv);
    sy_env_release(menv);
    return rc;
}
