//===- ONNXImporter.cpp - ONNX model -> hps dialect -----------------------===//
//
// Imports every node generically as hps.onnx_node; dedicated ops come from
// --hps-legalize-onnx. Initializers become hps.weight (floating point, the
// trainable parameters) or hps.constant (integers and booleans: shapes,
// indices); large values become dense_resource blobs. Graph attributes
// (If's branches, Loop's and Scan's bodies) become regions of their node,
// imported the same way, recursively.
//
//===----------------------------------------------------------------------===//

#include "heterps/Import/ONNXImporter.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Import/ONNXModelLoader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/SourceMgr.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace heterps;

namespace {

/// Values with more elements than this are stored as dense_resource blobs.
constexpr int64_t kInlineElementLimit = 64;

class Importer {
public:
  Importer(StringRef path, MLIRContext *context,
           import::StrictInferenceError strictInference)
      : path(path), builder(context),
        fileLoc(FileLineColLoc::get(context, path, 0, 0)),
        strictInference(std::move(strictInference)) {}

  /// Imports `model`, releasing each main-graph initializer's raw data as
  /// it becomes a weight (a model's weights are held about once).
  OwningOpRef<ModuleOp> run(onnx::ModelProto &model);

private:
  /// Reports an error at the model file and remembers that one happened.
  InFlightDiagnostic error() {
    hadError = true;
    return emitError(fileLoc);
  }

  FailureOr<Type> convertElementType(int32_t onnxType, StringRef what);
  FailureOr<Type> convertType(const onnx::TypeProto &type, StringRef what);
  FailureOr<ElementsAttr> convertTensor(const onnx::TensorProto &tensor,
                                        StringRef what);
  FailureOr<Attribute> convertAttribute(const onnx::AttributeProto &attr,
                                        StringRef what);
  LogicalResult importNode(const onnx::NodeProto &node, int index);
  LogicalResult importSubgraph(const onnx::GraphProto &graph,
                               const onnx::NodeProto &node, Region &region,
                               StringRef what);
  LogicalResult recordTypes(const onnx::GraphProto &graph);
  Type formalInputType(const onnx::NodeProto &node, hps::OnnxNodeOp op,
                       int index);
  Value lookup(const std::string &name);
  /// Binds `name` to `value`, remembering what it shadowed while a subgraph
  /// is being imported (ONNX scopes names like a block-structured language).
  void define(const std::string &name, Value value);

  StringRef path;
  OpBuilder builder;
  Location fileLoc;
  import::StrictInferenceError strictInference;
  bool hadError = false;
  llvm::StringMap<Value> values;
  /// While importing a subgraph: the bindings it shadowed, to restore.
  SmallVector<std::pair<std::string, Value>> *shadowed = nullptr;
  Block *entryBlock = nullptr;
  llvm::StringMap<Type> valueTypes;
  llvm::StringMap<int64_t> opsets;
  /// Tensors some node or the graph's outputs read.
  llvm::StringSet<> consumed;
  Value noneValue;
};

/// An ONNX element type's name, including those newer than ONNX 1.12's
/// enum (float8 from IR 9, 4-bit integers from IR 10).
std::string dataTypeName(int32_t onnxType) {
  if (onnx::TensorProto::DataType_IsValid(onnxType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(onnxType));
  static const char *const newer[] = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
                                      "FLOAT8E5M2",   "FLOAT8E5M2FNUZ",
                                      "UINT4",        "INT4"};
  if (onnxType >= 17 && onnxType <= 22)
    return newer[onnxType - 17];
  return "unknown (" + std::to_string(onnxType) + ")";
}

FailureOr<Type> Importer::convertElementType(int32_t onnxType, StringRef what) {
  Builder &b = builder;
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::INT16:
    return b.getIntegerType(16);
  case onnx::TensorProto::INT32:
    return b.getIntegerType(32);
  case onnx::TensorProto::INT64:
    return b.getIntegerType(64);
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::UINT16:
    return b.getIntegerType(16, false);
  case onnx::TensorProto::UINT32:
    return b.getIntegerType(32, false);
  case onnx::TensorProto::UINT64:
    return b.getIntegerType(64, false);
  default:
    break;
  }
  error() << what << " has unsupported data type " << dataTypeName(onnxType);
  return failure();
}

