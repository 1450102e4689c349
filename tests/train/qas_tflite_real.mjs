// The int8 TFLite models of qas_tflite_models.py and their QAS-INT8 exports
// against real TFLite (npm @tensorflow/tfjs-tflite: TFLite compiled to
// WebAssembly, its int8 kernels): for each pair in MODELS_DIR
//   mlp.tflite / mlp_ref.onnx, cnn.tflite / cnn_ref.onnx, dw.tflite /
//       dw_ref.onnx, conv.tflite / conv_ref.onnx, pool.tflite / pool_ref.onnx,
//       ops.tflite / ops_ref.onnx
//       elem.tflite / elem_ref.onnx, padmean.tflite / padmean_ref.onnx,
//       shape.tflite / shape_ref.onnx
//       (the models and their hand-written ONNX QDQ twins; conv_ref.onnx and
//       pool_ref.onnx are written in NCHW and given the same inputs transposed),
//       ops_front.tflite / ops_front_ref.onnx, elem_front / padmean_front /
//       shape_front (the fronts of ops, elem, padmean and shape alone: below)
//   NAME_trained.tflite / NAME_trained.onnx (the trained session's two
//       exports, written by `test_qas_tflite`)
// real TFLite runs the .tflite and `switchyard run` the .onnx on 50 random
// batches. For mlp, cnn, dw, conv and pool and their twins the int8 softmax outputs
// (codes of 1/256) must be equal, code for code: the twins mean what the
// .tflite files mean. That holds on these inputs, not by construction:
// TFLite's int8 kernels and switchyard's QDQ kernels requantize with
// differently formed multipliers and roundings, so a logit can differ by
// one code near a tie. The trained exports (codes moved by 8 steps at rate
// 0.5) show it: mlp_trained gives 599 of 600 equal codes here (one sample's
// probabilities off by one or two codes, as a logit one code apart gives),
// so for the exports real TFLite must load and run them and the agreement
// is reported, not required (test_qas_tflite checks their bytes; docs/
// training.md, "Still to come"). So is ops's, elem's, padmean's and shape's: their
// AVERAGE_POOL_2D, ADD, SUB, MUL, MEAN and int8-to-int8 QUANTIZE round
// otherwise in TFLite (the fronts below bound the difference of the
// front's codes; a logit one code off moves the softmax codes).
//
//   node qas_tflite_real.mjs SWITCHYARD MODELS_DIR   env: TFLITE_NODE_MODULES
import { execFileSync } from 'child_process';
import fs from 'fs';
import path from 'path';
import { tensorProto, readTensor } from '../contrib/onnx_writer.mjs';
import { runTflite, kernelsOf } from '../tflite/tfljs.mjs';

const [sy, dir] = process.argv.slice(2);

let seed = 5;
const rnd = () => { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return seed / 4294967296; };

let failed = 0;

// what ran each model in real TFLite: the interpreter gives the XNNPACK
// delegate what it takes (here most int8 operators, with XNNPACK's own
// requantization) and TFLite's builtin kernels the rest (here the int8
// AVERAGE_POOL_2D, the per-channel FULLY_CONNECTED, SOFTMAX, RESHAPE)
const kernels = (bytes) => {
  const k = kernelsOf(bytes);
  return `[XNNPACK: ${k.xnnpack.join('; ') || '-'} | builtin: ${k.builtin.join(', ') || '-'}]`;
};

