/*
 * pbtool: ONNX TensorProto files for the CLI tests, through the protobuf-c
 * code generated from onnx.proto (not through libswitchyard, whose files
 * are what is being checked).
 *
 *   pbtool compare GOT.pb WANT.pb RTOL ATOL   float32 tensors equal within tolerance
 *   pbtool argmax FILE.pb INDEX               the largest element is at INDEX
 *   pbtool write-int32 FILE.pb NAME D0 D1...  an int32 tensor of zeros
 *   pbtool relerr A.pb B.pb                   prints ||a - b||_2 / ||b||_2 (float32)
 *   pbtool scale-q MODEL OUT VALUE FACTOR     multiplies the scale of the
 *                                             QuantizeLinear whose output is
 *                                             VALUE__qN (a miscalibrated
 *                                             tensor, for compare's tests)
 */
#include "onnx.pb-c.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static Onnx__TensorProto *read_tensor(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "pbtool: cannot open %s\n", path);
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    for (size_t n; buf && (n = fread(buf + len, 1, cap - len, f)) > 0;) {
        len += n;
        if (len == cap) {
            uint8_t *g = realloc(buf, cap * 2);
            if (!g) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = g;
            cap *= 2;
        }
    }
    fclose(f);
    Onnx__TensorProto *t = buf ? onnx__tensor_proto__unpack(NULL, len, buf) : NULL;
    free(buf);
    if (!t)
        fprintf(stderr, "pbtool: %s is not a TensorProto\n", path);
    return t;
}

/* float32 values of a tensor (raw_data or float_data); NULL if not float32 */
static float *floats_of(const Onnx__TensorProto *t, size_t *n, const char *path)
{
    if (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) {
        fprintf(stderr, "pbtool: %s: data_type %d is not FLOAT\n", path, (int)t->data_type);
        return NULL;
    }
    size_t numel = 1;
    for (size_t d = 0; d < t->n_dims; d++)
        numel *= (size_t)t->dims[d];
    float *v = malloc(numel * sizeof *v + 1);
    if (!v)
        return NULL;
    if (t->has_raw_data && t->raw_data.len) {
        if (t->raw_data.len != numel * sizeof(float)) {
            fprintf(stderr, "pbtool: %s: raw_data has %zu bytes for %zu floats\n", path, t->raw_data.len, numel);
            free(v);
            return NULL;
        }
        memcpy(v, t->raw_data.data, t->raw_data.len);
    } else if (t->n_float_data == numel) {
        memcpy(v, t->float_data, numel * sizeof(float));
    } else {
        fprintf(stderr, "pbtool: %s: %zu float_data for %zu elements\n", path, t->n_float_data, numel);
        free(v);
        return NULL;
    }
    *n = numel;
    return v;
}

static int compare(const char *got_path, const char *want_path, double rtol, double atol)
{
    Onnx__TensorProto *got = read_tensor(got_path), *want = read_tensor(want_path);
    int rc = 1;
    size_t ng = 0, nw = 0;
    float *g = NULL, *w = NULL;
    if (!got || !want)
        goto out;
    if (got->n_dims != want->n_dims || memcmp(got->dims, want->dims, got->n_dims * sizeof *got->dims)) {
        fprintf(stderr, "pbtool: shapes differ (rank %zu vs %zu)\n", got->n_dims, want->n_dims);
        goto out;
    }
    g = floats_of(got, &ng, got_path);
    w = floats_of(want, &nw, want_path);
    if (!g || !w || ng != nw)
        goto out;
    size_t bad = 0;
    for (size_t i = 0; i < nw; i++) {
        if (!(fabs((double)g[i] - w[i]) <= atol + rtol * fabs((double)w[i]))) {
            if (bad++ < 5)
                fprintf(stderr, "pbtool: [%zu] got %.9g want %.9g\n", i, g[i], w[i]);
        }
    }
    printf("compared %zu float32 elements of '%s' with rtol %g atol %g: %zu outside\n", nw,
           got->name ? got->name : "", rtol, atol, bad);
    rc = bad ? 1 : 0;
out:
    free(g);
    free(w);
    if (got)
        onnx__tensor_proto__free_unpacked(got, NULL);
    if (want)
        onnx__tensor_proto__free_unpacked(want, NULL);
    return rc;
}

static int argmax(const char *path, long want)
{
    Onnx__TensorProto *t = read_tensor(path);
    size_t n = 0;
    float *v = t ? floats_of(t, &n, path) : NULL;
    int rc = 1;
    if (v && n) {
        size_t best = 0;
        for (size_t i = 1; i < n; i++)
            if (v[i] > v[best])
                best = i;
        printf("argmax of %s is %zu (expected %ld)\n", path, best, want);
        rc = (long)best == want ? 0 : 1;
    }
    free(v);
    if (t)
        onnx__tensor_proto__free_unpacked(t, NULL);
    return rc;
}

