//===- DataMovement.cpp - Copies, concat, gathers and embedding lookups ---===//
//
// Layout ops are timed as oneDNN reorders of the bytes they move; gathers,
// scatters and embedding lookups as the plain C++ loops the runtime runs, on
// the same OpenMP threads as oneDNN.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "heterps/Dialect/HPS/IR/HPSOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cstring>
#include <memory>
#include <numeric>
#include <random>

using namespace mlir;
using namespace heterps::hps;
using namespace heterps::profile::detail;

namespace {

int64_t product(const Dims &dims, size_t begin, size_t end) {
  int64_t result = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i)
    result *= dims[i];
  return result;
}

/// Copies the whole of `type`'s bytes (reshape and friends).
void addCopy(Type type, KernelBuilder &b) {
  ByteView view = b.bytes(type);
  Dims flat = {product(view.dims, 0, view.dims.size())};
  b.addReorder(KernelBuilder::plain(flat, view.type),
               KernelBuilder::plain(flat, view.type));
}

void buildTranspose(TransposeOp transpose, KernelBuilder &b) {
  ByteView in = b.bytes(transpose.getInput().getType());
  ByteView out = b.bytes(transpose.getResult().getType());
  Dims inStrides = stridesOf(in.dims);
  SmallVector<int64_t> perm(transpose.getPerm());
  for (size_t i = perm.size(); i < in.dims.size(); ++i)
    perm.push_back(i); // The byte view's extra inner dim stays put.
  if (perm.size() != out.dims.size())
    throw Unsupported{"transpose permutation does not match the rank"};
  Dims viewStrides(perm.size());
  for (size_t i = 0; i != perm.size(); ++i)
    viewStrides[i] = inStrides[perm[i]];
  b.addReorder(dnnl::memory::desc(out.dims, in.type, viewStrides),
               KernelBuilder::plain(out.dims, out.type));
}

void buildSlice(SliceOp slice, KernelBuilder &b) {
  ByteView in = b.bytes(slice.getInput().getType());
  ByteView out = b.bytes(slice.getResult().getType());
  auto rank = static_cast<int64_t>(
      cast<RankedTensorType>(slice.getInput().getType()).getRank());
  Dims strides = stridesOf(in.dims);
  ArrayRef<int64_t> axes = slice.getAxes(), steps = slice.getSteps();
  for (size_t i = 0; i != slice.getStarts().size(); ++i) {
    int64_t axis = i < axes.size() ? normAxis(axes[i], rank) : int64_t(i);
    int64_t step = i < steps.size() ? steps[i] : 1;
    strides[axis] *= std::max<int64_t>(1, std::abs(step));
  }
  // The start offset does not change the cost; the view starts at 0.
  b.addReorder(dnnl::memory::desc(out.dims, in.type, strides),
               KernelBuilder::plain(out.dims, out.type));
}

void buildSplit(SplitOp split, KernelBuilder &b) {
  ByteView in = b.bytes(split.getInput().getType());
  Dims strides = stridesOf(in.dims);
  for (Value piece : split.getResults()) {
    ByteView out = b.bytes(piece.getType());
    b.addReorder(dnnl::memory::desc(out.dims, in.type, strides),
                 KernelBuilder::plain(out.dims, out.type));
  }
}

void buildPad(PadOp pad, KernelBuilder &b) {
  ByteView in = b.bytes(pad.getInput().getType());
  ByteView out = b.bytes(pad.getResult().getType());
  Dims region(in.dims.size());
  for (size_t i = 0; i != region.size(); ++i)
    region[i] = std::min(in.dims[i], out.dims[i]);
  b.addReorder(dnnl::memory::desc(region, in.type, stridesOf(in.dims)),
               dnnl::memory::desc(region, out.type, stridesOf(out.dims)));
  b.note("timed as copying the kept region into the result");
}

void buildConcat(ConcatOp concat, KernelBuilder &b) {
  ByteView out = b.bytes(concat.getResult().getType());
  int axis =
      normAxis(concat.getAxis(),
               cast<RankedTensorType>(concat.getResult().getType()).getRank());
  std::vector<dnnl::memory::desc> sources;
  for (Value input : concat.getInputs()) {
    ByteView in = b.bytes(input.getType());
    sources.push_back(KernelBuilder::plain(in.dims, out.type));
  }
  dnnl::concat::primitive_desc pd(KernelBuilder::plain(out.dims, out.type),
                                  axis, sources, b.getEngine());
  b.add(pd, dnnl::concat(pd), static_cast<int>(sources.size()));
}

