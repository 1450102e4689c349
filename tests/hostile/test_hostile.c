/*
 * Hand-made hostile models and API calls (issue 16), each refused with a
 * message that says what and where, never a crash or an allocation of what
 * the input merely declares:
 *
 *   empty_output   a Relu whose required output is named "" (NULL output, SIGSEGV);
 *   batchnorm      a bool var (read as float32), mean of C beside a scale of C x H x W
 *                  a Dropout whose output is "" but whose optional mask is kept
 *   set_input      nbytes 0 with a 4-byte buffer (read 256 bytes past it), data NULL
 *   huge_input     an input dim of 2^40 (a 4 TB arena), dims whose product overflows
 *   limits         max_tensor_bytes / max_arena_bytes / max_nodes / max_file_bytes
 *                  from the INI and the session options, with the numbers
 *   reshape        a Reshape to [2^62, 4] (signed overflow in the element count)
 *   npy_descr      a .npy whose descr is one character (uninitialised read)
 *   tflite_state   a 476-byte TFLite file with a 2^28-float variable tensor (1 GiB at load)
 */
#include "pt_common.h"
#include "tfl_writer.h"

#include <stdint.h>

static sy_status *session(sy_env *env, pt_model *m, const sy_session_options *o, sy_model **mo, sy_session **so)
{
    *so = NULL;
    sy_status *st = pt_load_status(env, m, "hostile.onnx", mo);
    if (!st)
        st = sy_session_create(env, *mo, o, so);
    return st;
}

static void test_empty_output(void)
{
    sy_env *env = pt_env_dir(HOSTILE_PLUGIN_DIR, NULL);
    pt_model *m = pt_model_new("empty_output");
    int64_t d[1] = {4};
    pt_input(m, "x", PT_F32, 1, d);
    pt_node(m, "Relu", "relu_with_no_output", (const char *[]){"x", NULL}, (const char *[]){"", NULL});
    pt_node(m, "Identity", "id", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 1, d);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    PT_EXPECT_REFUSED(session(env, m, NULL, &mo, &s), SY_ERR_INVALID_MODEL, "relu_with_no_output",
                   "output 0 is omitted");
    PT_CHECK(s == NULL, "no session");
    sy_session_release(s);
    sy_model_release(mo);
    pt_model_free(m);
    /* Dropout's output 0 is required, its mask optional (min 1, max 2
     * outputs): omitting the output while keeping the mask is refused too,
     * although one output is present (the kernel writes output 0 unchecked) */
    m = pt_model_new("empty_required_output");
    pt_input(m, "x", PT_F32, 1, d);
    pt_node(m, "Dropout", "dropout_without_y", (const char *[]){"x", NULL}, (const char *[]){"", "mask", NULL});
    pt_node(m, "Identity", "id", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 1, d);
    pt_output(m, "mask", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 1, d);
    mo = NULL;
    PT_EXPECT_REFUSED(session(env, m, NULL, &mo, &s), SY_ERR_INVALID_MODEL, "dropout_without_y",
                   "output 0 is omitted (named \"\"); Dropout at opset", "requires its first 1");
    PT_CHECK(s == NULL, "no session");
    sy_session_release(s);
    sy_model_release(mo);
    pt_model_free(m);
    sy_env_release(env);
}

/* BatchNormalization's scale, B, mean and var: float types, all of one
 * count (found by fuzz_onnx: a bool var of 3 was read as 3 floats) */
static void bn_case(const char *what, int64_t opset, int32_t var_type, int64_t mean_n, int64_t spatial, sy_status_code code,
                    const char *needle)
{
    sy_env *env = pt_env_dir(HOSTILE_PLUGIN_DIR, NULL);
    pt_model *m = pt_model_new(what);
    m->opset.version = opset;
    int64_t xd[4] = {2, 3, 4, 5}, c[1] = {3}, ce[3] = {3, 4, 5}, md[1] = {mean_n};
    pt_input(m, "x", PT_F32, 4, xd);
    if (spatial)
        pt_input(m, "s", PT_F32, 1, c), pt_input(m, "b", PT_F32, 1, c);
    else
        pt_input(m, "s", PT_F32, 3, ce), pt_input(m, "b", PT_F32, 3, ce);
    pt_input(m, "mean", PT_F32, 1, md);
    pt_input(m, "var", var_type, 1, md);
    pt_node(m, "BatchNormalization", "bn", (const char *[]){"x", "s", "b", "mean", "var", NULL},
            (const char *[]){"y", NULL});
    if (!spatial)
        pt_attr_int(m, "spatial", 0);
    pt_output(m, "y", PT_F32, 4, xd);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    PT_EXPECT_REFUSED(session(env, m, NULL, &mo, &s), code, "bn", needle);
    sy_session_release(s);
    sy_model_release(mo);
    pt_model_free(m);
    sy_env_release(env);
}

