// The .tflite export of sy_train_session_export against independent
// runtimes, for each folder WORK/sine, WORK/conv (and WORK/tanh, logistic,
// bmm, bmmb, gconv, sslice, sslice_neg, sslice_off, chain, two_sg:
// tflite_ops_models.py's) that `test_train_tflite export` wrote
// (source.tflite: the model trained; model.tflite and model.onnx: the
// exports). MODE tflite (train.tflite_real), real TFLite (npm
// @tensorflow/tfjs-tflite: TFLite compiled to WebAssembly, one thread):
//   - model.tflite has source.tflite's size, and every byte that differs
//     lies inside the buffer of a float constant tensor (the trained ones;
//     read with tflite_fb.mjs, a reader independent of switchyard's);
//   - real TFLite runs model.tflite, and agrees with `switchyard run` of
//     model.tflite and of model.onnx on random inputs within
//     1e-5 max(1, |y|) (float kernels of two implementations).
// MODE ort (train.tflite_ort), ONNX Runtime (npm onnxruntime-node, in
// ORT_NODE_MODULES): ONNX Runtime runs model.onnx and agrees with
// `switchyard run` of model.tflite and of model.onnx within the same
// tolerance. Each mode is its own test, skipped (77) by its shell script
// when its runtime is absent, so neither passes with its reference left out.
//
//   node tflite_export_real.mjs SWITCHYARD WORK_DIR tflite|ort
//   env: TFLITE_NODE_MODULES (tflite), ORT_NODE_MODULES (ort)
import { createRequire } from 'module';
import { execFileSync } from 'child_process';
import fs from 'fs';
import path from 'path';
import { tensorProto, readTensor } from '../contrib/onnx_writer.mjs';
import { readModel } from '../tflite/tflite_fb.mjs';

const [sy, work, mode] = process.argv.slice(2);
if (mode !== 'tflite' && mode !== 'ort') {
  console.log(`usage: node tflite_export_real.mjs SWITCHYARD WORK_DIR tflite|ort (got '${mode}')`);
  process.exit(2);
}
let ort = null, runTflite = null;
if (mode === 'ort') {
  const mods = process.env.ORT_NODE_MODULES || '';
  if (!fs.existsSync(path.join(mods, 'onnxruntime-node', 'package.json'))) {
    console.log(`SKIPPED: ORT_NODE_MODULES ('${mods}') holds no onnxruntime-node`);
    process.exit(77);
  }
  ort = createRequire(mods + '/')('onnxruntime-node');
} else {
  ({ runTflite } = await import('../tflite/tfljs.mjs'));
}

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
for (const name of ['sine', 'conv', 'tanh', 'logistic', 'bmm', 'bmmb', 'gconv', 'sslice', 'sslice_neg', 'sslice_off',
                    'chain']) {
  const d = path.join(work, name);
  if (!fs.existsSync(path.join(d, 'model.tflite'))) {
    console.log(`note: ${name}: no export (the shared model or python3 with numpy and onnx is absent)`);
    continue;
  }
  cases++;
  const src = new Uint8Array(fs.readFileSync(path.join(d, 'source.tflite')));
  const exp = new Uint8Array(fs.readFileSync(path.join(d, 'model.tflite')));
  const m = readModel(src);
  const dims = m.tensors[m.inputs[0]].dims;
  const n = dims.reduce((a, b) => a * b, 1);
  if (mode === 'tflite') {
    // the bytes that may change: the buffers of float constant tensors
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
  }

  let worstT = 0, worstO = 0, big = 0, badRun = false;
  const ortSession = ort ? await ort.InferenceSession.create(path.join(d, 'model.onnx')) : null;
  // sslice_off's STRIDED_SLICE has offset = true (schema field 5), an option
  // newer than some TFLite builds (npm @tensorflow/tfjs-tflite 0.0.1-alpha.10
  // cannot initialize the model): then the real-TFLite check compares the
  // exported .tflite with the exported .onnx in switchyard, and says so;
  // train.tflite_ort runs that .onnx in ONNX Runtime
  let noReal = null;
  if (mode === 'tflite' && name === 'sslice_off') {
    try { runTflite(exp, new Float32Array(n)); } catch (e) { noReal = e.message; }
  }
  for (let s = 0; s < 6; s++) {
    const feed = Float32Array.from({ length: n }, () => (name === 'sine' ? 6.28 * rnd() : 2 * rnd() - 1));
    const a = runSwitchyard(path.join(d, 'model.tflite'), path.join(d, `run${s}_t`), dims, feed);
    const b = runSwitchyard(path.join(d, 'model.onnx'), path.join(d, `run${s}_o`), dims, feed);
    let ref;
    if (ortSession) {
      const feeds = { [ortSession.inputNames[0]]: new ort.Tensor('float32', feed, dims) };
      ref = (await ortSession.run(feeds))[ortSession.outputNames[0]].data;
    } else {
      ref = noReal ? b : runTflite(exp, feed);
    }
    if (a.length !== ref.length || b.length !== ref.length) { badRun = true; break; }
    for (let i = 0; i < ref.length; i++) {
      const tol = 1e-5 * Math.max(1, Math.abs(ref[i]));
      const e1 = Math.abs(ref[i] - a[i]), e2 = Math.abs(ref[i] - b[i]);
      worstT = Math.max(worstT, e1);
      worstO = Math.max(worstO, e2);
      big = Math.max(big, Math.abs(ref[i]));
      if (e1 > tol || e2 > tol) badRun = true;
    }
  }
  failed += badRun;
  const what = ortSession ? 'ONNX Runtime on the exported .onnx' : 'real TFLite on the exported .tflite';
  if (noReal) {
    console.log(`note: ${name}: real TFLite cannot load the export (${noReal}; its STRIDED_SLICE has offset = true, ` +
                'an option this TFLite predates; train.tflite_ort runs its .onnx in ONNX Runtime)');
    console.log(`${badRun ? 'FAIL' : 'ok  '} ${name}: the exported .tflite in switchyard vs the exported .onnx: max |diff| ` +
                `${worstT.toExponential(2)}; outputs up to ${big.toPrecision(3)}, 6 random inputs`);
    continue;
  }
  console.log(`${badRun ? 'FAIL' : 'ok  '} ${name}: ${what} vs switchyard: max |diff| ` +
              `${worstT.toExponential(2)} (.tflite), ${worstO.toExponential(2)} (.onnx); outputs up to ` +
              `${big.toPrecision(3)}, 6 random inputs`);
}
// two_sg: subgraph 1 ('train_head') trained and exported. The runner runs
// subgraph 0 only, so real TFLite must load the export (its SignatureDefs
// checked) and give subgraph 0 ('infer') the outputs of the source file:
// the export wrote into subgraph 1's buffers alone.
const d2 = path.join(work, 'two_sg');
if (mode === 'tflite' && fs.existsSync(path.join(d2, 'model.tflite'))) {
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
console.log(failed ? `${failed} check(s) failed` : `every export agrees with ${mode === 'ort' ? 'ONNX Runtime' : 'real TFLite'} (${cases} models)`);
process.exit(failed ? 1 : 0);