FailureOr<Type> Importer::convertType(const onnx::TypeProto &type,
                                      StringRef what) {
  if (type.has_sequence_type() && type.sequence_type().has_elem_type() &&
      type.sequence_type().elem_type().has_tensor_type()) {
    // A sequence inside the graph; legalization folds it into its tensors.
    FailureOr<Type> element =
        convertType(type.sequence_type().elem_type(), what);
    if (::failed(element))
      return failure();
    return Type(hps::SequenceType::get(builder.getContext(),
                                       cast<TensorType>(*element)));
  }
  if (!type.has_tensor_type()) {
    error() << what
            << " is not a tensor or a sequence of tensors (maps and "
               "optionals are not supported)";
    return failure();
  }
  const auto &tensor = type.tensor_type();
  FailureOr<Type> element = convertElementType(tensor.elem_type(), what);
  if (::failed(element))
    return failure();
  if (!tensor.has_shape())
    return Type(UnrankedTensorType::get(*element));
  SmallVector<int64_t> shape;
  for (const auto &dim : tensor.shape().dim())
    shape.push_back(dim.has_dim_value() && dim.dim_value() >= 0
                        ? dim.dim_value()
                        : ShapedType::kDynamic);
  return Type(RankedTensorType::get(shape, *element));
}

/// Appends `count` little-endian values of `width` bytes taken from
/// `source`, narrowing each 32- or 64-bit field value.
template <typename Field>
void appendNarrowed(std::vector<char> &bytes, const Field &source,
                    size_t width) {
  for (auto value : source) {
    uint64_t bits;
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, float>) {
      uint32_t raw;
      std::memcpy(&raw, &value, 4);
      bits = raw;
    } else if constexpr (std::is_same_v<std::decay_t<decltype(value)>,
                                        double>) {
      std::memcpy(&bits, &value, 8);
    } else {
      bits = static_cast<uint64_t>(value);
    }
    for (size_t i = 0; i < width; ++i)
      bytes.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
}

FailureOr<ElementsAttr> Importer::convertTensor(const onnx::TensorProto &tensor,
                                                StringRef what) {
  FailureOr<Type> element = convertElementType(tensor.data_type(), what);
  if (::failed(element))
    return failure();
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; })) {
    error() << what << " has a negative dimension";
    return failure();
  }
  bool isBool = element->isInteger(1);
  size_t width = isBool ? 1 : element->getIntOrFloatBitWidth() / 8;
  // Counted with overflow checks: dims 2^32 x 2^32 wrapped to 0 elements,
  // which no data then matched, and the run aborted.
  int64_t count = 1, byteCount = 0;
  for (int64_t dim : shape)
    if (__builtin_mul_overflow(count, dim, &count)) {
      error() << what << " has a shape too large to hold";
      return failure();
    }
  if (__builtin_mul_overflow(count, int64_t(width), &byteCount)) {
    error() << what << " has a shape too large to hold";
    return failure();
  }
  auto type = RankedTensorType::get(shape, *element);

  // Raw data is read where it is (a model's weights are not copied twice).
  std::vector<char> converted;
  ArrayRef<char> bytes;
  if (tensor.has_raw_data()) {
    bytes = ArrayRef<char>(tensor.raw_data().data(), tensor.raw_data().size());
  } else {
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      appendNarrowed(converted, tensor.float_data(), 4);
      break;
    case onnx::TensorProto::DOUBLE:
      appendNarrowed(converted, tensor.double_data(), 8);
      break;
    case onnx::TensorProto::INT64:
      appendNarrowed(converted, tensor.int64_data(), 8);
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      appendNarrowed(converted, tensor.uint64_data(), width);
      break;
    default: // int8/16/32, uint8/16, bool, float16 and bfloat16 bits.
      appendNarrowed(converted, tensor.int32_data(), width);
      break;
    }
    bytes = converted;
  }
  if (bytes.size() != static_cast<size_t>(byteCount)) {
    error() << what << " holds " << bytes.size() / std::max<size_t>(width, 1)
            << " values but its shape " << type << " needs " << count;
    return failure();
  }
  if (isBool) {
    SmallVector<bool> flags;
    for (char byte : bytes)
      flags.push_back(byte != 0);
    return ElementsAttr(DenseElementsAttr::get(type, flags));
  }
  if (count <= kInlineElementLimit)
    return ElementsAttr(DenseElementsAttr::getFromRawBuffer(type, bytes));
  // Large values stay out of the op's text: a blob in the resource section.
  std::string key = tensor.name().empty() ? "tensor" : tensor.name();
  for (char &c : key)
    if (!llvm::isAlnum(c) && c != '_' && c != '.')
      c = '_';
  if (!llvm::isAlpha(key.front()) && key.front() != '_')
    key.insert(0, "t");
  AsmResourceBlob blob =
      HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, width);
  return ElementsAttr(
      DenseResourceElementsAttr::get(type, key, std::move(blob)));
}

