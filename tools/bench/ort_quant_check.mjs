// Runs a quantized mnist-8 (written by `switchyard quantize`) in ONNX Runtime
// on each test set and prints its argmax and the largest difference from the
// output switchyard wrote for the same set (DIR/sy_N/output_0.pb).
//   node ort_quant_check.mjs MODEL SETS_DIR SY_OUT_DIR   env: ORT_NODE_MODULES
import { createRequire } from 'module';
import fs from 'fs';
const require = createRequire(process.env.ORT_NODE_MODULES + '/');
const ort = require('onnxruntime-node');
const [model, setsDir, syDir] = process.argv.slice(2);

// the float payload of a TensorProto is its raw_data, the last field our
// tools and the ONNX test data write: its final n*4 bytes
const tail = (file, n) => {
  const b = fs.readFileSync(file);
  return new Float32Array(b.buffer.slice(b.byteOffset + b.length - 4 * n, b.byteOffset + b.length));
};
let s;
try {
  s = await ort.InferenceSession.create(model);
} catch (e) {
  console.log(`${model}: onnxruntime refused the model: ${e.message.split('\n')[0]}`);
  process.exit(1);
}
const tops = [];
let maxDiff = 0, maxRef = 0;
for (let i = 0; fs.existsSync(`${setsDir}/test_data_set_${i}`); i++) {
  const x = tail(`${setsDir}/test_data_set_${i}/input_0.pb`, 784);
  const out = (await s.run({ [s.inputNames[0]]: new ort.Tensor('float32', x, [1, 1, 28, 28]) }))[s.outputNames[0]].data;
  const sy = tail(`${syDir}/sy_${i}/output_0.pb`, out.length);
  let best = 0;
  for (let k = 0; k < out.length; k++) {
    if (out[k] > out[best]) best = k;
    maxDiff = Math.max(maxDiff, Math.abs(out[k] - sy[k]));
    maxRef = Math.max(maxRef, Math.abs(sy[k]));
  }
  tops.push(best);
}
console.log(`onnxruntime ${ort.env.versions.common}: argmax ${tops.join(' ')}; ` +
            `max |ort - switchyard| ${maxDiff.toPrecision(4)} (${(maxDiff / maxRef).toExponential(2)} of max |y|)`);
