/*
 * switchyard train MODEL --data DIR -o OUT [--epochs N] [--batch B] [--lr LR]
 *                  [--optimizer sgd|adam] [--momentum M] [--schedule S]
 *                  [--trainable all|last:K|bias] [--log FILE.csv] [--resume]
 *                  [--target ws63|hi3066] [--mode fp32|qas-int8]
 *                  [--subgraph NAME|INDEX]
 *
 * The command over sy_train.h (libswitchyard_tools): builds the training
 * artifacts into OUT (unless --resume), trains on a data set (sy_dataset_*:
 * IDX files with the MNIST names, or DIR/train and DIR/test folders of
 * input_K / label_K .npy or .pb pairs), evaluates on the test set after each epoch, keeps OUT/checkpoint.onnx
 * current and writes the trained model OUT/model.onnx (and OUT/model.tflite
 * when MODEL is a TFLite model). --mode qas-int8
 * fine-tunes an int8 QDQ model (or an int8 TFLite model, OUT/model.tflite
 * as well) instead (sy_qas_session_*).
 */
#include "cli.h"

#include <switchyard/sy_train.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void help(FILE *f)
{
    fprintf(f,
            "usage: switchyard train MODEL --data DIR -o OUT [options]\n\n"
            "Trains a float ONNX or TFLite classifier on labelled data. Builds training\n"
            "artifacts into OUT (training.onnx, eval.onnx, optimizer.onnx, checkpoint.onnx:\n"
            "ONNX files any tool opens), runs the epochs with a progress bar (loss, accuracy,\n"
            "samples/s), evaluates on the test set after each epoch, saves\n"
            "OUT/checkpoint.onnx after each epoch (through a temporary file and a rename)\n"
            "and writes the trained model OUT/model.onnx. A .tflite MODEL (float; see\n"
            "docs/training.md for the operators translated) is trained through its ONNX\n"
            "translation, and the trained model is also written as OUT/model.tflite: the\n"
            "original file with the trained tensors' buffers overwritten.\n\n"
            "  --data DIR         IDX files with the MNIST names (the MNIST and Fashion-MNIST\n"
            "                     format, gzip or not): train-images-idx3-ubyte[.gz],\n"
            "                     train-labels-idx1-ubyte[.gz], t10k-images-idx3-ubyte[.gz],\n"
            "                     t10k-labels-idx1-ubyte[.gz] (e.g. /usr/share/datasets/fashion-mnist;\n"
            "                     pixels scaled by 1/255); or folders DIR/train and DIR/test of\n"
            "                     pairs input_K / label_K (K = 0, 1, ...; .npy or .pb each): a\n"
            "                     float32 sample or batch [n, ...] and its integer class index or\n"
            "                     indices [n]\n"
            "  -o, --output OUT   the artifacts folder (created)\n"
            "  --epochs N         passes over the training set (default 1)\n"
            "  --batch B          samples per step (default 32)\n"
            "  --lr LR            learning rate (default 0.01 for sgd, 0.001 for adam)\n"
            "  --optimizer O      sgd (default; with --momentum) or adam\n"
            "  --momentum M       sgd momentum in [0, 1) (default 0.9)\n"
            "  --weight-decay W   L2 coefficient (default 0)\n"
            "  --schedule S       constant (default), step (x0.1 every --step-epochs, default 1)\n"
            "                     or cosine (to 0 over all steps)\n"
            "  --step-epochs E    the step schedule's period in epochs (default 1)\n"
            "  --trainable T      all (default), last:K (the last K layers), bias (biases only)\n"
            "  --limit N          use only the first N training samples\n"
            "  --log FILE.csv     one line per step: step, epoch, loss, lr, batch accuracy\n"
            "  --resume           continue from OUT/checkpoint.onnx instead of rebuilding OUT\n"
            "  --seed S           shuffling seed (default 1)\n"
            "  --target T         ws63: the gradient path must match seed 001's training table\n"
            "                     (declines quoting the row; needs --batch 1); hi3066 is refused\n"
            "  --config INI       the deployment (its plugins need 'train' and the ops)\n"
            "  --subgraph S       a .tflite MODEL's subgraph to train: a signature name (a\n"
            "                     SignatureDef's signature_key) or an index (default 0), float or\n"
            "                     int8 (--mode qas-int8);\n"
            "                     OUT/model.tflite is the whole file, that subgraph trained\n"
            "  --mode M           fp32 (default) or qas-int8: MODEL is an int8 QDQ model (from\n"
            "                     'switchyard quantize') or an int8 (fully quantized) TFLite model\n"
            "                     (also written back as OUT/model.tflite, its trained codes and\n"
            "                     biases in their buffers); its last Gemm (and 3x3 Conv) layers are\n"
            "                     fine-tuned with Quantization-Aware Scaling (int8 forward,\n"
            "                     float gradients scaled by 1/s_W^2, weights re-quantized after\n"
            "                     each SGD step); --trainable last:K (default last:1) or bias:K;\n"
            "                     writes OUT/model.onnx, the fine-tuned QDQ model, and after each\n"
            "                     epoch OUT/checkpoint.onnx (codes, master copies, momentum), which\n"
            "                     --resume continues from\n");
}