FailureOr<Attribute>
Importer::convertAttribute(const onnx::AttributeProto &attr, StringRef what) {
  using A = onnx::AttributeProto;
  A::AttributeType kind = attr.type();
  if (kind == A::UNDEFINED) { // Old exporters left the type out.
    kind = attr.has_f()          ? A::FLOAT
           : attr.has_i()        ? A::INT
           : attr.has_s()        ? A::STRING
           : attr.has_t()        ? A::TENSOR
           : attr.has_g()        ? A::GRAPH
           : attr.floats_size()  ? A::FLOATS
           : attr.ints_size()    ? A::INTS
           : attr.strings_size() ? A::STRINGS
           : attr.tensors_size() ? A::TENSORS
                                 : A::UNDEFINED;
  }
  switch (kind) {
  case A::FLOAT:
    return Attribute(builder.getF32FloatAttr(attr.f()));
  case A::INT:
    return Attribute(builder.getI64IntegerAttr(attr.i()));
  case A::STRING:
    return Attribute(builder.getStringAttr(attr.s()));
  case A::FLOATS:
    return Attribute(builder.getDenseF32ArrayAttr(
        SmallVector<float>(attr.floats().begin(), attr.floats().end())));
  case A::INTS:
    return Attribute(builder.getDenseI64ArrayAttr(
        SmallVector<int64_t>(attr.ints().begin(), attr.ints().end())));
  case A::STRINGS: {
    SmallVector<Attribute> strings;
    for (const std::string &s : attr.strings())
      strings.push_back(builder.getStringAttr(s));
    return Attribute(builder.getArrayAttr(strings));
  }
  case A::TENSOR: {
    FailureOr<ElementsAttr> tensor = convertTensor(
        attr.t(), (what + " attribute '" + attr.name() + "'").str());
    if (::failed(tensor))
      return failure();
    return Attribute(*tensor);
  }
  case A::TENSORS: {
    SmallVector<Attribute> tensors;
    for (const auto &t : attr.tensors()) {
      FailureOr<ElementsAttr> tensor =
          convertTensor(t, (what + " attribute '" + attr.name() + "'").str());
      if (::failed(tensor))
        return failure();
      tensors.push_back(*tensor);
    }
    return Attribute(builder.getArrayAttr(tensors));
  }
  case A::GRAPHS:
    error() << what << " has attribute '" << attr.name()
            << "', a list of graphs, which HeterPS does not support";
    return failure();
  default:
    error() << what << " has attribute '" << attr.name()
            << "' of an unsupported kind";
    return failure();
  }
}

