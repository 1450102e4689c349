/*
 * Det (11, 22): determinant of each square matrix in the last two dims of
 * X [*, M, M] -> [*], by LU decomposition with partial pivoting in double
 * (float16 / float32 / float64 in and out). M = 0 gives 1.
 */
#include "math_internal.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

static sy_status *infer_det(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (!sy_dt_is_float(x->dtype))
        return ERR(SY_ERR_TYPE, "Det needs a float type, got %s", sy_dt_name(x->dtype));
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        return ERR(SY_ERR_SHAPE, "X must be [*, M, M] (square in its last two dims), got rank %d", x->rank);
    return H->node_set_output(n, 0, x->dtype, x->rank - 2, x->dims);
}

static sy_status *prepare_det(sy_node *n, void **state)
{
    const sy_tensor *x = H->node_input(n, 0);
    int64_t m = x->dims[x->rank - 1];
    H->node_set_scratch(n, (size_t)(m * m) * sizeof(double));
    *state = NULL;
    return NULL;
}

static sy_status *run_det(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0];
    int64_t m = x->dims[x->rank - 1], batch = sy_tensor_numel(io->outputs[0]);
    double *a = io->scratch;
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t i = 0; i < m * m; i++)
            a[i] = sy_load_f64(x->data, x->dtype, (size_t)(b * m * m + i));
        double det = 1.0;
        for (int64_t c = 0; c < m && det != 0.0; c++) {
            int64_t piv = c;
            for (int64_t r = c + 1; r < m; r++)
                if (fabs(a[r * m + c]) > fabs(a[piv * m + c]))
                    piv = r;
            if (a[piv * m + c] == 0.0) {
                det = 0.0;
                break;
            }
            if (piv != c) {
                for (int64_t k = 0; k < m; k++) {
                    double t = a[c * m + k];
                    a[c * m + k] = a[piv * m + k];
                    a[piv * m + k] = t;
                }
                det = -det;
            }
            det *= a[c * m + c];
            for (int64_t r = c + 1; r < m; r++) {
                double f = a[r * m + c] / a[c * m + c];
                for (int64_t k = c; k < m; k++)
                    a[r * m + k] -= f * a[c * m + k];
            }
        }
        sy_store_f64(io->outputs[0]->data, x->dtype, (size_t)b, det);
    }
    return NULL;
}

static const sy_op_schema schemas[] = {
    SY_SCHEMA("Det", 11, 1, 1, 1, 1, SY_NO_ATTRS, infer_det, SY_NO_INPLACE, 0),
    SY_SCHEMA("Det", 22, 1, 1, 1, 1, SY_NO_ATTRS, infer_det, SY_NO_INPLACE, 0),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("Det", 1, 0, SY_DT_MASK_FLOATS, 0, prepare_det, run_det, NULL),
};

sy_status *math_linalg_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
