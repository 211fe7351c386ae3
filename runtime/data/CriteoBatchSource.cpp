//===- CriteoBatchSource.cpp - Criteo TSV as a BatchSource ----------------===//

#include "heterps/Runtime/CriteoBatchSource.h"

#include <cstring>

namespace heterps::rt::data {
namespace {

/// Whether `spec` is a batched tensor of `dtype` with the extents `rest`
/// after the batch.
bool isBatched(const TensorSpec &spec, DType dtype, const Shape &rest) {
  return spec.batched && spec.dtype == dtype &&
         Shape(spec.shape.begin() + 1, spec.shape.end()) == rest;
}

/// Runs `read`, prefixing its Error with `flag`: the reader names the file,
/// and a user with a training and an eval file needs the option too.
template <typename Read>
auto namingFlag(const std::string &flag, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const Error &error) {
    throw Error(flag + ": " + error.what());
  }
}

} // namespace

CtrInputs mapCtrInputs(const Bundle &bundle) {
  const TrainingSpec *spec = bundle.training();
  if (!spec)
    throw Error("bundle '" + bundle.directory() +
                "' is not a training bundle (its manifest.json has no "
                "\"training\" section); compile the model with --train");
  CtrInputs layout;
  const auto &inputs = bundle.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec &input = inputs[i];
    int index = static_cast<int>(i);
    if (index == spec->labelInput) {
      if (!isBatched(input, DType::F32, {}) &&
          !isBatched(input, DType::F32, {1}) &&
          !isBatched(input, DType::I64, {}) &&
          !isBatched(input, DType::I64, {1}))
        throw Error("the label input '" + input.name + "' is " +
                    describeInput(input) +
                    "; CTR labels are f32 (or i64) of shape N or N x 1");
      layout.label = index;
    } else if (isBatched(input, DType::F32, {kNumDense})) {
      if (layout.dense >= 0)
        throw Error("inputs '" + inputs[layout.dense].name + "' and '" +
                    input.name +
                    "' both look like the dense features (f32 N "
                    "x 13)");
      layout.dense = index;
    } else if (isBatched(input, DType::I64, {kNumSparse})) {
      if (layout.sparse >= 0)
        throw Error("inputs '" + inputs[layout.sparse].name + "' and '" +
                    input.name +
                    "' both look like the sparse ids (i64 N x "
                    "26)");
      layout.sparse = index;
    } else {
      throw Error("input '" + input.name + "' (" + describeInput(input) +
                  ") is none of what Criteo data provides: the dense "
                  "features (f32 N x 13), the sparse ids (i64 N x 26) or the "
                  "label '" +
                  spec->label +
                  "'; train it from .npy arrays with "
                  "--data-input NAME=FILE.npy instead");
    }
  }
  return layout;
}

ReaderOptions ctrReaderOptions(const Bundle &bundle, const CtrInputs &layout,
                               int64_t hashBuckets) {
  ReaderOptions options;
  if (layout.sparse < 0)
    return options;
  const TrainingSpec &spec = *bundle.training();
  int64_t buckets = hashBuckets;
  if (buckets == 0) {
    // One table shared by the 26 fields (or several tables of that same
    // size, e.g. Wide & Deep's wide and deep tables): rows / 26 per field.
    bool sameRows = !spec.tables.empty();
    for (const TrainableTable &table : spec.tables)
      sameRows = sameRows && table.rows == spec.tables[0].rows;
    if (!sameRows)
      throw Error("the bundle trains " + std::to_string(spec.tables.size()) +
                  " sparse tables of different sizes; give --hash-buckets "
                  "H (each of the 26 sparse fields is hashed into ids [0, "
                  "H))");
    buckets = spec.tables[0].rows / kNumSparse;
    if (buckets < 2)
      throw Error("sparse table '" + spec.tables[0].name + "' has " +
                  std::to_string(spec.tables[0].rows) +
                  " rows, fewer than 2 per sparse field; give "
                  "--hash-buckets H");
  } else if (buckets < 2) {
    throw Error("--hash-buckets must be at least 2");
  }
  options.tableSizes.assign(kNumSparse, buckets);
  return options;
}

