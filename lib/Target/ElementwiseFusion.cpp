//===- ElementwiseFusion.cpp - Fused elementwise loops of a stage ---------===//
//
// Grouping and the loop bodies. A loop body computes each member with the
// runtime's own scalar functions (heterps/Runtime/ScalarOps.h), so a fused
// chain gives the bits the kernels it replaces give. The iteration space is
// the storage order of the group's shape (channel-blocked when native),
// with dims that every operand walks alike merged, so that the innermost
// loop is contiguous or constant for every operand and vectorises.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseFusion.h"
#include "RuntimeKinds.h"
#include "WeightsFile.h"

#include "heterps/Dialect/HPS/IR/HPSOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace heterps::hps;

namespace heterps::target {

std::string cppElementType(Type type) {
  if (type.isF32())
    return "float";
  if (type.isF64())
    return "double";
  if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    if (width == 1)
      return "uint8_t";
    if (width == 8 || width == 16 || width == 32 || width == 64)
      return (integer.isUnsigned() ? "uint" : "int") + std::to_string(width) +
             "_t";
  }
  return "";
}

namespace {

Type elementTypeOf(Value value) {
  return getElementTypeOrSelf(value.getType());
}

bool isBool(Type type) { return type.isInteger(1); }
bool isFloatType(Type type) { return type.isF32() || type.isF64(); }

/// The exact unary kinds (CPU: the kernels' own scalar loop or a oneDNN
/// primitive computing the same bits) the element type supports.
bool fusibleUnary(Operation *op, Type type) {
  if (isBool(type))
    return isa<NotOp>(op);
  if (isa<ReluOp, AbsOp, NegOp, SignOp, ClipOp>(op))
    return true;
  // Not HardSigmoid: its alpha * x + beta may be one FMA in a kernel and
  // two roundings in a loop built without contraction.
  return isFloatType(type) &&
         isa<LeakyReluOp, FloorOp, CeilOp, RoundOp, SqrtOp, ReciprocalOp,
             ThresholdedReluOp, SoftsignOp>(op);
}

/// The runtime's BinaryKind of a fusible binary op, or "".
StringRef fusibleBinary(Operation *op, Type type) {
  StringRef kind = runtimeBinaryKind(op);
  bool logical = kind == "And" || kind == "Or" || kind == "Xor";
  bool comparison =
      isa<EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp>(op);
  if (kind.empty() || kind == "Pow" || (logical != isBool(type) && !comparison))
    return "";
  return kind;
}

/// Right-aligned numpy broadcasting of `operand` to `result`.
bool broadcastsTo(ArrayRef<int64_t> operand, ArrayRef<int64_t> result) {
  if (operand.size() > result.size())
    return false;
  size_t offset = result.size() - operand.size();
  for (auto [i, extent] : llvm::enumerate(operand))
    if (extent != 1 && extent != result[offset + i])
      return false;
  return true;
}

/// A clip bound as the runtime's boundTo gives it for an integer type:
/// saturated, NaN as 0.
std::string integerBound(double value, IntegerType type) {
  unsigned width = type.getWidth();
  std::string cpp = cppElementType(type);
  if (type.isUnsigned()) {
    uint64_t highest = width == 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
    uint64_t bound = std::isnan(value) || value <= 0 ? 0
                     : value >= double(highest)      ? highest
                                                     : uint64_t(value);
    return unsignedLiteral(bound, cpp);
  }
  int64_t lowest = width == 64 ? std::numeric_limits<int64_t>::min()
                               : -(int64_t(1) << (width - 1));
  int64_t highest = width == 64 ? std::numeric_limits<int64_t>::max()
                                : (int64_t(1) << (width - 1)) - 1;
  int64_t bound = std::isnan(value)          ? 0
                  : value <= double(lowest)  ? lowest
                  : value >= double(highest) ? highest
                                             : int64_t(value);
  return signedLiteral(bound, cpp);
}

/// Clip as the runtime's unaryOp computes it (NaN passes through), with an
/// open or infinite side left out.
std::string clipExpression(ClipOp clip, StringRef x, Type type) {
  std::string cpp = cppElementType(type);
  std::string expression = x.str();
  auto bound = [&](std::optional<APFloat> value) -> std::optional<std::string> {
    if (!value)
      return std::nullopt;
    double v = value->convertToDouble();
    if (auto integer = dyn_cast<IntegerType>(type))
      return integerBound(v, integer);
    if (!std::isfinite(v))
      return std::nullopt;
    return floatLiteral(v, cpp);
  };
  if (std::optional<std::string> lo = bound(clip.getMin()))
    expression =
        llvm::formatv("scalar::clipLow<{0}>({1}, {2})", cpp, expression, *lo)
            .str();
  if (std::optional<std::string> hi = bound(clip.getMax()))
    expression =
        llvm::formatv("scalar::clipHigh<{0}>({1}, {2})", cpp, expression, *hi)
            .str();
  return expression;
}

/// Whether `value` comes from a clip to bounds within int32's range (as the
/// QuantizeLinear saturation before its cast is).
bool clippedToInt32(Value value) {
  auto clip = value.getDefiningOp<ClipOp>();
  auto within = [](std::optional<APFloat> bound) {
    if (!bound)
      return false;
    double v = bound->convertToDouble();
    return v >= double(std::numeric_limits<int32_t>::min()) &&
           v <= double(std::numeric_limits<int32_t>::max());
  };
  return clip && within(clip.getMin()) && within(clip.getMax());
}

/// The expression of a unary member on `x`.
std::string unaryExpression(Operation *op, StringRef x, Type type) {
  std::string cpp = cppElementType(type);
  if (auto clip = dyn_cast<ClipOp>(op))
    return clipExpression(clip, x, type);
  // Parameters reach the kernels as float, converted to the compute type.
  auto args = [&](double alpha, double beta) {
    return llvm::formatv("scalar::UnaryArgs<{0}>{{{1}, {2}, {0}(0), {0}(0)}",
                         cpp, floatLiteral(float(alpha), cpp),
                         floatLiteral(float(beta), cpp))
        .str();
  };
  std::string params = "scalar::UnaryArgs<" + cpp + ">{}";
  StringRef kind = llvm::TypeSwitch<Operation *, StringRef>(op)
                       .Case([](ReluOp) { return "Relu"; })
                       .Case([](AbsOp) { return "Abs"; })
                       .Case([](NegOp) { return "Neg"; })
                       .Case([](SignOp) { return "Sign"; })
                       .Case([](NotOp) { return "Not"; })
                       .Case([](FloorOp) { return "Floor"; })
                       .Case([](CeilOp) { return "Ceil"; })
                       .Case([](RoundOp) { return "Round"; })
                       .Case([](SqrtOp) { return "Sqrt"; })
                       .Case([](ReciprocalOp) { return "Reciprocal"; })
                       .Case([](SoftsignOp) { return "Softsign"; })
                       .Case([&](LeakyReluOp o) {
                         params = args(o.getAlpha().convertToDouble(), 0);
                         return "LeakyRelu";
                       })
                       .Case([&](ThresholdedReluOp o) {
                         params = args(o.getAlpha().convertToDouble(), 0);
                         return "ThresholdedRelu";
                       })
                       .Default([](Operation *) { return ""; });
  return llvm::formatv("scalar::unaryOp<UnaryKind::{0}, {1}>({2}, {3})", kind,
                       cpp, x, params)
      .str();
}

/// One dim of the iteration space: its extent and each slot's stride.
struct LoopDim {
  int64_t extent;
  SmallVector<int64_t> strides;
};

/// The storage-order dims of `shape` with each slot's element stride in it.
/// Full-shape slots share the group's layout; the others are plain and
/// broadcast (stride 0 along their unit dims).
SmallVector<LoopDim> iterationSpace(ArrayRef<int64_t> shape,
                                    ArrayRef<SmallVector<int64_t>> slotShapes,
                                    bool nativeLayout, int64_t block) {
  size_t rank = shape.size();
  // Physical dims: (extent, logical axis, multiplier of that axis' index).
  struct Physical {
    int64_t extent;
    size_t axis;
    int64_t multiplier;
  };
  SmallVector<Physical> physical;
  for (size_t d = 0; d < rank; ++d) {
    if (nativeLayout && d == 1)
      physical.push_back({shape[1] / block, 1, block});
    else
      physical.push_back({shape[d], d, 1});
  }
  if (nativeLayout)
    physical.push_back({block, 1, 1});

  SmallVector<LoopDim> dims(physical.size());
  for (auto [p, dim] : llvm::enumerate(dims))
    dim.extent = physical[p].extent;
  for (ArrayRef<int64_t> slot : slotShapes) {
    bool full = slot == shape;
    // Logical row-major strides of the slot, right-aligned, 0 where it
    // broadcasts.
    SmallVector<int64_t> logical(rank, 0);
    int64_t stride = 1;
    for (size_t k = slot.size(); k-- > 0;) {
      size_t d = rank - slot.size() + k;
      logical[d] = slot[k] == 1 ? 0 : stride;
      stride *= slot[k];
    }
    int64_t running = 1;
    SmallVector<int64_t> strides(physical.size());
    for (size_t p = physical.size(); p-- > 0;) {
      strides[p] =
          full ? running : logical[physical[p].axis] * physical[p].multiplier;
      running *= physical[p].extent;
    }
    for (auto [p, dim] : llvm::enumerate(dims))
      dim.strides.push_back(strides[p]);
  }

  // Unit dims go; neighbours every slot walks as one dim merge.
  SmallVector<LoopDim> merged;
  for (LoopDim &dim : dims) {
    if (dim.extent == 1)
      continue;
    if (!merged.empty()) {
      LoopDim &outer = merged.back();
      bool contiguous = true;
      for (size_t s = 0; s < dim.strides.size(); ++s)
        contiguous &= outer.strides[s] == dim.strides[s] * dim.extent;
      if (contiguous) {
        outer.extent *= dim.extent;
        outer.strides = dim.strides;
        continue;
      }
    }
    merged.push_back(dim);
  }
  if (merged.empty())
    merged.push_back({1, SmallVector<int64_t>(slotShapes.size(), 0)});
  return merged;
}

} // namespace

