//===- KernelCalls.cpp - Kernel calls of hpsrt ops ------------------------===//

#include "KernelCalls.h"
#include "heterps/Dialect/HPSRT/IR/HPSRTOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace heterps::hpsrt;

std::string heterps::target::dtypeName(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (auto integer = dyn_cast<IntegerType>(type)) {
    if (integer.getWidth() == 1)
      return "bool";
    if (llvm::is_contained({8u, 16u, 32u, 64u}, integer.getWidth()))
      return (integer.isUnsigned() ? "u" : "i") +
             std::to_string(integer.getWidth());
  }
  return "";
}

std::string heterps::target::dtypeEnum(Type type) {
  std::string name = dtypeName(type);
  if (name == "bool")
    return "DType::Bool";
  return "DType::" + llvm::StringRef(name).upper();
}

std::string heterps::target::doubleLiteral(double value) {
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<double>::infinity()"
                     : "-std::numeric_limits<double>::infinity()";
  if (std::isnan(value))
    return "std::numeric_limits<double>::quiet_NaN()";
  return llvm::formatv("{0:e9}", value).str();
}

namespace {

using heterps::target::KernelCall;
using heterps::target::RunArgument;

std::string enumLiteral(StringRef enumName, StringRef enumerator) {
  return (enumName + "::" + enumerator).str();
}

llvm::SmallVector<Value> valuesOf(Value value) {
  if (!value)
    return {};
  return {value};
}
llvm::SmallVector<Value> valuesOf(ValueRange values) {
  return llvm::to_vector(values);
}

std::string listLiteral(StringRef type, ArrayRef<int64_t> values) {
  return (type + "{" +
          llvm::join(llvm::map_range(
                         values, [](int64_t v) { return std::to_string(v); }),
                     ", ") +
          "}")
      .str();
}

std::optional<std::string> structAttributeLiteral(Attribute attr);
std::optional<std::string> enumAttributeLiteral(Attribute attr);

/// A C++ literal of a parameter attribute, a struct's field or an element of
/// one (RecurrentParams's activations).
std::string attributeLiteral(Attribute attr) {
  if (auto boolean = dyn_cast<BoolAttr>(attr))
    return boolean.getValue() ? "true" : "false";
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return std::to_string(integer.getInt());
  if (auto number = dyn_cast<FloatAttr>(attr)) {
    std::string text =
        heterps::target::doubleLiteral(number.getValueAsDouble());
    // A float parameter takes a float literal (finite ones only: the others
    // are double expressions that convert exactly).
    if (number.getType().isF32() && std::isfinite(number.getValueAsDouble()))
      text += "f";
    return text;
  }
  if (auto type = dyn_cast<TypeAttr>(attr))
    return heterps::target::dtypeEnum(type.getValue());
  if (auto array = dyn_cast<ArrayAttr>(attr))
    return "{" +
           llvm::join(llvm::map_range(array.getValue(), attributeLiteral),
                      ", ") +
           "}";
  if (std::optional<std::string> text = enumAttributeLiteral(attr))
    return *text;
  if (std::optional<std::string> text = structAttributeLiteral(attr))
    return *text;
  llvm::report_fatal_error("hpsrt: no C++ literal for a parameter attribute");
}

/// `{fields...}`, without the trailing ones at their `defaults` (an empty
/// list: no defaults known).
std::string fieldsLiteral(std::vector<std::string> fields,
                          const std::vector<std::string> &defaults) {
  if (defaults.size() == fields.size())
    while (!fields.empty() && fields.back() == defaults[fields.size() - 1])
      fields.pop_back();
  return "{" + llvm::join(fields, ", ") + "}";
}

/// A constructor argument of runtime type `runtimeType`.
std::string parameterLiteral(Attribute attr, StringRef runtimeType) {
  if (!attr)
    return "nullptr"; // an absent optional
  if (auto array = dyn_cast<DenseI64ArrayAttr>(attr)) {
    if (runtimeType == "const Shape *")
      return "addressOf(" + listLiteral("Shape", array.asArrayRef()) + ")";
    if (runtimeType == "const Shape &")
      return listLiteral("Shape", array.asArrayRef());
    return listLiteral("std::vector<int64_t>", array.asArrayRef());
  }
  if (runtimeType == "const std::vector<Shape> &") {
    std::string text = "std::vector<Shape>{";
    for (auto [i, shape] : llvm::enumerate(cast<ArrayAttr>(attr)))
      text += (i ? ", " : "") +
              listLiteral("Shape", cast<DenseI64ArrayAttr>(shape).asArrayRef());
    return text + "}";
  }
  return attributeLiteral(attr);
}

#include "heterps/Dialect/HPSRT/IR/KernelCalls.inc"

} // namespace

std::optional<KernelCall> heterps::target::describeKernelCall(Operation *op) {
  return ::describeKernelCall(op);
}

bool heterps::target::isKernelOp(Operation *op) { return ::isKernelOp(op); }
