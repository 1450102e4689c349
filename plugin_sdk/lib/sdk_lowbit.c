/* sy_sdk: low-bit element types (float8 e4m3fn/e4m3fnuz/e5m2/e5m2fnuz/e8m0,
 * float4e2m1, int4/uint4, int2/uint2): sizes, names, packed element access
 * and conversion with the ONNX Cast rules (saturate, e8m0 round_mode). */
#include "switchyard/sy_sdk.h"

#include <math.h>

/* ---- dtype facts --------------------------------------------------------- */

unsigned sy_dt_bits(sy_dtype dt)
{
    switch (dt) {
    case SY_DT_INT4: case SY_DT_UINT4: case SY_DT_FLOAT4E2M1: return 4;
    case SY_DT_INT2: case SY_DT_UINT2: return 2;
    case SY_DT_FLOAT8E4M3FN: case SY_DT_FLOAT8E4M3FNUZ: case SY_DT_FLOAT8E5M2: case SY_DT_FLOAT8E5M2FNUZ:
    case SY_DT_FLOAT8E8M0: return 8;
    case SY_DT_STRING: return 0; /* no numeric storage width */
    default: return (unsigned)(8 * sy_dt_size(dt));
    }
}

bool sy_dt_is_lowbit(sy_dtype dt)
{
    switch (dt) {
    case SY_DT_INT4: case SY_DT_UINT4: case SY_DT_FLOAT4E2M1: case SY_DT_INT2: case SY_DT_UINT2:
    case SY_DT_FLOAT8E4M3FN: case SY_DT_FLOAT8E4M3FNUZ: case SY_DT_FLOAT8E5M2: case SY_DT_FLOAT8E5M2FNUZ:
    case SY_DT_FLOAT8E8M0: return true;
    default: return false;
    }
}

bool sy_dt_is_float8(sy_dtype dt)
{
    return dt == SY_DT_FLOAT8E4M3FN || dt == SY_DT_FLOAT8E4M3FNUZ || dt == SY_DT_FLOAT8E5M2 ||
           dt == SY_DT_FLOAT8E5M2FNUZ || dt == SY_DT_FLOAT8E8M0;
}

static bool lowbit_is_int(sy_dtype dt)
{
    return dt == SY_DT_INT4 || dt == SY_DT_UINT4 || dt == SY_DT_INT2 || dt == SY_DT_UINT2;
}

size_t sy_dt_nbytes(sy_dtype dt, int64_t n)
{
    unsigned b = sy_dt_bits(dt);
    if (!b || n <= 0)
        return 0;
    return (size_t)(((uint64_t)n * b + 7u) / 8u);
}

const char *sy_dt_name_full(sy_dtype dt)
{
    switch (dt) {
    case SY_DT_FLOAT8E4M3FN: return "float8e4m3fn";
    case SY_DT_FLOAT8E4M3FNUZ: return "float8e4m3fnuz";
    case SY_DT_FLOAT8E5M2: return "float8e5m2";
    case SY_DT_FLOAT8E5M2FNUZ: return "float8e5m2fnuz";
    case SY_DT_FLOAT8E8M0: return "float8e8m0";
    case SY_DT_FLOAT4E2M1: return "float4e2m1";
    case SY_DT_UINT2: return "uint2";
    case SY_DT_INT2: return "int2";
    default: return sy_dt_name(dt);
    }
}

/* ---- minifloat formats ----------------------------------------------------- */

typedef struct minifloat {
    int ebits, mbits, bias;
    uint8_t max_code;  /* largest finite magnitude code (sign bit clear) */
    bool has_inf;      /* e5m2: exponent all ones = inf/NaN */
    bool fnuz;         /* no negative zero; 0x80 is the only NaN */
    bool has_nan;      /* float4e2m1 has none */
} minifloat;

static const minifloat MF_E4M3FN = {4, 3, 7, 0x7e, false, false, true};
static const minifloat MF_E4M3FNUZ = {4, 3, 8, 0x7f, false, true, true};
static const minifloat MF_E5M2 = {5, 2, 15, 0x7b, true, false, true};
static const minifloat MF_E5M2FNUZ = {5, 2, 16, 0x7f, false, true, true};
static const minifloat MF_E2M1 = {2, 1, 1, 0x7, false, false, false};

static const minifloat *mf_of(sy_dtype dt)
{
    switch (dt) {
    case SY_DT_FLOAT8E4M3FN: return &MF_E4M3FN;
    case SY_DT_FLOAT8E4M3FNUZ: return &MF_E4M3FNUZ;
    case SY_DT_FLOAT8E5M2: return &MF_E5M2;
    case SY_DT_FLOAT8E5M2FNUZ: return &MF_E5M2FNUZ;
    case SY_DT_FLOAT4E2M1: return &MF_E2M1;
    default: return NULL;
    }
}

