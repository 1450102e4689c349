/*
 * gen_resnet8 DIR: writes DIR/resnet8.tflite, an int8 model with the
 * architecture of MLPerf Tiny's image-classification benchmark (ResNet-8 on
 * CIFAR-10, the reference's resnet_v1_eembc): a 32x32x3 input, a 3x3 conv of
 * 16 filters, three stages of one residual block each (16, 32, 64 filters;
 * 3x3 convs, the second and third stage with stride 2 and a 1x1 stride-2
 * conv on the shortcut), ADD with a fused RELU, an 8x8 average pool, a
 * RESHAPE, FULLY_CONNECTED 64 -> 10 and SOFTMAX. The weights are a fixed
 * pseudo-random pattern (no trained checkpoint ships with the repository):
 * the model exercises the operators, shapes and the 12.5 M multiply-
 * accumulates of the benchmark, not its accuracy. Activation scales follow
 * the spread of each accumulator (sqrt(K) x the codes' spread) so the
 * outputs use the int8 range instead of saturating.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfl_writer.h"

enum { OP_ADD = 0, OP_AVERAGE_POOL_2D = 1, OP_CONV_2D = 3, OP_FULLY_CONNECTED = 9, OP_RESHAPE = 22, OP_SOFTMAX = 25 };
enum { BO_CONV2D = 1, BO_POOL2D = 5, BO_FC = 8, BO_SOFTMAX = 9, BO_ADD = 11, BO_RESHAPE = 17 };
enum { PAD_SAME = 0, PAD_VALID = 1, ACT_NONE = 0, ACT_RELU = 1 };

#define MAX_T 64
#define MAX_OPS 24

static tflw_tensor ts[MAX_T];
static int nt;
static tflw_op ops[MAX_OPS];
static int nops;
/* storage that must outlive tflw_build */
static float scales[MAX_T][64];
static int64_t zps[MAX_T][64];
static int32_t io[MAX_OPS][3], oo[MAX_OPS];
static tflw_opt optv[MAX_OPS][6];
static char names[MAX_T][16];
static uint32_t seed = 12345u;

static uint32_t next(void)
{
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
}
static int32_t rnd(int32_t lo, int32_t hi) { return lo + (int32_t)(next() % (uint32_t)(hi - lo + 1)); }

static int tensor(int type, int rank, const int32_t *dims, const void *data, size_t nbytes, int nq, int qdim)
{
    int i = nt++;
    snprintf(names[i], sizeof names[i], i == 0 ? "input" : "t%d", i);
    ts[i] = (tflw_tensor){.name = names[i], .type = type, .rank = rank, .data = data, .nbytes = nbytes,
                          .n_quant = nq, .scales = scales[i], .zero_points = zps[i], .quant_dim = qdim};
    memcpy(ts[i].dims, dims, sizeof(int32_t) * (size_t)rank);
    return i;
}

static int act(int32_t h, int32_t w, int32_t c, float scale, int64_t zp)
{
    int i = tensor(TFLW_INT8, 4, (const int32_t[]){1, h, w, c}, NULL, 0, 1, 0);
    scales[i][0] = scale;
    zps[i][0] = zp;
    return i;
}

static void op(int32_t code, const int32_t *in, int n_in, int out, uint8_t otype, int n_opts)
{
    int k = nops++;
    memcpy(io[k], in, sizeof(int32_t) * (size_t)n_in);
    oo[k] = out;
    ops[k] = (tflw_op){.code = code, .inputs = io[k], .n_inputs = n_in, .outputs = &oo[k], .n_outputs = 1,
                       .options_type = otype, .opts = optv[k], .n_opts = n_opts};
}

/* CONV_2D of x (h x w x ic, scale sx) to oc channels, k x k, stride s,
 * SAME, per-channel weights; returns the output tensor */
