// The .tflite export of sy_train_session_export against real TFLite (npm
// @tensorflow/tfjs-tflite: TFLite compiled to WebAssembly, one thread), for
// each folder WORK/sine, WORK/conv (and WORK/tanh, logistic, bmm, bmmb, gconv, sslice,
// two_sg: tflite_ops_models.py's) that `test_train_tflite export` wrote
// (source.tflite: the model trained; model.tflite and model.onnx: the
// exports):
//   - model.tflite has source.tflite's size, and every byte that differs
//     lies inside the buffer of a float constant tensor (the trained ones;
//     read with tflite_fb.mjs, a reader independent of switchyard's);
//   - real TFLite runs model.tflite, and agrees with `switchyard run` of
//     model.tflite and of model.onnx, and with ONNX Runtime (npm
//     onnxruntime-node, when ORT_NODE_MODULES holds it) on model.onnx, on
//     random inputs within 1e-5 max(1, |y|) (float kernels of two
//     implementations).
//
//   node tflite_export_real.mjs SWITCHYARD WORK_DIR   env: TFLITE_NODE_MODULES [ORT_NODE_MODULES]
import { createRequire } from 'module';
import { execFileSync } from 'child_process';
import fs from 'fs';
import path from 'path';
import { tensorProto, readTensor } from '../contrib/onnx_writer.mjs';
import { runTflite } from '../tflite/tfljs.mjs';
import { readModel } from '../tflite/tflite_fb.mjs';

const [sy, work] = process.argv.slice(2);
// ONNX Runtime (npm onnxruntime-node) runs model.onnx too when
// ORT_NODE_MODULES holds it; otherwise that comparison is left out (noted)
let ort = null;
if (process.env.ORT_NODE_MODULES && fs.existsSync(path.join(process.env.ORT_NODE_MODULES, 'onnxruntime-node')))
  ort = createRequire(process.env.ORT_NODE_MODULES + '/')('onnxruntime-node');
else console.log('note: onnxruntime-node is absent: the exported .onnx is not run in ONNX Runtime');

let seed = 20261207;
const rnd = () => { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return seed / 4294967296; };

function runSwitchyard(model, dir, dims, feed) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'input_0.pb'), tensorProto('x', 'float32', dims, feed));
  const od = path.join(dir, 'out');
  execFileSync(sy, ['run', model, '--input-dir', dir, '--output-dir', od], { stdio: ['ignore', 'ignore', 'inherit'] });
  return readTensor(fs.readFileSync(path.join(od, 'output_0.pb'))).data;
}