Value Importer::lookup(const std::string &name) {
  if (name.empty()) {
    if (!noneValue) {
      // At the entry, so that every subgraph can read it too.
      OpBuilder atEntry = OpBuilder::atBlockBegin(entryBlock);
      noneValue = atEntry.create<hps::NoneOp>(fileLoc, builder.getNoneType())
                      .getResult();
    }
    return noneValue;
  }
  return values.lookup(name);
}

void Importer::define(const std::string &name, Value value) {
  if (shadowed)
    shadowed->emplace_back(name, values.lookup(name));
  values[name] = value;
}

LogicalResult Importer::recordTypes(const onnx::GraphProto &graph) {
  // An output that is also an input keeps the input's type, which the
  // bindings (--batch) made static: the output's ?x4 overrode a bound 4x4,
  // and the compile failed asking for the --batch it was given.
  llvm::StringSet<> inputs;
  for (const onnx::ValueInfoProto &input : graph.input())
    if (input.has_type())
      inputs.insert(input.name());
  auto record = [&](const auto &infos, StringRef kind) -> LogicalResult {
    for (const onnx::ValueInfoProto &info : infos) {
      if (!info.has_type() ||
          (kind == "graph output" && inputs.contains(info.name())))
        continue;
      FailureOr<Type> type =
          convertType(info.type(), (kind + " '" + info.name() + "'").str());
      if (::failed(type))
        return failure();
      valueTypes[info.name()] = *type;
    }
    return success();
  };
  return success(::succeeded(record(graph.input(), "graph input")) &&
                 ::succeeded(record(graph.value_info(), "tensor")) &&
                 ::succeeded(record(graph.output(), "graph output")));
}

/// Records every tensor name a node of `graph` or of its subgraphs reads,
/// and the outputs of those subgraphs.
static void collectConsumed(const onnx::GraphProto &graph,
                            llvm::StringSet<> &consumed) {
  for (const auto &node : graph.node()) {
    for (const std::string &input : node.input())
      consumed.insert(input);
    for (const auto &attr : node.attribute())
      if (attr.has_g()) {
        collectConsumed(attr.g(), consumed);
        for (const auto &output : attr.g().output())
          consumed.insert(output.name());
      }
  }
}

/// The type of a subgraph's formal input `index` that declares none (ONNX
/// lets Loop and Scan bodies leave them to the node's inputs), or null.
Type Importer::formalInputType(const onnx::NodeProto &node, hps::OnnxNodeOp op,
                               int index) {
  auto actual = [&](int i) -> Type {
    return i < static_cast<int>(op.getInputs().size())
               ? op.getInputs()[i].getType()
               : Type();
  };
  if (node.op_type() == "Loop") {
    // (iteration number, condition, loop-carried values...).
    if (index == 0)
      return RankedTensorType::get({}, builder.getI64Type());
    if (index == 1)
      return RankedTensorType::get({}, builder.getI1Type());
    return actual(index);
  }
  if (node.op_type() == "Scan") {
    // (state variables..., one slice of each scan input...): a slice's
    // shape is left to legalization, which knows the scan axis.
    Type type = actual(index);
    int64_t stateCount = node.input_size();
    for (const auto &attr : node.attribute())
      if (attr.name() == "num_scan_inputs")
        stateCount -= attr.i();
    if (index < stateCount || !type)
      return type;
    return UnrankedTensorType::get(getElementTypeOrSelf(type));
  }
  return Type();
}

