// Runs every ONNX node test folder through ONNX Runtime (npm
// onnxruntime-node) with the rule `switchyard conformance` uses (each
// output's dtype and shape exactly; floats |got - want| <= 1e-7 + 1e-3 |want|,
// NaN equals NaN; other types exactly) and prints one line per test:
//   NAME<TAB>pass|fail|error<TAB>reason
//   node ort_conformance.mjs TESTDATA_DIR     env: ORT_NODE_MODULES
import { createRequire } from 'module';
import fs from 'fs';
import path from 'path';

const require = createRequire(process.env.ORT_NODE_MODULES + '/');
const ort = require('onnxruntime-node');
const dir = process.argv[2];

// TensorProto element types onnxruntime-node accepts
const TYPES = { 1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 8: 'string',
                9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64' };
const ARR = { float32: Float32Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array, int16: Int16Array,
              int32: Int32Array, int64: BigInt64Array, bool: Uint8Array, float16: Uint16Array, float64: Float64Array,
              uint32: Uint32Array, uint64: BigUint64Array };

function readTensor(buf) {
  let p = 0;
  const rv = (b, q) => { let r = 0n, s = 0n; for (;;) { const c = b[q.p++]; r |= BigInt(c & 127) << s; s += 7n; if (!(c & 128)) return r; } };
  const q = { p: 0 };
  const dims = [], ints = [], floats = [], doubles = [], strings = [], u64 = [];
  let dt = 0, raw = null, name = '';
  while (q.p < buf.length) {
    const k = Number(rv(buf, q)), f = k >> 3, w = k & 7;
    if (w === 0) {
      const v = rv(buf, q);
      if (f === 1) dims.push(Number(v)); else if (f === 2) dt = Number(v);
      else if (f === 5 || f === 7) ints.push(BigInt.asIntN(64, v)); else if (f === 11) u64.push(BigInt.asUintN(64, v));
    } else if (w === 5) { if (f === 4) floats.push(buf.readFloatLE(q.p)); q.p += 4; }
    else if (w === 1) { if (f === 10) doubles.push(buf.readDoubleLE(q.p)); q.p += 8; }
    else if (w === 2) {
      const len = Number(rv(buf, q)), b = buf.subarray(q.p, q.p + len); q.p += len;
      const packed = (fn) => { const qq = { p: 0 }; while (qq.p < b.length) fn(rv(b, qq)); };
      if (f === 9) raw = b;
      else if (f === 8) name = b.toString();
      else if (f === 6) strings.push(b.toString());
      else if (f === 1) packed((v) => dims.push(Number(v)));
      else if (f === 5 || f === 7) packed((v) => ints.push(BigInt.asIntN(64, v)));
      else if (f === 11) packed((v) => u64.push(BigInt.asUintN(64, v)));
      else if (f === 4) for (let o = 0; o < b.length; o += 4) floats.push(b.readFloatLE(o));
      else if (f === 10) for (let o = 0; o < b.length; o += 8) doubles.push(b.readDoubleLE(o));
    } else throw new Error(`wire type ${w}`);
  }
  void p;
  const type = TYPES[dt];
  if (!type) return { unsupported: `element type ${dt}`, name };
  if (type === 'string') return { type, dims, data: strings, name };
  const A = ARR[type];
  let data;
  if (raw) { const c = new Uint8Array(raw); data = new A(c.buffer, 0, c.byteLength / A.BYTES_PER_ELEMENT); }
  else if (type === 'float32') data = Float32Array.from(floats);
  else if (type === 'float64') data = Float64Array.from(doubles);
  else if (type === 'int64') data = BigInt64Array.from(ints);
  else if (type === 'uint64') data = BigUint64Array.from(u64.length ? u64 : ints.map((v) => BigInt.asUintN(64, v)));
  else data = A.from(ints.map(Number));
  if (type === 'bool') data = Uint8Array.from(data, (v) => (v ? 1 : 0));
  return { type, dims, data, name };
}

const f16 = (h) => {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
};

function compare(got, want) {
  const gt = got.type === 'bool' ? 'bool' : got.type;
  if (gt !== want.type) return `dtype ${gt}, expected ${want.type}`;
  const gd = got.dims.map(Number);
  if (gd.join(',') !== want.dims.join(',')) return `shape [${gd}], expected [${want.dims}]`;
  const fl = want.type === 'float32' || want.type === 'float64' || want.type === 'float16';
  for (let i = 0; i < want.data.length; i++) {
    let g = got.data[i], w = want.data[i];
    if (want.type === 'bool') { g = g ? 1 : 0; w = w ? 1 : 0; }
    if (want.type === 'float16') { g = f16(g); w = f16(w); }
    if (fl) {
      if (Number.isNaN(w) && Number.isNaN(g)) continue;
      if (!Number.isFinite(w) || !Number.isFinite(g)) { if (g !== w) return `element ${i}: ${g}, expected ${w}`; continue; }
      if (!(Math.abs(g - w) <= 1e-7 + 1e-3 * Math.abs(w))) return `element ${i}: ${g}, expected ${w}`;
    } else if (g !== w) return `element ${i}: ${g}, expected ${w}`;
  }
  return null;
}

// MANIFEST.tsv names the tests whose graph inputs or outputs are sequences or
// optionals: their .pb files are not TensorProtos
const seqOpt = new Set();
const man = path.join(dir, 'MANIFEST.tsv');
if (fs.existsSync(man))
  for (const line of fs.readFileSync(man, 'utf8').split('\n').slice(1)) {
    const c = line.split('\t');
    if (c.length > 7 && /sequence|optional/.test(c[6] + c[7])) seqOpt.add(c[0]);
  }

ort.env.logLevel = 'fatal';
const tests = fs.readdirSync(dir).filter((t) => fs.existsSync(path.join(dir, t, 'model.onnx'))).sort();
for (const t of tests) {
  const td = path.join(dir, t);
  let status = 'pass', why = '';
  let s = null;
  try {
    if (seqOpt.has(t)) throw new Error('a sequence/optional graph input or output (onnxruntime-node feeds tensors only)');
    s = await ort.InferenceSession.create(path.join(td, 'model.onnx'), { logSeverityLevel: 4 });
    const sets = fs.readdirSync(td).filter((d) => d.startsWith('test_data_set_')).sort();
    // an output type the JS binding has no array for (int4, float8, ...)
    // aborts the process inside run(): refuse before running
    for (const ds of sets)
      for (const f of fs.readdirSync(path.join(td, ds)).filter((x) => x.startsWith('output_'))) {
        const want = readTensor(fs.readFileSync(path.join(td, ds, f)));
        if (want.unsupported) throw new Error(`${f}: ${want.unsupported} (onnxruntime-node cannot return it)`);
      }
    for (const ds of sets) {
      const feeds = {};
      for (let i = 0; i < s.inputNames.length; i++) {
        const f = path.join(td, ds, `input_${i}.pb`);
        if (!fs.existsSync(f)) continue; // an omitted optional input
        const x = readTensor(fs.readFileSync(f));
        if (x.unsupported) throw new Error(`input ${i}: ${x.unsupported} (onnxruntime-node cannot feed it)`);
        feeds[s.inputNames[i]] = new ort.Tensor(x.type, x.data, x.dims);
      }
      const out = await s.run(feeds);
      for (let i = 0; i < s.outputNames.length; i++) {
        const f = path.join(td, ds, `output_${i}.pb`);
        if (!fs.existsSync(f)) continue;
        const want = readTensor(fs.readFileSync(f));
        if (want.unsupported) throw new Error(`output ${i}: ${want.unsupported}`);
        const g = out[s.outputNames[i]];
        const r = compare({ type: g.type, dims: g.dims, data: g.data }, want);
        if (r) { status = 'fail'; why = `${ds} output ${i}: ${r}`; break; }
      }
      if (status !== 'pass') break;
    }
  } catch (e) {
    status = 'error';
    why = String(e.message || e).split('\n')[0].slice(0, 200);
  } finally {
    if (s) await s.release();
  }
  console.log(`${t}\t${status}\t${why.replace(/\t/g, ' ')}`);
}
