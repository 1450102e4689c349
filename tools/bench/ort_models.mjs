// ONNX Runtime's side of tools/bench/ort_models.sh (onnxruntime-node, CPU).
//   node ort_models.mjs inputs MODEL DIR      writes DIR/input_N.npy for every
//        graph input: symbolic dims are 1 for the first axis, LENGTH (env,
//        default 64) after it; floats a sine pattern, integers small codes
//   node ort_models.mjs time MODEL DIR THREADS ITERS WARMUP
//        times MODEL on those inputs; prints "ort: median M ms (min A, max B)"
// ORT_NODE_MODULES names the node_modules folder holding onnxruntime-node.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
const require = createRequire(process.env.ORT_NODE_MODULES + '/');
const ort = require('onnxruntime-node');

const TYPES = { float32: ['<f4', Float32Array], uint8: ['|u1', Uint8Array], int8: ['|i1', Int8Array],
  int64: ['<i8', BigInt64Array], int32: ['<i4', Int32Array], float16: ['<f2', Uint16Array] };

function writeNpy(file, type, shape, data) {
  const descr = TYPES[type][0];
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0; pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

function readNpy(file) {
  const b = fs.readFileSync(file);
  const hlen = b.readUInt16LE(8), header = b.toString('latin1', 10, 10 + hlen);
  const descr = /'descr': '([^']+)'/.exec(header)[1];
  const shape = /'shape': \(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const type = Object.keys(TYPES).find(k => TYPES[k][0] === descr);
  const Arr = TYPES[type][1], off = 10 + hlen, bytes = b.subarray(off);
  const data = new Arr(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  return new ort.Tensor(type, data, shape);
}

const [mode, model, dir, threadsArg, itersArg, warmupArg] = process.argv.slice(2);
const threads = Number(threadsArg || 1);
const session = await ort.InferenceSession.create(model, {
  executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
  graphOptimizationLevel: 'all', logSeverityLevel: 3,
});
if (mode === 'inputs') {
  const len = Number(process.env.LENGTH || 64);
  session.inputMetadata.forEach((m, idx) => {
    const shape = m.shape.map((d, i) => (typeof d === 'number' && d > 0 ? d : i === 0 ? 1 : len));
    const n = shape.reduce((a, b) => a * b, 1), Arr = TYPES[m.type][1], data = new Arr(n);
    for (let i = 0; i < n; i++) {
      if (m.type === 'float32') data[i] = Math.sin(i * 0.01);
      else if (m.type === 'int64') data[i] = BigInt(i % 7);
      else if (m.type === 'float16') data[i] = 0x3800; // 0.5
      else data[i] = 32 + ((i * 7) % 90); // printable bytes for the text models
    }
    writeNpy(path.join(dir, `input_${idx}.npy`), m.type, shape, data);
  });
} else {
  const feeds = {};
  session.inputNames.forEach((name, idx) => { feeds[name] = readNpy(path.join(dir, `input_${idx}.npy`)); });
  const iters = Number(itersArg || 10), warmup = Number(warmupArg || 2);
  for (let i = 0; i < warmup; i++) await session.run(feeds);
  const ms = [];
  for (let i = 0; i < iters; i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  console.log(`ort: median ${ms[iters >> 1].toFixed(3)} ms (min ${ms[0].toFixed(3)}, max ${ms[iters - 1].toFixed(3)})`);
}
