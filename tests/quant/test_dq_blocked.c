/*
 * DequantizeLinear-21 with block_size on int4 codes (what 'switchyard
 * quantize --scheme int4' writes), against values computed by hand from the
 * ONNX definition y = (x - zp[block]) * scale[block], the block of element
 * i along `axis` being i_axis / block_size (data/dq_blocked_*.onnx from
 * gen_blocked_models.py).
 *
 *   axis 1, block 2, x [[1,-2,7],[-8,3,0]], scales [[0.5,2],[0.25,4]]:
 *     [[1*0.5, -2*0.5, 7*2], [-8*0.25, 3*0.25, 0*4]] = [[0.5,-1,14],[-2,0.75,0]]
 *   the same with zero points [[1,0],[0,-1]]:
 *     [[0*0.5, -3*0.5, 7*2], [-8*0.25, 3*0.25, 1*4]] = [[0,-1.5,14],[-2,0.75,4]]
 *   axis 0, block 2, x [[1,-2],[7,-8],[3,0]], scales [[0.5,2],[0.25,4]]:
 *     rows 0-1 take scale row 0, row 2 takes row 1: [[0.5,-4],[3.5,-16],[0.75,0]]
 */
#include <switchyard/switchyard.h>

#include <stdio.h>
#include <string.h>

static int failures;

static void check(sy_env *env, const char *dir, const char *name, const float *want, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
    sy_model *m = NULL;
    sy_session *s = NULL;
    const sy_tensor *y = NULL;
    sy_status *st = sy_model_load(env, path, &m);
    if (!st)
        st = sy_session_create(env, m, NULL, &s);
    if (!st)
        st = sy_session_run(s);
    if (!st)
        st = sy_session_get_output(s, 0, &y);
    if (st) {
        fprintf(stderr, "FAIL %s: %s\n", name, sy_status_get_message(st));
        sy_status_free(st);
        failures++;
    } else if (y->dtype != SY_DT_FLOAT32 || (size_t)sy_tensor_numel(y) != n || memcmp(y->data, want, n * 4)) {
        fprintf(stderr, "FAIL %s: got", name);
        for (size_t i = 0; y->dtype == SY_DT_FLOAT32 && i < (size_t)sy_tensor_numel(y); i++)
            fprintf(stderr, " %g", (double)((const float *)y->data)[i]);
        fprintf(stderr, "\n");
        failures++;
    } else {
        printf("ok %s\n", name);
    }
    sy_session_release(s);
    sy_model_release(m);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_dq_blocked DATA_DIR\n");
        return 2;
    }
    sy_env *env = NULL;
    sy_status *st = sy_env_create(NULL, &env);
    if (st) {
        fprintf(stderr, "FAIL env: %s\n", sy_status_get_message(st));
        sy_status_free(st);
        return 1;
    }
    static const float a1[] = {0.5f, -1.0f, 14.0f, -2.0f, 0.75f, 0.0f};
    static const float a1zp[] = {0.0f, -1.5f, 14.0f, -2.0f, 0.75f, 4.0f};
    static const float a0[] = {0.5f, -4.0f, 3.5f, -16.0f, 0.75f, 0.0f};
    check(env, argv[1], "dq_blocked_axis1", a1, 6);
    check(env, argv[1], "dq_blocked_axis1_zp", a1zp, 6);
    check(env, argv[1], "dq_blocked_axis0", a0, 6);
    sy_env_release(env);
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("block-wise int4 DequantizeLinear: all passed\n");
    return 0;
}
