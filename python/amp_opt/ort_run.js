// Runs an ONNX model in ONNX Runtime (npm onnxruntime-node) for amp_opt.ort.
// usage: node ort_run.js REQUEST.json
// REQUEST: {"model": path, "inputs": {name: {"type": t, "dims": [...],
// "file": raw little-endian data}}, "out": folder}. Writes each output to
// OUT/<index>.bin and OUT/outputs.json ({name: {type, dims, file}}). With
// "repeat": N, also times N more runs of the same feeds and writes
// OUT/timing.json ({create_ms, run_ms: [...]}).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int64: BigInt64Array,
  int32: Int32Array, int8: Int8Array, uint8: Uint8Array, bool: Uint8Array,
  float16: Uint16Array, int16: Int16Array, uint16: Uint16Array,
};

async function main() {
  const request = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const created = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(request.model, {
    graphOptimizationLevel: request.optimize ? 'all' : 'disabled',
    logSeverityLevel: 3,
  });
  const feeds = {};
  for (const [name, input] of Object.entries(request.inputs)) {
    const bytes = fs.readFileSync(input.file);
    const Array = ARRAYS[input.type];
    if (!Array) throw new Error(`input '${name}': unsupported type ${input.type}`);
    const data = new Array(bytes.buffer.slice(bytes.byteOffset,
                                              bytes.byteOffset + bytes.length));
    feeds[name] = new ort.Tensor(input.type, data, input.dims);
  }
  const createMs = Number(process.hrtime.bigint() - created) / 1e6;
  const results = await session.run(feeds);
  if (request.repeat) {
    const runMs = [];
    for (let i = 0; i < request.repeat; ++i) {
      const start = process.hrtime.bigint();
      await session.run(feeds);
      runMs.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    fs.writeFileSync(path.join(request.out, 'timing.json'),
                     JSON.stringify({ create_ms: createMs, run_ms: runMs }));
  }
  const manifest = {};
  let index = 0;
  for (const name of session.outputNames) {
    const tensor = results[name];
    const file = path.join(request.out, `${index++}.bin`);
    const data = tensor.data;
    fs.writeFileSync(file, Buffer.from(data.buffer, data.byteOffset,
                                       data.byteLength));
    manifest[name] = { type: tensor.type, dims: tensor.dims, file };
  }
  fs.writeFileSync(path.join(request.out, 'outputs.json'),
                   JSON.stringify(manifest));
}

main().catch((error) => {
  process.stderr.write(`error: ${error.message}\n`);
  process.exit(1);
});