/* the model input of a batch of b samples: [b, sample dims...] */
static sy_tensor batch_tensor(const sy_dataset *d, int64_t b, float *x)
{
    sy_tensor t = {.struct_size = sizeof t, .dtype = SY_DT_FLOAT32, .data = x};
    int64_t dims[SY_MAX_RANK];
    int32_t rank = sy_dataset_sample_shape(d, dims);
    if (rank >= SY_MAX_RANK)
        rank = SY_MAX_RANK - 1; /* refused by the session as a shape mismatch */
    t.rank = rank + 1;
    t.dims[0] = b;
    memcpy(t.dims + 1, dims, (size_t)rank * sizeof *dims);
    t.nbytes = (size_t)(b * sy_dataset_sample_numel(d)) * sizeof(float);
    return t;
}

static int64_t argmax(const float *v, int64_t n)
{
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++)
        if (v[i] > v[best])
            best = i;
    return best;
}

static int make_dir(const char *dir) { return mkdir(dir, 0755) && errno != EEXIST; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct run_opts {
    int epochs, step_epochs;
    int64_t batch, limit;
    float lr;
    const char *schedule;
    unsigned seed;
} run_opts;

static float rate_at(const run_opts *o, int64_t step, int64_t total_steps, int epoch)
{
    if (!strcmp(o->schedule, "step"))
        return o->lr * powf(0.1f, (float)(epoch / o->step_epochs));
    if (!strcmp(o->schedule, "cosine"))
        return o->lr * 0.5f * (1.0f + cosf(3.14159265f * (float)step / (float)(total_steps ? total_steps : 1)));
    return o->lr;
}

/* the session the loop drives: the FP32 artifacts or the QAS-INT8 trainer */
typedef struct trainer {
    sy_train_session *ts;
    sy_qas_session *qs;
} trainer;

static sy_status *tr_step(trainer *t, const sy_tensor *const *in, float lr, float *loss, const sy_tensor **y)
{
    if (t->qs)
        return sy_qas_session_step(t->qs, in, 2, lr, loss, y);
    sy_status *st = sy_train_session_step(t->ts, in, 2, lr, loss);
    return st ? st : sy_train_session_step_output(t->ts, y);
}

static sy_status *tr_eval(trainer *t, const sy_tensor *const *in, float *loss, const sy_tensor **y)
{
    return t->qs ? sy_qas_session_eval(t->qs, in, 2, loss, y) : sy_train_session_eval(t->ts, in, 2, loss, y);
}

static int64_t tr_steps(const trainer *t)
{
    return t->qs ? sy_qas_session_steps(t->qs) : sy_train_session_steps(t->ts);
}

/* The model's number of classes: the last dim of its logits for one sample
 * of `d` (an eval pass; nothing is updated). */
static sy_status *model_classes(trainer *t, const sy_dataset *d, int64_t *classes)
{
    if (sy_dataset_size(d) < 1)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "the data set holds no sample");
    float *x = malloc((size_t)sy_dataset_sample_numel(d) * sizeof *x);
    if (!x)
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    int64_t first = 0, label = 0;
    sy_status *st = sy_dataset_batch(d, &first, 1, 0, x, &label);
    sy_tensor tx = batch_tensor(d, 1, x);
    sy_tensor tl = {.struct_size = sizeof tl, .dtype = SY_DT_INT64, .rank = 1, .dims = {1}, .data = &label,
                    .nbytes = 8};
    float loss = 0;
    const sy_tensor *y = NULL;
    if (!st)
        st = tr_eval(t, (const sy_tensor *[]){&tx, &tl}, &loss, &y);
    if (!st && (!y || y->rank < 1 || y->dims[y->rank - 1] < 1 || sy_tensor_numel(y) != y->dims[y->rank - 1]))
        st = sy_status_create(SY_ERR_SHAPE, "the model's output for one sample is not a vector of class scores");
    if (!st)
        *classes = y->dims[y->rank - 1];
    free(x);
    return st;
}