let failed = 0, cases = 0;
for (const name of ['sine', 'conv', 'tanh', 'logistic', 'bmm', 'bmmb', 'gconv', 'sslice', 'sslice_neg', 'sslice_off']) {
  const d = path.join(work, name);
  if (!fs.existsSync(path.join(d, 'model.tflite'))) {
    console.log(`note: ${name}: no export (the shared model or python3 with numpy and onnx is absent)`);
    continue;
  }
  cases++;
  const src = new Uint8Array(fs.readFileSync(path.join(d, 'source.tflite')));
  const exp = new Uint8Array(fs.readFileSync(path.join(d, 'model.tflite')));
  // the bytes that may change: the buffers of float constant tensors
  const m = readModel(src);
  const ranges = m.tensors.filter((t) => t.raw && t.dtype === 'float32')
                          .map((t) => [t.raw.byteOffset - src.byteOffset, t.raw.byteOffset - src.byteOffset + t.raw.length]);
  let outside = 0, changed = 0;
  const touched = new Set();
  if (src.length !== exp.length) {
    console.log(`FAIL ${name}: model.tflite is ${exp.length} bytes, source.tflite ${src.length}`);
    failed++;
    continue;
  }
  for (let i = 0; i < src.length; i++) {
    if (src[i] === exp[i]) continue;
    changed++;
    const k = ranges.findIndex(([a, b]) => i >= a && i < b);
    if (k < 0) outside++; else touched.add(k);
  }
  const bad = outside !== 0 || touched.size === 0;
  failed += bad;
  console.log(`${bad ? 'FAIL' : 'ok  '} ${name}: ${changed} bytes differ from source.tflite, all inside ` +
              `${touched.size} of its ${ranges.length} float constant buffers (${outside} outside)`);

  const dims = m.tensors[m.inputs[0]].dims;
  const n = dims.reduce((a, b) => a * b, 1);
  let worstReal = 0, worstOnnx = 0, worstOrt = 0, big = 0, badRun = false;
  const ortSession = ort ? await ort.InferenceSession.create(path.join(d, 'model.onnx')) : null;
  // sslice_off's STRIDED_SLICE has offset = true (schema field 5), an option
  // newer than some TFLite builds (npm @tensorflow/tfjs-tflite 0.0.1-alpha.10
  // cannot initialize the model): then its .tflite export is compared with
  // the exported .onnx (and ONNX Runtime) alone, and that is said
  let noReal = null;
  if (name === 'sslice_off') {
    try { runTflite(exp, new Float32Array(n)); } catch (e) { noReal = e.message; }
  }
  for (let s = 0; s < 6; s++) {
    const feed = Float32Array.from({ length: n }, () => (name === 'sine' ? 6.28 * rnd() : 2 * rnd() - 1));
    const a = runSwitchyard(path.join(d, 'model.tflite'), path.join(d, `run${s}_t`), dims, feed);
    const b = runSwitchyard(path.join(d, 'model.onnx'), path.join(d, `run${s}_o`), dims, feed);
    const real = noReal ? b : runTflite(exp, feed);
    let c = b;
    if (ortSession) {
      const feeds = { [ortSession.inputNames[0]]: new ort.Tensor('float32', feed, dims) };
      c = (await ortSession.run(feeds))[ortSession.outputNames[0]].data;
    }
    if (a.length !== real.length || b.length !== real.length || c.length !== real.length) { badRun = true; break; }
    for (let i = 0; i < real.length; i++) {
      const tol = 1e-5 * Math.max(1, Math.abs(real[i]));
      const e1 = Math.abs(real[i] - a[i]), e2 = Math.abs(real[i] - b[i]), e3 = Math.abs(real[i] - c[i]);
      worstReal = Math.max(worstReal, e1);
      worstOnnx = Math.max(worstOnnx, e2);
      worstOrt = Math.max(worstOrt, e3);
      big = Math.max(big, Math.abs(real[i]));
      if (e1 > tol || e2 > tol || e3 > tol) badRun = true;
    }
  }
  failed += badRun;
  if (noReal) {
    console.log(`note: ${name}: real TFLite cannot load the export (${noReal}; its STRIDED_SLICE has offset = true, ` +
                'an option this TFLite predates)');
    console.log(`${badRun ? 'FAIL' : 'ok  '} ${name}: the exported .tflite in switchyard vs the exported .onnx: max |diff| ` +
                `${worstReal.toExponential(2)}${ortSession ? `, ONNX Runtime on the .onnx ${worstOrt.toExponential(2)}` : ''}; ` +
                `outputs up to ${big.toPrecision(3)}, 6 random inputs`);
    continue;
  }
  console.log(`${badRun ? 'FAIL' : 'ok  '} ${name}: real TFLite on the exported .tflite vs switchyard: max |diff| ` +
              `${worstReal.toExponential(2)} (.tflite), ${worstOnnx.toExponential(2)} (.onnx)` +
              `${ortSession ? `, ONNX Runtime on the .onnx ${worstOrt.toExponential(2)}` : ''}; outputs up to ` +
              `${big.toPrecision(3)}, 6 random inputs`);
}
// two_sg: subgraph 1 ('train_head') trained and exported. The runner runs
// subgraph 0 only, so real TFLite must load the export (its SignatureDefs
// checked) and give subgraph 0 ('infer') the outputs of the source file:
// the export wrote into subgraph 1's buffers alone.
const d2 = path.join(work, 'two_sg');
if (fs.existsSync(path.join(d2, 'model.tflite'))) {
  cases++;
  const src = new Uint8Array(fs.readFileSync(path.join(d2, 'source.tflite')));
  const exp = new Uint8Array(fs.readFileSync(path.join(d2, 'model.tflite')));
  let changed = 0, worst = 0;
  for (let i = 0; i < src.length && src.length === exp.length; i++) changed += src[i] !== exp[i];
  for (let s = 0; s < 6; s++) {
    const feed = Float32Array.from({ length: 8 }, () => 2 * rnd() - 1);
    const a = runTflite(src, feed), b = runTflite(exp, feed);
    for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  }
  const bad = src.length !== exp.length || changed === 0 || worst !== 0;
  failed += bad;
  console.log(`${bad ? 'FAIL' : 'ok  '} two_sg: real TFLite loads the export of subgraph 1 (${changed} bytes ` +
              `differ from source.tflite); subgraph 0's outputs equal the source's (max |diff| ${worst}), 6 inputs`);
}
if (!cases) { console.log('SKIPPED: no export to check'); process.exit(77); }
console.log(failed ? `${failed} check(s) failed` : `every export agrees with real TFLite (${cases} models)`);
process.exit(failed ? 1 : 0);