static double mf_decode(const minifloat *f, unsigned v)
{
    unsigned sbit = 1u << (f->ebits + f->mbits);
    unsigned mag = v & (sbit - 1u);
    bool neg = (v & sbit) != 0;
    if (f->fnuz && v == sbit)
        return NAN;
    unsigned e = mag >> f->mbits, m = mag & ((1u << f->mbits) - 1u);
    unsigned emax = (1u << f->ebits) - 1u;
    if (f->has_inf && e == emax)
        return m ? NAN : (neg ? -INFINITY : INFINITY);
    if (!f->has_inf && !f->fnuz && f->has_nan && mag == ((1u << (f->ebits + f->mbits)) - 1u))
        return NAN; /* e4m3fn: S.1111.111 */
    double val = e ? ldexp((double)((1u << f->mbits) | m), (int)e - f->bias - f->mbits)
                   : ldexp((double)m, 1 - f->bias - f->mbits);
    return neg ? -val : val;
}

/* Round-to-nearest-even encoding of x; ONNX saturate semantics: with
 * saturate, +-inf and out-of-range values become +-max; without, they become
 * inf (e5m2) or NaN (the others). float4e2m1 has neither: it always clamps. */
static unsigned mf_encode(const minifloat *f, double x, bool saturate)
{
    unsigned sbit = 1u << (f->ebits + f->mbits);
    bool neg = signbit(x) != 0;
    unsigned sign = neg ? sbit : 0u;
    /* NaN keeps its sign: S.1111.111 (e4m3fn), S.11111.10 (e5m2); 0x80 (fnuz) */
    unsigned nan_code = f->fnuz ? sbit : (sign | (f->has_inf ? 0x7eu : 0x7fu));
    if (isnan(x))
        return f->has_nan ? nan_code : sbit; /* float4: NaN has no code; -0 like the reference */
    double a = fabs(x);
    if (!f->has_nan)
        saturate = true;
    if (isinf(a)) {
        if (saturate)
            return sign | f->max_code;
        return f->has_inf ? (sign | 0x7cu) : nan_code;
    }
    if (a == 0.0)
        return f->fnuz ? 0u : sign;
    int ex;
    (void)frexp(a, &ex); /* a = m * 2^ex, m in [0.5, 1) */
    int E = ex - 1;
    int emin = 1 - f->bias;
    if (E < emin)
        E = emin;
    double scaled = ldexp(a, f->mbits - E); /* exact */
    double r = nearbyint(scaled);           /* ties to even (default rounding mode) */
    if (r == 0.0)
        return f->fnuz ? 0u : sign;
    uint64_t ri = (uint64_t)r;
    if (ri >= (2u << f->mbits)) { /* carried into the next binade */
        ri >>= 1;
        E++;
    }
    uint64_t code;
    if (ri < (1u << f->mbits)) /* subnormal */
        code = ri;
    else {
        int64_t ef = (int64_t)E + f->bias;
        if (ef > (int64_t)((1u << f->ebits) - 1u))
            code = UINT64_MAX;
        else
            code = ((uint64_t)ef << f->mbits) | (ri - (1u << f->mbits));
    }
    if (code > f->max_code) {
        if (saturate)
            return sign | f->max_code;
        return f->has_inf ? (sign | 0x7cu) : nan_code;
    }
    return sign | (unsigned)code;
}

float sy_f8_to_f32(uint8_t v, sy_dtype dt)
{
    if (dt == SY_DT_FLOAT8E8M0)
        return v == 0xff ? NAN : ldexpf(1.0f, (int)v - 127);
    const minifloat *f = mf_of(dt);
    return f ? (float)mf_decode(f, v) : NAN;
}

uint8_t sy_f32_to_f8(float x, sy_dtype dt, bool saturate)
{
    if (dt == SY_DT_FLOAT8E8M0)
        return sy_f64_to_e8m0(x, saturate, SY_ROUND_UP);
    const minifloat *f = mf_of(dt);
    return f ? (uint8_t)mf_encode(f, x, saturate) : 0;
}

float sy_f4e2m1_to_f32(uint8_t nibble) { return (float)mf_decode(&MF_E2M1, nibble & 0xfu); }
uint8_t sy_f32_to_f4e2m1(float x) { return (uint8_t)mf_encode(&MF_E2M1, x, true); }

uint8_t sy_f64_to_e8m0(double x, bool saturate, sy_round_mode mode)
{
    if (isnan(x))
        return 0xff;
    double a = fabs(x);
    if (isinf(a))
        return saturate ? 0xfe : 0xff;
    if (a == 0.0)
        return 0x00; /* no zero: the smallest value 2^-127 */
    int ex;
    double m = frexp(a, &ex); /* a = m * 2^ex, m in [0.5, 1): a in [2^(ex-1), 2^ex) */
    int e = ex - 1;
    if (m != 0.5) { /* not a power of two: between 2^e and 2^(e+1) */
        if (mode == SY_ROUND_UP)
            e++;
        else if (mode == SY_ROUND_NEAREST && m >= 0.75)
            e++;
    }
    int code = e + 127;
    if (code < 0)
        return 0x00;
    if (code > 254)
        return saturate ? 0xfe : 0xff;
    return (uint8_t)code;
}

