/*
 * Fuzz target: a tensor file (.npy or ONNX TensorProto .pb, decided by
 * content) -> sy_tensor_read_file -> written back (sy_tensor_write_file) and
 * read again, which must give the same bytes.
 */
#include "fuzz_common.h"

/* equal dtype, size and elements; string elements are records pointing at
 * text, so their text is compared, not the records */
static int same_tensor(const sy_tensor *t, const sy_tensor *u)
{
    if (u->nbytes != t->nbytes || u->dtype != t->dtype)
        return 0;
    if (t->dtype != SY_DT_STRING)
        return !t->nbytes || !memcmp(u->data, t->data, t->nbytes);
    for (int64_t i = 0; i < (int64_t)(t->nbytes / sizeof(sy_string)); i++) {
        size_t a = 0, b = 0;
        const char *x = sy_tensor_string(t, i, &a), *y = sy_tensor_string(u, i, &b);
        if (a != b || (a && memcmp(x, y, a)))
            return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfile(data, size, path);
    if (fd < 0)
        return 0;
    sy_tensor *t = NULL;
    sy_status *st = sy_tensor_read_file(path, &t);
    close(fd);
    if (st) {
        sy_status_free(st);
        return 0;
    }
    /* round trip through a .pb file */
    {
        char named[80];
        snprintf(named, sizeof named, "/dev/shm/sy_fuzz_tensor_%d.pb", (int)getpid());
        st = sy_tensor_write_file(named, t);
        if (!st) {
            sy_tensor *u = NULL;
            sy_status *st2 = sy_tensor_read_file(named, &u);
            if (!st2 && !same_tensor(t, u)) {
                fprintf(stderr, "fuzz_tensor: a written tensor reads back different\n");
                abort();
            }
            sy_status_free(st2);
            sy_tensor_free(u);
        }
        sy_status_free(st);
        unlink(named);
    }
    sy_tensor_free(t);
    return 0;
}
