//===- LayerProfiler.cpp - Time hps layers on the local CPU ---------------===//

#include "heterps/Profile/LayerProfiler.h"
#include "RuntimeKernels.h"
#include "heterps/Runtime/CpuKernels.h"
#include "heterps/Target/LayerStage.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <random>

using namespace mlir;
using namespace heterps;
using namespace heterps::profile;
using namespace heterps::profile::detail;

struct LayerProfiler::Impl {
  explicit Impl(unsigned threads) : context(int(threads)) {}
  rt::cpu::Context context;
};

LayerProfiler::LayerProfiler(ProfileOptions options) : opts(options) {
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

/// Context memory released with it.
struct Allocation {
  rt::cpu::Context &context;
  char *data;
  Allocation(rt::cpu::Context &context, uint64_t bytes)
      : context(context), data(static_cast<char *>(
                              context.allocate(std::max<uint64_t>(bytes, 1)))) {
  }
  ~Allocation() { context.deallocate(data); }
  Allocation(const Allocation &) = delete;
  Allocation &operator=(const Allocation &) = delete;
};

/// Deterministic, finite contents for a stage argument: floats 0.5
/// (uninitialised ones could be NaNs or denormals, slower than real data),
/// indices uniform over the extent they index, other integers 1.
void fillArgument(char *data, RankedTensorType type,
                  std::optional<int64_t> indexExtent, std::mt19937_64 &random) {
  Type element = type.getElementType();
  int64_t count = type.getNumElements();
  if (element.isF32()) {
    std::fill_n(reinterpret_cast<float *>(data), count, 0.5f);
    return;
  }
  uint64_t width = target::tensorBytes(type) / std::max<int64_t>(count, 1);
  if (!element.isInteger() || width > sizeof(int64_t)) {
    std::memset(data, 0, target::tensorBytes(type));
    return;
  }
  std::uniform_int_distribution<int64_t> index(
      0, std::max<int64_t>(indexExtent.value_or(2) - 1, 0));
  for (int64_t i = 0; i != count; ++i) {
    int64_t value = indexExtent ? index(random) : 1;
    std::memcpy(data + i * width, &value, width); // little-endian
  }
}

/// One kernel of the stage with the pointers it runs on.
struct KernelStep {
  std::unique_ptr<RuntimeKernel> kernel;
  std::vector<const void *> operands;
  std::vector<void *> results;
};

} // namespace

llvm::Expected<LayerMeasurement> LayerProfiler::measure(Operation *layer) {
  target::LayerStageOptions stageOptions;
  stageOptions.batch = opts.batch;
  stageOptions.training = opts.training;
  stageOptions.maxTableBytes = opts.maxTableBytes;
  llvm::Expected<target::LayerStage> prepared =
      target::prepareLayerStage(layer, stageOptions);
  if (!prepared)
    return LayerMeasurement{std::nullopt, toString(prepared.takeError())};
  target::LayerStage &stage = *prepared;
  // The runtime reports errors by throwing; nothing escapes this function.
  try {
    if (!impl)
      impl = std::make_unique<Impl>(opts.threads);
    rt::cpu::Context &context = impl->context;
    context.enterThread();
    Allocation arena(context, stage.arenaBytes);
    Allocation weights(context, stage.weights.size());
    std::memcpy(weights.data, stage.weights.data(), stage.weights.size());
    std::vector<std::unique_ptr<Allocation>> arguments;
    std::mt19937_64 random(7);
    for (auto [argument, extent] :
         llvm::zip(stage.stage.getArguments(), stage.indexExtents)) {
      auto type = cast<RankedTensorType>(argument.getType());
      arguments.push_back(
          std::make_unique<Allocation>(context, target::tensorBytes(type)));
      fillArgument(arguments.back()->data, type, extent, random);
    }
    auto pointer = [&](Value value) -> char * {
      target::StageSlot slot = stage.slotOf(value);
      switch (slot.kind) {
      case target::StageSlot::Kind::Argument:
        return arguments[slot.argument]->data;
      case target::StageSlot::Kind::Arena:
        return arena.data + slot.offset;
      case target::StageSlot::Kind::Weights:
        return weights.data + slot.offset;
      case target::StageSlot::Kind::None:
        break;
      }
      return nullptr;
    };

    std::vector<KernelStep> steps;
    for (Operation &op : stage.stage.getBody().front()) {
      std::unique_ptr<RuntimeKernel> kernel = buildRuntimeKernel(&op, context);
      if (!kernel)
        continue; // weights, views and the return run no kernel
      KernelStep step{std::move(kernel), {}, {}};
      for (Value operand : op.getOperands())
        step.operands.push_back(pointer(operand));
      for (Value result : op.getResults())
        step.results.push_back(pointer(result));
      steps.push_back(std::move(step));
    }
    auto run = [&] {
      for (KernelStep &step : steps)
        step.kernel->run(step.operands, step.results);
      context.synchronize();
    };
    if (steps.empty())
      return LayerMeasurement{0.0, "a view: runs no kernel"};
    run(); // Warm-up: JIT caches, page faults, first-touch, prepacking.
    std::vector<double> times;
    for (unsigned r = 0; r != opts.repeats; ++r) {
      auto start = std::chrono::steady_clock::now();
      run();
      std::chrono::duration<double> elapsed =
          std::chrono::steady_clock::now() - start;
      times.push_back(elapsed.count());
    }
    return LayerMeasurement{median(std::move(times)), ""};
  } catch (const rt::Error &error) {
    return failure(layer,
                   llvm::Twine("the runtime's kernel failed: ") + error.what());
  } catch (const std::bad_alloc &) {
    return failure(layer, "out of memory while allocating its tensors");
  }
}
