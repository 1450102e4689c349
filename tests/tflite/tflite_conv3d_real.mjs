// int8 CONV_3D against the real TFLite interpreter (npm @tensorflow/tfjs-tflite,
// one thread). Real TFLite runs CONV_3D in float32 only (conv3d.cc refuses
// int8), so gen_conv3d_model writes, next to each int8 CONV_3D, the int8
// CONV_2D that computes the same numbers over an input with the depth taps
// folded into the channels (see gen_conv3d_model.c); this script builds that
// folded input from the CONV_3D's input, runs the CONV_2D on real TFLite and
// the CONV_3D on switchyard (cpu_ref, and a strict riscv_mcu-only session, so
// the MCU kernel runs the node or the run fails) under --requant
// single_rounding (the interpreter's form): every byte must agree.
//
//   node tflite_conv3d_real.mjs SWITCHYARD GEN_CONV3D_MODEL WORK_DIR   env: TFLITE_NODE_MODULES
import { execFileSync } from 'child_process';
import fs from 'fs';
import path from 'path';
import { tensorProto, readTensor } from '../contrib/onnx_writer.mjs';
import { runTflite } from './tfljs.mjs';

const [sy, gen, work] = process.argv.slice(2);
const mcuIni = path.join(work, 'riscv_mcu_strict.ini');
fs.writeFileSync(mcuIni, '[switchyard]\nplugin_dirs = @default\nproviders = riscv_mcu\nstrict = true\n' +
                         '[provider.riscv_mcu]\ntarget = ws63\n');

// gen_conv3d_model's shapes: x [1, D, H, W, IC] zero point -7, KD depth taps
const D = 5, H = 6, W = 5, IC = 3, KD = 3, XZ = -7;
let seed = 3141;
const rnd = () => { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return seed / 4294967296; };
const x = new Int8Array(D * H * W * IC);
for (let i = 0; i < x.length; i++) x[i] = Math.floor(256 * rnd()) - 128;
fs.writeFileSync(path.join(work, 'input_0.pb'), tensorProto('x', 'int8', [1, D, H, W, IC], x));

// [padding, stride_d, stride_h, stride_w, per_channel]
const cases = [['SAME', 1, 1, 1, 1], ['SAME', 2, 2, 1, 1], ['VALID', 1, 2, 2, 1], ['VALID', 2, 1, 1, 0],
               ['SAME', 3, 1, 2, 0]];
let failed = 0;
cases.forEach((c, k) => {
  const m3 = path.join(work, `c3_${k}.tflite`), m2 = path.join(work, `c2_${k}.tflite`);
  const [od, pd] = execFileSync(gen, [m3, m2, ...c.map(String)]).toString().trim().split(' ').map(Number);
  const sd = c[1];
  // the folded input [od, H, W, KD * IC]
  const x2 = new Int8Array(od * H * W * KD * IC);
  for (let o = 0; o < od; o++)
    for (let h = 0; h < H; h++)
      for (let w = 0; w < W; w++)
        for (let kd = 0; kd < KD; kd++)
          for (let ic = 0; ic < IC; ic++) {
            const d = o * sd - pd + kd;
            x2[(((o * H + h) * W + w) * KD + kd) * IC + ic] = d < 0 || d >= D ? XZ : x[((d * H + h) * W + w) * IC + ic];
          }
  const want = runTflite(new Uint8Array(fs.readFileSync(m2)), x2);
  const parts = [];
  let bad = false;
  for (const ini of [null, mcuIni]) {
    const od_ = path.join(work, `out${k}${ini ? '_mcu' : ''}`);
    execFileSync(sy, ['run', m3, '--input-dir', work, '--output-dir', od_, '--requant', 'single_rounding',
                      ...(ini ? ['--config', ini] : [])], { stdio: ['ignore', 'ignore', 'inherit'] });
    const got = readTensor(fs.readFileSync(path.join(od_, 'output_0.pb'))).data;
    let diff = got.length === want.length ? 0 : Infinity;
    for (let i = 0; i < want.length && diff !== Infinity; i++) if (got[i] !== want[i]) diff++;
    bad = bad || diff !== 0;
    parts.push(`${ini ? 'riscv_mcu' : 'cpu_ref'} ${diff}`);
  }
  // outputs that are all one code would check little
  const distinct = new Set(want).size;
  if (distinct < 16) bad = true;
  failed += bad;
  console.log(`${bad ? 'FAIL' : 'ok  '} CONV_3D ${c.join(' ')}: ${want.length} outputs (${distinct} codes), ` +
              `differing: ${parts.join(', ')}`);
});
console.log(failed ? `${failed} case(s) differ from real TFLite` :
  `every case bit-exact with real TFLite's equivalent int8 CONV_2D (${cases.length} cases)`);
process.exit(failed ? 1 : 0);
