//===- LayerProfiler.cpp - Time hps layers on the local CPU ---------------===//

#include "heterps/Profile/LayerProfiler.h"
#include "Kernel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>

using namespace mlir;
using namespace heterps::profile;
using namespace heterps::profile::detail;

//===----------------------------------------------------------------------===//
// KernelBuilder
//===----------------------------------------------------------------------===//

Dims KernelBuilder::dims(Type type) const {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    throw Unsupported{"unranked tensor"};
  if (ranked.getRank() > DNNL_MAX_NDIMS)
    throw Unsupported{"rank above oneDNN's " + std::to_string(DNNL_MAX_NDIMS)};
  Dims result;
  for (int64_t dim : ranked.getShape())
    result.push_back(ShapedType::isDynamic(dim) ? batch : dim);
  if (result.empty())
    result.push_back(1);
  return result;
}

dt KernelBuilder::dataType(Type type) const {
  Type element = cast<ShapedType>(type).getElementType();
  if (element.isF32())
    return dt::f32;
  if (element.isF16())
    return dt::f16;
  if (element.isBF16())
    return dt::bf16;
  if (element.isInteger(1) || element.isUnsignedInteger(8))
    return dt::u8;
  if (element.isInteger(8))
    return dt::s8;
  if (element.isInteger(32))
    return dt::s32;
  std::string name;
  llvm::raw_string_ostream os(name);
  os << element;
  throw Unsupported{"oneDNN has no " + name + " element type"};
}

unsigned KernelBuilder::elementBytes(Type type) const {
  Type element = cast<ShapedType>(type).getElementType();
  return element.isIntOrFloat()
             ? std::max(1u, element.getIntOrFloatBitWidth() / 8)
             : 4;
}

ByteView KernelBuilder::bytes(Type type) const {
  Dims extents = dims(type);
  switch (elementBytes(type)) {
  case 1:
    return {dt::u8, extents};
  case 2:
    return {dt::f16, extents};
  case 4:
    return {dt::f32, extents};
  case 8:
    if (extents.size() == DNNL_MAX_NDIMS)
      throw Unsupported{"8-byte elements at oneDNN's maximum rank"};
    extents.push_back(2);
    return {dt::f32, extents};
  default:
    throw Unsupported{"element width " + std::to_string(elementBytes(type))};
  }
}

dnnl::memory::desc KernelBuilder::plain(const Dims &dims, dt type) {
  return dnnl::memory::desc(dims, type, stridesOf(dims));
}

dnnl::memory KernelBuilder::allocate(const dnnl::memory::desc &md) {
  dnnl::memory memory(md, engine);
  // Deterministic, finite contents: uninitialised floats could be NaNs or
  // denormals that run slower than real data.
  size_t size = md.get_size();
  void *data = memory.get_data_handle();
  if (md.data_type() == dt::f32) {
    auto *values = static_cast<float *>(data);
    std::fill(values, values + size / sizeof(float), 0.5f);
  } else {
    std::memset(data, 1, size);
  }
  return memory;
}

void KernelBuilder::add(const dnnl::primitive_desc_base &pd,
                        dnnl::primitive primitive, int numSources) {
  // oneDNN falls back to slow reference kernels for some shapes (reductions
  // over outer axes, prelu); say so, the time is real but may surprise.
  std::string impl = pd.impl_info_str();
  if (llvm::StringRef(impl).starts_with("ref"))
    note("oneDNN reference kernel");
  Kernel::Step step{std::move(primitive), {}};
  std::vector<int> args = {DNNL_ARG_SRC,     DNNL_ARG_SRC_1,    DNNL_ARG_SRC_2,
                           DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS,     DNNL_ARG_DST,
                           DNNL_ARG_MEAN,    DNNL_ARG_VARIANCE, DNNL_ARG_SCALE,
                           DNNL_ARG_SHIFT,   DNNL_ARG_WORKSPACE};
  for (int i = 0; i < numSources; ++i)
    args.push_back(DNNL_ARG_MULTIPLE_SRC + i);
  for (int arg : args) {
    dnnl::memory::desc md = pd.query_md(dnnl::query::exec_arg_md, arg);
    if (md.get_size() == 0)
      continue;
    step.args.emplace(arg, allocate(md));
  }
  kernel.steps.push_back(std::move(step));
}