static void test_batchnorm_inputs(void)
{
    bn_case("bn_bool_var", 15, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 3, 1, SY_ERR_TYPE,
            "input 4 is bool; scale, B, mean and var must be float16, bfloat16, float or double");
    /* spatial = 0 (opset 7): a scale of C x H x W = 60 beside a mean of C = 3 */
    bn_case("bn_mixed_counts", 7, PT_F32, 3, 0, SY_ERR_SHAPE, "input 3 holds 3 values but scale holds 60");
}

static void test_set_input(void)
{
    sy_env *env = pt_env_dir(HOSTILE_PLUGIN_DIR, NULL);
    pt_model *m = pt_model_new("relu64");
    int64_t d[1] = {64};
    pt_input(m, "x", PT_F32, 1, d);
    pt_node(m, "Relu", "r", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 1, d);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    sy_status *st = session(env, m, NULL, &mo, &s);
    PT_REQUIRE(st == NULL, "session: %s", pt_msg(st));
    float four = 1.0f;
    /* nbytes 0 is not "unknown": the buffer holds 0 bytes of the 256 needed */
    sy_tensor t = {.struct_size = sizeof t, .dtype = SY_DT_FLOAT32, .rank = 1, .dims = {64}, .data = &four,
                   .nbytes = 0};
    PT_EXPECT_REFUSED(sy_session_set_input_by_index(s, 0, &t, SY_INPUT_COPY), SY_ERR_INVALID_ARGUMENT,
                   "0 bytes of data given, the shape needs 256");
    t.nbytes = sizeof four;
    PT_EXPECT_REFUSED(sy_session_set_input_by_index(s, 0, &t, SY_INPUT_BORROW), SY_ERR_INVALID_ARGUMENT,
                   "4 bytes of data given, the shape needs 256");
    t.data = NULL;
    t.nbytes = 256;
    PT_EXPECT_REFUSED(sy_session_set_input_by_index(s, 0, &t, SY_INPUT_COPY), SY_ERR_INVALID_ARGUMENT,
                   "data is NULL, the shape needs 256 bytes");
done:
    sy_session_release(s);
    sy_model_release(mo);
    pt_model_free(m);
    sy_env_release(env);
}

static void test_huge_input(void)
{
    sy_env *env = pt_env_dir(HOSTILE_PLUGIN_DIR, NULL);
    /* 2^40 floats: refused by the default max_tensor_bytes before the planner
     * asks the allocator for 4 TB */
    pt_model *m = pt_model_new("huge");
    int64_t d[2] = {1, INT64_C(1) << 40};
    pt_input(m, "x", PT_F32, 2, d);
    pt_node(m, "Relu", "r", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 2, d);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    PT_EXPECT_REFUSED(session(env, m, NULL, &mo, &s), SY_ERR_BUDGET, "graph input 'x'", "[1,1099511627776]",
                   "4398046511104 bytes", "max_tensor_bytes = 512.0 MiB (536870912 bytes)");
    sy_model_release(mo);
    pt_model_free(m);
    /* dims whose product overflows int64 */
    m = pt_model_new("overflow");
    int64_t o[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 1};
    pt_input(m, "x", PT_F32, 3, o);
    pt_node(m, "Relu", "r", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 3, o);
    PT_EXPECT_REFUSED(session(env, m, NULL, &mo, &s), SY_ERR_INVALID_MODEL, "graph input 'x': size overflows");
    sy_model_release(mo);
    pt_model_free(m);
    sy_env_release(env);
}