StringRef runtimeBinaryKind(Operation *op) {
  return llvm::TypeSwitch<Operation *, StringRef>(op)
      .Case([](AddOp) { return "Add"; })
      .Case([](SubOp) { return "Sub"; })
      .Case([](MulOp) { return "Mul"; })
      .Case([](DivOp) { return "Div"; })
      .Case([](PowOp) { return "Pow"; })
      .Case([](MaxOp) { return "Max"; })
      .Case([](MinOp) { return "Min"; })
      .Case([](ModOp m) { return m.getFmod() ? "FMod" : "Mod"; })
      .Case([](PReluOp) { return "PRelu"; })
      // Logical on i1, bitwise on wider integers.
      .Case([](AndOp o) {
        return isBool(getElementTypeOrSelf(o.getType())) ? "And" : "BitAnd";
      })
      .Case([](OrOp o) {
        return isBool(getElementTypeOrSelf(o.getType())) ? "Or" : "BitOr";
      })
      .Case([](XorOp o) {
        return isBool(getElementTypeOrSelf(o.getType())) ? "Xor" : "BitXor";
      })
      .Case([](EqualOp) { return "Equal"; })
      .Case([](LessOp) { return "Less"; })
      .Case([](LessEqualOp) { return "LessEqual"; })
      .Case([](GreaterOp) { return "Greater"; })
      .Case([](GreaterEqualOp) { return "GreaterEqual"; })
      .Default([](Operation *) { return ""; });
}

