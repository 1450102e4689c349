/*
 * The tools library's model writer (sy_model_writer_*, switchyard/sy_tools.h):
 *   run      a model it writes loads and runs, with outputs worked by hand
 *            from the ONNX definitions: LeakyRelu(alpha 0.1) of
 *            [-2, -0.5, 0, 3] is [-0.2, -0.05, 0, 3]; Add with the
 *            initializer [1, 2, 3, 4] then Transpose(perm [1, 0]) of a
 *            [1, 4] input [10, 20, 30, 40] is [[11], [22], [33], [44]];
 *   save     the same bytes through a file (atomic write) load and run;
 *   refuse   bad arguments are refused with a message naming them, and the
 *            writer is unchanged after a refusal (it still packs the same bytes).
 *
 *   test_model_writer PLUGIN_DIR WORK_DIR
 */
#include <switchyard/sy_tools.h>

#include "sy_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool ok(sy_status *st, const char *what)
{
    if (st) {
        fprintf(stderr, "FAIL %s: %s\n", what, sy_status_get_message(st));
        sy_status_free(st);
        sy_test_failures_++;
    }
    return st == NULL;
}

/* refused with `code` and a message containing `part` */
static void refused(sy_status *st, sy_status_code code, const char *part, const char *what)
{
    CHECK(st && sy_status_get_code(st) == code && strstr(sy_status_get_message(st), part), "%s: %s", what,
          st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
}

/* run the model (bytes or a file) on x [1, 4]; compare output 0 with want */
static void run(sy_env *env, const void *buf, size_t len, const char *path, const float *x, const float *want,
                int32_t rank, const int64_t *dims, const char *what)
{
    sy_model *m = NULL;
    sy_session *s = NULL;
    const sy_tensor *y = NULL;
    sy_tensor in = {.struct_size = sizeof in, .dtype = SY_DT_FLOAT32, .rank = 2, .dims = {1, 4}, .data = (void *)x,
                    .nbytes = 16};
    sy_status *st = path ? sy_model_load(env, path, &m) : sy_model_load_buffer(env, buf, len, what, NULL, &m);
    if (!st)
        st = sy_session_create(env, m, NULL, &s);
    if (!st)
        st = sy_session_set_input_by_index(s, 0, &in, SY_INPUT_COPY);
    if (!st)
        st = sy_session_run(s);
    if (!st)
        st = sy_session_get_output(s, 0, &y);
    if (ok(st, what)) {
        bool shape = y->dtype == SY_DT_FLOAT32 && y->rank == rank && !memcmp(y->dims, dims, (size_t)rank * 8);
        CHECK(shape && !memcmp(y->data, want, 16), "%s: output differs (rank %d, [%g %g %g %g])", what, (int)y->rank,
              (double)((float *)y->data)[0], (double)((float *)y->data)[1], (double)((float *)y->data)[2],
              (double)((float *)y->data)[3]);
    }
    sy_session_release(s);
    sy_model_release(m);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s PLUGIN_DIR WORK_DIR\n", argv[0]);
        return 2;
    }
    char ini[1024], path[1024];
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = %s\n", argv[1]);
    snprintf(path, sizeof path, "%s/model_writer.onnx", argv[2]);
    sy_env *env = NULL;
    if (!ok(sy_env_create_from_string(ini, NULL, &env), "env"))
        return 1;
    const int64_t d14[2] = {1, 4}, d41[2] = {4, 1};

    /* LeakyRelu */
    sy_model_writer *w = NULL;
    void *buf = NULL;
    size_t len = 0;
    sy_model_attr alpha = {.name = "alpha", .type = SY_MODEL_ATTR_FLOAT, .f = 0.1f};
    const char *x[] = {"x"}, *y[] = {"y"};
    if (ok(sy_model_writer_create(17, &w), "create") && ok(sy_model_writer_add_input(w, "x", SY_DT_FLOAT32, 2, d14), "in") &&
        ok(sy_model_writer_add_output(w, "y", SY_DT_UNDEFINED, -1, NULL), "out") &&
        ok(sy_model_writer_add_node(w, NULL, "LeakyRelu", NULL, x, 1, y, 1, &alpha, 1), "node") &&
        ok(sy_model_writer_pack(w, &buf, &len), "pack")) {
        const float in[4] = {-2.0f, -0.5f, 0.0f, 3.0f}, want[4] = {-2.0f * 0.1f, -0.5f * 0.1f, 0.0f, 3.0f};
        run(env, buf, len, NULL, in, want, 2, d14, "LeakyRelu");
    }
    sy_tools_free(buf);
    sy_model_writer_release(w);

    /* Add(initializer) -> Transpose, through a file; then the refusals */
    w = NULL;
    buf = NULL;
    float c[4] = {1, 2, 3, 4};
    sy_tensor ct = {.struct_size = sizeof ct, .dtype = SY_DT_FLOAT32, .rank = 1, .dims = {4}, .data = c, .nbytes = 16};
    const int64_t perm[2] = {1, 0};
    sy_model_attr pa = {.name = "perm", .type = SY_MODEL_ATTR_INTS, .ints = perm, .n = 2};
    const char *add_in[] = {"x", "c"}, *add_out[] = {"s"}, *tr_in[] = {"s"}, *tr_out[] = {"y"};
    if (ok(sy_model_writer_create(17, &w), "create 2") && ok(sy_model_writer_add_input(w, "x", SY_DT_FLOAT32, 2, d14), "x") &&
        ok(sy_model_writer_add_output(w, "y", SY_DT_FLOAT32, 2, d41), "y") &&
        ok(sy_model_writer_add_initializer(w, "c", &ct), "c") &&
        ok(sy_model_writer_add_node(w, "", "Add", "add", add_in, 2, add_out, 1, NULL, 0), "add") &&
        ok(sy_model_writer_add_node(w, NULL, "Transpose", NULL, tr_in, 1, tr_out, 1, &pa, 1), "transpose") &&
        ok(sy_model_writer_save(w, path), "save") && ok(sy_model_writer_pack(w, &buf, &len), "pack 2")) {
        const float in[4] = {10, 20, 30, 40}, want[4] = {11, 22, 33, 44};
        run(env, NULL, 0, path, in, want, 2, d41, "Add + Transpose (file)");
        const int64_t neg[2] = {1, -3};
        refused(sy_model_writer_add_input(w, "z", SY_DT_FLOAT32, 2, neg), SY_ERR_SHAPE, "dimension 1 is -3",
                "negative dimension");
        refused(sy_model_writer_add_input(w, "", SY_DT_FLOAT32, 2, d14), SY_ERR_INVALID_ARGUMENT, "needs a name",
                "empty name");
        sy_tensor bad = ct;
        bad.nbytes = 12;
        refused(sy_model_writer_add_initializer(w, "b", &bad), SY_ERR_SHAPE, "12 bytes of data, its shape needs 16",
                "initializer size");
        sy_model_attr ba = {.name = "k", .type = 4};
        refused(sy_model_writer_add_node(w, NULL, "Relu", NULL, x, 1, y, 1, &ba, 1), SY_ERR_INVALID_ARGUMENT,
                "attribute 0 ('k', type 4)", "attribute type");
        refused(sy_model_writer_add_opset(w, "", 18), SY_ERR_INVALID_ARGUMENT, "imported twice", "opset twice");
        refused(sy_model_writer_add_node(w, NULL, "Relu", NULL, x, 1, y, 0, NULL, 0), SY_ERR_INVALID_ARGUMENT,
                "has no output", "no output");
        refused(sy_model_writer_create(0, &(sy_model_writer *){NULL}), SY_ERR_INVALID_ARGUMENT, "opset 0", "opset 0");
        void *again = NULL;
        size_t len2 = 0;
        if (ok(sy_model_writer_pack(w, &again, &len2), "pack after refusals"))
            CHECK(len2 == len && !memcmp(again, buf, len), "the refusals changed the writer (%zu vs %zu bytes)", len2,
                  len);
        sy_tools_free(again);
    }
    sy_tools_free(buf);
    sy_model_writer_release(w);
    sy_env_release(env);
    printf("%s\n", sy_test_failures_ ? "FAILED" : "model writer: all checks passed");
    return sy_test_failures_ != 0;
}
