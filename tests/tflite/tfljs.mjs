// The real TFLite interpreter for the *_real.mjs tests: npm
// @tensorflow/tfjs-tflite (TFLite compiled to WebAssembly) found under
// $TFLITE_NODE_MODULES (tfljs_modules.sh locates or installs it and skips the
// test when it is unavailable), its plain build (tflite_web_api_cc.wasm: no
// SIMD, no threads, so one code path, deterministic) loaded in plain node with
// the module's printing silenced, and an interpreter of one thread made from
// a model's bytes for each run.
import { createRequire } from 'module';
import fs from 'fs';
import path from 'path';

export const wasmDir = path.join(process.env.TFLITE_NODE_MODULES, '@tensorflow/tfjs-tflite/wasm');
const factory = createRequire(wasmDir + '/')('./tflite_web_api_cc.js');
export const tfl = await factory({ wasmBinary: fs.readFileSync(path.join(wasmDir, 'tflite_web_api_cc.wasm')),
                                   print: () => {}, printErr: () => {} });
export const version = JSON.parse(fs.readFileSync(path.join(wasmDir, '../package.json'))).version;

// fn(runner) on an interpreter made from the model bytes (a Uint8Array); the
// runner and its copy of the bytes are freed after, fn's result returned
export function withRunner(bytes, fn, enableProfiling = false) {
  const p = tfl._malloc(bytes.length);
  tfl.HEAPU8.set(bytes, p);
  try {
    const made = tfl.TFLiteWebModelRunner.CreateFromBufferAndOptions(p, bytes.length,
      { numThreads: 1, enableProfiling, maxProfilingBufferEntries: 1024 });
    if (!made.ok()) throw new Error(made.errorMessage());
    const r = made.value();
    try { return fn(r); } finally { r.delete(); }
  } finally {
    tfl._free(p);
  }
}

const setFeeds = (r, feeds) => {
  const ins = r.GetInputs();
  if (ArrayBuffer.isView(feeds)) ins.get(0).data().set(feeds); // the first input alone
  else for (let i = 0; i < ins.size(); i++) ins.get(i).data().set(feeds[i]);
  if (!r.Infer()) throw new Error('Infer failed');
};

// the first output's data (a copy) of the model run on feeds: one typed array
// for a model of one input, else an array of them in the model's input order
export function runTflite(bytes, feeds) {
  return withRunner(bytes, (r) => { setFeeds(r, feeds); return r.GetOutputs().get(0).data().slice(); });
}

// every output of the model run on feeds, as { dtype, dims, data }
export function runTfliteAll(bytes, feeds) {
  return withRunner(bytes, (r) => {
    setFeeds(r, feeds);
    const outs = r.GetOutputs(), res = [];
    for (let i = 0; i < outs.size(); i++) {
      const t = outs.get(i);
      res.push({ dtype: t.dataType, dims: t.shape.split(',').map(Number), data: t.data().slice() });
    }
    return res;
  });
}

// the model's inputs as { name, dtype, dims }
export function inputsOf(bytes) {
  return withRunner(bytes, (r) => {
    const ins = r.GetInputs(), res = [];
    for (let i = 0; i < ins.size(); i++) {
      const t = ins.get(i);
      res.push({ name: t.name, dtype: t.dataType, dims: t.shape.split(',').map(Number) });
    }
    return res;
  });
}

// Which kernels ran the model (fed zeros): the interpreter hands what the
// XNNPACK delegate takes to XNNPACK (by default; the options have no switch)
// and runs the rest with TFLite's builtin kernels, so a test comparing codes
// says which arithmetic it met. Returns { builtin: [op types], xnnpack:
// [XNNPACK operator names] }, each in run order, from one profiled run.
export function kernelsOf(bytes) {
  return withRunner(bytes, (r) => {
    const ins = r.GetInputs();
    for (let i = 0; i < ins.size(); i++) ins.get(i).data().fill(0);
    if (!r.Infer()) throw new Error('Infer failed');
    const builtin = [], prof = r.GetProfilingResults();
    for (let i = 0; i < prof.size(); i++)
      if (prof.get(i).nodeType !== 'TfLiteXNNPackDelegate') builtin.push(prof.get(i).nodeType);
    // the summary's "Delegate internal" run order: "... Delegate/Add (ND, QS8):3"
    const text = r.GetProfilingSummary(), at = text.indexOf('Delegate internal');
    const order = at < 0 ? '' : text.slice(at).split('Top by')[0];
    const xnnpack = [...order.matchAll(/Delegate\/(.*):\d+\s*$/gm)].map((m) => m[1]);
    return { builtin, xnnpack };
  }, true);
}
