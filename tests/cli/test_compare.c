/*
 * sy_compare_tensors (switchyard/sy_tools.h), the conformance rule, on
 * hand-made tensors: float32 within atol + rtol * |want| (1.0 vs 1.05 passes
 * at atol 0.1, fails at 0.01 with max abs err 0.05 and the index [0,1]);
 * NaN only against NaN; +inf only against +inf; int64 exactly (one
 * difference of 1 fails); uint64 above 2^63 exactly; int4 codes bit for bit
 * (a difference in the high nibble of byte 1 is element 3); a dtype or
 * shape difference says so; data shorter than the shape is an error.
 */
#include <switchyard/sy_tools.h>

#include "sy_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static sy_tensor tensor(sy_dtype dt, int32_t rank, const int64_t *dims, void *data, size_t nbytes)
{
    sy_tensor t = {.struct_size = sizeof t, .dtype = dt, .rank = rank, .data = data, .nbytes = nbytes};
    memcpy(t.dims, dims, (size_t)rank * sizeof *dims);
    return t;
}

static sy_compare_result cmp(const sy_tensor *a, const sy_tensor *b, double rtol, double atol)
{
    sy_compare_result r = {.struct_size = sizeof r};
    sy_status *st = sy_compare_tensors(a, b, rtol, atol, &r);
    CHECK(!st, "unexpected status: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    return r;
}

int main(void)
{
    const int64_t d22[2] = {2, 2}, d4[1] = {4}, d41[2] = {4, 1};
    float a[4] = {0.5f, 1.05f, -2.0f, 3.0f}, b[4] = {0.5f, 1.0f, -2.0f, 3.0f};
    sy_tensor ta = tensor(SY_DT_FLOAT32, 2, d22, a, 16), tb = tensor(SY_DT_FLOAT32, 2, d22, b, 16);
    sy_compare_result r = cmp(&ta, &tb, 0.0, 0.1);
    CHECK(r.equal && r.n_mismatched == 0 && r.n_elements == 4, "1.05 vs 1.0 at atol 0.1: %s", r.message);
    r = cmp(&ta, &tb, 0.0, 0.01);
    CHECK(!r.equal && r.n_mismatched == 1 && r.first_mismatch == 1 && fabs(r.max_abs_error - 0.05) < 1e-6 &&
              strstr(r.message, "value mismatch at index [0,1]"),
          "1.05 vs 1.0 at atol 0.01: %s", r.message);
    r = cmp(&ta, &tb, 0.06, 0.0); /* 0.05 <= 0.06 * 1.0 */
    CHECK(r.equal, "rtol 0.06: %s", r.message);

    float n1[4] = {NAN, INFINITY, 1, 2}, n2[4] = {NAN, INFINITY, 1, 2}, n3[4] = {1, INFINITY, 1, 2},
          n4[4] = {NAN, -INFINITY, 1, 2};
    sy_tensor t1 = tensor(SY_DT_FLOAT32, 1, d4, n1, 16), t2 = tensor(SY_DT_FLOAT32, 1, d4, n2, 16),
              t3 = tensor(SY_DT_FLOAT32, 1, d4, n3, 16), t4 = tensor(SY_DT_FLOAT32, 1, d4, n4, 16);
    CHECK(cmp(&t1, &t2, 0, 0).equal, "NaN vs NaN, inf vs inf");
    r = cmp(&t3, &t2, 1e9, 1e9);
    CHECK(!r.equal && r.first_mismatch == 0, "1 vs NaN passed at any tolerance");
    r = cmp(&t4, &t2, 1e9, 1e9);
    CHECK(!r.equal && r.first_mismatch == 1, "-inf vs +inf passed");

    int64_t i1[4] = {1, 2, 3, 4}, i2[4] = {1, 2, 3, 5};
    sy_tensor ti1 = tensor(SY_DT_INT64, 1, d4, i1, 32), ti2 = tensor(SY_DT_INT64, 1, d4, i2, 32);
    r = cmp(&ti1, &ti2, 1.0, 1.0);
    CHECK(!r.equal && r.first_mismatch == 3 && strstr(r.message, "got 4 expected 5"), "int64: %s", r.message);
    uint64_t u1[1] = {18446744073709551615ull}, u2[1] = {18446744073709551614ull};
    const int64_t d1[1] = {1};
    sy_tensor tu1 = tensor(SY_DT_UINT64, 1, d1, u1, 8), tu2 = tensor(SY_DT_UINT64, 1, d1, u2, 8);
    r = cmp(&tu1, &tu2, 0, 0);
    CHECK(!r.equal && strstr(r.message, "got 18446744073709551615 expected 18446744073709551614"), "uint64: %s",
          r.message);

    /* int4 (dtype 22): 4 codes in 2 bytes, low nibble first; element 3 differs */
    uint8_t p1[2] = {0x21, 0x43}, p2[2] = {0x21, 0x53};
    sy_tensor tp1 = tensor((sy_dtype)22, 1, d4, p1, 2), tp2 = tensor((sy_dtype)22, 1, d4, p2, 2);
    r = cmp(&tp1, &tp2, 0, 0);
    CHECK(!r.equal && r.n_mismatched == 1 && r.first_mismatch == 3 && strstr(r.message, "bits differ at index [3]"),
          "int4: %s", r.message);

    sy_tensor ti = tensor(SY_DT_INT32, 2, d22, i1, 16);
    r = cmp(&ti, &tb, 1, 1);
    CHECK(!r.equal && strstr(r.message, "dtype int32, expected float32"), "dtype: %s", r.message);
    sy_tensor ts = tensor(SY_DT_FLOAT32, 2, d41, a, 16);
    r = cmp(&ts, &tb, 1, 1);
    CHECK(!r.equal && strstr(r.message, "shape [4,1], expected [2,2]"), "shape: %s", r.message);

    sy_tensor shortt = tensor(SY_DT_FLOAT32, 2, d22, a, 12);
    sy_compare_result rr = {.struct_size = sizeof rr};
    sy_status *st = sy_compare_tensors(&shortt, &tb, 0, 0, &rr);
    CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_ARGUMENT && strstr(sy_status_get_message(st), "12 data bytes, 16 needed"),
          "short data: %s", st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    st = sy_compare_tensors(&ta, &tb, -1, 0, &rr);
    CHECK(st != NULL, "negative rtol accepted");
    sy_status_free(st);
    printf("%s\n", sy_test_failures_ ? "FAILED" : "sy_compare_tensors: all checks passed");
    return sy_test_failures_ != 0;
}
