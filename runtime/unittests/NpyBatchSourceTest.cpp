//===- NpyBatchSourceTest.cpp - .npy arrays as training data --------------===//
//
// NpyBatchSource without a bundle (its inputs are given as specs): sample
// order, epoch looping, position save and restore, and every way the arrays
// can fail to fit the inputs.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/NpyBatchSource.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace heterps::rt;
using namespace heterps::rt::data;
using namespace heterps::rt::testsupport;
namespace fs = std::filesystem;

namespace {

/// A scratch directory of the running test.
struct Scratch : ScratchDirectory {
  Scratch() : ScratchDirectory("heterps-npy-source-test", currentTestName()) {}
};

InputSpec spec(const std::string &name, DType dtype, Shape shape,
               bool batched = true) {
  InputSpec spec;
  spec.name = name;
  spec.dtype = dtype;
  spec.shape = std::move(shape);
  spec.batched = batched;
  return spec;
}

/// The bundle inputs of the tests: x f32 [B, 2] and label i64 [B].
std::vector<InputSpec> specs() {
  return {spec("x", DType::F32, {4, 2}), spec("label", DType::I64, {4})};
}

/// x[i] = {i, i + 0.5}, label[i] = i % 3, for `rows` samples.
void writeArrays(const Scratch &scratch, int64_t rows,
                 const std::string &x = "x.npy",
                 const std::string &label = "label.npy") {
  HostTensor features(DType::F32, {rows, 2});
  HostTensor labels(DType::I64, {rows});
  auto *f = reinterpret_cast<float *>(features.data.data());
  auto *l = reinterpret_cast<int64_t *>(labels.data.data());
  for (int64_t i = 0; i < rows; ++i) {
    f[2 * i] = float(i);
    f[2 * i + 1] = float(i) + 0.5f;
    l[i] = i % 3;
  }
  writeNpy(scratch / x, features);
  writeNpy(scratch / label, labels);
}

std::vector<NpyInput> files(const Scratch &scratch,
                            const std::string &x = "x.npy",
                            const std::string &label = "label.npy") {
  return {{"x", scratch / x}, {"label", scratch / label}};
}

/// The sample indices a batch holds (x[i][0] == i).
std::vector<int> samplesOf(const std::vector<HostTensor> &inputs) {
  std::vector<int> samples;
  const auto *f = reinterpret_cast<const float *>(inputs[0].data.data());
  const auto *l = reinterpret_cast<const int64_t *>(inputs[1].data.data());
  for (int64_t i = 0; i < inputs[0].shape[0]; ++i) {
    int sample = int(f[2 * i]);
    EXPECT_EQ(f[2 * i + 1], float(sample) + 0.5f);
    EXPECT_EQ(l[i], sample % 3);
    samples.push_back(sample);
  }
  return samples;
}

/// The message of the Error that `make` throws, "" if none.
template <typename Function> std::string errorOf(Function make) {
  try {
    make();
  } catch (const Error &error) {
    return error.what();
  }
  return "";
}

#define EXPECT_ERROR(statement, text)                                          \
  do {                                                                         \
    std::string message = errorOf([&] { statement; });                         \
    EXPECT_NE(message.find(text), std::string::npos)                           \
        << "expected an error with \"" << text << "\", got \"" << message      \
        << "\"";                                                               \
  } while (false)

TEST(NpyBatchSource, DeliversSamplesInOrderAndLoopsOverEpochs) {
  Scratch scratch;
  writeArrays(scratch, 5);
  NpyBatchSource source(specs(), files(scratch), /*loop=*/true);
  EXPECT_EQ(source.samples(), 5);
  std::vector<HostTensor> inputs;
  EXPECT_EQ(source.next(4, inputs), 4);
  EXPECT_EQ(inputs[0].shape, (Shape{4, 2}));
  EXPECT_EQ(inputs[1].shape, (Shape{4}));
  EXPECT_EQ(samplesOf(inputs), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(source.position(), "npy rows=5 row=4 epoch=0");
  // A batch that crosses the end wraps to sample 0.
  EXPECT_EQ(source.next(4, inputs), 4);
  EXPECT_EQ(samplesOf(inputs), (std::vector<int>{4, 0, 1, 2}));
  EXPECT_EQ(source.position(), "npy rows=5 row=3 epoch=1");
  // Ending exactly at the end starts the next epoch.
  EXPECT_EQ(source.next(2, inputs), 2);
  EXPECT_EQ(samplesOf(inputs), (std::vector<int>{3, 4}));
  EXPECT_EQ(source.position(), "npy rows=5 row=0 epoch=2");
  // A batch longer than the data wraps several times.
  EXPECT_EQ(source.next(12, inputs), 12);
  EXPECT_EQ(samplesOf(inputs),
            (std::vector<int>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1}));
  EXPECT_EQ(source.position(), "npy rows=5 row=2 epoch=4");
  source.restart();
  EXPECT_EQ(source.position(), "npy rows=5 row=0 epoch=0");
}

TEST(NpyBatchSource, OnePassWithoutLooping) {
  Scratch scratch;
  writeArrays(scratch, 5);
  NpyBatchSource source(specs(), files(scratch), /*loop=*/false,
                        "--eval-input");
  std::vector<HostTensor> inputs;
  EXPECT_EQ(source.next(4, inputs), 4);
  EXPECT_EQ(source.next(4, inputs), 1);
  EXPECT_EQ(inputs[0].shape, (Shape{1, 2}));
  EXPECT_EQ(samplesOf(inputs), (std::vector<int>{4}));
  EXPECT_EQ(source.next(4, inputs), 0);
  EXPECT_EQ(source.next(4, inputs), 0);
  source.restart();
  EXPECT_EQ(source.next(3, inputs), 3);
  EXPECT_EQ(samplesOf(inputs), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(source.describe(), "--eval-input x=" + scratch / "x.npy" +
                                   ", label=" + scratch / "label.npy");
}

TEST(NpyBatchSource, ResumesAtASavedPosition) {
  Scratch scratch;
  writeArrays(scratch, 7);
  NpyBatchSource first(specs(), files(scratch), true);
  std::vector<HostTensor> inputs;
  for (int step = 0; step < 3; ++step)
    first.next(3, inputs); // 9 samples: into the second epoch
  std::string saved = first.position();
  EXPECT_EQ(saved, "npy rows=7 row=2 epoch=1");
  EXPECT_EQ(NpyPosition::parse(saved).toString(), saved);

  NpyBatchSource second(specs(), files(scratch), true);
  second.seek(saved);
  EXPECT_EQ(second.position(), saved);
  std::vector<HostTensor> a, b;
  for (int step = 0; step < 4; ++step) {
    first.next(3, a);
    second.next(3, b);
    EXPECT_EQ(samplesOf(a), samplesOf(b)) << "step " << step;
    EXPECT_EQ(first.position(), second.position());
  }
}

TEST(NpyBatchSource, RefusesPositionsOfOtherData) {
  Scratch scratch;
  writeArrays(scratch, 7);
  NpyBatchSource source(specs(), files(scratch), true);
  EXPECT_ERROR(source.seek("offset=10 line=2 epoch=0"),
               "is not a position in .npy data");
  EXPECT_ERROR(source.seek("npy rows=8 row=2 epoch=0"),
               "is in arrays of 8 samples");
  EXPECT_ERROR(source.seek("npy rows=7 row=7 epoch=0"),
               "lies past the last sample");
  EXPECT_ERROR(source.seek("npy rows=7 row=1"), "is not a position");
  EXPECT_ERROR(NpyPosition::parse("npy rows=7 row=1 epoch=0 "),
               "trailing text");
  EXPECT_ERROR(NpyPosition::parse("npy rows=7 row=x epoch=0"), "bad number");
  // A failed seek leaves the position alone.
  EXPECT_EQ(source.position(), "npy rows=7 row=0 epoch=0");
  // The end is a position of a source that does not loop.
  NpyBatchSource once(specs(), files(scratch), false);
  once.seek("npy rows=7 row=7 epoch=0");
  std::vector<HostTensor> inputs;
  EXPECT_EQ(once.next(2, inputs), 0);
}

TEST(NpyBatchSource, ParsesNameEqualsFile) {
  NpyInput input = parseNpyInput("image=a=b.npy", "--data-input");
  EXPECT_EQ(input.name, "image");
  EXPECT_EQ(input.path, "a=b.npy");
  EXPECT_ERROR(parseNpyInput("image", "--data-input"),
               "--data-input 'image' is not NAME=FILE.npy");
  EXPECT_ERROR(parseNpyInput("=a.npy", "--eval-input"),
               "--eval-input '=a.npy' is not NAME=FILE.npy");
  EXPECT_ERROR(parseNpyInput("image=", "--data-input"), "is not NAME=FILE");
}

TEST(NpyBatchSource, NamesUnknownMissingAndRepeatedInputs) {
  Scratch scratch;
  writeArrays(scratch, 4);
  std::vector<NpyInput> unknown = files(scratch);
  unknown.push_back({"y", scratch / "x.npy"});
  EXPECT_ERROR(NpyBatchSource(specs(), unknown, true),
               "--data-input y=" + scratch / "x.npy" +
                   ": the bundle has no input 'y' (its inputs: x, label)");
  EXPECT_ERROR(NpyBatchSource(specs(), {{"x", scratch / "x.npy"}}, true),
               "--data-input: no file for bundle input 'label' (i64 N)");
  std::vector<NpyInput> twice = files(scratch);
  twice.push_back({"x", scratch / "other.npy"});
  EXPECT_ERROR(NpyBatchSource(specs(), twice, true),
               "--data-input names input 'x' twice ('" + scratch / "x.npy" +
                   "' and '" + scratch / "other.npy" + "')");
  std::vector<InputSpec> unbatched = specs();
  unbatched.push_back(spec("scale", DType::F32, {2}, /*batched=*/false));
  std::vector<NpyInput> withScale = files(scratch);
  withScale.push_back({"scale", scratch / "x.npy"});
  EXPECT_ERROR(NpyBatchSource(unbatched, withScale, true),
               "bundle input 'scale' (f32 2) has no batch dimension");
}

TEST(NpyBatchSource, NamesFilesThatAreNoArrays) {
  Scratch scratch;
  writeArrays(scratch, 4);
  EXPECT_ERROR(NpyBatchSource(specs(), files(scratch, "missing.npy"), true),
               "--data-input x=" + scratch / "missing.npy" + ": cannot open '" +
                   scratch / "missing.npy" + "': no such file");
  fs::create_directories(scratch / "dir.npy");
  EXPECT_ERROR(NpyBatchSource(specs(), files(scratch, "dir.npy"), true),
               "not a regular file");
  std::ofstream(scratch / "text.npy") << "0,1,2\n";
  EXPECT_ERROR(NpyBatchSource(specs(), files(scratch, "text.npy"), true),
               "--data-input x=" + scratch / "text.npy" + ": '" +
                   scratch / "text.npy" + "' is not a .npy file");
  std::ofstream(scratch / "empty.npy");
  EXPECT_ERROR(NpyBatchSource(specs(), files(scratch, "empty.npy"), true),
               "is not a .npy file");

  // A header with another key than numpy's, one given twice, or an odd
  // value (numpy refuses them; a regex search read them half), and data
  // cut short.
  std::string bytes;
  {
    std::ifstream in(scratch / "x.npy", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto edited = [&](const std::string &name, const std::string &from,
                    const std::string &to) {
    std::string text = bytes;
    ASSERT_EQ(from.size(), to.size()) << "the header's length is fixed";
    text.replace(text.find(from), from.size(), to);
    std::ofstream(scratch / name, std::ios::binary) << text;
  };
  edited("noshape.npy", "'shape'", "'shapf'");
  EXPECT_ERROR(NpyBatchSource(specs(), files(scratch, "noshape.npy"), true),
               "--data-input x=" + scratch / "noshape.npy" + ": '" +
                   scratch / "noshape.npy" +
                   "' is not a valid .npy file: header: unknown key 'shapf'");
  edited("maybe.npy", "False", "Maybe");
  EXPECT_ERROR(NpyBatchSource(specs(), files(scratch, "maybe.npy"), true),
               "header: 'fortran_order' is neither True nor False");
  edited("twice.npy", "'fortran_order': False", "'descr': '<f4',       ");
  EXPECT_ERROR(NpyBatchSource(specs(), files(scratch, "twice.npy"), true),
               "header: 'descr' given twice");
  std::ofstream(scratch / "short.npy", std::ios::binary)
      << bytes.substr(0, bytes.size() - 3);
  EXPECT_ERROR(NpyBatchSource(specs(), files(scratch, "short.npy"), true),
               "is not a valid .npy file: holds 29 data bytes");
  std::ofstream(scratch / "header.npy", std::ios::binary)
      << bytes.substr(0, 20);
  EXPECT_ERROR(NpyBatchSource(specs(), files(scratch, "header.npy"), true),
               "header runs past the end of the file");
}

TEST(NpyBatchSource, NamesArraysThatDoNotFitTheirInput) {
  Scratch scratch;
  writeArrays(scratch, 4);
  HostTensor f64(DType::F64, {4, 2});
  writeNpy(scratch / "f64.npy", f64);
  EXPECT_ERROR(NpyBatchSource(specs(), files(scratch, "f64.npy"), true),
               "--data-input x=" + scratch / "f64.npy" +
                   ": the array holds f64, input 'x' takes f32 N x 2 (no "
                   "conversion is made: save it as f32)");
  HostTensor i32(DType::I32, {4});
  writeNpy(scratch / "i32.npy", i32);
  EXPECT_ERROR(
      NpyBatchSource(specs(), files(scratch, "x.npy", "i32.npy"), true),
      "--data-input label=" + scratch / "i32.npy" +
          ": the array holds i32, input 'label' takes i64 N");
  HostTensor wide(DType::F32, {4, 3});
  writeNpy(scratch / "wide.npy", wide);
  EXPECT_ERROR(NpyBatchSource(specs(), files(scratch, "wide.npy"), true),
               "the array's shape is 4x3 (each sample 3), input 'x' takes "
               "f32 N x 2 (each sample 2)");
  HostTensor flat(DType::F32, {8});
  writeNpy(scratch / "flat.npy", flat);
  EXPECT_ERROR(NpyBatchSource(specs(), files(scratch, "flat.npy"), true),
               "the array's shape is 8 (each sample scalar)");
  HostTensor scalar(DType::F32, {});
  writeNpy(scratch / "scalar.npy", scalar);
  EXPECT_ERROR(NpyBatchSource(specs(), files(scratch, "scalar.npy"), true),
               "the array is a scalar");
  HostTensor none(DType::F32, {0, 2});
  writeNpy(scratch / "none.npy", none);
  EXPECT_ERROR(NpyBatchSource(specs(), files(scratch, "none.npy"), true),
               "--data-input x=" + scratch / "none.npy" +
                   ": the array holds no samples");
  writeArrays(scratch, 5, "x5.npy", "label5.npy");
  EXPECT_ERROR(
      NpyBatchSource(specs(), files(scratch, "x.npy", "label5.npy"), true),
      "--data-input: the arrays disagree on the number of samples: x=" +
          scratch / "x.npy" + " holds 4, label=" + scratch / "label5.npy" +
          " holds 5");
}

TEST(NpyBatchSource, ChecksClassIds) {
  Scratch scratch;
  writeArrays(scratch, 6); // labels 0, 1, 2, 0, 1, 2
  NpyBatchSource source(specs(), files(scratch), true);
  EXPECT_NO_THROW(source.checkClassIds(1, 3));
  EXPECT_ERROR(source.checkClassIds(1, 2),
               "--data-input label=" + scratch / "label.npy" +
                   ": sample 2 has class id 2, outside [0, 2)");
  EXPECT_ERROR(source.checkClassIds(0, 2), "class ids must be i64");
}

TEST(NpyBatchSource, NamesAFileThatShrinksDuringTheRun) {
  // Pages of a mapping past its file's new end raise SIGBUS; the reads turn
  // it into an error naming the file, in order, shuffled and when checking.
  for (int read = 0; read != 3; ++read) {
    Scratch scratch;
    writeArrays(scratch, 4096); // x spans 8 pages
    NpyBatchSource source(specs(), files(scratch), true);
    if (read == 1)
      source.shuffle(7);
    std::vector<HostTensor> inputs;
    EXPECT_EQ(source.next(16, inputs), 16);
    fs::resize_file(scratch / "x.npy", 128); // the header's page remains
    const std::string shrank =
        "'" + scratch / "x.npy" + "' shrank while it was being read";
    if (read == 2)
      EXPECT_ERROR(source.checkAllFinite(), shrank);
    else
      EXPECT_ERROR(source.next(4096, inputs), shrank);
    // Reads of the page that remains still run (in order: sample 0).
    if (read != 1) {
      source.restart();
      EXPECT_EQ(source.next(1, inputs), 1);
    }
  }
}

TEST(BatchSource, ShapesAndSlicesInputs) {
  std::vector<InputSpec> inputs = specs();
  inputs.push_back(spec("scale", DType::F32, {3}, /*batched=*/false));
  std::vector<HostTensor> all;
  shapeInputs(inputs, 6, all);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].shape, (Shape{6, 2}));
  EXPECT_EQ(all[1].shape, (Shape{6}));
  EXPECT_EQ(all[2].shape, (Shape{3}));
  auto *labels = reinterpret_cast<int64_t *>(all[1].data.data());
  for (int i = 0; i < 6; ++i)
    labels[i] = 10 + i;
  std::vector<HostTensor> part;
  sliceSamples(inputs, all, 2, 3, part);
  EXPECT_EQ(part[0].shape, (Shape{3, 2}));
  const auto *sliced = reinterpret_cast<const int64_t *>(part[1].data.data());
  EXPECT_EQ(sliced[0], 12);
  EXPECT_EQ(sliced[2], 14);
  EXPECT_EQ(part[2].shape, (Shape{3}));
  EXPECT_THROW(sliceSamples(inputs, all, 4, 3, part), Error);
  EXPECT_EQ(describeInput(inputs[0]), "f32 N x 2");
  EXPECT_EQ(describeInput(inputs[1]), "i64 N");
  EXPECT_EQ(describeInput(inputs[2]), "f32 3");
}

} // namespace

TEST(NpyBatchSource, ShufflesEachEpochReproducibly) {
  Scratch scratch;
  writeArrays(scratch, 10);
  NpyBatchSource source(specs(), files(scratch), /*loop=*/true);
  source.shuffle(7);
  std::vector<HostTensor> inputs;
  source.next(10, inputs);
  std::vector<int> first = samplesOf(inputs); // checks features and labels
  source.next(10, inputs);
  std::vector<int> second = samplesOf(inputs);
  std::vector<int> ordered{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  // Every sample once per epoch, in an order that changes between epochs.
  for (std::vector<int> epoch : {first, second}) {
    EXPECT_NE(epoch, ordered);
    std::sort(epoch.begin(), epoch.end());
    EXPECT_EQ(epoch, ordered);
  }
  EXPECT_NE(first, second);
  EXPECT_EQ(source.position(), "npy rows=10 row=0 epoch=2");

  // The same seed draws the same orders, also from a position mid-epoch.
  NpyBatchSource again(specs(), files(scratch), /*loop=*/true);
  again.shuffle(7);
  again.seek("npy rows=10 row=6 epoch=1");
  again.next(4, inputs);
  EXPECT_EQ(samplesOf(inputs),
            std::vector<int>(second.begin() + 6, second.end()));
  // Another seed, another order.
  NpyBatchSource other(specs(), files(scratch), /*loop=*/true);
  other.shuffle(8);
  other.next(10, inputs);
  EXPECT_NE(samplesOf(inputs), first);
}

// An output or parameter named past a file name's 255 bytes: its first 160
// characters and a hash of the whole name (before 2026-12-02 the run failed
// with "File name too long"); distinct names stay distinct.
TEST(TensorFileNames, LongNamesFitAFileName) {
  EXPECT_EQ(safeFileName("a/b:c"), "a_b_c");
  EXPECT_EQ(safeFileName(".."), "_..");
  const std::string longName(300, 'a'), other = longName + "b";
  const std::string safe = safeFileName(longName);
  EXPECT_LE(safe.size() + std::string(".npy.partial_99").size(), 255u);
  EXPECT_EQ(safe.substr(0, 160), longName.substr(0, 160));
  EXPECT_NE(safe, safeFileName(other));
  EXPECT_EQ(safe, safeFileName(longName));
}