LogicalResult Importer::importSubgraph(const onnx::GraphProto &graph,
                                       const onnx::NodeProto &node,
                                       Region &region, StringRef what) {
  if (::failed(recordTypes(graph)))
    return failure();
  auto op = cast<hps::OnnxNodeOp>(region.getParentOp());
  OpBuilder::InsertionGuard guard(builder);
  Block *block = builder.createBlock(&region);

  SmallVector<std::pair<std::string, Value>> scope;
  auto *outer = shadowed;
  shadowed = &scope;
  auto restore = llvm::make_scope_exit([&] {
    for (auto &[name, previous] : llvm::reverse(scope)) {
      if (previous)
        values[name] = previous;
      else
        values.erase(name);
    }
    shadowed = outer;
  });

  for (auto [index, input] : llvm::enumerate(graph.input())) {
    Type type = valueTypes.lookup(input.name());
    if (!type)
      type = formalInputType(node, op, static_cast<int>(index));
    if (!type) {
      error() << what << " has input '" << input.name() << "' without a type";
      return failure();
    }
    define(input.name(), block->addArgument(type, fileLoc));
  }
  for (const auto &init : graph.initializer()) {
    // A subgraph's own initializers are constants of its scope: training
    // updates only the main graph's weights.
    std::string initWhat = (what + " initializer '" + init.name() + "'").str();
    FailureOr<ElementsAttr> value = convertTensor(init, initWhat);
    if (::failed(value))
      return failure();
    Location loc = NameLoc::get(builder.getStringAttr(init.name()), fileLoc);
    define(init.name(), builder.create<hps::ConstantOp>(loc, *value));
  }
  for (int i = 0; i < graph.node_size(); ++i)
    if (::failed(importNode(graph.node(i), i)))
      return failure();
  SmallVector<Value> outputs;
  for (const auto &output : graph.output()) {
    Value value = lookup(output.name());
    if (!value || output.name().empty()) {
      error() << what << " output '" << output.name()
              << "' is not defined in its scope";
      return failure();
    }
    outputs.push_back(value);
  }
  builder.create<hps::YieldOp>(fileLoc, outputs);
  return success();
}

LogicalResult Importer::importNode(const onnx::NodeProto &node, int index) {
  std::string what = import::describeONNXNode(node, index);
  SmallVector<Value> inputs;
  for (const std::string &input : node.input())
    inputs.push_back(lookup(input)); // Defined: checked by the loader.

  SmallVector<Type> resultTypes;
  for (const std::string &output : node.output()) {
    if (output.empty()) {
      // An omitted optional output: give it the first output's type so the
      // op stays well formed; nothing can read it.
      resultTypes.push_back(resultTypes.empty() ? builder.getNoneType()
                                                : resultTypes.front());
      continue;
    }
    Type type = valueTypes.lookup(output);
    if (!type && !consumed.contains(output)) {
      // An output nothing reads (Dropout's mask, say) that shape inference
      // left untyped: it needs no type of its own.
      resultTypes.push_back(builder.getNoneType());
      continue;
    }
    if (!type) {
      // A Cast to a type ONNX 1.12 does not know (float8, int4) leaves its
      // output untyped: name the type instead.
      for (const auto &attr : node.attribute())
        if (node.op_type() == "Cast" && attr.name() == "to") {
          error() << what << " casts to element type "
                  << dataTypeName(static_cast<int32_t>(attr.i()))
                  << ", which HeterPS does not support";
          return failure();
        }
      error() << what << ": ONNX shape inference found no type for its "
              << "output '" << output << "'";
      return failure();
    }
    resultTypes.push_back(type);
  }

  SmallVector<NamedAttribute> attrs;
  SmallVector<const onnx::AttributeProto *> subgraphs;
  for (const auto &attr : node.attribute()) {
    if (attr.has_g() && (attr.type() == onnx::AttributeProto::GRAPH ||
                         attr.type() == onnx::AttributeProto::UNDEFINED)) {
      subgraphs.push_back(&attr);
      continue;
    }
    FailureOr<Attribute> value = convertAttribute(attr, what);
    if (::failed(value))
      return failure();
    attrs.push_back(builder.getNamedAttr(attr.name(), *value));
  }

  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  int64_t opset = opsets.lookup(domain.empty() ? "ai.onnx" : domain);
  if (opset == 0)
    opset = 1; // A domain without an opset_import entry: version unknown.
  std::string locName = node.name().empty()
                            ? node.op_type() + "_" + std::to_string(index)
                            : node.name();
  Location loc = NameLoc::get(builder.getStringAttr(locName), fileLoc);
  ArrayAttr subgraphNames;
  if (!subgraphs.empty()) {
    SmallVector<Attribute> names;
    for (const onnx::AttributeProto *attr : subgraphs)
      names.push_back(builder.getStringAttr(attr->name()));
    subgraphNames = builder.getArrayAttr(names);
  }
  auto op = builder.create<hps::OnnxNodeOp>(
      loc, resultTypes, builder.getStringAttr(node.op_type()),
      builder.getStringAttr(domain), builder.getI64IntegerAttr(opset),
      builder.getDictionaryAttr(attrs), inputs, subgraphNames,
      hps::DeviceAttr(), subgraphs.size());
  // Why ONNX rejects it, for the legalizer's error if it stays unlegalized.
  // ONNX names an unnamed node by its op type only: the first such node
  // of that type is taken for it.
  if (!strictInference.opType.empty() &&
      node.op_type() == strictInference.opType &&
      node.name() == strictInference.node) {
    op->setAttr(hps::OnnxNodeOp::kShapeInferenceErrorAttr,
                builder.getStringAttr(strictInference.message));
    strictInference.opType.clear();
  }
  for (auto [attr, region] : llvm::zip(subgraphs, op.getBodies()))
    if (::failed(importSubgraph(attr->g(), node, region,
                                what + " subgraph '" + attr->name() + "'")))
      return failure();
  for (auto [output, result] : llvm::zip(node.output(), op.getResults()))
    if (!output.empty())
      define(output, result);
  return success();
}