void buildCast(CastOp cast, KernelBuilder &b) {
  Type from = cast.getInput().getType(), to = cast.getResult().getType();
  try {
    b.addReorder(b.plain(from), b.plain(to));
  } catch (const Unsupported &) {
    // i64 / f64 sides: oneDNN cannot convert them; time moving the larger.
    addCopy(b.elementBytes(from) >= b.elementBytes(to) ? from : to, b);
    b.note("timed as a copy of its wider side");
  }
}

/// Random row ids in [0, rows), fixed seed so runs are repeatable.
std::shared_ptr<std::vector<int64_t>> randomIds(int64_t count, int64_t rows) {
  auto ids = std::make_shared<std::vector<int64_t>>(count);
  std::mt19937_64 random(42);
  std::uniform_int_distribution<int64_t> pick(0,
                                              std::max<int64_t>(rows, 1) - 1);
  for (int64_t &id : *ids)
    id = pick(random);
  return ids;
}

/// Rows of `rowBytes` the profiler allocates for a table of `rows`.
int64_t heldRows(int64_t rows, int64_t rowBytes, KernelBuilder &b,
                 const char *what) {
  int64_t limit =
      std::max<int64_t>(1, static_cast<int64_t>(b.tableByteLimit()) /
                               std::max<int64_t>(rowBytes, 1));
  if (rows <= limit)
    return rows;
  b.note(std::string(what) + " of " + std::to_string(rows) +
         " rows timed on its first " + std::to_string(limit));
  return limit;
}

void buildEmbedding(EmbeddingLookupOp lookup, KernelBuilder &b) {
  Type tableType = lookup.getTable().getType();
  Dims table = b.dims(tableType), ids = b.dims(lookup.getIds().getType());
  int64_t width = b.elementBytes(tableType);
  int64_t dim = product(table, 1, table.size());
  int64_t rowBytes = dim * width;
  int64_t rows = heldRows(table[0], rowBytes, b, "table");
  int64_t numIds = product(ids, 0, ids.size());
  bool pooled = lookup.getPooling() != EmbeddingPooling::None;
  int64_t bagSize = pooled ? std::max<int64_t>(ids.back(), 1) : 1;
  int64_t bags = numIds / bagSize;
  bool isFloat = cast<ShapedType>(tableType).getElementType().isF32();
  if (pooled && !isFloat)
    throw Unsupported{"pooled lookup of a non-f32 table"};

  // Filled so every page is really backed (untouched pages alias zero).
  auto data =
      std::make_shared<std::vector<float>>(rows * rowBytes / 4 + 1, 0.01f);
  auto out = std::make_shared<std::vector<float>>(bags * rowBytes / 4 + 1);
  auto idList = randomIds(numIds, rows);
  bool mean = lookup.getPooling() == EmbeddingPooling::Mean;
  b.addLoop([=] {
    const char *base = reinterpret_cast<const char *>(data->data());
    char *dst = reinterpret_cast<char *>(out->data());
    const int64_t *id = idList->data();
#pragma omp parallel for schedule(static)
    for (int64_t bag = 0; bag < bags; ++bag) {
      if (!pooled) {
        std::memcpy(dst + bag * rowBytes, base + id[bag] * rowBytes, rowBytes);
        continue;
      }
      float *sum = reinterpret_cast<float *>(dst + bag * rowBytes);
      std::fill(sum, sum + dim, 0.f);
      for (int64_t j = 0; j < bagSize; ++j) {
        const float *row = reinterpret_cast<const float *>(
            base + id[bag * bagSize + j] * rowBytes);
        for (int64_t k = 0; k < dim; ++k)
          sum[k] += row[k];
      }
      if (mean)
        for (int64_t k = 0; k < dim; ++k)
          sum[k] *= 1.f / bagSize;
    }
  });
}

