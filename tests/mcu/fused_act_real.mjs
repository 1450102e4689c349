// A fused RELU6 under the default rules (rules = seed): gen_act_model's
// int8 CONV_2D with fused RELU6 and the two-node form a converter honouring
// the seed writes (CONV_2D NONE + RELU6 on the conv's output quantization)
// must give the same bytes on riscv_mcu under either requantization form,
// and those of the real TFLite interpreter (npm @tensorflow/tfjs-tflite,
// which rounds once) under single_rounding, for both models; the input
// sweeps the int8 codes so both clamps (q(0), q(6)) are reached.
//
//   node fused_act_real.mjs SWITCHYARD GEN_ACT_MODEL WORK_DIR MCU_INI   env: TFLITE_NODE_MODULES
import { execFileSync } from 'child_process';
import fs from 'fs';
import path from 'path';
import { tensorProto, readTensor } from '../contrib/onnx_writer.mjs';
import { runTflite } from '../tflite/tfljs.mjs';

const [sy, gen, work, mcuIni] = process.argv.slice(2);

const x = new Int8Array(9 * 9 * 3);
for (let i = 0; i < x.length; i++) x[i] = ((i * 97 + 13) % 256) - 128;
fs.writeFileSync(path.join(work, 'input_0.pb'), tensorProto('x', 'int8', [1, 9, 9, 3], x));

let failed = 0;
const hex = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('hex');
const outs = {};
for (const form of ['fused', 'split']) {
  const model = path.join(work, `${form}.tflite`);
  execFileSync(gen, [model, form], { stdio: ['ignore', 'ignore', 'inherit'] });
  outs[`${form} tflite`] = runTflite(new Uint8Array(fs.readFileSync(model)), x);
  for (const rq of ['single_rounding', 'gemmlowp']) {
    const od = path.join(work, `out_${form}_${rq}`);
    execFileSync(sy, ['run', model, '--config', mcuIni, '--input-dir', work, '--output-dir', od, '--requant', rq],
                 { stdio: ['ignore', 'ignore', 'inherit'] });
    outs[`${form} ${rq}`] = readTensor(fs.readFileSync(path.join(od, 'output_0.pb'))).data;
  }
}
const want = outs['fused tflite'];
let lo = 0, hi = 0;
for (const v of want) { if (v === -20) lo++; if (v === 80) hi++; }
if (!lo || !hi) { console.log(`FAIL: the input reaches q(0) ${lo} times and q(6) ${hi} times`); failed++; }
for (const [k, want2] of [['split tflite', want], ['fused single_rounding', want], ['split single_rounding', want],
                          ['split gemmlowp', outs['fused gemmlowp']]]) {
  const ok = hex(outs[k]) === hex(want2);
  if (!ok) failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${k}: ${ok ? 'the same bytes' : 'differs'} (${outs[k].length} bytes)`);
}
console.log(failed ? `${failed} failure(s)` :
  `fused RELU6 = CONV_2D + RELU6 on riscv_mcu (both forms) and real TFLite; q(0) ${lo}x, q(6) ${hi}x`);
process.exit(failed ? 1 : 0);
