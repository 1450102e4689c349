/*
 * Two codegen packages in one image, through their handle APIs (issue #14
 * item 7, MindSpore Lite Micro's model_c.h flow): `fc` (a float Gemm +
 * Relu) twice, as two instances on two workspaces, and `uq` (an int8
 * Unique whose output lengths are each run's). Prints every tensor's
 * declared name, dtype and shape, each run's outputs in the packages' own
 * `outN BYTES: hex` format (tagged), the run's shapes, and the one-instance
 * calls' outputs; tests/mcu/test_mcu_api.sh compares them with the
 * packages' expected_output.txt, `switchyard inspect` and hand-worked
 * values. Exit 1 when a refusal the API promises does not happen.
 */
#include "fc_model.h"
#include "uq_model.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern const unsigned char fc_test_input0[];
extern const unsigned char uq_test_input0[];

static uint64_t ws_a[(FC_MODEL_WORKSPACE_BYTES + 7) / 8 + 1], ws_b[(FC_MODEL_WORKSPACE_BYTES + 7) / 8 + 1];
static uint64_t ws_s[(FC_MODEL_WORKSPACE_BYTES + 7) / 8 + 1], ws_u[(UQ_MODEL_WORKSPACE_BYTES + 7) / 8 + 1];
static fc_model a, b, bad;
static uq_model u;
static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        printf("error: %s\n", what);
        failures++;
    }
}

static const char *dt_name(int32_t d)
{
    switch (d) {
    case SY_MODEL_FLOAT32: return "float32";
    case SY_MODEL_UINT8: return "uint8";
    case SY_MODEL_INT8: return "int8";
    case SY_MODEL_INT16: return "int16";
    case SY_MODEL_INT32: return "int32";
    case SY_MODEL_INT64: return "int64";
    case SY_MODEL_BOOL: return "bool";
    case SY_MODEL_FLOAT16: return "float16";
    default: return "?";
    }
}

static void print_dims(int32_t rank, const int32_t *dims)
{
    printf("[");
    for (int32_t d = 0; d < rank; d++)
        printf("%s%ld", d ? "," : "", (long)dims[d]);
    printf("]");
}

static void print_info(const char *tag, const char *kind, int i, const sy_model_tensor *t)
{
    printf("%s %s %d '%s' %s ", tag, kind, i, t->name, dt_name(t->dtype));
    print_dims(t->rank, t->dims);
    printf("\n");
}

static void dump(const char *tag, int o, const void *p, size_t n)
{
    printf("%s out%d %lu:", tag, o, (unsigned long)n);
    for (size_t k = 0; k < n; k++)
        printf(" %02x", ((const unsigned char *)p)[k]);
    printf("\n");
}

int main(void)
{
    /* the refusals create promises: no handle, a short or misaligned workspace */
    expect(fc_model_create(NULL, ws_a, sizeof ws_a) == -1, "create without a handle");
    expect(fc_model_create(&bad, ws_a, FC_MODEL_WORKSPACE_BYTES - 1) == -1, "create on a short workspace");
    expect(fc_model_create(&bad, (unsigned char *)ws_a + 1, FC_MODEL_WORKSPACE_BYTES) == -1,
           "create on a misaligned workspace");
    expect(fc_model_predict(&bad) == -1, "predict of a handle never created");
    if (fc_model_create(&a, ws_a, sizeof ws_a) || fc_model_create(&b, ws_b, sizeof ws_b) ||
        uq_model_create(&u, ws_u, sizeof ws_u)) {
        printf("error: create\n");
        return 2;
    }
    /* names, dtypes, shapes; lookups by name both ways */
    for (int i = 0; i < fc_model_num_inputs(); i++) {
        print_info("fc", "input", i, fc_model_input_info(i));
        expect(fc_model_input_index(fc_model_input_info(i)->name) == i, "fc input by name");
    }
    for (int i = 0; i < fc_model_num_outputs(); i++) {
        print_info("fc", "output", i, fc_model_output_info(i));
        expect(fc_model_output_index(fc_model_output_info(i)->name) == i, "fc output by name");
    }
    for (int i = 0; i < uq_model_num_inputs(); i++)
        print_info("uq", "input", i, uq_model_input_info(i));
    for (int i = 0; i < uq_model_num_outputs(); i++) {
        print_info("uq", "output", i, uq_model_output_info(i));
        expect(uq_model_output_index(uq_model_output_info(i)->name) == i, "uq output by name");
    }
    expect(fc_model_input_index("no such tensor") == -1 && fc_model_input_index(NULL) == -1, "unknown name");
    expect(!fc_model_input_info(-1) && !fc_model_input_info(FC_MODEL_NUM_INPUTS), "input info of a bad index");
    expect(!fc_model_input_data(&a, FC_MODEL_NUM_INPUTS) && !uq_model_output_data(&u, -1), "data of a bad index");
    int32_t dims[SY_MODEL_MAX_RANK];
    expect(uq_model_output_shape(&u, UQ_MODEL_NUM_OUTPUTS, dims) == -1, "shape of a bad index");

    /* instance b runs first on zeros: a's workspace is its own */
    size_t nx = fc_model_input_info(0)->bytes;
    memset(fc_model_input_data(&b, 0), 0, nx);
    expect(fc_model_predict(&b) == 0, "fc predict (b, zeros)");
    memcpy(fc_model_input_data(&a, 0), fc_test_input0, nx);
    expect(fc_model_predict(&a) == 0, "fc predict (a)");
    memcpy(fc_model_input_data(&b, 0), fc_test_input0, nx);
    for (int o = 0; o < fc_model_num_outputs(); o++)
        dump("fc_a", o, fc_model_output_data(&a, o), fc_model_output_size(&a, o));
    expect(fc_model_predict(&b) == 0, "fc predict (b)");
    for (int o = 0; o < fc_model_num_outputs(); o++)
        dump("fc_b", o, fc_model_output_data(&b, o), fc_model_output_size(&b, o));

    int ui = uq_model_input_index(uq_model_input_info(0)->name);
    memcpy(uq_model_input_data(&u, ui), uq_test_input0, uq_model_input_info(ui)->bytes);
    expect(uq_model_predict(&u) == 0, "uq predict");
    for (int o = 0; o < uq_model_num_outputs(); o++) {
        dump("uq", o, uq_model_output_data(&u, o), uq_model_output_size(&u, o));
        int r = uq_model_output_shape(&u, o, dims);
        printf("uq shape %d ", o);
        print_dims(r, dims);
        printf("\n");
    }

    /* the one-instance calls, on the instance inside fc's model.c */
    expect(fc_model_init(ws_s, sizeof ws_s) == 0, "fc_model_init");
    memcpy(fc_model_input(0), fc_test_input0, fc_model_input_bytes(0));
    expect(fc_model_run() == 0, "fc_model_run");
    for (int o = 0; o < FC_MODEL_NUM_OUTPUTS; o++)
        dump("fc_s", o, fc_model_output(o), fc_model_output_bytes(o));
    fc_model_destroy(&a);
    expect(fc_model_predict(&a) == -1 && !fc_model_input_data(&a, 0), "a destroyed handle refuses");
    printf("done, %d failures\n", failures);
    return failures ? 1 : 0;
}