/* ---- packed element access --------------------------------------------------- */

static unsigned packed_get(const void *data, unsigned bits, size_t i)
{
    const uint8_t *p = data;
    size_t bit = i * bits;
    return (p[bit / 8] >> (bit % 8)) & ((1u << bits) - 1u);
}

static void packed_set(void *data, unsigned bits, size_t i, unsigned v)
{
    uint8_t *p = data;
    size_t bit = i * bits;
    unsigned mask = ((1u << bits) - 1u) << (bit % 8);
    p[bit / 8] = (uint8_t)((p[bit / 8] & ~mask) | ((v << (bit % 8)) & mask));
}

int64_t sy_lowbit_load_i64(const void *data, sy_dtype dt, size_t i)
{
    switch (dt) {
    case SY_DT_UINT4: return packed_get(data, 4, i);
    case SY_DT_INT4: { int64_t v = packed_get(data, 4, i); return v >= 8 ? v - 16 : v; }
    case SY_DT_UINT2: return packed_get(data, 2, i);
    case SY_DT_INT2: { int64_t v = packed_get(data, 2, i); return v >= 2 ? v - 4 : v; }
    default: return 0;
    }
}

double sy_load_any_f64(const void *data, sy_dtype dt, size_t i)
{
    if (lowbit_is_int(dt))
        return (double)sy_lowbit_load_i64(data, dt, i);
    if (dt == SY_DT_FLOAT4E2M1)
        return mf_decode(&MF_E2M1, packed_get(data, 4, i));
    if (sy_dt_is_float8(dt))
        return sy_f8_to_f32(((const uint8_t *)data)[i], dt);
    return sy_load_f64(data, dt, i);
}

static void store_lowbit_int(void *data, sy_dtype dt, size_t i, int64_t v)
{
    unsigned bits = sy_dt_bits(dt);
    packed_set(data, bits, i, (unsigned)((uint64_t)v & ((1u << bits) - 1u))); /* wraps like a C cast */
}

static int64_t f64_trunc_i64(double v)
{
    if (v != v)
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

void sy_store_any_f64(void *data, sy_dtype dt, size_t i, double v, bool saturate, sy_round_mode mode)
{
    if (lowbit_is_int(dt))
        store_lowbit_int(data, dt, i, f64_trunc_i64(v));
    else if (dt == SY_DT_FLOAT4E2M1)
        packed_set(data, 4, i, mf_encode(&MF_E2M1, v, true));
    else if (dt == SY_DT_FLOAT8E8M0)
        ((uint8_t *)data)[i] = sy_f64_to_e8m0(v, saturate, mode);
    else if (sy_dt_is_float8(dt))
        ((uint8_t *)data)[i] = (uint8_t)mf_encode(mf_of(dt), v, saturate);
    else
        sy_store_f64(data, dt, i, v);
}

static bool exact_int_type(sy_dtype dt) { return sy_dt_is_int(dt) || dt == SY_DT_BOOL || lowbit_is_int(dt); }

bool sy_convert_ex(const void *src, sy_dtype sdt, void *dst, sy_dtype ddt, size_t n, bool saturate,
                   sy_round_mode mode)
{
    if (!sy_dt_is_lowbit(sdt) && !sy_dt_is_lowbit(ddt))
        return sy_convert(src, sdt, dst, ddt, n);
    if (!sy_dt_bits(sdt) || !sy_dt_bits(ddt))
        return false;
    if (sdt == ddt) {
        if (dst != src)
            memmove(dst, src, sy_dt_nbytes(sdt, (int64_t)n));
        return true;
    }
    if (sy_dt_bits(ddt) < 8 && n > 0)
        memset(dst, 0, sy_dt_nbytes(ddt, (int64_t)n)); /* padding bits stay zero */
    if (exact_int_type(sdt) && exact_int_type(ddt)) {
        for (size_t i = 0; i < n; i++) {
            int64_t v = lowbit_is_int(sdt) ? sy_lowbit_load_i64(src, sdt, i) : sy_load_i64(src, sdt, i);
            if (lowbit_is_int(ddt))
                store_lowbit_int(dst, ddt, i, v);
            else
                sy_store_i64(dst, ddt, i, v);
        }
        return true;
    }
    if (exact_int_type(sdt) && !lowbit_is_int(sdt)) { /* wide ints: through int64 to double */
        for (size_t i = 0; i < n; i++) {
            double v = sdt == SY_DT_UINT64 ? (double)((const uint64_t *)src)[i] : (double)sy_load_i64(src, sdt, i);
            sy_store_any_f64(dst, ddt, i, v, saturate, mode);
        }
        return true;
    }
    for (size_t i = 0; i < n; i++)
        sy_store_any_f64(dst, ddt, i, sy_load_any_f64(src, sdt, i), saturate, mode);
    return true;
}
