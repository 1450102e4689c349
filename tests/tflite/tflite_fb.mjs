// A reader of the TFLite flatbuffer, just what tflite_real.mjs needs: the
// tensors (shape, type, quantization, constant data) and the operators of
// subgraph 0, read with the schema's field numbers (tensorflow/lite/schema/
// schema.fbs), and the one in-place fix the interpreter needs.
const TYPES = { 0: 'float32', 2: 'int32', 3: 'uint8', 4: 'int64', 9: 'int8' };

function view(buf) {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const u32 = (o) => dv.getUint32(o, true), i32 = (o) => dv.getInt32(o, true);
  const field = (t, i) => { // absolute offset of field i of the table at t, or 0
    const vt = t - i32(t), vlen = dv.getUint16(vt, true);
    if (4 + 2 * i >= vlen) return 0;
    const off = dv.getUint16(vt + 4 + 2 * i, true);
    return off ? t + off : 0;
  };
  const ref = (o) => o + u32(o);
  const vec = (o, size = 4) => { if (!o) return []; const v = ref(o); return Array.from({ length: u32(v) }, (_, k) => v + 4 + size * k); };
  return { dv, u32, i32, field, ref, vec };
}

// The interpreter refuses a quantized_dimension outside the tensor's rank
// (person_detect's 1-D bias tensors carry 3; TFLite Micro ignores it). Such
// a field is rewritten to 0, the tensor's only axis: the per-channel scales
// are read along it either way, so no value changes. Returns the count.
export function fixQuantizedDimension(buf) {
  const { dv, u32, i32, field, ref, vec } = view(buf);
  let fixed = 0;
  for (const sgo of vec(field(ref(0), 2))) {
    for (const to of vec(field(ref(sgo), 0))) {
      const t = ref(to), shape = field(t, 0), q = field(t, 4);
      const rank = shape ? u32(ref(shape)) : 0;
      const qd = q ? field(ref(q), 6) : 0;
      if (qd && i32(qd) >= Math.max(rank, 1)) { dv.setInt32(qd, 0, true); fixed++; }
    }
  }
  return fixed;
}

// {tensors: [{dims, dtype, scales, zps, data}], ops: [{op, inputs, outputs, act}],
//  inputs, outputs} of subgraph 0; op is the builtin code
export function readModel(buf) {
  const { dv, u32, i32, field, ref, vec } = view(buf);
  const model = ref(0);
  const codes = vec(field(model, 1)).map((o) => {
    const c = ref(o), dep = field(c, 0), full = field(c, 3);
    return Math.max(dep ? dv.getInt8(dep) : 0, full ? i32(full) : 0);
  });
  const buffers = vec(field(model, 4)).map((o) => {
    const d = field(ref(o), 0);
    if (!d) return null;
    const v = ref(d);
    return new Uint8Array(buf.buffer, buf.byteOffset + v + 4, u32(v));
  });
  const ints = (o) => vec(o).map(i32);
  const sg = ref(vec(field(model, 2))[0]);
  const tensors = vec(field(sg, 0)).map((to) => {
    const t = ref(to), ty = field(t, 1), b = field(t, 2), q = field(t, 4);
    const dtype = TYPES[ty ? dv.getInt8(ty) : 0] || `type${ty ? dv.getInt8(ty) : 0}`;
    let scales = [], zps = [];
    if (q) {
      const qt = ref(q);
      scales = vec(field(qt, 2)).map((o) => dv.getFloat32(o, true));
      zps = vec(field(qt, 3), 8).map((o) => Number(dv.getBigInt64(o, true)));
    }
    const raw = b ? buffers[u32(b)] : null;
    return { dims: ints(field(t, 0)), dtype, scales, zps, raw: raw && raw.length ? raw : null };
  });
  const ops = vec(field(sg, 3)).map((oo) => {
    const o = ref(oo), idx = field(o, 0), opt = field(o, 4);
    // the first field of every *Options table used here is the fused activation
    const act = opt && field(ref(opt), 0) ? dv.getInt8(field(ref(opt), 0)) : 0;
    return { op: codes[idx ? u32(idx) : 0], inputs: ints(field(o, 1)), outputs: ints(field(o, 2)), act };
  });
  return { tensors, ops, inputs: ints(field(sg, 1)), outputs: ints(field(sg, 2)) };
}
