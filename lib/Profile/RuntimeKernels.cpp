//===- RuntimeKernels.cpp - The runtime kernel of an hpsrt op -------------===//

#include "RuntimeKernels.h"
#include "heterps/Dialect/HPSRT/IR/HPSRTOps.h"
#include "heterps/Runtime/CpuKernels.h"
#include "heterps/Target/LayerStage.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"

#include <optional>
#include <type_traits>

using namespace heterps::profile::detail;

RuntimeKernel::~RuntimeKernel() = default;

namespace {

// The generated code names the runtime's types as a stage program does.
using namespace heterps::rt;

/// A constructor argument or struct field of runtime type T from the
/// attribute the op holds it in.
template <typename T> T runtimeValue(mlir::Attribute attr);

template <> bool runtimeValue<bool>(mlir::Attribute attr) {
  return mlir::cast<mlir::BoolAttr>(attr).getValue();
}
template <> int64_t runtimeValue<int64_t>(mlir::Attribute attr) {
  return mlir::cast<mlir::IntegerAttr>(attr).getInt();
}
template <> float runtimeValue<float>(mlir::Attribute attr) {
  return float(mlir::cast<mlir::FloatAttr>(attr).getValueAsDouble());
}
template <> double runtimeValue<double>(mlir::Attribute attr) {
  return mlir::cast<mlir::FloatAttr>(attr).getValueAsDouble();
}
template <> Shape runtimeValue<Shape>(mlir::Attribute attr) {
  return Shape(mlir::cast<mlir::DenseI64ArrayAttr>(attr).asArrayRef());
}
template <>
std::vector<Shape> runtimeValue<std::vector<Shape>>(mlir::Attribute attr) {
  std::vector<Shape> shapes;
  for (mlir::Attribute shape : mlir::cast<mlir::ArrayAttr>(attr))
    shapes.push_back(runtimeValue<Shape>(shape));
  return shapes;
}
template <> DType runtimeValue<DType>(mlir::Attribute attr) {
  return parseDType(heterps::target::runtimeTypeName(
      mlir::cast<mlir::TypeAttr>(attr).getValue()));
}

/// A struct field from its attribute; an array field from an array
/// attribute, elements past it value-initialised as in an aggregate
/// initialiser (what a stage program's literal does).
template <typename T> void assignField(T &field, mlir::Attribute attr) {
  field = runtimeValue<T>(attr);
}
template <typename T, size_t N>
void assignField(T (&field)[N], mlir::Attribute attr) {
  auto array = mlir::cast<mlir::ArrayAttr>(attr);
  for (size_t i = 0; i != N; ++i)
    field[i] = i < array.size() ? runtimeValue<T>(array[i]) : T{};
}

template <typename Kernel, typename Run>
class BoundKernel final : public RuntimeKernel {
public:
  BoundKernel(std::unique_ptr<Kernel> kernel, Run runOn)
      : kernel(std::move(kernel)), runOn(std::move(runOn)) {}
  void run(Buffers operands, MutableBuffers results) override {
    runOn(*kernel, operands, results);
  }

private:
  std::unique_ptr<Kernel> kernel;
  Run runOn;
};

template <typename Kernel, typename Run>
std::unique_ptr<RuntimeKernel> bindKernel(std::unique_ptr<Kernel> kernel,
                                          Run runOn) {
  return std::make_unique<BoundKernel<Kernel, Run>>(std::move(kernel),
                                                    std::move(runOn));
}

/// The pointer of a non-variadic operand or result at ODS position `at`
/// (start, length): null when an optional one is absent.
template <typename Pointer>
Pointer pointerAt(llvm::ArrayRef<Pointer> buffers,
                  std::pair<unsigned, unsigned> at) {
  return at.second ? buffers[at.first] : nullptr;
}

#include "heterps/Dialect/HPSRT/IR/KernelFactory.inc"

} // namespace

std::unique_ptr<RuntimeKernel>
heterps::profile::detail::buildRuntimeKernel(mlir::Operation *op,
                                             cpu::Context &ctx) {
  return buildKernel(op, ctx);
}