// The front of ops.tflite alone (ops_front: AVERAGE_POOL_2D, an int8-to-int8
// QUANTIZE, MAX_POOL_2D, two ADDs, a CONCATENATION; its output the
// CONCATENATION's codes, scale 0.04, zero point -6) on inputs at code points
// of xq (x = s_x·(q − z_x), q uniform in −128..127, so both sides QUANTIZE
// xq alike). The bound asserted, code by code, rests on one assumption about
// TFLite, taken from its kernels' form and not proved from their source:
// each int8 kernel (XNNPACK's for the QUANTIZE, MAX_POOL_2D and ADDs here,
// the builtin one for the AVERAGE_POOL_2D: the line printed says which)
// lands within one code of its exact result (each requantizes with a
// fixed-point or float multiplier and up to two roundings: its int8-to-int8 QUANTIZE
// was seen to round 0.6·k = n.4 up to n + 1, its AVERAGE_POOL_2D rounds
// ties away from zero); and each QDQ step lands within half a code (float
// arithmetic, half to even). So for equal inputs one operator's outputs are
// at most 1 code apart (< 1.5), and
// through the front: xr, ap, mp at most 1; sm = ADD(ap, mp) moves by
// 0.03/0.04 + 0.05/0.04 = 2 codes for inputs 1 code off, plus the two
// roundings (< 1.5): < 3.5, at most 3; sm2 = ADD(mp, mp) by 2·1.25 + < 1.5:
// < 4, at most 3; the CONCATENATION copies codes (its inputs share its
// quantization). Asserted: at most 3 apart; the count of equal codes is
// reported.
// elem_front (ADD, SUB and MUL, broadcast or with an int8 constant; output
// the CONCATENATION's codes, scale 0.1, zero point 0), by the same
// assumption: gp = the 6x6 AVERAGE_POOL_2D at most 1; b1 = ADD(xq, gp)
// RELU6 moves by 0.03/0.1 for gp 1 code off, plus < 1.5: at most 1;
// b2 = SUB(xq, k1), b4 = MUL(xq, k2), b5 = ADD(k1, xq) read equal codes
// and constants: at most 1; b3 = MUL(xq, gp) moves by |x|·0.03/0.1 <=
// 3.87·0.3 = 1.16 for gp 1 code off, plus < 1.5: at most 2. Asserted: at
// most 2.
// padmean_front (PAD, PADV2, MEAN keep_dims both ways; output scale 0.05,
// zero point 0): the PADs copy codes (equal); each MEAN of equal codes at
// most 1; b1 = ADD(pv, mk) moves by 0.02/0.05 for mk 1 code off, b3 =
// ADD(pd, m0) likewise, plus < 1.5: at most 1; b2 = SUB(pd, mk2) by
// 0.025/0.05 plus at most 1.5: at most 2. Asserted: at most 2.
// shape_front (TRANSPOSE, STRIDED_SLICE, SQUEEZE, MAXIMUM, MINIMUM, ADD with
// a fused RELU_N1_TO_1; every tensor of xq's quantization, scale 0.03, zero
// point -2): the TRANSPOSEs, STRIDED_SLICEs, SQUEEZE, RESHAPE and the
// CONCATENATION copy codes (equal); gp = the 6x6 AVERAGE_POOL_2D at most 1,
// so nx (gp's codes moved) at most 1; b1 = MAXIMUM(s1, nx), b2 = MINIMUM(s1,
// k), b3 = MINIMUM(shr, s1) compare codes (a max or min of codes at most 1
// apart is at most 1 apart; b2, b3 read equal codes: equal); b5 = ADD(s1,
// nx) RELU_N1_TO_1 moves by 0.03/0.03 = 1 for nx 1 code off, plus < 1.5
// (the clamp to the codes of -1 and 1 moves no code further): at most 2.
// Asserted: at most 2.
const fronts = [['ops_front.tflite', 'ops_front_ref.onnx', 3, 0.04, -6],
                ['elem_front.tflite', 'elem_front_ref.onnx', 2, 0.1, 0],
                ['padmean_front.tflite', 'padmean_front_ref.onnx', 2, 0.05, 0],
                ['shape_front.tflite', 'shape_front_ref.onnx', 2, 0.03, -2]];
