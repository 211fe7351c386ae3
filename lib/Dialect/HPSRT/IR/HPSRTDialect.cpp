//===- HPSRTDialect.cpp - Runtime-call dialect ----------------------------===//

#include "heterps/Dialect/HPSRT/IR/HPSRTDialect.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPSRT/IR/HPSRTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace heterps::hpsrt;

#include "heterps/Dialect/HPSRT/IR/HPSRTDialect.cpp.inc"
#include "heterps/Dialect/HPSRT/IR/HPSRTEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "heterps/Dialect/HPSRT/IR/HPSRTAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "heterps/Dialect/HPSRT/IR/HPSRTOps.cpp.inc"

void HPSRTDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "heterps/Dialect/HPSRT/IR/HPSRTAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "heterps/Dialect/HPSRT/IR/HPSRTOps.cpp.inc"
      >();
}

LogicalResult HPSRTDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attribute) {
  if (attribute.getName() == "hpsrt.arena_offsets") {
    auto offsets = dyn_cast<DenseI64ArrayAttr>(attribute.getValue());
    if (!offsets || offsets.size() != int64_t(op->getNumResults()) ||
        llvm::any_of(offsets.asArrayRef(),
                     [](int64_t offset) { return offset < -1; }))
      return op->emitError() << "'hpsrt.arena_offsets' must hold one offset "
                                "(or -1) per result ("
                             << op->getNumResults() << ")";
    return success();
  }
  if (attribute.getName() == "hpsrt.arena_bytes") {
    auto bytes = dyn_cast<IntegerAttr>(attribute.getValue());
    if (!bytes || bytes.getInt() < 0)
      return op->emitError()
             << "'hpsrt.arena_bytes' must be a non-negative integer";
    return success();
  }
  if (attribute.getName() == "hpsrt.weights_offset") {
    auto offset = dyn_cast<IntegerAttr>(attribute.getValue());
    if (!offset || offset.getInt() < 0 || op->getNumResults() != 1)
      return op->emitError() << "'hpsrt.weights_offset' must be a "
                                "non-negative integer on an op with one "
                                "result";
    return success();
  }
  if (attribute.getName() == "hpsrt.weights_range") {
    auto range = dyn_cast<DenseI64ArrayAttr>(attribute.getValue());
    if (!range || range.size() != 2 || range[0] < 0 || range[1] < range[0])
      return op->emitError()
             << "'hpsrt.weights_range' must be [begin, end) with "
                "0 <= begin <= end";
    return success();
  }
  if (attribute.getName() != "hpsrt.held_layouts")
    return op->emitError() << "unknown hpsrt attribute '"
                           << attribute.getName().getValue() << "'";
  auto layouts = dyn_cast<ArrayAttr>(attribute.getValue());
  if (!layouts || layouts.size() != op->getNumResults() ||
      !llvm::all_of(layouts,
                    [](Attribute layout) { return isa<LayoutAttr>(layout); }))
    return op->emitError()
           << "'hpsrt.held_layouts' must hold one #hpsrt.layout per result ("
           << op->getNumResults() << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// Fusion regions
//===----------------------------------------------------------------------===//

namespace {

/// The body's ops before its yield, checking that the yield stores values
/// of the op's result types.
FailureOr<SmallVector<Operation *>> fusedOps(Operation *fusion) {
  Block &body = fusion->getRegion(0).front();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return fusion->emitOpError("body must end with hpsrt.yield"), failure();
  if (yield.getValues().getTypes() != fusion->getResultTypes())
    return fusion->emitOpError("yields ")
               << yield.getValues().getTypes() << " but returns "
               << fusion->getResultTypes(),
           failure();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  if (ops.empty())
    return fusion->emitOpError("fuses no op"), failure();
  return ops;
}

bool readsResultOf(Operation *op, Operation *producer) {
  return llvm::is_contained(op->getOperands(), producer->getResult(0));
}

} // namespace

//===----------------------------------------------------------------------===//
// Kernel ops
//===----------------------------------------------------------------------===//

/// The shape attribute `name` a kernel is built with against the buffer
/// `value` it runs on (null: an absent optional operand).
static LogicalResult verifyShapeAttribute(Operation *op, StringRef name,
                                          ArrayRef<int64_t> shape,
                                          Value value) {
  if (!value)
    return success();
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return success();
  auto diag = op->emitOpError() << "'" << name << "' is [";
  llvm::interleaveComma(shape, diag);
  return diag << "] but its buffer is " << type;
}

/// The element type `kernel` is built with, among those its runtime class
/// runs (`allowed`, as MLIR spells them): any other fails when the stage
/// builds the kernel, so it is refused here, at compile time.
static LogicalResult verifyElementType(Operation *op, StringRef kernel,
                                       Type type,
                                       ArrayRef<StringRef> allowed) {
  std::string spelled;
  llvm::raw_string_ostream(spelled) << type;
  if (llvm::is_contained(allowed, spelled))
    return success();
  auto diag = op->emitOpError() << "the runtime's " << kernel << " kernel runs ";
  llvm::interleave(allowed, diag, ", ");
  return diag << ", not " << spelled;
}

#include "heterps/Dialect/HPSRT/IR/KernelVerifiers.inc"

LogicalResult FusedDenseOp::verify() {
  FailureOr<SmallVector<Operation *>> ops = fusedOps(*this);
  if (failed(ops))
    return failure();
  Operation *dense = ops->front();
  if (!isa<hps::GemmOp, hps::MatMulOp, hps::ConvOp>(dense))
    return emitOpError("must start with hps.gemm, hps.matmul or hps.conv, "
                       "not ")
           << dense->getName();
  if (ops->size() > 3)
    return emitOpError("fuses at most a residual add and an activation");
  for (auto [index, op] : llvm::enumerate(ArrayRef(*ops).drop_front())) {
    Operation *previous = (*ops)[index];
    bool residual = index == 0 && isa<hps::AddOp>(op);
    if (residual && !isa<hps::ConvOp>(dense))
      return emitOpError("fuses a residual add into a conv only");
    // The kernel reads the residual in y's shape, from before the conv.
    if (residual) {
      Value result = dense->getResult(0);
      Value other =
          op->getOperand(0) == result ? op->getOperand(1) : op->getOperand(0);
      if (other == result || other.getType() != result.getType() ||
          getBody().isAncestor(other.getParentRegion()))
        return emitOpError("the residual must have the conv's type and be "
                           "computed before the fusion");
    }
    if (op->getNumResults() != 1 || !readsResultOf(op, previous) ||
        (!residual && op->getNumOperands() != 1))
      return emitOpError("'") << op->getName() << "' must be an activation of "
                              << previous->getName() << "'s result";
  }
  if (getNumResults() != 1 || getBody().front().getTerminator()->getOperand(
                                  0) != ops->back()->getResult(0))
    return emitOpError("must yield its last op's result alone");
  return success();
}

LogicalResult FusedLoopOp::verify() {
  FailureOr<SmallVector<Operation *>> ops = fusedOps(*this);
  if (failed(ops))
    return failure();
  Type shape;
  for (Operation *op : *ops) {
    auto type = op->getNumResults() == 1
                    ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                    : RankedTensorType();
    if (!type ||
        (shape && cast<ShapedType>(shape).getShape() != type.getShape()))
      return emitOpError("'")
             << op->getName() << "' must have one result of the loop's shape";
    shape = type;
  }
  return success();
}

LogicalResult ProjectedRecurrenceOp::verify() {
  FailureOr<SmallVector<Operation *>> ops = fusedOps(*this);
  if (failed(ops))
    return failure();
  auto gemm = dyn_cast<hps::GemmOp>(ops->front());
  auto rec = dyn_cast<hps::RecurrenceOp>(ops->back());
  if (!gemm || !rec || ops->size() < 2)
    return emitOpError("must be an hps.gemm, views, and an hps.recurrence");
  for (auto [index, op] : llvm::enumerate(ArrayRef(*ops).drop_front())) {
    Operation *previous = (*ops)[index];
    if (op->getOperand(0) != previous->getResult(0))
      return emitOpError("'") << op->getName() << "' must read "
                              << previous->getName() << "'s result first";
  }
  if (getBody().front().getTerminator()->getOperands() != rec->getResults())
    return emitOpError("must yield the recurrence's results");
  return success();
}
