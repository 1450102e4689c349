// Runs the same inputs through ONNX Runtime (npm onnxruntime-node) and
// through `switchyard run`, and compares every output:
//   - the two shared real models that need ops_contrib / ops_legacy:
//     tiny_random_gpt2_ort_fused (prefill with an empty KV cache, a decode
//     step fed with the prefill's present, and a batch of 2 with a past and
//     a padding mask) and fns_candy_style_transfer_legacy;
//   - one-node models of each com.microsoft / legacy operator, written here.
//
//   node ort_contrib.mjs SWITCHYARD SHARED_DIR WORK_DIR   env: ORT_NODE_MODULES
// Prints one line per case; exits 1 when any case differs beyond its
// tolerance (float: |got - want| <= atol + rtol |want|; integers: exact).
import { createRequire } from 'module';
import { execFileSync } from 'child_process';
import fs from 'fs';
import path from 'path';
import { model, tensorProto, readTensor } from './onnx_writer.mjs';

const require = createRequire(process.env.ORT_NODE_MODULES + '/');
const ort = require('onnxruntime-node');
const [sy, shared, work] = process.argv.slice(2);

// deterministic inputs (mulberry32)
let seed = 12345;
const rnd = () => {
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const numel = (d) => d.reduce((a, b) => a * b, 1);
const ARR = { float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int32: Int32Array, int64: BigInt64Array };
const uni = (dims, lo = -2, hi = 2) => Float32Array.from({ length: numel(dims) }, () => lo + (hi - lo) * rnd());
const ints = (dims, lo, hi, T = Int32Array) => T.from({ length: numel(dims) }, () => lo + Math.floor((hi - lo) * rnd()));
const t = (dtype, dims, data) => ({ dtype, dims, data: data instanceof ARR[dtype] ? data : ARR[dtype].from(data) });

let failed = 0;

// feeds: {name: t(...)} in the model's input order; tol: {rtol, atol}
async function runCase(name, modelPath, feeds, tol) {
  const dir = path.join(work, name);
  fs.mkdirSync(dir, { recursive: true });
  const s = await ort.InferenceSession.create(modelPath);
  const ortFeeds = {};
  s.inputNames.forEach((n, i) => {
    const f = feeds[n];
    if (!f) throw new Error(`${name}: no feed for input ${n}`);
    ortFeeds[n] = new ort.Tensor(f.dtype, f.data, f.dims);
    fs.writeFileSync(path.join(dir, `input_${i}.pb`), tensorProto(n, f.dtype, f.dims, f.data));
  });
  const ref = await s.run(ortFeeds);
  execFileSync(sy, ['run', modelPath, '--input-dir', dir, '--output-dir', path.join(dir, 'sy')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const lines = [];
  let ok = true;
  s.outputNames.forEach((n, i) => {
    const want = ref[n], got = readTensor(fs.readFileSync(path.join(dir, 'sy', `output_${i}.pb`)));
    const wd = want.dims.map(Number);
    if (got.dtype !== want.type || got.dims.join(',') !== wd.join(',')) {
      ok = false;
      lines.push(`${n}: got ${got.dtype} [${got.dims}], onnxruntime ${want.type} [${wd}]`);
      return;
    }
    let worst = 0, bad = -1;
    const integer = want.type !== 'float32';
    for (let k = 0; k < want.data.length; k++) {
      const w = Number(want.data[k]), g = Number(got.data[k]);
      const d = Math.abs(w - g);
      const lim = integer ? 0 : tol.atol + tol.rtol * Math.abs(w);
      if (!(d <= lim) && bad < 0) bad = k;
      if (d > worst || Number.isNaN(d)) worst = Number.isNaN(d) ? Infinity : d;
    }
    if (bad >= 0) {
      ok = false;
      lines.push(`${n}: element ${bad} got ${got.data[bad]} onnxruntime ${want.data[bad]} (max |diff| ${worst.toPrecision(3)})`);
    } else {
      lines.push(`${n} max |diff| ${worst.toPrecision(3)}`);
    }
  });
  if (!ok) failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${lines.join('; ')}`);
  return ref;
}

// a one-node model written to WORK/NAME.onnx; inputs: [[name, tensor]], inits: [[name, tensor]]
async function opCase(name, node, inputs, inits, outputs, tol = { rtol: 1e-5, atol: 1e-6 }, opsets) {
  const m = model({
    nodes: [node],
    inputs: inputs.map(([n, x]) => [n, x.dtype, x.dims]),
    inits: (inits || []).map(([n, x]) => [n, x.dtype, x.dims, x.data]),
    outputs: outputs.map(([n, dt]) => [n, dt, null]),
    opsets: opsets || { '': 13, 'com.microsoft': 1 },
  });
  const p = path.join(work, `${name}.onnx`);
  fs.writeFileSync(p, m);
  await runCase(name, p, Object.fromEntries(inputs), tol);
}
const MS = 'com.microsoft';
const node = (op, inputs, outputs, attrs, domain = MS) => ({ op, domain, inputs, outputs, attrs });

// ---- the shared models -------------------------------------------------------
const gpt2 = path.join(shared, 'models/onnx/tiny_random_gpt2_ort_fused/model.onnx');
const candy = path.join(shared, 'models/onnx/fns_candy_style_transfer_legacy/model.onnx');
const MODEL_TOL = { rtol: 1e-4, atol: 1e-5 };
function gptFeeds(B, S, P, past, mask) {
  const f = {
    input_ids: t('int32', [B, S], ints([B, S], 0, 1000)),
    position_ids: t('int32', [B, S], Int32Array.from({ length: B * S }, (_, i) => P + (i % S))),
    attention_mask: t('int32', [B, P + S], mask || Int32Array.from({ length: B * (P + S) }, () => 1)),
  };
  for (let l = 0; l < 5; l++) f[`past_${l}`] = past ? past[l] : t('float32', [2, B, 4, P, 8], uni([2, B, 4, P, 8], -1, 1));
  return f;
}
const pre = await runCase('gpt2_prefill_empty_cache', gpt2, gptFeeds(1, 4, 0), MODEL_TOL);
const presents = [0, 1, 2, 3, 4].map((l) => t('float32', pre[`present_${l}`].dims.map(Number), pre[`present_${l}`].data));
await runCase('gpt2_decode_from_prefill_cache', gpt2, gptFeeds(1, 1, 4, presents), MODEL_TOL);
await runCase('gpt2_batch2_past3_padding_mask', gpt2, gptFeeds(2, 2, 3, null, Int32Array.from([1, 1, 1, 1, 1, 0, 1, 1, 1, 1])), MODEL_TOL);
await runCase('fns_candy_legacy', candy, { inputImage: t('float32', [1, 3, 720, 720], uni([1, 3, 720, 720], 0, 255)) },
              { rtol: 1e-4, atol: 1e-3 });

// ---- com.microsoft operators -------------------------------------------------
const X = t('float32', [2, 3, 8], uni([2, 3, 8]));
const v8 = () => t('float32', [8], uni([8]));
await opCase('Gelu', node('Gelu', ['x'], ['y']), [['x', X]], [], [['y', 'float32']]);
await opCase('BiasGelu', node('BiasGelu', ['x', 'b'], ['y']), [['x', X]], [['b', v8()]], [['y', 'float32']]);
await opCase('FastGelu_bias', node('FastGelu', ['x', 'b'], ['y']), [['x', X]], [['b', v8()]], [['y', 'float32']]);
await opCase('FastGelu', node('FastGelu', ['x'], ['y']), [['x', X]], [], [['y', 'float32']]);
await opCase('QuickGelu', node('QuickGelu', ['x'], ['y'], { alpha: { f: 1.5 } }), [['x', X]], [], [['y', 'float32']]);
await opCase('SkipLayerNormalization_all',
             node('SkipLayerNormalization', ['x', 's', 'g', 'b', 'bias'], ['y', '', '', 'sum'], { epsilon: { f: 1e-5 } }),
             [['x', X], ['s', t('float32', [2, 3, 8], uni([2, 3, 8]))]], [['g', v8()], ['b', v8()], ['bias', v8()]],
             [['y', 'float32'], ['sum', 'float32']]);
await opCase('SkipLayerNormalization_skip2d',
             node('SkipLayerNormalization', ['x', 's', 'g'], ['y']),
             [['x', X], ['s', t('float32', [3, 8], uni([3, 8]))]], [['g', v8()]], [['y', 'float32']]);
await opCase('SkipSimplifiedLayerNormalization',
             node('SkipSimplifiedLayerNormalization', ['x', 's', 'g', 'bias'], ['y', '', '', 'sum'], { epsilon: { f: 1e-6 } }),
             [['x', X], ['s', t('float32', [2, 3, 8], uni([2, 3, 8]))]], [['g', v8()], ['bias', v8()]],
             [['y', 'float32'], ['sum', 'float32']]);
await opCase('SimplifiedLayerNormalization', node('SimplifiedLayerNormalization', ['x', 'g'], ['y'], { axis: -1, epsilon: { f: 1e-5 } }, ''),
             [['x', X]], [['g', v8()]], [['y', 'float32']]);
{
  const ids = t('int32', [2, 3], ints([2, 3], 0, 10));
  const seg = t('int32', [2, 3], ints([2, 3], 0, 2));
  const mask = t('int32', [2, 3], [1, 1, 0, 1, 0, 0]);
  await opCase('EmbedLayerNormalization_segment_mask',
               node('EmbedLayerNormalization', ['ids', 'seg', 'we', 'pe', 'se', 'g', 'b', 'mask'], ['y', 'mi', 'sum'], { epsilon: { f: 1e-5 } }),
               [['ids', ids], ['seg', seg], ['mask', mask]],
               [['we', t('float32', [10, 8], uni([10, 8]))], ['pe', t('float32', [6, 8], uni([6, 8]))],
                ['se', t('float32', [2, 8], uni([2, 8]))], ['g', v8()], ['b', v8()]],
               [['y', 'float32'], ['mi', 'int32'], ['sum', 'float32']]);
}
{
  // Attention: B 2, S 3, hidden 8, 2 heads
  const x = t('float32', [2, 3, 8], uni([2, 3, 8]));
  const w = t('float32', [8, 24], uni([8, 24], -1, 1)), b = t('float32', [24], uni([24], -0.5, 0.5));
  const out = [['y', 'float32']];
  await opCase('Attention_nomask', node('Attention', ['x', 'w', 'b'], ['y'], { num_heads: 2 }), [['x', x]], [['w', w], ['b', b]], out);
  await opCase('Attention_mask1d_end', node('Attention', ['x', 'w', 'b', 'm'], ['y'], { num_heads: 2 }),
               [['x', x], ['m', t('int32', [2], [3, 2])]], [['w', w], ['b', b]], out);
  await opCase('Attention_mask1d_end_start', node('Attention', ['x', 'w', 'b', 'm'], ['y'], { num_heads: 2 }),
               [['x', x], ['m', t('int32', [4], [3, 2, 1, 0])]], [['w', w], ['b', b]], out);
  await opCase('Attention_mask3d', node('Attention', ['x', 'w', 'b', 'm'], ['y'], { num_heads: 2 }),
               [['x', x], ['m', t('int32', [2, 3, 3], [1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0, 1])]], [['w', w], ['b', b]], out);
  await opCase('Attention_causal_past_present_scale',
               node('Attention', ['x', 'w', 'b', 'm', 'past'], ['y', 'present'], { num_heads: 2, unidirectional: 1, scale: { f: 0.3 } }),
               [['x', x], ['m', t('int32', [2, 5], [1, 1, 1, 1, 1, 0, 1, 1, 1, 1])], ['past', t('float32', [2, 2, 2, 2, 4], uni([2, 2, 2, 2, 4]))]],
               [['w', w], ['b', b]], [['y', 'float32'], ['present', 'float32']]);
  await opCase('Attention_qkv_sizes_bias_input',
               node('Attention', ['x', 'w', 'b', '', '', 'ab'], ['y'], { num_heads: 2, qkv_hidden_sizes: { is: [4, 4, 6] } }),
               [['x', x], ['ab', t('float32', [2, 2, 3, 3], uni([2, 2, 3, 3]))]],
               [['w', t('float32', [8, 14], uni([8, 14], -1, 1))], ['b', t('float32', [14], uni([14], -0.5, 0.5))]], out);
}
for (const dt of ['uint8', 'int8']) {
  const lo = dt === 'uint8' ? 0 : -128, T = dt === 'uint8' ? Uint8Array : Int8Array;
  const xq = t(dt, [2, 3, 4, 5], ints([2, 3, 4, 5], lo, lo + 256, T));
  const sc = (v) => t('float32', [], [v]), zp = (v) => t(dt, [], [v]);
  const qinits = [['xs', sc(0.05)], ['xz', zp(lo + 100)], ['ys', sc(0.004)], ['yz', zp(lo + 3)]];
  await opCase(`QLinearSigmoid_${dt}`, node('QLinearSigmoid', ['x', 'xs', 'xz', 'ys', 'yz'], ['y']), [['x', xq]], qinits, [['y', dt]]);
  await opCase(`QLinearLeakyRelu_${dt}`, node('QLinearLeakyRelu', ['x', 'xs', 'xz', 'ys', 'yz'], ['y'], { alpha: { f: 0.1 } }),
               [['x', xq]], [['xs', sc(0.05)], ['xz', zp(lo + 100)], ['ys', sc(0.03)], ['yz', zp(lo + 60)]], [['y', dt]]);
  await opCase(`QLinearGlobalAveragePool_${dt}`, node('QLinearGlobalAveragePool', ['x', 'xs', 'xz', 'ys', 'yz'], ['y']),
               [['x', xq]], [['xs', sc(0.05)], ['xz', zp(lo + 100)], ['ys', sc(0.07)], ['yz', zp(lo + 90)]], [['y', dt]]);
  await opCase(`QLinearGlobalAveragePool_channels_last_${dt}`,
               node('QLinearGlobalAveragePool', ['x', 'xs', 'xz', 'ys', 'yz'], ['y'], { channels_last: 1 }),
               [['x', xq]], [['xs', sc(0.05)], ['xz', zp(lo + 100)], ['ys', sc(0.07)], ['yz', zp(lo + 90)]], [['y', dt]]);
}

// ---- legacy experimental operators (default domain, opset 7) -----------------
{
  const img = t('float32', [2, 3, 6, 7], uni([2, 3, 6, 7]));
  const o7 = { '': 7 };
  const out = [['y', 'float32']];
  await opCase('ImageScaler', node('ImageScaler', ['x'], ['y'], { scale: { f: 0.5 }, bias: { fs: [1, -2, 3] } }, ''), [['x', img]], [], out, undefined, o7);
  await opCase('Crop_border', node('Crop', ['x'], ['y'], { border: { is: [1, 2, 0, 1] } }, ''), [['x', img]], [], out, undefined, o7);
  await opCase('Crop_scale', node('Crop', ['x'], ['y'], { border: { is: [2, 1, 0, 0] }, scale: { is: [3, 4] } }, ''), [['x', img]], [], out, undefined, o7);
  await opCase('Affine', node('Affine', ['x'], ['y'], { alpha: { f: 1.5 }, beta: { f: -0.25 } }, ''), [['x', img]], [], out, undefined, o7);
  await opCase('ScaledTanh', node('ScaledTanh', ['x'], ['y'], { alpha: { f: 1.5 }, beta: { f: 0.7 } }, ''), [['x', img]], [], out, undefined, o7);
  await opCase('ParametricSoftplus', node('ParametricSoftplus', ['x'], ['y'], { alpha: { f: 1.5 }, beta: { f: 0.7 } }, ''), [['x', img]], [], out, undefined, o7);
  await opCase('Scale', node('Scale', ['x'], ['y'], { scale: { f: -3 } }, ''), [['x', img]], [], out, undefined, o7);
}

console.log(failed ? `${failed} case(s) differ from onnxruntime ${ort.env.versions.common}` :
                     `all cases match onnxruntime ${ort.env.versions.common}`);
process.exit(failed ? 1 : 0);
