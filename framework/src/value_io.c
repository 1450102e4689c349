/*
 * Value files: TensorProto, SequenceProto and OptionalProto .pb, as the ONNX
 * test data stores graph inputs and outputs of every kind. The wire format
 * does not say which message a file holds, so the caller says what it
 * expects (the graph value's declared kind).
 */
#include "onnx.pb-c.h"
#include "onnx_import.h"
#include "status.h"
#include "util.h"
#include "switchyard/switchyard.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

SY_EXPORT void sy_value_free(sy_value *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->count; i++)
        sy_tensor_free(v->items[i]);
    free(v->items);
    free(v);
}

static sy_status *add_tensor(sy_value *v, const Onnx__TensorProto *tp, const char *dir)
{
    sy_tensor **grown = realloc(v->items, (v->count + 1) * sizeof *grown);
    if (!grown)
        return sy_error_oom();
    v->items = grown;
    SY_TRY(sy_onnx_tensor_from_proto(tp, dir, &v->items[v->count]));
    v->dtype = v->items[v->count]->dtype;
    v->count++;
    return NULL;
}

static sy_status *from_sequence(sy_value *v, const Onnx__SequenceProto *sp, const char *dir)
{
    if (sp->n_sparse_tensor_values || sp->n_sequence_values || sp->n_map_values || sp->n_optional_values ||
        (sp->has_elem_type && sp->elem_type != ONNX__SEQUENCE_PROTO__DATA_TYPE__TENSOR &&
         sp->elem_type != ONNX__SEQUENCE_PROTO__DATA_TYPE__UNDEFINED))
        return sy_error(SY_ERR_UNSUPPORTED, "a sequence of non-tensors (elem_type %d); only sequences of tensors are "
                        "supported", sp->has_elem_type ? (int)sp->elem_type : 0);
    v->kind = SY_VALUE_SEQUENCE;
    for (size_t i = 0; i < sp->n_tensor_values; i++) {
        sy_status *st = add_tensor(v, sp->tensor_values[i], dir);
        if (st)
            return sy_error_wrap(st, "item %zu", i);
        if (v->items[i]->dtype != v->items[0]->dtype)
            return sy_error(SY_ERR_TYPE, "item %zu is %s, item 0 %s: a sequence holds one dtype", i,
                            sy_dtype_name(v->items[i]->dtype), sy_dtype_name(v->items[0]->dtype));
    }
    return NULL;
}

static sy_status *parse(const uint8_t *p, size_t size, sy_value_kind declared, const char *dir, sy_value *v)
{
    switch (declared) {
    case SY_VALUE_TENSOR: {
        Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, p);
        if (!tp)
            return sy_error(SY_ERR_INVALID_ARGUMENT, "not a valid ONNX TensorProto (truncated or corrupt)");
        v->kind = SY_VALUE_TENSOR;
        sy_status *st = add_tensor(v, tp, dir);
        onnx__tensor_proto__free_unpacked(tp, NULL);
        return st;
    }
    case SY_VALUE_SEQUENCE: {
        Onnx__SequenceProto *sp = onnx__sequence_proto__unpack(NULL, size, p);
        if (!sp)
            return sy_error(SY_ERR_INVALID_ARGUMENT, "not a valid ONNX SequenceProto (truncated or corrupt)");
        sy_status *st = from_sequence(v, sp, dir);
        onnx__sequence_proto__free_unpacked(sp, NULL);
        return st;
    }
    case SY_VALUE_OPTIONAL:
    case SY_VALUE_OPTIONAL_SEQUENCE: {
        Onnx__OptionalProto *op = onnx__optional_proto__unpack(NULL, size, p);
        if (!op)
            return sy_error(SY_ERR_INVALID_ARGUMENT, "not a valid ONNX OptionalProto (truncated or corrupt)");
        sy_status *st = NULL;
        if (op->tensor_value) {
            v->kind = SY_VALUE_TENSOR;
            st = add_tensor(v, op->tensor_value, dir);
        } else if (op->sequence_value) {
            st = from_sequence(v, op->sequence_value, dir);
        } else if (op->sparse_tensor_value || op->map_value || op->optional_value) {
            st = sy_error(SY_ERR_UNSUPPORTED, "an optional of a sparse tensor, map or optional; only optionals of "
                          "tensors and sequences are supported");
        } else {
            v->kind = SY_VALUE_NONE;
        }
        onnx__optional_proto__free_unpacked(op, NULL);
        return st;
    }
    default:
        return sy_error(SY_ERR_INVALID_ARGUMENT, "declared kind %d is not a kind of value file", (int)declared);
    }
}

SY_EXPORT sy_status *sy_value_read_file(const char *path, sy_value_kind declared, sy_value **out)
{
    if (!path || !out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_value_read_file: NULL argument");
    *out = NULL;
    struct stat sb;
    int fd = sy_open_regular(path, &sb);
    if (fd == -2)
        return sy_error(SY_ERR_IO, "%s: not a regular file (%s)", path, sy_file_kind(sb.st_mode));
    if (fd < 0)
        return sy_error(errno == ENOENT ? SY_ERR_NOT_FOUND : SY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t size = (size_t)sb.st_size;
    void *p = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (size && p == MAP_FAILED)
        return sy_error(SY_ERR_IO, "%s: mmap: %s", path, strerror(errno));
    sy_value *v = calloc(1, sizeof *v);
    char *dir = sy_dirname(path);
    sy_status *st = v && dir ? parse(size ? p : (const uint8_t *)"", size, declared, dir, v) : sy_error_oom();
    free(dir);
    if (size)
        munmap(p, size);
    if (st) {
        sy_value_free(v);
        return sy_error_wrap(st, "%s", path);
    }
    v->struct_size = sizeof *v;
    *out = v;
    return NULL;
}
