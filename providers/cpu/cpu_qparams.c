/*
 * The constant quantization parameters of the folded switchyard.quant nodes
 * as the cpu provider's integer kernels take them: per-tensor scales and
 * zero points, and the fused activation as a code range. cpu_ref's
 * ops_quant reads the same inputs (q_scale_at, q_zp_at, q_act_clamp); these
 * are the narrower forms the fast kernels accept.
 */
#include "cpu.h"

#include <math.h>
#include <string.h>

bool cpu_q_scale_scalar(const sy_tensor *t, float *v)
{
    if (!t || !t->data || t->dtype != SY_DT_FLOAT32 || cpu_numel(t) != 1)
        return false;
    *v = *(const float *)t->data;
    return isfinite(*v) && *v > 0.0f;
}

bool cpu_q_zp_scalar(const sy_tensor *t, sy_dtype dt, int32_t *v)
{
    *v = 0;
    if (!t)
        return true;
    if (!t->data || t->dtype != dt || cpu_numel(t) != 1 || !cpu_is_q8(dt))
        return false;
    *v = dt == SY_DT_UINT8 ? (int32_t)*(const uint8_t *)t->data : (int32_t)*(const int8_t *)t->data;
    return true;
}

void cpu_q_act_range(const sy_node *n, sy_dtype ydt, float sy, int32_t zy, int32_t *lo, int32_t *hi)
{
    sy_q_storage_range(ydt, lo, hi);
    float amin = sy_attr_float_or(cpu_host, n, "act_min", -INFINITY);
    float amax = sy_attr_float_or(cpu_host, n, "act_max", INFINITY);
    if (isfinite(amin)) {
        int32_t v = sy_rq_quantize(amin, sy, zy, *lo, *hi);
        *lo = v > *lo ? v : *lo;
    }
    if (isfinite(amax)) {
        int32_t v = sy_rq_quantize(amax, sy, zy, *lo, *hi);
        *hi = v < *hi ? v : *hi;
    }
}

bool cpu_q_rq_mode(const sy_node *n, sy_rq_mode *mode)
{
    const char *s = NULL;
    size_t len = 0;
    *mode = SY_RQ_ONNX;
    if (!cpu_host->attr_string(n, "requant", &s, &len))
        return true;
    char buf[32];
    if (len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return sy_rq_mode_parse(buf, mode);
}
