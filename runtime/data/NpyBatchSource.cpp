//===- NpyBatchSource.cpp - .npy arrays as a BatchSource ------------------===//
//
// The arrays are mapped by MappedNpy (exec/TensorFiles.cpp, which also reads
// `heterps run --input` files), so data larger than memory trains; this file
// only checks them against the bundle's inputs and hands out samples.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/NpyBatchSource.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

namespace heterps::rt::data {
namespace {

namespace fs = std::filesystem;

std::string perSample(const Shape &shape) {
  return shapeString(Shape(shape.begin() + 1, shape.end()));
}

/// A .npy file, mapped; refuses anything else.
MappedNpy openNpy(const std::string &path) {
  std::error_code error;
  if (!fs::exists(path, error))
    throw Error("cannot open '" + path + "': no such file");
  if (!fs::is_regular_file(path, error))
    throw Error("cannot open '" + path + "': not a regular file");
  return MappedNpy::open(path);
}

} // namespace

NpyInput parseNpyInput(const std::string &text, const std::string &flag) {
  size_t split = text.find('=');
  if (split == std::string::npos || split == 0 || split + 1 == text.size())
    throw Error(flag + " '" + text + "' is not NAME=FILE.npy");
  return {text.substr(0, split), text.substr(split + 1)};
}

std::string NpyPosition::toString() const {
  return "npy rows=" + std::to_string(rows) + " row=" + std::to_string(row) +
         " epoch=" + std::to_string(epoch);
}

NpyPosition NpyPosition::parse(const std::string &text) {
  NpyPosition position;
  const char *p = text.data(), *end = text.data() + text.size();
  auto field = [&](const char *key, uint64_t &value) {
    size_t keyLength = std::strlen(key);
    if (size_t(end - p) < keyLength || std::memcmp(p, key, keyLength) != 0)
      throw Error("bad .npy data position '" + text + "': expected '" + key +
                  "'");
    p += keyLength;
    auto [next, ec] = std::from_chars(p, end, value);
    if (ec != std::errc() || next == p)
      throw Error("bad .npy data position '" + text + "': bad number");
    p = next;
  };
  field("npy rows=", position.rows);
  field(" row=", position.row);
  field(" epoch=", position.epoch);
  if (p != end)
    throw Error("bad .npy data position '" + text + "': trailing text");
  return position;
}

NpyBatchSource::NpyBatchSource(const std::vector<InputSpec> &specs,
                               const std::vector<NpyInput> &given, bool loop,
                               std::string flag)
    : specs(specs), flag(std::move(flag)), loop(loop) {
  const std::string &f = this->flag;
  std::string names;
  for (const InputSpec &spec : specs)
    names += (names.empty() ? "" : ", ") + spec.name;

  // Names first: they are cheap to check and say most about a typo.
  std::map<std::string, const NpyInput *> byName;
  for (const NpyInput &input : given) {
    auto known =
        std::find_if(specs.begin(), specs.end(), [&](const InputSpec &spec) {
          return spec.name == input.name;
        });
    if (known == specs.end())
      throw Error(f + " " + input.name + "=" + input.path +
                  ": the bundle has no input '" + input.name +
                  "' (its inputs: " + names + ")");
    auto [it, inserted] = byName.emplace(input.name, &input);
    if (!inserted)
      throw Error(f + " names input '" + input.name + "' twice ('" +
                  it->second->path + "' and '" + input.path + "')");
  }
  for (const InputSpec &spec : specs) {
    if (!byName.count(spec.name))
      throw Error(f + ": no file for bundle input '" + spec.name + "' (" +
                  describeInput(spec) + "); give " + f + " " + spec.name +
                  "=FILE.npy (every input, the label included)");
    if (!spec.batched || spec.shape.empty())
      throw Error(f + " " + spec.name + "=" + byName[spec.name]->path +
                  ": bundle input '" + spec.name + "' (" + describeInput(spec) +
                  ") has no batch dimension, so it takes no samples");
  }

  for (const InputSpec &spec : specs) {
    const NpyInput &input = *byName[spec.name];
    const std::string what = f + " " + input.name + "=" + input.path + ": ";
    MappedNpy array;
    try {
      array = openNpy(input.path);
    } catch (const Error &error) {
      throw Error(what + error.what());
    }
    if (array.shape.empty())
      throw Error(what +
                  "the array is a scalar; dim 0 must count the "
                  "samples (input '" +
                  spec.name + "' takes " + describeInput(spec) + ")");
    if (array.dtype != spec.dtype)
      throw Error(what + "the array holds " + dtypeName(array.dtype) +
                  ", input '" + spec.name + "' takes " + describeInput(spec) +
                  " (no conversion is made: save it as " +
                  dtypeName(spec.dtype) + ")");
    if (Shape(array.shape.begin() + 1, array.shape.end()) !=
        Shape(spec.shape.begin() + 1, spec.shape.end()))
      throw Error(what + "the array's shape is " + shapeString(array.shape) +
                  " (each sample " + perSample(array.shape) + "), input '" +
                  spec.name + "' takes " + describeInput(spec) +
                  " (each sample " + perSample(spec.shape) + ")");
    if (array.shape[0] == 0)
      throw Error(what + "the array holds no samples (dim 0 is 0)");
    if (!arrays.empty() && array.shape[0] != rows)
      throw Error(f + ": the arrays disagree on the number of samples: " +
                  files[0].name + "=" + files[0].path + " holds " +
                  std::to_string(rows) + ", " + input.name + "=" + input.path +
                  " holds " + std::to_string(array.shape[0]));
    rows = array.shape[0];
    sampleBytes.push_back(size_t(array.bytes() / uint64_t(rows)));
    arrays.push_back(std::move(array));
    files.push_back(input);
  }
  NpyBatchSource::restart(); // no subclass is built yet
}

int64_t NpyBatchSource::next(int64_t want, std::vector<HostTensor> &inputs) {
  if (want <= 0)
    throw Error("NpyBatchSource::next: the sample count must be positive");
  int64_t count = want;
  if (!loop)
    count = std::min<int64_t>(want, rows - int64_t(at.row));
  shapeInputs(specs, count, inputs);
  // Copy runs of consecutive samples; a looping source wraps to sample 0,
  // possibly several times when a step is longer than the data.
  for (int64_t filled = 0; filled < count;) {
    int64_t run = std::min<int64_t>(count - filled, rows - int64_t(at.row));
    // Only the samples read are checked: the arrays may be larger than
    // memory, and a run may touch few of their pages.
    const std::vector<int64_t> *samples =
        shuffleSeed ? &orderOf(at.epoch) : nullptr;
    for (size_t i = 0; i < arrays.size(); ++i) {
      char *to = inputs[i].data.data() + filled * sampleBytes[i];
      const size_t bytes = sampleBytes[i];
      arrays[i].guardedRead([&] {
        if (!samples) {
          checkFinite(i, int64_t(at.row), run);
          std::memcpy(to, arrays[i].data() + at.row * bytes, run * bytes);
          return;
        }
        for (int64_t k = 0; k < run; ++k) {
          const int64_t sample = (*samples)[at.row + k];
          checkFinite(i, sample, 1);
          std::memcpy(to + k * bytes, arrays[i].data() + sample * bytes, bytes);
        }
      });
    }
    filled += run;
    at.row += uint64_t(run);
    if (loop && at.row == uint64_t(rows)) {
      at.row = 0;
      ++at.epoch;
    }
  }
  return count;
}

std::string NpyBatchSource::position() const { return at.toString(); }

void NpyBatchSource::seek(const std::string &text) {
  NpyPosition position;
  try {
    position = NpyPosition::parse(text);
  } catch (const Error &error) {
    throw Error("data position '" + text + "' is not a position in .npy " +
                "data (" + describe() +
                "); was the checkpoint written by a run on other data?");
  }
  if (position.rows != uint64_t(rows))
    throw Error("data position '" + text + "' is in arrays of " +
                std::to_string(position.rows) + " samples, " + describe() +
                " holds " + std::to_string(rows) +
                "; resume on the data the checkpoint was trained on");
  if (position.row > uint64_t(rows) || (loop && position.row == uint64_t(rows)))
    throw Error("data position '" + text + "' lies past the last sample of " +
                describe());
  at = position;
}

void NpyBatchSource::shuffle(uint64_t seed) {
  for (const MappedNpy &array : arrays)
    array.adviseRandomAccess();
  shuffleSeed = seed;
  order.clear();
}

const std::vector<int64_t> &NpyBatchSource::orderOf(uint64_t epoch) {
  if (!order.empty() && orderEpoch == epoch)
    return order;
  order.resize(size_t(rows));
  for (int64_t i = 0; i < rows; ++i)
    order[i] = i;
  // Fisher-Yates on mt19937_64, whose output the standard fixes (unlike
  // std::shuffle's), so every platform draws the same order.
  std::mt19937_64 random(*shuffleSeed * 0x9E3779B97F4A7C15ull + epoch);
  for (int64_t i = rows - 1; i > 0; --i)
    std::swap(order[i], order[random() % uint64_t(i + 1)]);
  orderEpoch = epoch;
  return order;
}

void NpyBatchSource::restart() {
  at = NpyPosition();
  at.rows = uint64_t(rows);
}

std::string NpyBatchSource::describe() const {
  std::string text;
  for (const NpyInput &input : files)
    text += (text.empty() ? flag + " " : ", ") + input.name + "=" + input.path;
  return text;
}

void NpyBatchSource::checkClassIds(int input, int64_t classes) const {
  const MappedNpy &array = arrays.at(size_t(input));
  if (array.dtype != DType::I64)
    throw Error(flag + " " + files[input].name + "=" + files[input].path +
                ": class ids must be i64, the array holds " +
                dtypeName(array.dtype));
  const auto *ids = reinterpret_cast<const int64_t *>(array.data());
  const size_t count = size_t(array.bytes() / sizeof(int64_t));
  size_t i = 0;
  array.guardedRead([&] {
    while (i < count && ids[i] >= 0 && ids[i] < classes)
      ++i;
  });
  if (i < count)
    throw Error(flag + " " + files[input].name + "=" + files[input].path +
                ": sample " + std::to_string(i / (count / size_t(rows))) +
                " has class id " + std::to_string(ids[i]) + ", outside [0, " +
                std::to_string(classes) + ") of the prediction's " +
                std::to_string(classes) + " classes");
}

void NpyBatchSource::checkProbabilities(int input) const {
  const MappedNpy &array = arrays.at(size_t(input));
  if (array.dtype != DType::F32)
    return; // the input's dtype was checked against the bundle's
  const auto *values = reinterpret_cast<const float *>(array.data());
  const size_t count = size_t(array.bytes() / sizeof(float));
  size_t i = 0;
  array.guardedRead([&] {
    while (i < count && values[i] >= 0 && values[i] <= 1)
      ++i;
  });
  if (i < count)
    throw Error(flag + " " + files[input].name + "=" + files[input].path +
                ": sample " + std::to_string(i / (count / size_t(rows))) +
                " has label " + std::to_string(values[i]) +
                ", outside [0, 1] of a binary cross-entropy's labels");
}

void NpyBatchSource::checkAllFinite() const {
  for (size_t input = 0; input < arrays.size(); ++input)
    arrays[input].guardedRead([&] { checkFinite(input, 0, rows); });
}

void NpyBatchSource::checkFinite(size_t input, int64_t row,
                                 int64_t count) const {
  const MappedNpy &array = arrays[input];
  if (array.dtype != DType::F32)
    return;
  const size_t perSample = sampleBytes[input] / sizeof(float);
  const auto *bits = reinterpret_cast<const uint32_t *>(
      array.data() + size_t(row) * sampleBytes[input]);
  const uint32_t *end = bits + size_t(count) * perSample;
  // All exponent bits set: an infinity or a NaN.
  const uint32_t *bad = std::find_if(bits, end, [](uint32_t value) {
    return (value & 0x7f800000u) == 0x7f800000u;
  });
  if (bad == end)
    return;
  const size_t at = size_t(bad - bits);
  float value;
  std::memcpy(&value, bad, sizeof(value));
  throw Error(flag + " " + files[input].name + "=" + files[input].path +
              ": sample " + std::to_string(size_t(row) + at / perSample) +
              " holds " +
              (std::isnan(value) ? "NaN"
               : value > 0       ? "inf"
                                 : "-inf") +
              " (element " + std::to_string(at % perSample) +
              "); training needs finite values");
}

} // namespace heterps::rt::data