static int conv(int x, int32_t k, int32_t oc, int32_t s, int relu)
{
    const int32_t h = ts[x].dims[1], w = ts[x].dims[2], ic = ts[x].dims[3];
    const float sx = scales[x][0];
    const int32_t nw = oc * k * k * ic;
    int8_t *wt = malloc((size_t)nw);
    int32_t *b = malloc(sizeof(int32_t) * (size_t)oc);
    for (int32_t i = 0; i < nw; i++)
        wt[i] = (int8_t)rnd(-127, 127);
    int wi = tensor(TFLW_INT8, 4, (const int32_t[]){oc, k, k, ic}, wt, (size_t)nw, oc, 0);
    int bi = tensor(TFLW_INT32, 1, (const int32_t[]){oc}, b, sizeof(int32_t) * (size_t)oc, oc, 0);
    const float sw0 = 0.5f / 127.0f;
    for (int32_t c = 0; c < oc; c++) {
        scales[wi][c] = sw0 * (0.75f + 0.5f * (float)(next() % 1000) / 1000.0f);
        zps[wi][c] = 0;
        scales[bi][c] = sx * scales[wi][c];
        zps[bi][c] = 0;
        b[c] = rnd(-3000, 3000);
    }
    /* accumulator codes spread about sqrt(K) * 40 * 73; 40 codes out */
    const float so = sx * sw0 * sqrtf((float)(k * k * ic)) * 73.0f;
    const int32_t oh = (h + s - 1) / s, ow = (w + s - 1) / s;
    int y = act(oh, ow, oc, so, relu ? -128 : 0);
    const int k_ = nops;
    optv[k_][0] = (tflw_opt){.id = 0, .kind = TFLW_OPT_U8, .i = PAD_SAME};
    optv[k_][1] = (tflw_opt){.id = 1, .kind = TFLW_OPT_I32, .i = s};
    optv[k_][2] = (tflw_opt){.id = 2, .kind = TFLW_OPT_I32, .i = s};
    optv[k_][3] = (tflw_opt){.id = 3, .kind = TFLW_OPT_U8, .i = relu ? ACT_RELU : ACT_NONE};
    optv[k_][4] = (tflw_opt){.id = 4, .kind = TFLW_OPT_I32, .i = 1};
    optv[k_][5] = (tflw_opt){.id = 5, .kind = TFLW_OPT_I32, .i = 1};
    op(OP_CONV_2D, (const int32_t[]){x, wi, bi}, 3, y, BO_CONV2D, 6);
    return y;
}

/* ADD with a fused RELU */
static int add_relu(int a, int b)
{
    const float s = 1.2f * (scales[a][0] > scales[b][0] ? scales[a][0] : scales[b][0]);
    int y = act(ts[a].dims[1], ts[a].dims[2], ts[a].dims[3], s, -128);
    optv[nops][0] = (tflw_opt){.id = 0, .kind = TFLW_OPT_U8, .i = ACT_RELU};
    op(OP_ADD, (const int32_t[]){a, b}, 2, y, BO_ADD, 1);
    return y;
}

/* a residual block: two 3x3 convs, the shortcut the input (stride 1) or a
 * 1x1 conv of stride 2 */
