// The integer arithmetic of an int8 FULLY_CONNECTED chain written out from
// TFLite's reference kernels, independent of Switchyard's C code, in both
// requantization forms:
//   gemmlowp         TFLite Micro: SaturatingRoundingDoublingHighMul then
//                    RoundingDivideByPOT (two roundings, half away from zero)
//   single_rounding  TFLite with TFLITE_SINGLE_ROUNDING:
//                    (acc * M + 2^(t - 1)) >> t, t = 31 - shift
// with M, shift from QuantizeMultiplier(in_scale * w_scale / out_scale),
// the product taken in double as TFLite does. Models with any other
// operator are not covered (runFcChain returns null).
const FULLY_CONNECTED = 9;
const I32 = 2n ** 31n;

// QuantizeMultiplier: m = f * 2^e, f in [0.5, 1), M = round(f * 2^31)
function quantizeMultiplier(m) {
  if (m === 0) return [0n, 0];
  let e = Math.floor(Math.log2(m)) + 1, f = m / 2 ** e;
  while (f >= 1) { f /= 2; e++; }
  while (f < 0.5) { f *= 2; e--; }
  let q = BigInt(Math.round(f * 2 ** 31)); // f > 0: JS rounds half up = half away from zero
  if (q === I32) { q /= 2n; e++; }
  if (e < -31) return [0n, 0];
  return [q, e];
}

function rescale(form, x, M, shift) {
  const X = BigInt(x);
  if (form === 'single_rounding') {
    if (shift > 30) { shift = 30; M = I32 - 1n; }
    const t = BigInt(31 - shift);
    return Number((X * M + (1n << (t - 1n))) >> t);
  }
  const left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const ab = BigInt.asIntN(32, X << BigInt(left)) * M;
  const nudge = ab >= 0n ? 1n << 30n : 1n - (1n << 30n);
  const hi = (ab + nudge) / I32; // C's division truncates toward zero, as BigInt's
  if (right === 0) return Number(hi);
  const R = BigInt(right), mask = (1n << R) - 1n, rem = hi & mask;
  const threshold = (mask >> 1n) + (hi < 0n ? 1n : 0n);
  return Number((hi >> R) + (rem > threshold ? 1n : 0n));
}

// CalculateActivationRangeQuantized of int8
function actRange(act, s, zp) {
  const q = (f) => zp + Math.round(Math.abs(Math.fround(f / s))) * Math.sign(f); // TfLiteRound: half away
  switch (act) {
  case 0: return [-128, 127];
  case 1: return [Math.max(-128, q(0)), 127];
  case 2: return [Math.max(-128, q(-1)), Math.min(127, q(1))];
  case 3: return [Math.max(-128, q(0)), Math.min(127, q(6))];
  default: throw new Error(`fused activation ${act}`);
  }
}

// the outputs (Int8Array each) of model m on the int8 inputs, or null
export function runFcChain(m, inputs, form) {
  if (!m.ops.length || m.ops.some((o) => o.op !== FULLY_CONNECTED)) return null;
  const vals = new Map();
  m.inputs.forEach((t, i) => vals.set(t, inputs[i]));
  for (const o of m.ops) {
    const [xi, wi, bi] = o.inputs, X = m.tensors[xi], W = m.tensors[wi], Y = m.tensors[o.outputs[0]];
    if (X.dtype !== 'int8' || W.dtype !== 'int8' || Y.dtype !== 'int8') return null;
    const x = vals.get(xi), w = new Int8Array(W.raw.buffer, W.raw.byteOffset, W.raw.length);
    const B = bi >= 0 ? m.tensors[bi] : null;
    const bias = B ? new Int32Array(B.raw.slice().buffer) : null;
    const [units, depth] = W.dims, batches = x.length / depth;
    const inOff = -(X.zps[0] || 0), wOff = -(W.zps[0] || 0), outZp = Y.zps[0] || 0;
    const mult = Array.from({ length: W.scales.length }, (_, c) =>
      quantizeMultiplier(X.scales[0] * W.scales[c] / Y.scales[0]));
    const [lo, hi] = actRange(o.act, Y.scales[0], outZp);
    const y = new Int8Array(batches * units);
    for (let b = 0; b < batches; b++)
      for (let u = 0; u < units; u++) {
        let acc = bias ? bias[u] : 0;
        for (let k = 0; k < depth; k++) acc = (acc + (x[b * depth + k] + inOff) * (w[u * depth + k] + wOff)) | 0;
        const [M, sh] = mult[mult.length > 1 ? u : 0];
        y[b * units + u] = Math.min(hi, Math.max(lo, rescale(form, acc, M, sh) + outZp));
      }
    vals.set(o.outputs[0], y);
  }
  return m.outputs.map((t) => vals.get(t));
}