/// The data of a gather or scatter as `outer` blocks of `rows` slices of
/// `sliceBytes`, the rows the profiler holds, and `numIds` indices.
struct IndexedSlices {
  int64_t outer, rows, sliceBytes, numIds;
};
IndexedSlices indexedSlices(Value dataValue, Value indicesValue,
                            int64_t axisValue, KernelBuilder &b) {
  Type dataType = dataValue.getType();
  Dims data = b.dims(dataType);
  int64_t axis = normAxis(axisValue, data.size());
  IndexedSlices s;
  s.outer = product(data, 0, axis);
  s.sliceBytes =
      product(data, axis + 1, data.size()) * b.elementBytes(dataType);
  s.rows = heldRows(data[axis], s.outer * s.sliceBytes, b, "data");
  Dims indices = b.dims(indicesValue.getType());
  s.numIds = product(indices, 0, indices.size());
  return s;
}

void buildGather(GatherOp gather, KernelBuilder &b) {
  IndexedSlices at =
      indexedSlices(gather.getData(), gather.getIndices(), gather.getAxis(), b);
  const int64_t outer = at.outer, rows = at.rows, sliceBytes = at.sliceBytes,
                numIds = at.numIds;
  auto source =
      std::make_shared<std::vector<char>>(outer * rows * sliceBytes, 1);
  auto out = std::make_shared<std::vector<char>>(outer * numIds * sliceBytes);
  auto idList = randomIds(numIds, rows);
  b.addLoop([=] {
    const char *base = source->data();
    char *dst = out->data();
    const int64_t *id = idList->data();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < outer * numIds; ++i) {
      int64_t o = i / numIds, j = i % numIds;
      std::memcpy(dst + i * sliceBytes, base + (o * rows + id[j]) * sliceBytes,
                  sliceBytes);
    }
  });
}

/// Timed as its two passes: copying data into the result, then writing each
/// update slice onto a random row (a reduction's read-modify-write costs
/// about what the copy of the slice does).
void buildScatter(ScatterOp scatter, KernelBuilder &b) {
  IndexedSlices at = indexedSlices(scatter.getData(), scatter.getIndices(),
                                   scatter.getAxis(), b);
  const int64_t outer = at.outer, rows = at.rows, sliceBytes = at.sliceBytes,
                numIds = at.numIds;
  auto source = std::make_shared<std::vector<char>>(outer * rows * sliceBytes);
  auto updates =
      std::make_shared<std::vector<char>>(outer * numIds * sliceBytes, 1);
  auto out = std::make_shared<std::vector<char>>(source->size());
  auto idList = randomIds(numIds, rows);
  b.addLoop([=] {
    std::memcpy(out->data(), source->data(), source->size());
    const int64_t *id = idList->data();
#pragma omp parallel for schedule(static)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < numIds; ++j)
        std::memcpy(out->data() + (o * rows + id[j]) * sliceBytes,
                    updates->data() + (o * numIds + j) * sliceBytes,
                    sliceBytes);
  });
}

} // namespace

bool heterps::profile::detail::buildDataMovement(Operation *op,
                                                 KernelBuilder &b) {
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>([&](Operation *) {
        return addCopy(op->getResult(0).getType(), b), true;
      })
      .Case([&](ExpandOp expand) {
        addCopy(expand.getResult().getType(), b);
        b.note("timed as writing its result");
        return true;
      })
      .Case([&](TransposeOp transpose) {
        return buildTranspose(transpose, b), true;
      })
      .Case([&](SliceOp slice) { return buildSlice(slice, b), true; })
      .Case([&](SplitOp split) { return buildSplit(split, b), true; })
      .Case([&](PadOp pad) { return buildPad(pad, b), true; })
      .Case([&](ConcatOp concat) { return buildConcat(concat, b), true; })
      .Case([&](CastOp cast) { return buildCast(cast, b), true; })
      .Case([&](GatherOp gather) { return buildGather(gather, b), true; })
      .Case([&](ScatterOp scatter) { return buildScatter(scatter, b), true; })
      .Case([&](EmbeddingLookupOp lookup) {
        return buildEmbedding(lookup, b), true;
      })
      .Case([&](ShapeOp) -> bool {
        throw Unsupported{"reads only the input's extents; nothing to time"};
      })
      .Default([](Operation *) { return false; });
}