/* Every label of the first n samples of `d` within the model's classes,
 * checked before the first step: a bad label found by the batch that holds
 * it would stop the run after that much training (for the test split, after
 * a whole epoch). sy_dataset_batch names the label and the sample. */
static sy_status *check_labels(const sy_dataset *d, int64_t n, int64_t classes)
{
    enum { CHUNK = 256 };
    float *x = malloc((size_t)(CHUNK * sy_dataset_sample_numel(d)) * sizeof *x);
    int64_t lab[CHUNK], idx[CHUNK];
    sy_status *st = x ? NULL : sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t at = 0; !st && at < n; at += CHUNK) {
        int64_t b = n - at < CHUNK ? n - at : CHUNK;
        for (int64_t i = 0; i < b; i++)
            idx[i] = at + i;
        st = sy_dataset_batch(d, idx, b, classes, x, lab);
    }
    free(x);
    return st;
}

/* accuracy and mean loss of the eval model on a split */
static sy_status *evaluate(trainer *ts, const sy_dataset *d, int64_t batch, int64_t classes, double *acc,
                           double *loss)
{
    const int64_t n = sy_dataset_size(d);
    float *x = malloc((size_t)(batch * sy_dataset_sample_numel(d)) * sizeof *x);
    int64_t *lab = malloc((size_t)batch * sizeof *lab), *idx = malloc((size_t)batch * sizeof *idx);
    sy_status *st = x && lab && idx ? NULL : sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    int64_t right = 0;
    double total = 0;
    for (int64_t at = 0; !st && at < n; at += batch) {
        int64_t b = n - at < batch ? n - at : batch;
        for (int64_t i = 0; i < b; i++)
            idx[i] = at + i;
        st = sy_dataset_batch(d, idx, b, classes, x, lab);
        sy_tensor tx = batch_tensor(d, b, x);
        sy_tensor tl = {.struct_size = sizeof tl, .dtype = SY_DT_INT64, .rank = 1, .dims = {b}, .data = lab,
                        .nbytes = (size_t)b * 8};
        float l = 0;
        const sy_tensor *out = NULL;
        if (!st)
            st = tr_eval(ts, (const sy_tensor *[]){&tx, &tl}, &l, &out);
        for (int64_t i = 0; !st && i < b; i++)
            right += argmax((const float *)out->data + i * classes, classes) == lab[i];
        total += (double)l * (double)b;
    }
    free(x);
    free(lab);
    free(idx);
    *acc = n ? (double)right / (double)n : 0;
    *loss = n ? total / (double)n : 0;
    return st;
}

