// A minimal ONNX protobuf writer and TensorProto reader for the tests that
// compare Switchyard with ONNX Runtime: enough to build one-node models
// (inputs, initializers, attributes) and to read the outputs
// `switchyard run --output-dir` writes. Field numbers are onnx.proto's.

const enc = new TextEncoder();

function varint(v) {
  let x = BigInt.asUintN(64, BigInt(v));
  const out = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x) b |= 0x80;
    out.push(b);
  } while (x);
  return out;
}
const key = (field, wire) => varint((field << 3) | wire);
const cat = (parts) => {
  const n = parts.reduce((s, p) => s + p.length, 0);
  const o = new Uint8Array(n);
  let k = 0;
  for (const p of parts) { o.set(p, k); k += p.length; }
  return o;
};
const fVarint = (f, v) => Uint8Array.from([...key(f, 0), ...varint(v)]);
const fBytes = (f, b) => cat([Uint8Array.from([...key(f, 2), ...varint(b.length)]), b]);
const fStr = (f, s) => fBytes(f, enc.encode(s));
const fFloat = (f, v) => {
  const k = key(f, 5), b = new Uint8Array(k.length + 4);
  b.set(k);
  new DataView(b.buffer).setFloat32(k.length, v, true);
  return b;
};

export const DT = { float32: 1, uint8: 2, int8: 3, int32: 6, int64: 7 };
const DT_NAME = Object.fromEntries(Object.entries(DT).map(([k, v]) => [v, k]));
const ARR = { float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int32: Int32Array, int64: BigInt64Array };

// TensorProto: dims, data_type, name, raw_data
export function tensorProto(name, dtype, dims, data) {
  const arr = data instanceof ARR[dtype] ? data : ARR[dtype].from(dtype === 'int64' ? data.map(BigInt) : data);
  const raw = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
  return cat([...dims.map((d) => fVarint(1, d)), fVarint(2, DT[dtype]), fStr(8, name), fBytes(9, raw)]);
}

// dims null: no shape (outputs left to shape inference)
function valueInfo(name, dtype, dims) {
  const parts = [fVarint(1, DT[dtype])];
  if (dims) parts.push(fBytes(2, cat(dims.map((d) => fBytes(1, typeof d === 'string' ? fStr(2, d) : fVarint(1, d))))));
  const tensorType = cat(parts);
  return cat([fStr(1, name), fBytes(2, fBytes(1, tensorType))]);
}

// attribute values: number (int unless {f: x}), {f}, {fs: [...]}, {is: [...]}, string
function attribute(name, v) {
  const parts = [fStr(1, name)];
  if (typeof v === 'string') parts.push(fBytes(4, enc.encode(v)), fVarint(20, 3));
  else if (typeof v === 'number') parts.push(fVarint(3, v), fVarint(20, 2));
  else if ('f' in v) parts.push(fFloat(2, v.f), fVarint(20, 1));
  else if ('fs' in v) parts.push(...v.fs.map((x) => fFloat(7, x)), fVarint(20, 6));
  else if ('is' in v) parts.push(...v.is.map((x) => fVarint(8, x)), fVarint(20, 7));
  return cat(parts);
}

// model({nodes: [{op, domain, inputs, outputs, attrs}], inputs: [[name, dtype, dims]],
//        outputs: [[name, dtype, dims]], inits: [[name, dtype, dims, data]], opsets: {domain: version}})
export function model(m) {
  const nodes = m.nodes.map((n, i) => {
    const parts = [...n.inputs.map((x) => fStr(1, x)), ...n.outputs.map((x) => fStr(2, x)), fStr(3, `n${i}`),
                   fStr(4, n.op)];
    for (const [k, v] of Object.entries(n.attrs || {})) parts.push(fBytes(5, attribute(k, v)));
    if (n.domain) parts.push(fStr(7, n.domain));
    return fBytes(1, cat(parts));
  });
  const graph = cat([...nodes, fStr(2, 'g'), ...(m.inits || []).map((t) => fBytes(5, tensorProto(...t))),
                     ...m.inputs.map((x) => fBytes(11, valueInfo(...x))), ...m.outputs.map((x) => fBytes(12, valueInfo(...x)))]);
  const opsets = Object.entries(m.opsets || { '': 13 }).map(([d, v]) => fBytes(8, cat([fStr(1, d), fVarint(2, v)])));
  return cat([fVarint(1, 7), ...opsets, fBytes(7, graph)]);
}

// TensorProto -> {dtype, dims, data} (raw_data, float_data, int32_data, int64_data)
export function readTensor(buf) {
  let p = 0;
  const dims = [];
  let dt = 0, raw = null;
  const floats = [], ints = [];
  const rv = () => { let r = 0n, s = 0n; for (;;) { const c = buf[p++]; r |= BigInt(c & 127) << s; s += 7n; if (!(c & 128)) return r; } };
  while (p < buf.length) {
    const k = Number(rv()), f = k >> 3, w = k & 7;
    if (w === 0) { const v = rv(); if (f === 1) dims.push(Number(v)); else if (f === 2) dt = Number(v); else if (f === 5 || f === 7) ints.push(BigInt.asIntN(64, v)); }
    else if (w === 5) { if (f === 4) floats.push(new DataView(buf.buffer, buf.byteOffset + p, 4).getFloat32(0, true)); p += 4; }
    else if (w === 1) p += 8;
    else if (w === 2) {
      const len = Number(rv()), b = buf.subarray(p, p + len); p += len;
      if (f === 9) raw = b;
      else if (f === 1) { let q = 0; while (q < b.length) { let r = 0n, s = 0n; for (;;) { const c = b[q++]; r |= BigInt(c & 127) << s; s += 7n; if (!(c & 128)) break; } dims.push(Number(r)); } }
      else if (f === 4) { const dv = new DataView(b.buffer, b.byteOffset, b.length); for (let q = 0; q < b.length; q += 4) floats.push(dv.getFloat32(q, true)); }
    }
  }
  const dtype = DT_NAME[dt];
  if (!dtype) throw new Error(`tensor data type ${dt} is not handled by this reader`);
  let data;
  if (raw) { const c = new Uint8Array(raw); data = new ARR[dtype](c.buffer, 0, c.byteLength / ARR[dtype].BYTES_PER_ELEMENT); }
  else if (dtype === 'float32') data = Float32Array.from(floats);
  else data = ARR[dtype].from(dtype === 'int64' ? ints : ints.map(Number));
  return { dtype, dims, data };
}