std::string floatLiteral(double value, StringRef cpp) {
  char text[64];
  std::snprintf(text, sizeof(text), "%a", value);
  return (cpp + "(" + text + ")").str();
}

std::string signedLiteral(int64_t value, StringRef cpp) {
  // -2^63 has no literal of its own.
  if (value == std::numeric_limits<int64_t>::min())
    return (cpp + "(-9223372036854775807LL - 1)").str();
  return llvm::formatv("{0}({1}LL)", cpp, value).str();
}

std::string unsignedLiteral(uint64_t value, StringRef cpp) {
  return llvm::formatv("{0}({1}ULL)", cpp, value).str();
}

bool isFusibleElementwise(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0)
    return false;
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!result || !result.hasStaticShape() || result.getNumElements() == 0 ||
      cppElementType(result.getElementType()).empty())
    return false;
  for (Type operand : op->getOperandTypes()) {
    auto ranked = dyn_cast<RankedTensorType>(operand);
    if (!ranked || !ranked.hasStaticShape() ||
        cppElementType(ranked.getElementType()).empty() ||
        !broadcastsTo(ranked.getShape(), result.getShape()))
      return false;
  }
  Type type = result.getElementType();
  if (op->getNumOperands() == 1 && !isa<CastOp>(op))
    return elementTypeOf(op->getOperand(0)) == type && fusibleUnary(op, type);
  if (auto where = dyn_cast<WhereOp>(op))
    return isBool(elementTypeOf(where.getCondition())) &&
           elementTypeOf(where.getX()) == type &&
           elementTypeOf(where.getY()) == type;
  if (auto cast = dyn_cast<CastOp>(op))
    return elementTypeOf(cast.getInput()) != type;
  if (op->getNumOperands() != 2)
    return false;
  Type operandType = elementTypeOf(op->getOperand(0));
  if (elementTypeOf(op->getOperand(1)) != operandType)
    return false;
  StringRef kind = fusibleBinary(op, operandType);
  if (kind.empty())
    return false;
  bool comparison =
      isa<EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp>(op);
  return comparison ? isBool(type) : type == operandType;
}