CriteoBatchSource::CriteoBatchSource(const Bundle &bundle, CtrInputs layout,
                                     std::string path, ReaderOptions options,
                                     std::string flag)
    : bundle(bundle), layout(layout), path(std::move(path)),
      options(std::move(options)), flag(std::move(flag)),
      reader(namingFlag(this->flag, [&] {
        return std::make_unique<CriteoReader>(this->path, this->options);
      })) {}

CriteoBatchSource::~CriteoBatchSource() = default;

int64_t CriteoBatchSource::next(int64_t rows, std::vector<HostTensor> &inputs) {
  int64_t count =
      namingFlag(flag, [&] { return reader->nextBatch(batch, rows); });
  shapeInputs(bundle.inputs(), count, inputs);
  if (layout.dense >= 0)
    std::memcpy(inputs[layout.dense].data.data(), batch.dense.data(),
                count * kNumDense * sizeof(float));
  if (layout.sparse >= 0)
    std::memcpy(inputs[layout.sparse].data.data(), batch.sparse.data(),
                count * kNumSparse * sizeof(int64_t));
  if (layout.label >= 0) {
    HostTensor &label = inputs[layout.label];
    if (label.dtype == DType::F32) {
      std::memcpy(label.data.data(), batch.labels.data(),
                  count * sizeof(float));
    } else {
      auto *ids = reinterpret_cast<int64_t *>(label.data.data());
      for (int64_t i = 0; i < count; ++i)
        ids[i] = batch.labels[i] > 0.5f ? 1 : 0;
    }
  }
  return count;
}

std::string CriteoBatchSource::position() const {
  return reader->position().toString() + " head=" + reader->head();
}

void CriteoBatchSource::seek(const std::string &position) {
  // Positions written before 2026-12-02 have no head.
  std::string offsets = position;
  if (const size_t at = position.rfind(" head="); at != std::string::npos) {
    offsets = position.substr(0, at);
    const std::string written = position.substr(at + 6);
    if (written != reader->head())
      throw Error("the data position " + position +
                  " was taken in another file than '" + path +
                  "': its first 64 KiB differ (head=" + reader->head() +
                  " now); resume on the data the checkpoint read, or start "
                  "a new run");
  }
  DataPosition parsed;
  try {
    parsed = DataPosition::parse(offsets);
  } catch (const Error &) {
    throw Error("data position '" + position +
                "' is not a position in Criteo data ('" + path +
                "'); was the checkpoint written by a run on other data?");
  }
  namingFlag(flag, [&] { reader->seek(parsed); });
}

void CriteoBatchSource::restart() {
  // The file opened at the start, read again: opened anew by its name, one
  // deleted or replaced during training ended the run at its next
  // evaluation, or was evaluated on other data.
  namingFlag(flag, [&] { reader->rewind(); });
  reader->clearStats();
}

std::string CriteoBatchSource::describe() const { return "'" + path + "'"; }

std::string CriteoBatchSource::warning() const {
  const ReadStats &stats = reader->stats();
  // A file cut short inside its last field reads as a valid row with a
  // wrong id: only the missing newline tells.
  const std::string unterminated =
      stats.lastLineUnterminated
          ? "the last line of '" + path +
                "' has no newline (if the file was cut short, its last "
                "sample was read as it is)"
          : "";
  if (!stats.malformed)
    return unterminated;
  // Counted per read: a bad line is skipped again in every epoch.
  std::string text = std::to_string(stats.malformed) + " malformed line" +
                     (stats.malformed == 1 ? "" : "s") + " skipped in '" +
                     path + "'";
  if (reader->position().epoch > 0)
    text += " (a line counts once per pass over the file)";
  if (!stats.firstMalformed.empty())
    text += "; the first, " + data::describe(stats.firstMalformed.front());
  return unterminated.empty() ? text : text + "; " + unterminated;
}

} // namespace heterps::rt::data
