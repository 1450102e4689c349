/*
 * A minimal ONNX writer for plugin tests: enough protobuf (varints and
 * length-delimited fields) to write a graph of float32 nodes with graph
 * inputs, float32 initializers and int/float attributes. No dependency
 * beyond libc, so a plugin's tests need nothing but an installed
 * Switchyard. Field numbers are those of onnx.proto.
 *
 *   ow_model m; ow_init(&m, 13);
 *   ow_input(&m, "x", 2, (int64_t[]){2, 3});
 *   ow_weight(&m, "w", 2, (int64_t[]){3, 4}, data);
 *   ow_node(&m, "MatMul", "mm", 2, (const char *[]){"x", "w"}, "y");
 *   ow_output(&m, "y");
 *   ow_finish(&m, &bytes, &len);   malloc'ed; ow_free(&m) releases the rest
 */
#ifndef OW_ONNX_WRITER_H
#define OW_ONNX_WRITER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct ow_buf {
    uint8_t *p;
    size_t len, cap;
    int oom;
} ow_buf;

static void ow_put(ow_buf *b, const void *src, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap) {
        size_t cap = (b->len + n) * 2 + 64;
        uint8_t *g = realloc(b->p, cap);
        if (!g) {
            b->oom = 1;
            return;
        }
        b->p = g;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void ow_varint(ow_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    ow_put(b, tmp, n);
}

static void ow_key(ow_buf *b, uint32_t field, uint32_t wire) { ow_varint(b, ((uint64_t)field << 3) | wire); }
static void ow_int(ow_buf *b, uint32_t field, int64_t v)
{
    ow_key(b, field, 0);
    ow_varint(b, (uint64_t)v);
}
static void ow_bytes(ow_buf *b, uint32_t field, const void *p, size_t n)
{
    ow_key(b, field, 2);
    ow_varint(b, n);
    ow_put(b, p, n);
}
static void ow_str(ow_buf *b, uint32_t field, const char *s) { ow_bytes(b, field, s, strlen(s)); }
/* a nested message: append `sub` as field and free it */
static void ow_msg(ow_buf *b, uint32_t field, ow_buf *sub)
{
    b->oom |= sub->oom;
    ow_bytes(b, field, sub->p, sub->len);
    free(sub->p);
    memset(sub, 0, sizeof *sub);
}

typedef struct ow_model {
    ow_buf graph;
    int64_t opset;
} ow_model;

static void ow_init(ow_model *m, int64_t opset)
{
    memset(m, 0, sizeof *m);
    m->opset = opset;
    ow_str(&m->graph, 2, "test"); /* GraphProto.name */
}

/* ValueInfoProto { name = 1, type = 2 { tensor_type = 1 { elem_type = 1, shape = 2 { dim = 1 { dim_value = 1 } } } } } */
static void ow_value_info(ow_buf *out, uint32_t field, const char *name, int32_t rank, const int64_t *dims)
{
    ow_buf vi = {0}, type = {0}, tensor = {0}, shape = {0};
    ow_str(&vi, 1, name);
    if (rank >= 0) {
        ow_int(&tensor, 1, 1); /* FLOAT */
        for (int32_t i = 0; i < rank; i++) {
            ow_buf dim = {0};
            ow_int(&dim, 1, dims[i]);
            ow_msg(&shape, 1, &dim);
        }
        ow_msg(&tensor, 2, &shape);
        ow_msg(&type, 1, &tensor);
        ow_msg(&vi, 2, &type);
    }
    ow_msg(out, field, &vi);
}

static void ow_input(ow_model *m, const char *name, int32_t rank, const int64_t *dims)
{
    ow_value_info(&m->graph, 11, name, rank, dims);
}

/* an output whose type and shape Switchyard infers */
static void ow_output(ow_model *m, const char *name) { ow_value_info(&m->graph, 12, name, -1, NULL); }

/* TensorProto { dims = 1, data_type = 2, name = 8, raw_data = 9 } (little-endian hosts) */
static void ow_weight(ow_model *m, const char *name, int32_t rank, const int64_t *dims, const float *data)
{
    ow_buf t = {0};
    size_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        ow_int(&t, 1, dims[i]);
        n *= (size_t)dims[i];
    }
    ow_int(&t, 2, 1);
    ow_str(&t, 8, name);
    ow_bytes(&t, 9, data, n * sizeof(float));
    ow_msg(&m->graph, 5, &t);
}

/* NodeProto { input = 1, output = 2, name = 3, op_type = 4 } */
static void ow_node(ow_model *m, const char *op, const char *name, int n_in, const char *const *inputs,
                    const char *output)
{
    ow_buf n = {0};
    for (int i = 0; i < n_in; i++)
        ow_str(&n, 1, inputs[i]);
    ow_str(&n, 2, output);
    ow_str(&n, 3, name);
    ow_str(&n, 4, op);
    ow_msg(&m->graph, 1, &n);
}

/* ModelProto { ir_version = 1, opset_import = 8 { domain = 1, version = 2 }, graph = 7 }; 0 on success */
static int ow_finish(ow_model *m, uint8_t **bytes, size_t *len)
{
    ow_buf model = {0}, opset = {0};
    ow_int(&model, 1, 8);
    ow_str(&opset, 1, "");
    ow_int(&opset, 2, m->opset);
    ow_msg(&model, 8, &opset);
    ow_msg(&model, 7, &m->graph);
    if (model.oom) {
        free(model.p);
        return -1;
    }
    *bytes = model.p;
    *len = model.len;
    return 0;
}

static void ow_free(ow_model *m)
{
    free(m->graph.p);
    memset(m, 0, sizeof *m);
}

#endif