static int block(int x, int32_t oc, int32_t s)
{
    int y = conv(x, 3, oc, s, 1);
    y = conv(y, 3, oc, 1, 0);
    int sc = s == 1 ? x : conv(x, 1, oc, s, 0);
    return add_relu(y, sc);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_resnet8 DIR (writes DIR/resnet8.tflite)\n");
        return 2;
    }
    int x = act(32, 32, 3, 1.0f / 128.0f, 0);
    int y = conv(x, 3, 16, 1, 1);
    y = block(y, 16, 1);
    y = block(y, 32, 2);
    y = block(y, 64, 2);
    /* 8x8 average pool to 1x1x64: int8 keeps the quantization */
    int p = act(1, 1, 64, scales[y][0], zps[y][0]);
    optv[nops][0] = (tflw_opt){.id = 0, .kind = TFLW_OPT_U8, .i = PAD_VALID};
    optv[nops][1] = (tflw_opt){.id = 1, .kind = TFLW_OPT_I32, .i = 8};
    optv[nops][2] = (tflw_opt){.id = 2, .kind = TFLW_OPT_I32, .i = 8};
    optv[nops][3] = (tflw_opt){.id = 3, .kind = TFLW_OPT_I32, .i = 8};
    optv[nops][4] = (tflw_opt){.id = 4, .kind = TFLW_OPT_I32, .i = 8};
    optv[nops][5] = (tflw_opt){.id = 5, .kind = TFLW_OPT_U8, .i = ACT_NONE};
    op(OP_AVERAGE_POOL_2D, (const int32_t[]){y}, 1, p, BO_POOL2D, 6);
    static const int32_t shape[2] = {1, 64};
    int shp = tensor(TFLW_INT32, 1, (const int32_t[]){2}, shape, sizeof shape, 0, 0);
    int r = tensor(TFLW_INT8, 2, (const int32_t[]){1, 64}, NULL, 0, 1, 0);
    scales[r][0] = scales[p][0];
    zps[r][0] = zps[p][0];
    static const int32_t nshape[2] = {1, 64};
    optv[nops][0] = (tflw_opt){.id = 0, .kind = TFLW_OPT_I32VEC, .vec = nshape, .n_vec = 2};
    op(OP_RESHAPE, (const int32_t[]){p, shp}, 2, r, BO_RESHAPE, 1);
    /* FULLY_CONNECTED 64 -> 10, per-tensor weights */
    static int8_t fw[10 * 64];
    static int32_t fb[10];
    for (int i = 0; i < 10 * 64; i++)
        fw[i] = (int8_t)rnd(-127, 127);
    int fwi = tensor(TFLW_INT8, 2, (const int32_t[]){10, 64}, fw, sizeof fw, 1, 0);
    int fbi = tensor(TFLW_INT32, 1, (const int32_t[]){10}, fb, sizeof fb, 1, 0);
    /* logits of about 2 in spread (the softmax then keeps several classes): the 8x8 average narrows the
     * features to about 5 codes, so the weights are scaled for sqrt(64) * (5 codes * scale) * (73 codes
     * * weight scale) = 2 */
    scales[fwi][0] = 2.0f / (8.0f * 5.0f * scales[r][0] * 73.0f);
    scales[fbi][0] = scales[r][0] * scales[fwi][0];
    for (int i = 0; i < 10; i++)
        fb[i] = rnd(-3000, 3000);
    int f = tensor(TFLW_INT8, 2, (const int32_t[]){1, 10}, NULL, 0, 1, 0);
    scales[f][0] = 2.0f / 40.0f;
    zps[f][0] = 0;
    optv[nops][0] = (tflw_opt){.id = 0, .kind = TFLW_OPT_U8, .i = ACT_NONE};
    op(OP_FULLY_CONNECTED, (const int32_t[]){r, fwi, fbi}, 3, f, BO_FC, 1);
    int sm = tensor(TFLW_INT8, 2, (const int32_t[]){1, 10}, NULL, 0, 1, 0);
    scales[sm][0] = 1.0f / 256.0f;
    zps[sm][0] = -128;
    optv[nops][0] = (tflw_opt){.id = 0, .kind = TFLW_OPT_F32, .f = 1.0f};
    op(OP_SOFTMAX, (const int32_t[]){f}, 1, sm, BO_SOFTMAX, 1);

    int32_t gin = x, gout = sm;
    tflw_model m = {.tensors = ts, .n_tensors = nt, .ops = ops, .n_ops = nops, .inputs = &gin, .n_inputs = 1,
                    .outputs = &gout, .n_outputs = 1};
    size_t size = 0;
    uint8_t *buf = tflw_build(&m, &size);
    char path[4096];
    snprintf(path, sizeof path, "%s/resnet8.tflite", argv[1]);
    FILE *fo = fopen(path, "wb");
    int ok = buf && fo && fwrite(buf, 1, size, fo) == size;
    if (fo)
        ok = fclose(fo) == 0 && ok;
    free(buf);
    if (!ok) {
        fprintf(stderr, "gen_resnet8: cannot write %s\n", path);
        return 1;
    }
    printf("%s: %d tensors, %d operators, %zu bytes\n", path, nt, nops, size);
    return 0;
}
