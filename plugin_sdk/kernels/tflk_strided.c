/* tflk_strided: a dense copy of a strided view (TRANSPOSE's permuted strides). */
#include "tflk.h"

void tflk_strided_copy(const tflk_strided *p, const void *x, void *y)
{
    const unsigned char *xb = x;
    unsigned char *yb = y;
    int32_t idx[TFLK_BIN_RANK] = {0}, n = 1, off = 0;
    for (int32_t d = 0; d < p->rank; d++)
        n *= p->dims[d];
    for (int32_t i = 0; i < n; i++) {
        for (int32_t b = 0; b < p->esize; b++)
            yb[i * p->esize + b] = xb[off * p->esize + b];
        for (int32_t d = p->rank - 1; d >= 0; d--) {
            off += p->st[d];
            if (++idx[d] < p->dims[d])
                break;
            off -= p->st[d] * p->dims[d];
            idx[d] = 0;
        }
    }
}
