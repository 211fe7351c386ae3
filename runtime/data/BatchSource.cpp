//===- BatchSource.cpp - What every batch source shares -------------------===//

#include "heterps/Runtime/BatchSource.h"

#include <cstring>

namespace heterps::rt::data {

BatchSource::~BatchSource() = default;

void BatchSource::shuffle(uint64_t) {
  throw Error(describe() +
              " is read as a stream and cannot be shuffled; --shuffle needs "
              "the data as arrays (--data-input NAME=FILE.npy)");
}

void shapeInputs(const std::vector<InputSpec> &specs, int64_t rows,
                 std::vector<HostTensor> &inputs) {
  inputs.resize(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    Shape shape = specs[i].shape;
    if (specs[i].batched)
      shape[0] = rows;
    if (inputs[i].dtype != specs[i].dtype || inputs[i].shape != shape ||
        inputs[i].data.size() !=
            size_t(numElements(shape)) * dtypeSize(specs[i].dtype))
      inputs[i] = HostTensor(specs[i].dtype, shape);
  }
}

void sliceSamples(const std::vector<InputSpec> &specs,
                  const std::vector<HostTensor> &all, int64_t first,
                  int64_t count, std::vector<HostTensor> &part) {
  shapeInputs(specs, count, part);
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!specs[i].batched) {
      part[i] = all[i];
      continue;
    }
    size_t sampleBytes = all[i].shape[0] ? all[i].bytes() / all[i].shape[0] : 0;
    if (first < 0 || count < 0 || first + count > all[i].shape[0])
      throw Error("sliceSamples: samples [" + std::to_string(first) + ", " +
                  std::to_string(first + count) + ") of input '" +
                  specs[i].name + "' with " + std::to_string(all[i].shape[0]));
    std::memcpy(part[i].data.data(), all[i].data.data() + first * sampleBytes,
                count * sampleBytes);
  }
}

std::string describeInput(const TensorSpec &spec) {
  if (!spec.batched)
    return std::string(dtypeName(spec.dtype)) + " " + shapeString(spec.shape);
  Shape rest(spec.shape.begin() + 1, spec.shape.end());
  return std::string(dtypeName(spec.dtype)) + " N" +
         (rest.empty() ? "" : " x " + shapeString(rest));
}

} // namespace heterps::rt::data