std::vector<ElementGroup>
formElementGroups(Block &block, llvm::function_ref<bool(Operation *)> exclude) {
  std::vector<ElementGroup> groups;
  llvm::DenseMap<Operation *, size_t> groupOf;
  // Whether `op` can run where `group`'s members run: every outside reader
  // of a member comes after it.
  auto canJoin = [&](size_t index, Operation *op) {
    // A group runs whole or not at all, and an evaluating run skips the
    // backward ops (hps.backward), so forward and backward never share one.
    if (isBackward(groups[index].ops.front()) != isBackward(op))
      return false;
    for (Operation *member : groups[index].ops)
      for (Operation *user : member->getUsers()) {
        if (user == op)
          continue;
        auto found = groupOf.find(user);
        if (found != groupOf.end() && found->second == index)
          continue;
        Operation *ancestor = block.findAncestorOpInBlock(*user);
        if (!ancestor || !op->isBeforeInBlock(ancestor))
          return false;
      }
    return true;
  };
  for (Operation &op : block) {
    if (exclude(&op) || !isFusibleElementwise(&op))
      continue;
    auto shape = cast<RankedTensorType>(op.getResult(0).getType()).getShape();
    // Every operand's group that can run here joins: an op reading two
    // chains (a residual add) merges them.
    std::optional<size_t> joined;
    for (Value operand : op.getOperands()) {
      Operation *producer = operand.getDefiningOp();
      auto found = producer ? groupOf.find(producer) : groupOf.end();
      if (found == groupOf.end() || found->second == joined ||
          ArrayRef<int64_t>(groups[found->second].shape) != shape ||
          !canJoin(found->second, &op))
        continue;
      if (!joined) {
        joined = found->second;
        continue;
      }
      size_t merged = found->second;
      for (Operation *member : groups[merged].ops)
        groupOf[member] = *joined;
      auto &ops = groups[*joined].ops;
      ops.append(groups[merged].ops.begin(), groups[merged].ops.end());
      llvm::sort(ops, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      groups[merged].ops.clear();
    }
    if (!joined) {
      joined = groups.size();
      groups.push_back({});
      groups.back().shape.assign(shape.begin(), shape.end());
    }
    groups[*joined].ops.push_back(&op);
    groupOf[&op] = *joined;
  }

  std::vector<ElementGroup> kept;
  for (size_t index = 0; index < groups.size(); ++index) {
    ElementGroup &group = groups[index];
    if (group.ops.size() < 2)
      continue;
    auto isMember = [&](Operation *op) {
      auto found = op ? groupOf.find(op) : groupOf.end();
      return found != groupOf.end() && found->second == index;
    };
    for (Operation *op : group.ops) {
      for (Value operand : op->getOperands())
        if (!isMember(operand.getDefiningOp()) &&
            !llvm::is_contained(group.inputs, operand))
          group.inputs.push_back(operand);
      Value result = op->getResult(0);
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return !isMember(user); }))
        group.outputs.push_back(result);
    }
    kept.push_back(std::move(group));
  }
  return kept;
}