OwningOpRef<ModuleOp> Importer::run(onnx::ModelProto &model) {
  const onnx::GraphProto &graph = model.graph();
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  SmallVector<NamedAttribute> opsetAttrs;
  for (const auto &opset : model.opset_import()) {
    std::string domain = opset.domain().empty() ? "ai.onnx" : opset.domain();
    opsets[domain] = opset.version();
    opsetAttrs.push_back(builder.getNamedAttr(
        domain, builder.getI64IntegerAttr(opset.version())));
  }
  (*module)->setAttr("hps.opset_imports",
                     builder.getDictionaryAttr(opsetAttrs));
  (*module)->setAttr("hps.ir_version",
                     builder.getI64IntegerAttr(model.ir_version()));
  if (!model.producer_name().empty())
    (*module)->setAttr("hps.producer",
                       builder.getStringAttr(model.producer_name()));

  // Types of every named tensor, from the graph and from shape inference
  // (subgraphs' are recorded as they are imported).
  if (::failed(recordTypes(graph)))
    return nullptr;

  collectConsumed(graph, consumed);
  for (const auto &output : graph.output())
    consumed.insert(output.name());

  llvm::StringSet<> initializerNames;
  for (const auto &init : graph.initializer())
    initializerNames.insert(init.name());

  // Graph inputs that are not initializers become function arguments; old
  // IR versions also list initializers as inputs.
  SmallVector<Type> argTypes;
  SmallVector<const onnx::ValueInfoProto *> argInfos;
  for (const auto &input : graph.input()) {
    if (initializerNames.contains(input.name()))
      continue;
    Type type = valueTypes.lookup(input.name());
    if (!type) {
      error() << "graph input '" << input.name() << "' has no type";
      return nullptr;
    }
    if (isa<hps::SequenceType>(type)) {
      error() << "graph input '" << input.name()
              << "' is a sequence: a model's inputs and outputs must be "
                 "tensors";
      return nullptr;
    }
    argTypes.push_back(type);
    argInfos.push_back(&input);
  }
  SmallVector<Type> resultTypes;
  for (const auto &output : graph.output()) {
    Type type = valueTypes.lookup(output.name());
    if (!type) {
      error() << "graph output '" << output.name() << "' has no type";
      return nullptr;
    }
    if (isa<hps::SequenceType>(type)) {
      error() << "graph output '" << output.name()
              << "' is a sequence: a model's inputs and outputs must be "
                 "tensors";
      return nullptr;
    }
    resultTypes.push_back(type);
  }

  builder.setInsertionPointToEnd(module->getBody());
  auto func = builder.create<func::FuncOp>(
      fileLoc, "main", builder.getFunctionType(argTypes, resultTypes));
  if (!graph.name().empty())
    func->setAttr("hps.graph_name", builder.getStringAttr(graph.name()));
  for (auto [i, info] : llvm::enumerate(argInfos)) {
    func.setArgAttr(i, "hps.name", builder.getStringAttr(info->name()));
    // Keep symbolic dimension names so a later --batch can bind them.
    SmallVector<Attribute> dimNames;
    bool symbolic = false;
    if (info->type().tensor_type().has_shape())
      for (const auto &dim : info->type().tensor_type().shape().dim()) {
        dimNames.push_back(builder.getStringAttr(dim.dim_param()));
        symbolic |= !dim.dim_param().empty();
      }
    if (symbolic)
      func.setArgAttr(i, "hps.dim_params", builder.getArrayAttr(dimNames));
  }
  for (auto [i, output] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "hps.name", builder.getStringAttr(output.name()));

  Block *entry = func.addEntryBlock();
  entryBlock = entry;
  builder.setInsertionPointToStart(entry);
  for (auto [info, arg] : llvm::zip(argInfos, entry->getArguments()))
    values[info->name()] = arg;

  for (onnx::TensorProto &init :
       *model.mutable_graph()->mutable_initializer()) {
    std::string what = "initializer '" + init.name() + "'";
    FailureOr<ElementsAttr> value = convertTensor(init, what);
    if (::failed(value))
      return nullptr;
    if (init.has_raw_data())
      std::string().swap(*init.mutable_raw_data()); // frees it, unlike clear

    Location loc = NameLoc::get(builder.getStringAttr(init.name()), fileLoc);
    Value result;
    if (isa<FloatType>(value->getElementType()))
      result = builder.create<hps::WeightOp>(loc, init.name(), *value);
    else
      result = builder.create<hps::ConstantOp>(loc, *value);
    values[init.name()] = result;
  }

  for (int i = 0; i < graph.node_size(); ++i)
    if (::failed(importNode(graph.node(i), i)))
      return nullptr;

  SmallVector<Value> outputs;
  for (const auto &output : graph.output())
    outputs.push_back(values.lookup(output.name()));
  builder.create<func::ReturnOp>(fileLoc, outputs);

  if (hadError || ::failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace

namespace heterps::import {

OwningOpRef<ModuleOp> importONNX(StringRef path, StringRef contents,
                                 MLIRContext *context,
                                 const InputBindings &bindings) {
  context->loadDialect<hps::HPSDialect, func::FuncDialect>();
  LoadedModel loaded = loadONNXModel(path, contents, bindings);
  if (!loaded.model) {
    emitError(FileLineColLoc::get(context, path, 0, 0)) << loaded.error;
    return nullptr;
  }
  OwningOpRef<ModuleOp> module =
      Importer(path, context, loaded.strictInference).run(*loaded.model);
  if (module && bindings.batch > 0) {
    // Record the bound batch so that a runtime can split larger inputs.
    auto main = module->lookupSymbol<func::FuncOp>("main");
    Builder builder(context);
    main->setAttr("hps.batch", builder.getI64IntegerAttr(bindings.batch));
    auto marked = [](const std::vector<std::string> &names, StringRef name) {
      return llvm::is_contained(names, name.str());
    };
    for (unsigned i = 0; i < main.getNumArguments(); ++i)
      if (auto name = main.getArgAttrOfType<StringAttr>(i, "hps.name");
          name && marked(loaded.batchedInputs, name.getValue()))
        main.setArgAttr(i, "hps.batched", builder.getUnitAttr());
    for (unsigned i = 0; i < main.getNumResults(); ++i) {
      // An output declared with an open leading dim follows the batch only
      // where inference gives it the batch's extent: one computed from a
      // fixed-size input is not batched (the runtime refused its bundle).
      auto type = dyn_cast<RankedTensorType>(main.getResultTypes()[i]);
      if (type &&
          (type.getRank() == 0 ||
           (!type.isDynamicDim(0) && type.getDimSize(0) != bindings.batch)))
        continue;
      if (auto name = main.getResultAttrOfType<StringAttr>(i, "hps.name");
          name && marked(loaded.batchedOutputs, name.getValue()))
        main.setResultAttr(i, "hps.batched", builder.getUnitAttr());
    }
  }
  return module;
}

bool parseInputShape(StringRef text, InputBindings &bindings,
                     std::string &error) {
  auto [name, extents] = text.rsplit('=');
  if (name.empty() || extents.empty() || name == text) {
    error = "input shape '" + text.str() + "' is not NAME=D0xD1x...";
    return false;
  }
  std::vector<int64_t> shape;
  SmallVector<StringRef> parts;
  extents.split(parts, 'x');
  for (StringRef part : parts) {
    int64_t extent;
    if (part.getAsInteger(10, extent) || extent <= 0) {
      error = "input shape '" + text.str() + "' has a bad extent '" +
              part.str() + "'";
      return false;
    }
    shape.push_back(extent);
  }
  if (!bindings.shapes.emplace(name.str(), std::move(shape)).second) {
    error = "input '" + name.str() + "' has two shapes";
    return false;
  }
  return true;
}

bool parseDimBinding(StringRef text, InputBindings &bindings,
                     std::string &error) {
  auto [name, value] = text.rsplit('=');
  int64_t extent = 0;
  if (name.empty() || name == text || value.getAsInteger(10, extent) ||
      extent <= 0) {
    error = "dim binding '" + text.str() +
            "' is not NAME=N (a symbolic dim's name and a positive extent)";
    return false;
  }
  if (!bindings.dims.emplace(name.str(), extent).second) {
    error = "dim '" + name.str() + "' is bound twice";
    return false;
  }
  return true;
}

void registerONNXImportTranslation() {
  static llvm::cl::opt<int64_t> batch(
      "onnx-batch",
      llvm::cl::desc("--import-onnx: bind the symbolic leading dim of every "
                     "model input to this batch size"),
      llvm::cl::init(0));
  static llvm::cl::opt<bool> staticBatch(
      "onnx-static-batch",
      llvm::cl::desc("--import-onnx: treat a static leading dim of 1 on the "
                     "inputs as the batch bound by --onnx-batch"),
      llvm::cl::init(false));
  static llvm::cl::list<std::string> inputShapes(
      "onnx-input-shape",
      llvm::cl::desc("--import-onnx: static shape of one model input, "
                     "NAME=D0xD1x... (repeatable)"));
  static llvm::cl::list<std::string> dims(
      "onnx-dim",
      llvm::cl::desc("--import-onnx: extent of a symbolic input dim by its "
                     "name, NAME=N (repeatable)"));
  TranslateToMLIRRegistration registration(
      "import-onnx",
      "Import an ONNX model (binary .onnx or text .onnxtext) into the hps "
      "dialect",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        InputBindings bindings;
        bindings.batch = batch;
        bindings.staticBatch = staticBatch;
        for (const std::string &text : inputShapes) {
          std::string error;
          if (!parseInputShape(text, bindings, error)) {
            emitError(UnknownLoc::get(context)) << error;
            return nullptr;
          }
        }
        for (const std::string &text : dims) {
          std::string error;
          if (!parseDimBinding(text, bindings, error)) {
            emitError(UnknownLoc::get(context)) << error;
            return nullptr;
          }
        }
        return importONNX(buffer->getBufferIdentifier(), buffer->getBuffer(),
                          context, bindings);
      },
      [](DialectRegistry &registry) {
        registry.insert<hps::HPSDialect, func::FuncDialect>();
      });
}

} // namespace heterps::import
