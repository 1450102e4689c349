/*
 * The core's dtype names and sizes (sy_dtype_name, sy_dtype_size, public
 * API) and the SDK's (sy_dt_name, sy_dt_size) are the same for every dtype
 * value, and match the ONNX TensorProto.DataType names and widths written
 * out here (onnx.proto: FLOAT8E4M3FN = 17 ... one byte each).
 */
#include "switchyard.h"
#include "switchyard/sy_sdk.h"
#include "sy_test.h"

static void test_core_and_sdk_agree(void)
{
    for (int dt = -1; dt <= SY_DT__COUNT + 1; dt++) {
        CHECK(!strcmp(sy_dtype_name((sy_dtype)dt), sy_dt_name((sy_dtype)dt)), "dtype %d: core '%s', SDK '%s'", dt,
              sy_dtype_name((sy_dtype)dt), sy_dt_name((sy_dtype)dt));
        CHECK(sy_dtype_size((sy_dtype)dt) == sy_dt_size((sy_dtype)dt), "dtype %d: core %zu bytes, SDK %zu", dt,
              sy_dtype_size((sy_dtype)dt), sy_dt_size((sy_dtype)dt));
    }
}

static void test_hand_values(void)
{
    static const struct {
        sy_dtype dt;
        const char *name;
        size_t size;
    } rows[] = {
        {SY_DT_FLOAT32, "float32", 4},         {SY_DT_INT8, "int8", 1},
        {SY_DT_BFLOAT16, "bfloat16", 2},       {SY_DT_FLOAT8E4M3FN, "float8e4m3fn", 1},
        {SY_DT_FLOAT8E4M3FNUZ, "float8e4m3fnuz", 1}, {SY_DT_FLOAT8E5M2, "float8e5m2", 1},
        {SY_DT_FLOAT8E5M2FNUZ, "float8e5m2fnuz", 1}, {SY_DT_FLOAT8E8M0, "float8e8m0", 1},
        {SY_DT_INT4, "int4", 0} /* packed two per byte */, {SY_DT_STRING, "string", 16} /* one sy_string record */,
        {(sy_dtype)14, "undefined", 0} /* COMPLEX64: not a Switchyard type */,
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        CHECK(!strcmp(sy_dt_name(rows[i].dt), rows[i].name), "dtype %d: '%s', expected '%s'", (int)rows[i].dt,
              sy_dt_name(rows[i].dt), rows[i].name);
        CHECK(sy_dt_size(rows[i].dt) == rows[i].size, "dtype %d: %zu bytes, expected %zu", (int)rows[i].dt,
              sy_dt_size(rows[i].dt), rows[i].size);
    }
}

int main(void)
{
    test_core_and_sdk_agree();
    test_hand_values();
    return SY_TEST_MAIN_RESULT();
}
