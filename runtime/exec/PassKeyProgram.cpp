//===- PassKeyProgram.cpp - The ids a pass will pull, ahead of it ---------===//

#include "heterps/Runtime/PassKeyProgram.h"

namespace heterps::rt {
namespace {

const PassKeysSpec &passKeysOf(const Bundle &bundle) {
  const PassKeysSpec *spec = bundle.passKeys();
  if (!spec)
    throw Error("bundle '" + bundle.directory() +
                "' has no pass-key program (its manifest.json has no "
                "\"pass_keys\" section): it is not a training bundle with "
                "sparse tables, or an older compiler built it; recompile it "
                "with `heterps compile --train`");
  if (!spec->unavailable.empty())
    throw Error("bundle '" + bundle.directory() +
                "' has no pass-key program: " + spec->unavailable);
  return *spec;
}

/// Its buffers: one micro-batch of each input it reads, the ids of each
/// pull.
StageBuffers programBuffers(const Bundle &bundle, const PassKeysSpec &spec) {
  StageBuffers buffers;
  for (int input : spec.inputs)
    buffers.inputs.push_back(bundle.inputs().at(input).bytes());
  for (const TensorSpec &ids : spec.outputs)
    buffers.outputs.push_back(ids.bytes());
  return buffers;
}

ExecutorOptions programOptions(int threads) {
  ExecutorOptions options;
  options.threadsPerStage = threads;
  return options;
}

} // namespace

PassKeyProgram::PassKeyProgram(const Bundle &bundle, int threads)
    : bundle(bundle), spec(passKeysOf(bundle)),
      program(std::make_unique<StageProgram>(bundle, spec.program,
                                             programBuffers(bundle, spec),
                                             programOptions(threads), 1)) {
  for (const TensorSpec &ids : spec.outputs)
    outputs.emplace_back(ids.bytes());
}

PassKeyProgram::~PassKeyProgram() = default;

void PassKeyProgram::run(const std::vector<HostTensor> &inputs, int64_t samples,
                         const KeySink &sink) {
  const int64_t microBatch = bundle.batch();
  if (inputs.size() != bundle.inputs().size())
    throw Error("pass-key program: " + std::to_string(inputs.size()) +
                " inputs given, the bundle has " +
                std::to_string(bundle.inputs().size()));
  if (microBatch <= 0 || samples % microBatch != 0)
    throw Error("pass-key program: " + std::to_string(samples) +
                " samples are not a whole number of micro-batches of " +
                std::to_string(microBatch));
  // Each input's data and the bytes of one sample (0: not batched, the
  // same tensor for every micro-batch), checked once.
  std::vector<const char *> data(spec.inputs.size());
  std::vector<size_t> sampleBytes(spec.inputs.size());
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const InputSpec &input = bundle.inputs()[spec.inputs[i]];
    const HostTensor &tensor = inputs[spec.inputs[i]];
    sampleBytes[i] = input.batched ? input.bytes() / input.shape[0] : 0;
    if (tensor.bytes() <
        (input.batched ? sampleBytes[i] * size_t(samples) : input.bytes()))
      throw Error("pass-key program: input '" + input.name +
                  "' holds fewer than " + std::to_string(samples) + " samples");
    data[i] = tensor.data.data();
  }
  std::vector<const void *> in(spec.inputs.size());
  std::vector<void *> out;
  for (AlignedBuffer &buffer : outputs)
    out.push_back(buffer.data());
  for (int64_t first = 0; first < samples; first += microBatch) {
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = data[i] + sampleBytes[i] * size_t(first);
    std::string error =
        program->run(0, first / microBatch, in.data(), out.data());
    if (!error.empty())
      throw Error("pass-key program: " + error);
    for (size_t o = 0; o < spec.outputs.size(); ++o) {
      const size_t count = numElements(spec.outputs[o].shape);
      const char *ids = outputs[o].data();
      if (spec.outputs[o].dtype == DType::I32) {
        const auto *narrow = reinterpret_cast<const int32_t *>(ids);
        widened.assign(narrow, narrow + count);
        sink(spec.tables[o], widened.data(), count);
      } else {
        sink(spec.tables[o], reinterpret_cast<const int64_t *>(ids), count);
      }
    }
  }
}

} // namespace heterps::rt