static pt_model *chain(int n, int64_t len)
{
    pt_model *m = pt_model_new("chain");
    int64_t d[1] = {len};
    pt_input(m, "v0", PT_F32, 1, d);
    char a[16], b[16];
    for (int i = 0; i < n; i++) {
        snprintf(a, sizeof a, "v%d", i);
        snprintf(b, sizeof b, "v%d", i + 1);
        pt_node(m, "Relu", b, (const char *[]){a, NULL}, (const char *[]){b, NULL});
    }
    pt_output(m, b, PT_F32, 1, d);
    return m;
}

static void test_limits(void)
{
    /* INI limits, with the numbers in the message */
    sy_env *env = pt_env_dir(HOSTILE_PLUGIN_DIR,
                             "max_tensor_bytes = 1K\nmax_arena_bytes = 64K\nmax_nodes = 3\nmax_file_bytes = 300\n");
    sy_model *mo = NULL;
    sy_session *s = NULL;
    pt_model *m = chain(2, 1024); /* 4 KiB tensors */
    PT_EXPECT_REFUSED(session(env, m, NULL, &mo, &s), SY_ERR_BUDGET, "graph input 'v0'", "4096 bytes",
                   "max_tensor_bytes = 1024 bytes");
    sy_model_release(mo);
    /* the session may raise it; then the arena limit of the INI holds:
     * 4 KiB tensors fit in 64 KiB, 80 KiB ones do not */
    sy_session_options o = {.struct_size = sizeof o, .strict = -1, .max_tensor_bytes = 1 << 20};
    sy_status *st = session(env, m, &o, &mo, &s);
    PT_CHECK(st == NULL, "session with max_tensor_bytes = 1M: %s", pt_msg(st));
    sy_session_release(s);
    sy_model_release(mo);
    pt_model_free(m);
    m = chain(2, 20 * 1024);
    PT_EXPECT_REFUSED(session(env, m, &o, &mo, &s), SY_ERR_BUDGET, "the memory plan needs 81920 bytes", "max_arena_bytes = 65536 bytes");
    sy_model_release(mo);
    o.max_arena_bytes = 1 << 20;
    st = session(env, m, &o, &mo, &s);
    PT_CHECK(st == NULL, "session with max_arena_bytes = 1M: %s", pt_msg(st));
    sy_session_release(s);
    sy_model_release(mo);
    pt_model_free(m);
    /* nodes and file size */
    m = chain(4, 4);
    PT_EXPECT_REFUSED(pt_load_status(env, m, "hostile.onnx", &mo), SY_ERR_BUDGET, "4 nodes, over max_nodes = 3");
    pt_model_free(m);
    m = chain(3, 4);
    st = pt_load_status(env, m, "hostile.onnx", &mo);
    PT_CHECK(st == NULL, "3 nodes load: %s", pt_msg(st));
    sy_model_release(mo);
    mo = NULL;
    pt_model_free(m);
    uint8_t big[301] = {0};
    PT_EXPECT_REFUSED(sy_model_load_buffer(env, big, sizeof big, "big.onnx", NULL, &mo), SY_ERR_BUDGET,
                   "301 bytes, over max_file_bytes = 300 bytes");
    sy_env_release(env);
    /* bad values of the keys */
    sy_env *bad = NULL;
    PT_EXPECT_REFUSED(sy_env_create_from_string("[switchyard]\nmax_tensor_bytes = 12Q\n", NULL, &bad),
                   SY_ERR_INVALID_CONFIG, "max_tensor_bytes = '12Q'");
    PT_EXPECT_REFUSED(sy_env_create_from_string("[switchyard]\nmax_nodes = 0\n", NULL, &bad), SY_ERR_INVALID_CONFIG,
                   "max_nodes = '0'");
    PT_EXPECT_REFUSED(sy_env_create_from_string("[switchyard]\nmax_arena_bytes = 99999999999999999999G\n", NULL, &bad),
                   SY_ERR_INVALID_CONFIG, "max_arena_bytes");
}