void KernelBuilder::addReorder(const dnnl::memory::desc &src,
                               const dnnl::memory::desc &dst) {
  dnnl::memory from = allocate(src), to = allocate(dst);
  dnnl::reorder::primitive_desc pd(from, to);
  kernel.steps.push_back(
      {dnnl::reorder(pd), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}});
}

void KernelBuilder::note(const std::string &text) {
  if (!kernel.note.empty())
    kernel.note += "; ";
  kernel.note += text;
}

Dims heterps::profile::detail::spatial(ArrayRef<int64_t> values, size_t n,
                                       int64_t fallback) {
  if (values.size() == n)
    return Dims(values.begin(), values.end());
  return Dims(n, fallback);
}

WindowDims heterps::profile::detail::windowDims(ArrayRef<int64_t> dilations,
                                                ArrayRef<int64_t> pads,
                                                size_t n) {
  WindowDims window{spatial(dilations, n, 1), Dims(n, 0), Dims(n, 0)};
  for (int64_t &d : window.dilations)
    d -= 1;
  if (pads.size() == 2 * n) {
    window.padBegin.assign(pads.begin(), pads.begin() + n);
    window.padEnd.assign(pads.begin() + n, pads.end());
  }
  return window;
}

Dims heterps::profile::detail::stridesOf(const Dims &dims) {
  Dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;)
    strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
  return strides;
}

Dims heterps::profile::detail::padRank(const Dims &dims, size_t rank) {
  Dims padded(rank > dims.size() ? rank - dims.size() : 0, 1);
  padded.insert(padded.end(), dims.begin(), dims.end());
  return padded;
}

int64_t heterps::profile::detail::normAxis(int64_t axis, int64_t rank) {
  int64_t normalised = axis < 0 ? axis + rank : axis;
  if (normalised < 0 || normalised >= rank)
    throw Unsupported{"axis " + std::to_string(axis) + " out of range"};
  return normalised;
}

//===----------------------------------------------------------------------===//
// LayerProfiler
//===----------------------------------------------------------------------===//

struct LayerProfiler::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

LayerProfiler::LayerProfiler(ProfileOptions options) : opts(options) {
  if (opts.threads > 0)
    omp_set_num_threads(static_cast<int>(opts.threads));
  if (opts.repeats == 0)
    opts.repeats = 1;
}

LayerProfiler::~LayerProfiler() = default;

namespace {

llvm::Error failure(Operation *op, const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 op->getName().getStringRef() + ": " + what);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

} // namespace

llvm::Expected<LayerMeasurement> LayerProfiler::measure(Operation *layer) {
  // dnnl.hpp throws; nothing escapes this function.
  try {
    if (!impl)
      impl = std::make_unique<Impl>();
    KernelBuilder builder(impl->engine, opts.batch, opts.maxTableBytes);
    if (!buildDense(layer, builder) &&
        !buildPoolingNormalization(layer, builder) &&
        !buildElementwise(layer, builder) && !buildDataMovement(layer, builder))
      return LayerMeasurement{std::nullopt,
                              "no oneDNN counterpart for " +
                                  layer->getName().getStringRef().str()};
    Kernel kernel = builder.take();
    dnnl::stream &stream = impl->stream;
    auto run = [&] {
      for (Kernel::Step &step : kernel.steps)
        step.primitive.execute(stream, step.args);
      stream.wait();
      for (auto &loop : kernel.loops)
        loop();
    };
    run(); // Warm-up: JIT caches, page faults, first-touch.
    std::vector<double> times;
    for (unsigned r = 0; r != opts.repeats; ++r) {
      auto start = std::chrono::steady_clock::now();
      run();
      std::chrono::duration<double> elapsed =
          std::chrono::steady_clock::now() - start;
      times.push_back(elapsed.count());
    }
    return LayerMeasurement{median(std::move(times)), kernel.note};
  } catch (const Unsupported &skip) {
    return LayerMeasurement{std::nullopt, skip.reason};
  } catch (const dnnl::error &error) {
    return failure(layer, llvm::Twine("oneDNN failed: ") + error.what() +
                              " (status " + llvm::Twine(int(error.status)) +
                              ")");
  } catch (const std::bad_alloc &) {
    return failure(layer, "out of memory while allocating its tensors");
  }
}