const sx = 0.03, zx = -2, frontDims = [3, 6, 6, 2];
for (const [t, o, bound, so, zo] of fronts) {
  seed = 9;
  const bytes = new Uint8Array(fs.readFileSync(path.join(dir, t)));
  let diff = 0, total = 0, worst = 0;
  for (let trial = 0; trial < 50; trial++) {
    const feed = new Float32Array(frontDims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < feed.length; i++)
      feed[i] = Math.fround(Math.fround(sx) * (Math.floor(rnd() * 256) - 128 - zx));
    const a = runTflite(bytes, feed);
    const d = path.join(dir, 'real_run');
    fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(d, 'input_0.pb'), tensorProto('x', 'float32', frontDims, feed));
    execFileSync(sy, ['run', path.join(dir, o), '--input-dir', d, '--output-dir', path.join(d, 'out')],
                 { stdio: ['ignore', 'ignore', 'inherit'] });
    const b = readTensor(fs.readFileSync(path.join(d, 'out', 'output_0.pb'))).data;
    if (a.length !== b.length) throw new Error(`${t}: ${a.length} outputs, ${o} ${b.length}`);
    for (let i = 0; i < a.length; i++) {
      const qa = Math.round(a[i] / Math.fround(so)) + zo, qb = Math.round(b[i] / Math.fround(so)) + zo;
      diff += qa !== qb;
      worst = Math.max(worst, Math.abs(qa - qb));
      total++;
    }
  }
  const bad = worst > bound;
  console.log(`${bad ? 'FAIL' : 'ok  '} ${t} in real TFLite and ${o} in switchyard: ${total - diff} of ${total} ` +
              `int8 codes equal, the others at most ${worst} apart (asserted: at most ${bound}) ${kernels(bytes)}`);
  failed += bad;
}

// Why a PAD or CONCATENATION whose output is quantized otherwise than its
// input is refused rather than translated as a requantization (docs/
// training.md): real TFLite's int8 PAD copies the codes into an output of
// another scale and zero point (rq_pad.tflite: xq (0.03, -2) padded into pd
// (0.06, 3); every code of pd must be xq's code, the padding pd's zero
// point 3, read here from the output dequantized with pd's parameters), and
// real TFLite cannot initialize an int8 CONCATENATION of inputs quantized
// otherwise than its output (bad_concat_scale.tflite).
{
  seed = 9;
  const bytes = new Uint8Array(fs.readFileSync(path.join(dir, 'rq_pad.tflite')));
  const q = new Int32Array(frontDims.reduce((a, b) => a * b, 1)), feed = new Float32Array(q.length);
  for (let i = 0; i < q.length; i++) {
    q[i] = Math.floor(rnd() * 256) - 128;
    feed[i] = Math.fround(Math.fround(sx) * (q[i] - zx));
  }
  const y = runTflite(bytes, feed);
  let copied = 0, requantized = 0, total = 0;
  for (let n = 0; n < 3; n++)
    for (let h = 0; h < 8; h++)
      for (let w = 0; w < 8; w++)
        for (let c = 0; c < 2; c++) {
          const inside = h >= 1 && h < 7 && w >= 2;
          const src = inside ? q[((n * 6 + h - 1) * 6 + w - 2) * 2 + c] : 3;
          const code = Math.round(y[((n * 8 + h) * 8 + w) * 2 + c] / Math.fround(0.06)) + 3;
          copied += code === src;
          // what a requantization would give: round(0.03·(q + 2) / 0.06) + 3, clamped
          const rq = inside ? Math.max(-128, Math.min(127, Math.round(0.03 * (src - zx) / 0.06) + 3)) : 3;
          requantized += code === rq;
          total++;
        }
  const bad = copied !== total;
  console.log(`${bad ? 'FAIL' : 'ok  '} rq_pad.tflite in real TFLite: ${copied} of ${total} output codes are the ` +
              `input's codes copied (the padding the zero point); a requantization would give ${requantized} of them`);
  failed += bad;
  let refused = '';
  try {
    runTflite(new Uint8Array(fs.readFileSync(path.join(dir, 'bad_concat_scale.tflite'))), feed);
  } catch (e) {
    refused = String(e.message || e);
  }
  console.log(`${refused ? 'ok  ' : 'FAIL'} bad_concat_scale.tflite (an int8 CONCATENATION of inputs of other ` +
              `scales than its output's) in real TFLite: ${refused || 'it ran'}`);
  failed += !refused;
}

