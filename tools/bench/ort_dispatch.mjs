// Times ONNX Runtime (onnxruntime-node, CPU) on a model, for side-by-side
// figures with `switchyard bench`: node ort_dispatch.mjs MODEL ITERS WARMUP
// Prints "ort: min A ms, median B ms, max C ms per inference".
import { createRequire } from 'node:module';
const require = createRequire(process.env.ORT_NODE_MODULES + '/');
const ort = require('onnxruntime-node');

const [model, itersArg, warmupArg] = process.argv.slice(2);
const iters = Number(itersArg || 200), warmup = Number(warmupArg || 20);
const session = await ort.InferenceSession.create(model, {
  executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1,
  graphOptimizationLevel: process.env.ORT_OPT || 'all',
});
const feeds = {};
for (const name of session.inputNames) {
  // the chain's input is [1, 64] float32; the same sin pattern switchyard uses
  const data = Float32Array.from({ length: 64 }, (_, i) => Math.sin(i * 0.1));
  feeds[name] = new ort.Tensor('float32', data, [1, 64]);
}
for (let i = 0; i < warmup; i++) await session.run(feeds);
const ms = [];
for (let i = 0; i < iters; i++) {
  const t0 = process.hrtime.bigint();
  await session.run(feeds);
  ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
ms.sort((a, b) => a - b);
console.log(`ort: min ${ms[0].toFixed(3)} ms, median ${ms[iters >> 1].toFixed(3)} ms, max ${ms[iters - 1].toFixed(3)} ms per inference`);