std::string fusedLoopSource(
    const ElementGroup &group, StringRef name, bool nativeLayout,
    int64_t channelBlock,
    llvm::function_ref<std::optional<std::string>(Value)> literalOf) {
  // Slots: the inputs read through a pointer, then the outputs.
  llvm::DenseMap<Value, std::string> expressions;
  SmallVector<Value> slots;
  for (Value input : group.inputs) {
    if (std::optional<std::string> literal = literalOf(input))
      expressions[input] = *literal;
    else
      slots.push_back(input);
  }
  size_t firstOutput = slots.size();
  slots.append(group.outputs.begin(), group.outputs.end());
  SmallVector<SmallVector<int64_t>> slotShapes;
  for (Value slot : slots) {
    auto shape = cast<RankedTensorType>(slot.getType()).getShape();
    slotShapes.emplace_back(shape.begin(), shape.end());
  }
  SmallVector<LoopDim> dims =
      iterationSpace(group.shape, slotShapes, nativeLayout, channelBlock);
  int64_t rows = 1;
  for (const LoopDim &dim : ArrayRef(dims).drop_back())
    rows *= dim.extent;

  std::string members, body;
  // Row -> outer indices, innermost first.
  if (dims.size() == 2) {
    body += "    const int64_t i0 = row;\n";
  } else if (dims.size() > 2) {
    body += "    int64_t r = row;\n";
    for (size_t d = dims.size() - 2; d > 0; --d)
      body +=
          llvm::formatv("    const int64_t i{0} = r % {1};\n    r /= {1};\n", d,
                        dims[d].extent)
              .str();
    body += "    const int64_t i0 = r;\n";
  }
  auto offsetOf = [&](size_t slot) {
    std::string offset;
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t stride = dims[d].strides[slot];
      if (stride == 0)
        continue;
      std::string index = d + 1 == dims.size() ? "j" : "i" + std::to_string(d);
      offset += (offset.empty() ? "" : " + ") + index +
                (stride == 1 ? "" : " * " + std::to_string(stride));
    }
    return offset.empty() ? std::string("0") : offset;
  };
  for (size_t s = 0; s < firstOutput; ++s) {
    std::string cpp = cppElementType(elementTypeOf(slots[s]));
    members += llvm::formatv("  const void *p{0};\n", s).str();
    body += llvm::formatv(
                "    const {0} x{1} = static_cast<const {0} *>(p{1})[{2}];\n",
                cpp, s, offsetOf(s))
                .str();
    expressions[slots[s]] = "x" + std::to_string(s);
  }
  for (size_t n = 0; n < group.ops.size(); ++n) {
    Operation *op = group.ops[n];
    Value result = op->getResult(0);
    Type type = elementTypeOf(result);
    std::string cpp = cppElementType(type);
    auto operand = [&](unsigned i) {
      return expressions.lookup(op->getOperand(i));
    };
    std::string expression;
    if (auto where = dyn_cast<WhereOp>(op)) {
      expression = "(" + expressions.lookup(where.getCondition()) + " ? " +
                   expressions.lookup(where.getX()) + " : " +
                   expressions.lookup(where.getY()) + ")";
    } else if (auto cast = dyn_cast<CastOp>(op)) {
      Type from = elementTypeOf(cast.getInput());
      if (isBool(type))
        expression = "scalar::toBool(" + operand(0) + ")";
      else if (isFloatType(from) && isa<IntegerType>(type))
        expression = std::string(clippedToInt32(cast.getInput())
                                     ? "scalar::convertClipped<"
                                     : "scalar::convertValue<") +
                     cpp + ">(" + operand(0) + ")";
      else
        expression = cpp + "(" + operand(0) + ")";
    } else if (op->getNumOperands() == 1) {
      expression = unaryExpression(op, operand(0), type);
    } else {
      Type operandType = elementTypeOf(op->getOperand(0));
      expression =
          llvm::formatv("scalar::binaryOp<BinaryKind::{0}, {1}>({2}, {3})",
                        fusibleBinary(op, operandType),
                        cppElementType(operandType), operand(0), operand(1))
              .str();
    }
    std::string value = "v" + std::to_string(n);
    body += llvm::formatv("    const {0} {1} = {2};\n", cpp, value, expression)
                .str();
    expressions[result] = value;
  }
  for (size_t s = firstOutput; s < slots.size(); ++s) {
    std::string cpp = cppElementType(elementTypeOf(slots[s]));
    members += llvm::formatv("  void *p{0};\n", s).str();
    body += llvm::formatv("    static_cast<{0} *>(p{1})[{2}] = {3};\n", cpp, s,
                          offsetOf(s), expressions.lookup(slots[s]))
                .str();
  }
  return llvm::formatv(
             "/// {0} elementwise ops in one pass.\n"
             "struct {1} {{\n"
             "  static constexpr int64_t kRows = {2}, kInner = {3};\n"
             "  static constexpr double kElementWork = {4};\n"
             "{5}"
             "  HPS_HD void operator()(int64_t row, int64_t j) const {{\n"
             "{6}"
             "  }\n"
             "};\n\n",
             group.ops.size(), name, rows, dims.back().extent,
             16 + 4 * group.ops.size(), members,
             dims.size() > 1 ? body : "    (void)row;\n" + body)
      .str();
}

