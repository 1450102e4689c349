// int8 ADD, SUB and MUL against the real TFLite interpreter (npm
// @tensorflow/tfjs-tflite, one thread, int8 layers in XNNPACK where it takes
// them): one-op models of two [1, 65536] inputs written by gen_binary_model,
// fed every pair of input codes, over deterministic sets of scales and zero
// points (ratios inside and just outside the XNNPACK path's [2^-10, 2^8),
// fused RELU, extreme zero points). Under --requant single_rounding the
// outputs of switchyard on cpu_ref and on riscv_mcu must equal the
// interpreter's, every byte; gemmlowp's differences are reported.
//
//   node tflite_binary_real.mjs SWITCHYARD GEN_BINARY_MODEL WORK_DIR MCU_INI   env: TFLITE_NODE_MODULES
import { execFileSync } from 'child_process';
import fs from 'fs';
import path from 'path';
import { tensorProto, readTensor } from '../contrib/onnx_writer.mjs';
import { runTflite } from './tfljs.mjs';

const [sy, gen, work, mcuIni] = process.argv.slice(2);

let seed = 20261203;
const rnd = () => {
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const zp = () => Math.floor(256 * rnd()) - 128;
const sig = (x) => Number(x.toPrecision(6));

// [op, s1, z1, s2, z2, so, zo, act]
const cases = [];
for (const op of ['ADD', 'SUB', 'MUL']) {
  for (let k = 0; k < 8; k++) {
    const s1 = sig(0.002 + 0.5 * rnd()), s2 = sig(0.002 + 0.5 * rnd());
    const so = sig((op === 'MUL' ? s1 * s2 : Math.max(s1, s2)) * (0.3 + 2.7 * rnd()));
    cases.push([op, s1, zp(), s2, zp(), so, zp(), rnd() < 0.5 ? 'RELU' : 'NONE']);
  }
}
// ADD/SUB ratios s_i / s_out at the edges of the XNNPACK path's range
cases.push(['ADD', 0.0001, 0, 0.5, 0, 0.6, 0, 'NONE']);       // 1.7e-4 < 2^-10: the builtin kernel
cases.push(['SUB', 0.0001, 3, 0.5, -7, 0.6, 2, 'NONE']);
cases.push(['ADD', 0.00062, 5, 0.5, -3, 0.6, 1, 'NONE']);     // 1.03e-3, just inside
cases.push(['ADD', 0.00058, 5, 0.5, -3, 0.6, 1, 'NONE']);     // 9.7e-4, just outside
cases.push(['ADD', 0.5, 0, 0.3, 0, 0.0015, 0, 'NONE']);       // 333 >= 2^8
cases.push(['ADD', 0.5, 0, 0.3, 0, 0.00197, 0, 'NONE']);      // 254, inside
cases.push(['ADD', 0.0371, -128, 0.0371, 127, 0.0742, -128, 'RELU']);
cases.push(['SUB', 0.31, 127, 0.029, -128, 0.37, 127, 'RELU']);

const a = new Int8Array(65536), b = new Int8Array(65536);
for (let i = 0; i < 65536; i++) { a[i] = (i >> 8) - 128; b[i] = (i & 255) - 128; }
fs.writeFileSync(path.join(work, 'input_0.pb'), tensorProto('a', 'int8', [1, 65536], a));
fs.writeFileSync(path.join(work, 'input_1.pb'), tensorProto('b', 'int8', [1, 65536], b));

let failed = 0;
cases.forEach((c, k) => {
  const model = path.join(work, `case${k}.tflite`);
  execFileSync(gen, [model, ...c.map(String)], { stdio: ['ignore', 'ignore', 'inherit'] });
  const want = runTflite(new Uint8Array(fs.readFileSync(model)), [a, b]);
  const parts = [];
  for (const [form, ini] of [['single_rounding', null], ['single_rounding', mcuIni], ['gemmlowp', null]]) {
    const od = path.join(work, `out${k}_${form}${ini ? '_mcu' : ''}`);
    execFileSync(sy, ['run', model, '--input-dir', work, '--output-dir', od, '--requant', form, ...(ini ? ['--config', ini] : [])],
                 { stdio: ['ignore', 'ignore', 'inherit'] });
    const got = readTensor(fs.readFileSync(path.join(od, 'output_0.pb'))).data;
    let diff = 0, worst = 0;
    for (let i = 0; i < 65536; i++) {
      const d = Math.abs(got[i] - want[i]);
      if (d) { diff++; worst = Math.max(worst, d); }
    }
    if (form === 'single_rounding' && diff) failed++;
    parts.push(`${form}${ini ? ' riscv_mcu' : ''} ${diff}${diff ? ` (${worst} LSB)` : ''}`);
  }
  const bad = parts.slice(0, 2).some((p) => !/ 0$/.test(p));
  console.log(`${bad ? 'FAIL' : 'ok  '} ${c.join(' ')}: differing of 65536: ${parts.join(', ')}`);
});
console.log(failed ? `${failed} single_rounding run(s) differ from real TFLite` :
  `every case bit-exact with real TFLite under single_rounding (${cases.length} cases x 65536 code pairs)`);
process.exit(failed ? 1 : 0);
