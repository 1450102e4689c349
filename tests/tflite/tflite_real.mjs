// Every shared TFLite model through the real TFLite interpreter (npm
// @tensorflow/tfjs-tflite: TFLite compiled to WebAssembly, its .wasm loaded
// from the package, one thread; int8 layers go to XNNPACK where it takes
// them) and through `switchyard run`, on the same inputs, under each
// requantization form:
//   single_rounding  must agree bit for bit with real TFLite;
//   gemmlowp         (TFLite Micro's double rounding) is reported: outputs
//                    that differ from real TFLite and by how many LSB.
// Where a model is a chain of int8 FULLY_CONNECTED (tflm_ref.mjs writes
// their arithmetic out), both forms must also agree bit for bit with that
// reference: gemmlowp with TFLite Micro's, single_rounding with TFLite's.
// Float outputs must agree within 1e-5 relative (float kernels of two
// implementations; the int8 ones are exact).
//
//   node tflite_real.mjs SWITCHYARD WORK_DIR MCU_INI ROOT...   env: TFLITE_NODE_MODULES
// Every .tflite file under each ROOT (the shared folder's models/, a folder
// of generated models) is a model, named by its path below its ROOT.
// MCU_INI places the models on riscv_mcu (its host run), which must agree
// with real TFLite under single_rounding too.
// Prints one line per model and form; exits 1 when a single_rounding output
// differs (or a float one beyond its tolerance), 0 otherwise.
import { execFileSync } from 'child_process';
import fs from 'fs';
import path from 'path';
import { tensorProto, readTensor } from '../contrib/onnx_writer.mjs';
import { inputsOf, runTfliteAll as runTflite, version } from './tfljs.mjs';
import { fixQuantizedDimension, readModel } from './tflite_fb.mjs';
import { runFcChain } from './tflm_ref.mjs';

const [sy, work, mcuIni, ...roots] = process.argv.slice(2);

// deterministic inputs (mulberry32)
let seed = 20261202;
const rnd = () => {
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const ARR = { float32: Float32Array, int8: Int8Array, uint8: Uint8Array, int32: Int32Array };
const draw = (d) => {
  const n = d.dims.reduce((a, b) => a * b, 1);
  if (d.dtype === 'int8') return Int8Array.from({ length: n }, () => Math.floor(256 * rnd()) - 128);
  if (d.dtype === 'uint8') return Uint8Array.from({ length: n }, () => Math.floor(256 * rnd()));
  if (d.dtype === 'float32') return Float32Array.from({ length: n }, () => 2 * Math.PI * rnd()); // hello_world's x
  throw new Error(`input dtype ${d.dtype} is not drawn by this test`);
};

const models = []; // [root, file]
for (const root of roots) {
  (function walk(d) {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const f = path.join(d, e.name);
      if (e.isDirectory()) walk(f);
      else if (e.name.endsWith('.tflite')) models.push([root, f]);
    }
  })(root);
}

const DRAWS = 3;
let failed = 0;
console.log(`real TFLite: npm @tensorflow/tfjs-tflite ${version} (tflite_web_api_cc.wasm, 1 thread)`);
for (const [root, m] of models) {
  const name = path.relative(root, m);
  const bytes = new Uint8Array(fs.readFileSync(m));
  const fixed = fixQuantizedDimension(bytes);
  const dir = path.join(work, name.replace(/[\/]/g, '_'));
  fs.mkdirSync(dir, { recursive: true });
  const descs = inputsOf(bytes);
  const cases = [];
  for (let k = 0; k < DRAWS; k++) {
    const feeds = descs.map(draw);
    const cdir = path.join(dir, `in${k}`);
    fs.mkdirSync(cdir, { recursive: true });
    descs.forEach((d, i) => fs.writeFileSync(path.join(cdir, `input_${i}.pb`), tensorProto(d.name, d.dtype, d.dims, feeds[i])));
    cases.push({ cdir, feeds, want: runTflite(bytes, feeds) });
  }
  const fb = readModel(bytes);
  for (const [form, ini] of [['single_rounding', null], ['gemmlowp', null], ['single_rounding', mcuIni]]) {
    const label = `--requant ${form}${ini ? ' on riscv_mcu' : ''}`;
    let n = 0, diff = 0, worst = 0, fworst = 0, bad = '', refN = 0, refDiff = 0, refTfl = 0;
    for (const c of cases) {
      const od = path.join(c.cdir, form + (ini ? '_mcu' : ''));
      execFileSync(sy, ['run', m, '--input-dir', c.cdir, '--output-dir', od, '--requant', form, ...(ini ? ['--config', ini] : [])],
                   { stdio: ['ignore', 'ignore', 'inherit'] });
      const ref = runFcChain(fb, c.feeds, form);
      c.want.forEach((w, i) => {
        const g = readTensor(fs.readFileSync(path.join(od, `output_${i}.pb`)));
        if (ref) {
          for (let k = 0; k < w.data.length; k++, refN++) {
            if (ref[i][k] !== g.data[k]) refDiff++;
            if (ref[i][k] !== w.data[k]) refTfl++;
          }
        }
        if (g.dtype !== w.dtype || g.dims.join(',') !== w.dims.join(',')) {
          bad = `output ${i}: switchyard ${g.dtype} [${g.dims}], TFLite ${w.dtype} [${w.dims}]`;
          return;
        }
        for (let k = 0; k < w.data.length; k++, n++) {
          const d = Math.abs(Number(g.data[k]) - Number(w.data[k]));
          if (w.dtype === 'float32') {
            const rel = d / Math.max(Math.abs(Number(w.data[k])), 1e-30);
            if (!(rel <= 1e-5) && !(d === 0)) { diff++; fworst = Math.max(fworst, rel); }
          } else if (d !== 0) { diff++; worst = Math.max(worst, d); }
        }
      });
    }
    const float = cases[0].want.every((w) => w.dtype === 'float32');
    const ok = !bad && diff === 0;
    const must = form === 'single_rounding' || float;
    if (must && !ok) failed++;
    if (refN) {
      // the written-out reference: switchyard must match it in both forms,
      // and real TFLite must match it exactly in the single-rounding form
      const refOk = refDiff === 0 && (form !== 'single_rounding' || refTfl === 0);
      if (!refOk) failed++;
      console.log(`${refOk ? 'ok  ' : 'FAIL'} ${name} ${label} against the FULLY_CONNECTED reference ` +
                  `(${form === 'gemmlowp' ? "TFLite Micro's" : "TFLite's single-rounding"} arithmetic): ` +
                  `switchyard ${refDiff}/${refN} differ, real TFLite ${refTfl}/${refN} differ`);
    }
    const what = bad || (float ? `${diff}/${n} float outputs beyond 1e-5 relative` + (diff ? ` (worst ${fworst.toPrecision(3)})` : '')
                               : `${diff}/${n} outputs differ` + (diff ? ` by up to ${worst} LSB` : ''));
    console.log(`${ok ? 'ok  ' : must ? 'FAIL' : 'diff'} ${name} ${label}: ${what} (${DRAWS} inputs` +
                (fixed ? `; ${fixed} quantized_dimension field(s) outside the rank set to 0` : '') + ')');
  }
}
process.exit(failed ? 1 : 0);