static int write_int32(const char *path, const char *name, int ndims, char **dimv)
{
    int64_t dims[8];
    size_t numel = 1;
    if (ndims < 1 || ndims > 8)
        return 2;
    for (int d = 0; d < ndims; d++) {
        dims[d] = atoll(dimv[d]);
        numel *= (size_t)dims[d];
    }
    int32_t *zeros = calloc(numel ? numel : 1, sizeof *zeros);
    Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
    t.n_dims = (size_t)ndims;
    t.dims = dims;
    t.has_data_type = 1;
    t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT32;
    t.name = (char *)name;
    t.has_raw_data = 1;
    t.raw_data.len = numel * sizeof *zeros;
    t.raw_data.data = (uint8_t *)zeros;
    size_t len = onnx__tensor_proto__get_packed_size(&t);
    uint8_t *buf = malloc(len);
    FILE *f = fopen(path, "wb");
    int rc = 1;
    if (zeros && buf && f) {
        onnx__tensor_proto__pack(&t, buf);
        rc = fwrite(buf, 1, len, f) == len ? 0 : 1;
    }
    if (f && fclose(f) != 0)
        rc = 1;
    free(buf);
    free(zeros);
    if (rc)
        fprintf(stderr, "pbtool: cannot write %s\n", path);
    return rc;
}

static int relerr(const char *a_path, const char *b_path)
{
    Onnx__TensorProto *a = read_tensor(a_path), *b = read_tensor(b_path);
    size_t na = 0, nb = 0;
    float *x = a ? floats_of(a, &na, a_path) : NULL, *y = b ? floats_of(b, &nb, b_path) : NULL;
    int rc = 1;
    if (x && y && na == nb) {
        double se = 0, sb = 0;
        for (size_t i = 0; i < na; i++) {
            se += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
            sb += (double)y[i] * y[i];
        }
        printf("%.6g\n", sb > 0 ? sqrt(se / sb) : sqrt(se));
        rc = 0;
    }
    free(x);
    free(y);
    if (a)
        onnx__tensor_proto__free_unpacked(a, NULL);
    if (b)
        onnx__tensor_proto__free_unpacked(b, NULL);
    return rc;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16;
    uint8_t *buf = malloc(cap);
    *len = 0;
    for (size_t n; buf && (n = fread(buf + *len, 1, cap - *len, f)) > 0;) {
        *len += n;
        if (*len == cap) {
            uint8_t *g = realloc(buf, cap * 2);
            if (!g) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = g;
            cap *= 2;
        }
    }
    fclose(f);
    return buf;
}

static int scale_q(const char *in, const char *out, const char *value, double factor)
{
    size_t len = 0;
    uint8_t *buf = read_file(in, &len);
    Onnx__ModelProto *m = buf ? onnx__model_proto__unpack(NULL, len, buf) : NULL;
    free(buf);
    if (!m || !m->graph) {
        fprintf(stderr, "pbtool: %s is not an ONNX model\n", in);
        return 1;
    }
    char prefix[512];
    snprintf(prefix, sizeof prefix, "%s__q", value);
    const char *scale = NULL;
    for (size_t i = 0; i < m->graph->n_node && !scale; i++) {
        const Onnx__NodeProto *n = m->graph->node[i];
        if (!strcmp(n->op_type, "QuantizeLinear") && n->n_output == 1 && n->n_input >= 2 &&
            !strncmp(n->output[0], prefix, strlen(prefix)))
            scale = n->input[1];
    }
    int rc = 1;
    for (size_t i = 0; scale && i < m->graph->n_initializer; i++) {
        Onnx__TensorProto *t = m->graph->initializer[i];
        if (strcmp(t->name, scale))
            continue;
        if (t->has_raw_data && t->raw_data.len == sizeof(float)) {
            float f;
            memcpy(&f, t->raw_data.data, sizeof f);
            f = (float)(f * factor);
            memcpy(t->raw_data.data, &f, sizeof f);
            rc = 0;
        } else if (t->n_float_data == 1) {
            t->float_data[0] = (float)(t->float_data[0] * factor);
            rc = 0;
        }
        printf("scale '%s' of the QuantizeLinear of %s multiplied by %g\n", scale, value, factor);
    }
    if (rc)
        fprintf(stderr, "pbtool: no QuantizeLinear with output %s* and a scalar scale in %s\n", prefix, in);
    if (!rc) {
        size_t size = onnx__model_proto__get_packed_size(m);
        uint8_t *o = malloc(size ? size : 1);
        FILE *f = fopen(out, "wb");
        rc = o && f && (onnx__model_proto__pack(m, o), fwrite(o, 1, size, f) == size) ? 0 : 1;
        if (f && fclose(f) != 0)
            rc = 1;
        free(o);
        if (rc)
            fprintf(stderr, "pbtool: cannot write %s\n", out);
    }
    onnx__model_proto__free_unpacked(m, NULL);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "relerr"))
        return relerr(argv[2], argv[3]);
    if (argc == 6 && !strcmp(argv[1], "scale-q"))
        return scale_q(argv[2], argv[3], argv[4], atof(argv[5]));
    if (argc == 6 && !strcmp(argv[1], "compare"))
        return compare(argv[2], argv[3], atof(argv[4]), atof(argv[5]));
    if (argc == 4 && !strcmp(argv[1], "argmax"))
        return argmax(argv[2], atol(argv[3]));
    if (argc >= 5 && !strcmp(argv[1], "write-int32"))
        return write_int32(argv[2], argv[3], argc - 4, argv + 4);
    fprintf(stderr, "usage: pbtool compare GOT WANT RTOL ATOL | argmax FILE INDEX | write-int32 FILE NAME DIMS... | relerr A B |\n"
                    "              scale-q MODEL OUT VALUE FACTOR\n");
    return 2;
}