int cmd_train(int argc, char **argv)
{
    const char *model = NULL, *data = NULL, *out = NULL, *config = NULL, *log_path = NULL, *optimizer = "sgd";
    const char *trainable = "all";
    const char *target = NULL; /* --target: NULL the host */
    const char *mode = "fp32";
    const char *subgraph = NULL; /* --subgraph: NULL subgraph 0 */
    run_opts o = {.epochs = 1, .step_epochs = 1, .batch = 32, .lr = -1, .schedule = "constant", .seed = 1};
    float momentum = 0.9f, decay = 0;
    int resume = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(a, "--resume")) {
            resume = 1;
        } else if (a[0] == '-' && !v) {
            return cli_usage_error("train", "%s needs a value", a);
        } else if (!strcmp(a, "--data")) {
            data = argv[++i];
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            out = argv[++i];
        } else if (!strcmp(a, "--config")) {
            config = argv[++i];
        } else if (!strcmp(a, "--log")) {
            log_path = argv[++i];
        } else if (!strcmp(a, "--optimizer")) {
            optimizer = argv[++i];
        } else if (!strcmp(a, "--trainable")) {
            trainable = argv[++i];
        } else if (!strcmp(a, "--target")) {
            target = argv[++i];
        } else if (!strcmp(a, "--mode")) {
            mode = argv[++i];
        } else if (!strcmp(a, "--subgraph")) {
            subgraph = argv[++i];
        } else if (!strcmp(a, "--schedule")) {
            o.schedule = argv[++i];
        } else if (!strcmp(a, "--epochs") || !strcmp(a, "--batch") || !strcmp(a, "--limit") ||
                   !strcmp(a, "--step-epochs") || !strcmp(a, "--seed")) {
            long n = cli_parse_long(argv[++i], !strcmp(a, "--limit") ? 1 : !strcmp(a, "--seed") ? 0 : 1, 1L << 30);
            if (n < 0)
                return cli_usage_error("train", "%s: expected a positive integer, got '%s'", a, argv[i]);
            if (!strcmp(a, "--epochs"))
                o.epochs = (int)n;
            else if (!strcmp(a, "--batch"))
                o.batch = n;
            else if (!strcmp(a, "--limit"))
                o.limit = n;
            else if (!strcmp(a, "--seed"))
                o.seed = (unsigned)n;
            else
                o.step_epochs = (int)n;
        } else if (!strcmp(a, "--lr") || !strcmp(a, "--momentum") || !strcmp(a, "--weight-decay")) {
            char *end;
            float f = strtof(argv[++i], &end);
            if (*end || !isfinite(f) || f < 0)
                return cli_usage_error("train", "%s: expected a number >= 0, got '%s'", a, argv[i]);
            if (!strcmp(a, "--lr"))
                o.lr = f;
            else if (!strcmp(a, "--momentum"))
                momentum = f;
            else
                decay = f;
        } else if (a[0] == '-') {
            return cli_usage_error("train", "unknown option '%s'", a);
        } else if (!model) {
            model = a;
        } else {
            return cli_usage_error("train", "unexpected argument '%s'", a);
        }
    }
    if (!model || !data || !out)
        return cli_usage_error("train", "MODEL, --data DIR and -o OUT are required");
    sy_train_build_options bo = {.struct_size = sizeof bo, .momentum = momentum, .weight_decay = decay};
    if (!strcmp(optimizer, "adam"))
        bo.optimizer = SY_TRAIN_ADAM;
    else if (strcmp(optimizer, "sgd"))
        return cli_usage_error("train", "--optimizer: expected sgd or adam, got '%s'", optimizer);
    if (o.lr < 0)
        o.lr = bo.optimizer == SY_TRAIN_ADAM ? 0.001f : 0.01f;
    if (strcmp(o.schedule, "constant") && strcmp(o.schedule, "step") && strcmp(o.schedule, "cosine"))
        return cli_usage_error("train", "--schedule: expected constant, step or cosine, got '%s'", o.schedule);
    const bool qas = !strcmp(mode, "qas-int8");
    if (!qas && strcmp(mode, "fp32"))
        return cli_usage_error("train", "--mode: expected fp32 or qas-int8, got '%s'", mode);
    sy_qas_options qo = {.struct_size = sizeof qo, .last_k = 1, .momentum = momentum, .target = target};
    if (qas) {
        long k = 1;
        if (!strncmp(trainable, "last:", 5) || !strncmp(trainable, "bias:", 5))
            k = cli_parse_long(trainable + 5, 1, 16);
        else if (strcmp(trainable, "all") && strcmp(trainable, "bias"))
            return cli_usage_error("train", "--mode qas-int8 --trainable: expected last:K or bias[:K], got '%s'",
                                   trainable);
        if (k < 0)
            return cli_usage_error("train", "--trainable last:K: K must be an integer from 1 to 16");
        qo.last_k = (int)k;
        qo.biases_only = !strncmp(trainable, "bias", 4);
        if (bo.optimizer != SY_TRAIN_SGD)
            return cli_usage_error("train", "--mode qas-int8 trains with SGD (--optimizer sgd, --momentum M)");
    } else if (!strcmp(trainable, "bias"))
        bo.trainable = SY_TRAIN_BIASES;
    else if (!strncmp(trainable, "last:", 5)) {
        long k = cli_parse_long(trainable + 5, 1, 1 << 20);
        if (k < 0)
            return cli_usage_error("train", "--trainable last:K: K must be a positive integer");
        bo.trainable = SY_TRAIN_LAST_K;
        bo.last_k = (int)k;
    } else if (!qas && strcmp(trainable, "all"))
        return cli_usage_error("train", "--trainable: expected all, last:K or bias, got '%s'", trainable);
    if (momentum >= 1.0f)
        return cli_usage_error("train", "--momentum must be below 1");
    bo.target = target;
    bo.subgraph = subgraph;
    qo.subgraph = subgraph;
    if (!qas && target && !strcmp(target, "ws63") && o.batch != 1)
        return cli_usage_error("train", "--target ws63 trains one sample per step (seed 001 §4, FP32 Conv: "
                                        "\"batch 1\"): give --batch 1");

    sy_dataset *tr = NULL, *te = NULL;
    sy_env *env = NULL;
    trainer T = {0};
    FILE *log = NULL;
    float *x = NULL;
    int64_t *lab = NULL, *order = NULL;
    int rc = 0;
    sy_status *st = sy_dataset_open(data, "train", &tr);
    if (st) {
        rc = cli_fail(st, "training data");
        goto done;
    }
    if ((st = sy_dataset_open(data, "test", &te))) {
        rc = cli_fail(st, "test data");
        goto done;
    }
    if ((st = cli_env(config, &env))) {
        rc = cli_fail(st, config ? config : "the default env");
        goto done;
    }
    bo.env = env;
    int64_t classes = 0;
    if (qas) {
        sy_qas_report rep = {.struct_size = sizeof rep};
        if ((st = sy_qas_session_create(env, model, &qo, &T.qs, &rep))) {
            rc = cli_fail(st, model);
            goto done;
        }
        fprintf(stderr, "train: QAS-INT8 %s: %zu layers trained (%lld weights, %lld biases): "
                        "%zu bytes of int8/int32 codes, %zu bytes of float state\n",
                model, rep.layers, (long long)rep.weights, (long long)rep.biases, rep.int8_bytes, rep.float_bytes);
        if (make_dir(out)) {
            rc = cli_fail(sy_status_create(SY_ERR_IO, "cannot create %s", out), "-o");
            goto done;
        }
        if (resume) {
            char ck[4096];
            snprintf(ck, sizeof ck, "%s/checkpoint.onnx", out);
            if ((st = sy_qas_session_load(T.qs, ck))) {
                rc = cli_fail(st, "--resume");
                goto done;
            }
        }
        if ((st = model_classes(&T, tr, &classes))) {
            rc = cli_fail(st, "training data");
            goto done;
        }
        double acc, tloss;
        if ((st = evaluate(&T, te, 256, classes, &acc, &tloss))) {
            rc = cli_fail(st, "test set");
            goto done;
        }
        if (resume)
            printf("int8 model resumed at step %lld: test loss %.4f, test accuracy %.2f%% (%lld test images)\n",
                   (long long)tr_steps(&T), tloss, 100.0 * acc, (long long)sy_dataset_size(te));
        else
            printf("int8 model before fine-tuning: test loss %.4f, test accuracy %.2f%% (%lld test images)\n", tloss,
                   100.0 * acc, (long long)sy_dataset_size(te));
        fflush(stdout);
    } else if (!resume) {
        sy_train_build_report rep = {.struct_size = sizeof rep};
        if ((st = sy_train_build(model, &bo, out, &rep))) {
            rc = cli_fail(st, model);
            goto done;
        }
        fprintf(stderr, "train: %s -> %s: %zu trainable tensors (%lld values), %zu forward + %zu backward nodes\n",
                model, out, rep.n_trainable, (long long)rep.trainable_elements, rep.forward_nodes, rep.backward_nodes);
    }
    if (!qas && (st = sy_train_session_create(env, out, &T.ts))) {
        rc = cli_fail(st, out);
        goto done;
    }
    if (!qas && (st = model_classes(&T, tr, &classes))) {
        rc = cli_fail(st, "training data");
        goto done;
    }
    if (resume)
        fprintf(stderr, "train: resuming %s at step %lld\n", out, (long long)tr_steps(&T));
    const int64_t n_train = sy_dataset_size(tr);
    int64_t n = o.limit && o.limit < n_train ? o.limit : n_train;
    if ((st = check_labels(tr, n, classes))) {
        rc = cli_fail(st, "training data");
        goto done;
    }
    if ((st = check_labels(te, sy_dataset_size(te), classes))) {
        rc = cli_fail(st, "test data");
        goto done;
    }
    x = malloc((size_t)(o.batch * sy_dataset_sample_numel(tr)) * sizeof *x);
    lab = malloc((size_t)o.batch * sizeof *lab);
    order = malloc((size_t)n * sizeof *order);
    if (!x || !lab || !order) {
        rc = cli_fail(sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory"), "train");
        goto done;
    }
    if (log_path && !(log = fopen(log_path, resume ? "a" : "w"))) {
        rc = cli_fail(sy_status_create(SY_ERR_IO, "cannot write %s", log_path), "--log");
        goto done;
    }
    if (log && !resume)
        fprintf(log, "step,epoch,loss,lr,batch_accuracy\n");
    const int64_t steps_per_epoch = (n + o.batch - 1) / o.batch, total_steps = steps_per_epoch * o.epochs;
    const int first_epoch = (int)(tr_steps(&T) / steps_per_epoch);
    for (int ep = first_epoch; ep < o.epochs; ep++) {
        /* a fresh deterministic shuffle per epoch (xorshift32 Fisher-Yates) */
        uint32_t r = o.seed * 2654435761u + (uint32_t)ep * 40503u + 1u;
        for (int64_t i = 0; i < n; i++)
            order[i] = i;
        for (int64_t i = n - 1; i > 0; i--) {
            r ^= r << 13, r ^= r >> 17, r ^= r << 5;
            int64_t j = (int64_t)(r % (uint32_t)(i + 1)), t = order[i];
            order[i] = order[j], order[j] = t;
        }
        double t0 = now_s(), loss_sum = 0;
        int64_t seen = 0, right = 0;
        bool bar = false; /* a progress line is open on stderr: an error starts a line of its own */
        for (int64_t s = 0; s < steps_per_epoch; s++) {
            int64_t at = s * o.batch, b = n - at < o.batch ? n - at : o.batch;
            int64_t step = tr_steps(&T);
            if (step >= (int64_t)(ep + 1) * steps_per_epoch)
                break;
            if (step > (int64_t)ep * steps_per_epoch + s)
                continue; /* resumed inside this epoch: skip the batches already taken */
            if ((st = sy_dataset_batch(tr, order + at, b, classes, x, lab))) {
                if (bar)
                    fputc('\n', stderr);
                rc = cli_fail(st, "training data");
                goto done;
            }
            sy_tensor tx = batch_tensor(tr, b, x);
            sy_tensor tl = {.struct_size = sizeof tl, .dtype = SY_DT_INT64, .rank = 1, .dims = {b}, .data = lab,
                            .nbytes = (size_t)b * 8};
            float lr = rate_at(&o, step, total_steps, ep), loss = 0;
            /* the batch's accuracy before the update: the step's logits */
            const sy_tensor *y = NULL;
            int64_t br = 0;
            if ((st = tr_step(&T, (const sy_tensor *[]){&tx, &tl}, lr, &loss, &y))) {
                if (bar)
                    fputc('\n', stderr);
                rc = cli_fail(st, "step");
                goto done;
            }
            for (int64_t i = 0; i < b; i++)
                br += argmax((const float *)y->data + i * classes, classes) == lab[i];
            right += br;
            loss_sum += (double)loss * (double)b;
            seen += b;
            if (log)
                fprintf(log, "%lld,%d,%.6f,%.6g,%.4f\n", (long long)step + 1, ep + 1, (double)loss, (double)lr,
                        (double)br / (double)b);
            if (s % 20 == 0 || s + 1 == steps_per_epoch) {
                double el = now_s() - t0;
                int width = 24, fill = (int)(width * (at + b) / n);
                fprintf(stderr, "\repoch %d/%d [", ep + 1, o.epochs);
                for (int k = 0; k < width; k++)
                    fputc(k < fill ? '#' : '.', stderr);
                fprintf(stderr, "] %lld/%lld loss %.4f acc %.1f%% %.0f samples/s ", (long long)(at + b), (long long)n,
                        loss_sum / (double)seen, 100.0 * (double)right / (double)seen,
                        el > 0 ? (double)seen / el : 0.0);
                fflush(stderr);
                bar = true;
            }
        }
        fputc('\n', stderr);
        char ck[4096];
        snprintf(ck, sizeof ck, "%s/checkpoint.onnx", out);
        if ((st = T.ts ? sy_train_session_save(T.ts, ck) : sy_qas_session_save(T.qs, ck))) {
            rc = cli_fail(st, "checkpoint");
            goto done;
        }
        double acc, tloss;
        if ((st = evaluate(&T, te, 256, classes, &acc, &tloss))) {
            rc = cli_fail(st, "test set");
            goto done;
        }
        printf("epoch %d: train loss %.4f, train accuracy %.2f%%, test loss %.4f, test accuracy %.2f%% (%lld test "
               "images)\n",
               ep + 1, seen ? loss_sum / (double)seen : 0.0, seen ? 100.0 * (double)right / (double)seen : 0.0, tloss,
               100.0 * acc, (long long)sy_dataset_size(te));
        fflush(stdout);
    }
    char mp[4096];
    snprintf(mp, sizeof mp, "%s/model.onnx", out);
    if ((st = T.qs ? sy_qas_session_export(T.qs, mp) : sy_train_session_export(T.ts, mp))) {
        rc = cli_fail(st, "export");
        goto done;
    }
    if (T.qs) {
        printf("fine-tuned int8 model: %s (%lld steps)\n", mp, (long long)tr_steps(&T));
        if (sy_qas_session_from_tflite(T.qs)) { /* an int8 .tflite: the trained .tflite as well */
            snprintf(mp, sizeof mp, "%s/model.tflite", out);
            if ((st = sy_qas_session_export(T.qs, mp))) {
                rc = cli_fail(st, "export");
                goto done;
            }
            printf("fine-tuned int8 model: %s (the TFLite model with its trained codes and biases)\n", mp);
        }
    } else {
        printf("trained model: %s (checkpoint %s/checkpoint.onnx, %lld steps)\n", mp, out, (long long)tr_steps(&T));
        /* built from a TFLite model: the trained .tflite as well */
        char src[4096];
        snprintf(src, sizeof src, "%s/source.tflite", out);
        if (access(src, F_OK) == 0) {
            snprintf(mp, sizeof mp, "%s/model.tflite", out);
            if ((st = sy_train_session_export(T.ts, mp))) {
                rc = cli_fail(st, "export");
                goto done;
            }
            printf("trained model: %s (the TFLite model with its trained buffers)\n", mp);
        }
    }
done:
    if (log)
        fclose(log);
    free(x);
    free(lab);
    free(order);
    sy_train_session_release(T.ts);
    sy_qas_session_release(T.qs);
    sy_env_release(env);
    sy_dataset_release(tr);
    sy_dataset_release(te);
    return rc;
}
