// Runs every case that ml_ort.py wrote through ONNX Runtime (npm
// onnxruntime-node) and writes its outputs next to the model as ort.json,
// for ml_ort.py to compare with `switchyard run`.
//   node ort_ml.mjs WORK_DIR    env: ORT_NODE_MODULES (a node_modules folder)
import { createRequire } from 'module';
import fs from 'fs';
import path from 'path';

const require = createRequire(process.env.ORT_NODE_MODULES + '/');
const ort = require('onnxruntime-node');
const work = process.argv[2];
// float16 data travels as the 16-bit patterns (Uint16Array both ways)
const ARR = { float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array, float16: Uint16Array };
const cases = JSON.parse(fs.readFileSync(path.join(work, 'cases.json'), 'utf8'));
for (const c of cases) {
  const out = path.join(work, c.name, 'ort.json');
  try {
    const s = await ort.InferenceSession.create(path.join(work, c.name, 'model.onnx'));
    const feeds = {};
    for (const i of c.inputs) {
      const data = i.dtype === 'string' ? i.data
        : i.dtype === 'int64' ? BigInt64Array.from(i.data.map(BigInt)) : ARR[i.dtype].from(i.data.map((v) => (v === null ? NaN : v))); // null: NaN
      feeds[i.name] = new ort.Tensor(i.dtype, data, i.dims);
    }
    const r = await s.run(feeds);
    const res = s.outputNames.map((n) => ({
      name: n, type: r[n].type, dims: r[n].dims.map(Number),
      // int64 as strings (exact); floats through JSON keep every float32 digit
      data: Array.from(r[n].data, (v) => (typeof v === 'bigint' ? v.toString() : v)),
    }));
    fs.writeFileSync(out, JSON.stringify({ ok: true, outputs: res }));
  } catch (e) {
    fs.writeFileSync(out, JSON.stringify({ ok: false, error: String(e.message || e) }));
  }
}
