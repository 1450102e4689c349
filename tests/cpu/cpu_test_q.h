/*
 * What the tests of the cpu provider's integer kernels write out of the
 * ONNX formulas: rounding half to even in double, independent of the FPU's
 * rounding mode and of the code under test.
 */
#ifndef CPU_TEST_Q_H
#define CPU_TEST_Q_H

#include <math.h>

static inline double cq_round_even(double v)
{
    double f = floor(v), d = v - f;
    if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0.0))
        f += 1.0;
    return f;
}

#endif