const pairs = [['mlp.tflite', 'mlp_ref.onnx', [3, 8], true], ['cnn.tflite', 'cnn_ref.onnx', [3, 6, 6, 2], true],
               ['dw.tflite', 'dw_ref.onnx', [3, 8, 8, 2], true],
               ['conv.tflite', 'conv_ref.onnx', [3, 6, 6, 2], true, true],
               ['pool.tflite', 'pool_ref.onnx', [3, 6, 6, 2], true, true],
               ['ops.tflite', 'ops_ref.onnx', [3, 6, 6, 2], false],
               ['elem.tflite', 'elem_ref.onnx', [3, 6, 6, 2], false],
               ['padmean.tflite', 'padmean_ref.onnx', [3, 6, 6, 2], false],
               ['shape.tflite', 'shape_ref.onnx', [3, 6, 6, 2], false],
               ['mlp_trained.tflite', 'mlp_trained.onnx', [3, 8], false],
               ['cnn_trained.tflite', 'cnn_trained.onnx', [3, 6, 6, 2], false],
               ['dw_trained.tflite', 'dw_trained.onnx', [3, 8, 8, 2], false],
               ['conv_trained.tflite', 'conv_trained.onnx', [3, 6, 6, 2], false],
               ['pool_trained.tflite', 'pool_trained.onnx', [3, 6, 6, 2], false],
               ['ops_trained.tflite', 'ops_trained.onnx', [3, 6, 6, 2], false],
               ['elem_trained.tflite', 'elem_trained.onnx', [3, 6, 6, 2], false],
               ['padmean_trained.tflite', 'padmean_trained.onnx', [3, 6, 6, 2], false],
               ['shape_trained.tflite', 'shape_trained.onnx', [3, 6, 6, 2], false]];
// an NHWC batch as NCHW
function toNchw(x, [n, h, w, c]) {
  const y = new Float32Array(x.length);
  for (let a = 0; a < n; a++)
    for (let i = 0; i < h; i++)
      for (let j = 0; j < w; j++)
        for (let k = 0; k < c; k++) y[((a * c + k) * h + i) * w + j] = x[((a * h + i) * w + j) * c + k];
  return y;
}
for (const [t, o, dims, exact, nchw] of pairs) {
  seed = 5; // each pair its own inputs, whatever the pairs before it
  const bytes = new Uint8Array(fs.readFileSync(path.join(dir, t)));
  let diff = 0, total = 0;
  for (let trial = 0; trial < 50; trial++) {
    const feed = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < feed.length; i++) feed[i] = 2 * rnd() - 1;
    const a = runTflite(bytes, feed);
    const d = path.join(dir, 'real_run');
    fs.mkdirSync(d, { recursive: true });
    const [n, h, w, c] = dims;
    fs.writeFileSync(path.join(d, 'input_0.pb'), nchw ? tensorProto('x', 'float32', [n, c, h, w], toNchw(feed, dims))
                                                      : tensorProto('x', 'float32', dims, feed));
    execFileSync(sy, ['run', path.join(dir, o), '--input-dir', d, '--output-dir', path.join(d, 'out')],
                 { stdio: ['ignore', 'ignore', 'inherit'] });
    const b = readTensor(fs.readFileSync(path.join(d, 'out', 'output_0.pb'))).data;
    if (a.length !== b.length) throw new Error(`${t}: ${a.length} outputs, ${o} ${b.length}`);
    for (let i = 0; i < a.length; i++) {
      diff += Math.round(a[i] * 256) !== Math.round(b[i] * 256);
      total++;
    }
  }
  const bad = exact && diff > 0;
  console.log(`${bad ? 'FAIL' : exact ? 'ok  ' : 'note'} ${t} in real TFLite and ${o} in switchyard: ` +
              `${total - diff} of ${total} int8 softmax codes equal ${kernels(bytes)}`);
  failed += bad;
}
process.exit(failed ? 1 : 0);