static void test_reshape(void)
{
    sy_env *env = pt_env_dir(HOSTILE_PLUGIN_DIR, NULL);
    pt_model *m = pt_model_new("reshape");
    int64_t d[1] = {8}, sd[1] = {2}, shape[2] = {INT64_C(1) << 62, 4};
    pt_input(m, "x", PT_F32, 1, d);
    pt_init_i64(m, "shape", 1, sd, shape);
    pt_node(m, "Reshape", "reshape", (const char *[]){"x", "shape", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 2, shape);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    PT_EXPECT_REFUSED(session(env, m, NULL, &mo, &s), SY_ERR_SHAPE, "reshape", "overflows");
    sy_model_release(mo);
    pt_model_free(m);
    sy_env_release(env);
}

static void test_npy_descr(void)
{
    char path[] = "/tmp/sy_hostile_npy.XXXXXX";
    int fd = mkstemp(path);
    PT_REQUIRE(fd >= 0, "mkstemp");
    /* header: magic, version 1.0, length, then a dict whose descr is "<" */
    const char dict[] = "{'descr': '<', 'fortran_order': False, 'shape': (1,), }";
    char hdr[128];
    size_t hl = sizeof dict - 1;
    size_t total = 10 + hl + 1;
    size_t pad = (64 - total % 64) % 64;
    memcpy(hdr, "\x93NUMPY\x01\x00", 8);
    uint16_t l16 = (uint16_t)(hl + pad + 1);
    memcpy(hdr + 8, &l16, 2);
    FILE *f = fdopen(fd, "wb");
    PT_REQUIRE(f, "fdopen");
    fwrite(hdr, 1, 10, f);
    fwrite(dict, 1, hl, f);
    for (size_t i = 0; i < pad; i++)
        fputc(' ', f);
    fputc('\n', f);
    float v = 1.0f;
    fwrite(&v, 4, 1, f);
    fclose(f);
    sy_tensor *t = NULL;
    PT_EXPECT_REFUSED(sy_tensor_read_file(path, &t), SY_ERR_UNSUPPORTED, ".npy dtype '<' is not supported");
    sy_tensor_free(t);
done:
    unlink(path);
}

static void test_tflite_state(void)
{
    /* one ADD of a 2^28-float variable tensor (its zero state would be
     * allocated and zeroed at load: 1 GiB from a few hundred bytes) */
    tflw_tensor t[3] = {
        {.name = "state", .type = TFLW_FLOAT32, .rank = 1, .dims = {1 << 28}, .is_variable = true},
        {.name = "x", .type = TFLW_FLOAT32, .rank = 1, .dims = {1 << 28}},
        {.name = "y", .type = TFLW_FLOAT32, .rank = 1, .dims = {1 << 28}},
    };
    const int32_t ins[2] = {0, 1}, outs[1] = {2}, gin[1] = {1};
    tflw_op op = {.code = 0 /* ADD */, .inputs = ins, .n_inputs = 2, .outputs = outs, .n_outputs = 1};
    tflw_model tm = {.tensors = t, .n_tensors = 3, .ops = &op, .n_ops = 1, .inputs = gin, .n_inputs = 1,
                     .outputs = outs, .n_outputs = 1};
    size_t len = 0;
    uint8_t *buf = tflw_build(&tm, &len);
    PT_REQUIRE(buf, "tflw_build");
    printf("tflite model with a 2^28-float variable tensor: %zu bytes\n", len);
    sy_env *env = pt_env_dir(HOSTILE_PLUGIN_DIR, NULL);
    sy_model *mo = NULL;
    PT_EXPECT_REFUSED(sy_model_load_buffer(env, buf, len, "state.tflite", NULL, &mo), SY_ERR_BUDGET,
                   "variable tensor 'state'", "268435456 elements", "1073741824 bytes", "max_tensor_bytes");
    sy_model_release(mo);
    free(buf);
    sy_env_release(env);
done:;
}

int main(void)
{
    PT_RUN(test_empty_output);
    PT_RUN(test_batchnorm_inputs);
    PT_RUN(test_set_input);
    PT_RUN(test_huge_input);
    PT_RUN(test_limits);
    PT_RUN(test_reshape);
    PT_RUN(test_npy_descr);
    PT_RUN(test_tflite_state);
    return pt_result();
}