/// A C++ literal of a single-element constant (exact), or nothing.
static std::optional<std::string> scalarLiteral(Value value) {
  // Constants and weights the training server does not update.
  ElementsAttr data = getConstantValue(value);
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!data || isTrainable(value.getDefiningOp<WeightOp>()) || !type ||
      type.getNumElements() != 1)
    return std::nullopt;
  Type element = type.getElementType();
  std::string cpp = cppElementType(element);
  FailureOr<std::string> bytes = bytesOf(data);
  if (cpp.empty() || failed(bytes))
    return std::nullopt;
  auto read = [&](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, bytes->data(), sizeof(v));
    return v;
  };
  if (element.isF32() || element.isF64()) {
    double v = element.isF32() ? double(read(0.0f)) : read(0.0);
    if (!std::isfinite(v))
      return std::nullopt; // no portable literal
    return floatLiteral(v, cpp);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  if (width == 1)
    return unsignedLiteral(read(uint8_t(0)) != 0, cpp);
  uint64_t bits = 0;
  std::memcpy(&bits, bytes->data(), width / 8);
  if (cast<IntegerType>(element).isUnsigned())
    return unsignedLiteral(bits, cpp);
  return signedLiteral(llvm::SignExtend64(bits, width), cpp);
}

FusedLoopFunctors fusedLoopFunctors(const ElementGroup &group,
                                    hpsrt::Layout outputLayout,
                                    llvm::StringRef placeholder) {
  FusedLoopFunctors loop;
  llvm::DenseMap<Value, std::string> literals;
  for (Value input : group.inputs)
    if (std::optional<std::string> literal = scalarLiteral(input))
      literals[input] = *literal;
    else
      loop.pointerInputs.push_back(input);
  auto literalOf = [&](Value value) -> std::optional<std::string> {
    auto found = literals.find(value);
    if (found == literals.end())
      return std::nullopt;
    return found->second;
  };
  bool layoutMatters = llvm::any_of(loop.pointerInputs, [&](Value input) {
    return cast<RankedTensorType>(input.getType()).getShape() !=
           ArrayRef(group.shape);
  });
  hpsrt::Layout held = layoutMatters ? outputLayout : hpsrt::Layout::Plain;
  if (held == hpsrt::Layout::Native) {
    loop.perChannelBlock = true;
    for (int64_t block : {8, 16})
      loop.source +=
          fusedLoopSource(group, (placeholder + "_" + Twine(block)).str(),
                          /*nativeLayout=*/true, block, literalOf);
  } else if (held ==
             hpsrt::Layout::ChannelsLast) { // one block of every channel
    loop.source = fusedLoopSource(group, placeholder, /*nativeLayout=*/true,
                                  group.shape[1], literalOf);
  } else {
    loop.source = fusedLoopSource(group, placeholder, /*nativeLayout=*/false, 1,
                                  literalOf);
  }
  return loop;
}

} // namespace heterps::target
