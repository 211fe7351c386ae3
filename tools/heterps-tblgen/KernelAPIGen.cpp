//===- KernelAPIGen.cpp - The kernel API from the hpsrt dialect -----------===//
//
// The hpsrt ops are the one source of the runtime's kernel API. From them:
// - -gen-kernel-api: the runtime's kernel class declarations
//   (runtime/include/heterps/Runtime/KernelClasses.inc), and checks that the
//   runtime's parameter structs have the fields of the struct attributes, in
//   order;
// - -gen-kernel-calls: for the compiler, each op's constructor arguments as
//   C++ literals and its run() arguments, in the same order;
// - -gen-kernel-constants: the constants the two share, for the compiler
//   (-gen-kernel-api checks the runtime's values);
// - -gen-kernel-factory: for tools that run kernels in process (the layer
//   profiler), each op's runtime kernel constructed from its attributes and
//   run on buffers in the op's operand and result order.
// A change to a signature is made in HPSRTOps.td and reaches both sides.
//
//===----------------------------------------------------------------------===//

#include "mlir/TableGen/AttrOrTypeDef.h"
#include "mlir/TableGen/Attribute.h"
#include "mlir/TableGen/GenInfo.h"
#include "mlir/TableGen/Operator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

#include <map>

using namespace mlir;
using namespace mlir::tblgen;
using llvm::Record;
using llvm::RecordKeeper;
using llvm::StringRef;

namespace {

constexpr size_t kColumnLimit = 80;

/// Kernel ops in definition order (the header lists classes in that order).
std::vector<const Record *> kernelOps(const RecordKeeper &records) {
  std::vector<const Record *> ops;
  for (const Record *def : records.getAllDerivedDefinitions("HPSRT_KernelOp"))
    ops.push_back(def);
  llvm::sort(ops, [](const Record *a, const Record *b) {
    return a->getID() < b->getID();
  });
  return ops;
}

/// A doc comment: `text` dedented, each line behind `indent` and "/// ".
std::string docComment(StringRef text, StringRef indent) {
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  while (!lines.empty() && lines.front().trim().empty())
    lines.erase(lines.begin());
  while (!lines.empty() && lines.back().trim().empty())
    lines.pop_back();
  size_t common = std::string::npos;
  for (StringRef line : lines)
    if (!line.trim().empty())
      common = std::min(common, line.size() - line.ltrim().size());
  std::string comment;
  for (StringRef line : lines) {
    line = line.trim().empty() ? StringRef() : line.drop_front(common);
    comment +=
        (indent + "///" + (line.empty() ? "" : " ") + line.rtrim() + "\n")
            .str();
  }
  return comment;
}

/// `prefix(params...)suffix`, the parameters bin-packed up to the column
/// limit and aligned after the parenthesis, as clang-format lays them out.
std::string declaration(StringRef prefix, ArrayRef<std::string> params,
                        StringRef suffix) {
  std::string text = (prefix + "(").str();
  size_t column = text.size();
  const size_t align = column;
  for (auto [i, param] : llvm::enumerate(params)) {
    bool last = i + 1 == params.size();
    std::string piece = param + (last ? ")" + suffix.str() : ",");
    if (i > 0) {
      if (column + 1 + piece.size() > kColumnLimit) {
        text += "\n" + std::string(align, ' ');
        column = align;
      } else {
        text += " ";
        ++column;
      }
    }
    text += piece;
    column += piece.size();
  }
  if (params.empty())
    text += ")" + suffix.str();
  return text + "\n";
}

/// The runtime C++ type of a constructor parameter.
std::string runtimeParameterType(const NamedAttribute &named) {
  Attribute attr = named.attr;
  Attribute base = attr.getBaseAttr();
  const Record &def = base.getDef();
  std::string type;
  if (def.getValue("runtimeType"))
    type = def.getValueAsString("runtimeType").str();
  else
    llvm::PrintFatalError(&def, "hpsrt: parameter '" + named.name +
                                    "' has no runtimeType");
  // An absent optional shape is a null pointer.
  if (attr.isOptional()) {
    if (type != "const Shape &")
      llvm::PrintFatalError(&def, "hpsrt: only shapes may be optional");
    return "const Shape *";
  }
  return type;
}

std::string parameterDeclaration(const NamedAttribute &named) {
  std::string type = runtimeParameterType(named);
  std::string text = type;
  if (!StringRef(type).ends_with("&") && !StringRef(type).ends_with("*"))
    text += " ";
  text += named.name.str();
  const Record &def = named.attr.getDef();
  if (def.getValue("runtimeDefault"))
    text += " = " + def.getValueAsString("runtimeDefault").str();
  return text;
}

/// run()'s parameters: names of operands and results in the op's order.
struct RunParameter {
  StringRef name;
  bool write = false;
  bool variadic = false;
  bool optional = false;
  unsigned index = 0; // among the operands or the results
};

SmallVector<RunParameter> runParameters(const Operator &op) {
  SmallVector<RunParameter> byName;
  for (int i = 0, e = op.getNumOperands(); i < e; ++i) {
    const NamedTypeConstraint &operand = op.getOperand(i);
    byName.push_back({operand.name, false, operand.isVariadic(),
                      operand.isOptional(), unsigned(i)});
  }
  for (int i = 0, e = op.getNumResults(); i < e; ++i) {
    const NamedTypeConstraint &result = op.getResult(i);
    byName.push_back({result.name, true, result.isVariadic(),
                      result.isOptional(), unsigned(i)});
  }
  std::vector<StringRef> order =
      op.getDef().getValueAsListOfStrings("runOrder");
  if (order.empty())
    return byName;
  if (order.size() != byName.size())
    llvm::PrintFatalError(&op.getDef(),
                          "hpsrt: runOrder must name every operand and "
                          "result once");
  SmallVector<RunParameter> ordered;
  for (StringRef name : order) {
    auto *found = llvm::find_if(
        byName, [&](const RunParameter &p) { return p.name == name; });
    if (found == byName.end())
      llvm::PrintFatalError(&op.getDef(),
                            "hpsrt: runOrder names no operand or result '" +
                                name + "'");
    ordered.push_back(*found);
  }
  return ordered;
}

std::vector<std::string> runDeclarations(const Operator &op) {
  SmallVector<RunParameter> params = runParameters(op);
  // Optional reads at the end may be left out by callers.
  size_t defaulted = params.size();
  while (defaulted > 0 && !params[defaulted - 1].write &&
         params[defaulted - 1].optional)
    --defaulted;
  std::vector<std::string> text;
  for (auto [i, p] : llvm::enumerate(params)) {
    std::string type =
        p.write ? (p.variadic ? "void *const *" : "void *")
                : (p.variadic ? "const void *const *" : "const void *");
    text.push_back(type + p.name.str() + (i >= defaulted ? " = nullptr" : ""));
  }
  return text;
}

//===----------------------------------------------------------------------===//
// -gen-kernel-api
//===----------------------------------------------------------------------===//

bool emitKernelAPI(const RecordKeeper &records, llvm::raw_ostream &os) {
  os << "//===- KernelClasses.inc - Generated from HPSRTOps.td --------*- C++ "
        "-*-===//\n"
        "//\n"
        "// Generated by heterps-tblgen -gen-kernel-api from\n"
        "// include/heterps/Dialect/HPSRT/IR/HPSRTOps.td: do not edit. The "
        "build\n"
        "// regenerates it and fails when this copy differs (see\n"
        "// lib/Dialect/HPSRT/IR/CMakeLists.txt). Included by KernelAPI.inc.\n"
        "//\n"
        "//===------------------------------------------------------------"
        "----------===//\n";
  // Ops of one class (Loss's run and runGradient) share one declaration.
  std::map<std::string, std::vector<Operator>> byClass;
  std::vector<std::string> classOrder;
  for (const Record *def : kernelOps(records)) {
    std::string cls = def->getValueAsString("kernelClass").str();
    if (!byClass.count(cls))
      classOrder.push_back(cls);
    byClass[cls].emplace_back(def);
  }
  for (const std::string &cls : classOrder) {
    const std::vector<Operator> &ops = byClass[cls];
    const Operator &first = ops.front();
    std::vector<std::string> ctor = {"Context &ctx"};
    for (const NamedAttribute &named : first.getAttributes())
      ctor.push_back(parameterDeclaration(named));
    for (const Operator &other : ops) {
      std::vector<std::string> same = {"Context &ctx"};
      for (const NamedAttribute &named : other.getAttributes())
        same.push_back(parameterDeclaration(named));
      if (same != ctor)
        llvm::PrintFatalError(&other.getDef(),
                              "hpsrt: ops of kernel class " + cls +
                                  " must have the same attributes");
    }
    os << "\n" << docComment(first.getDescription(), "");
    os << "class " << cls << " {\npublic:\n";
    os << declaration("  " + cls, ctor, ";");
    for (const Operator &op : ops) {
      StringRef runDoc = op.getDef().getValueAsString("runDescription");
      if (!runDoc.trim().empty())
        os << docComment(runDoc, "  ");
      os << declaration(
          ("  void " + op.getDef().getValueAsString("runMethod")).str(),
          runDeclarations(op), ";");
    }
    os << "  HPS_RT_KERNEL_BOILERPLATE(" << cls << ")\n};\n";
  }
  // Shared constants have the values the compiler assumes.
  os << "\n";
  for (const Record *def :
       records.getAllDerivedDefinitions("HPSRT_SharedConstant"))
    os << llvm::formatv("static_assert({0} == {1},\n              \"{0}: "
                        "as HPSRTAttrs.td says\");\n",
                        def->getValueAsString("name"),
                        def->getValueAsString("value"));
  // The parameter structs have the struct attributes' fields, in order.
  for (const Record *def : records.getAllDerivedDefinitions("HPSRT_Struct")) {
    std::string name = def->getValueAsString("structName").str();
    AttrDef attr(def);
    ArrayRef<AttrOrTypeParameter> params = attr.getParameters();
    os << "\n";
    std::vector<StringRef> defaults = def->getValueAsListOfStrings("defaults");
    if (!defaults.empty() && defaults.size() != params.size())
      llvm::PrintFatalError(def, "hpsrt: a default for each field, or none");
    // Defaults of structs are their own fields' (checked there).
    for (auto [param, fallback] : llvm::zip(params, defaults))
      if (!fallback.ends_with("{}"))
        os << llvm::formatv("static_assert({0}{{}.{1} == {2},\n"
                            "              \"{0}: {1}'s default in "
                            "HPSRTAttrs.td\");\n",
                            name, param.getName(), fallback);
    for (size_t i = 1; i < params.size(); ++i)
      os << llvm::formatv("static_assert(offsetof({0}, {1}) <\n"
                          "                  offsetof({0}, {2}),\n"
                          "              \"{0}: fields in HPSRTAttrs.td's "
                          "order\");\n",
                          name, params[i - 1].getName(), params[i].getName());
  }
  return false;
}

std::string qualifiedAttrName(const AttrDef &attr) {
  return (attr.getDialect().getCppNamespace() + "::" + attr.getCppClassName())
      .str();
}

/// The HPSRT enum attributes, each with its enum's definition.
std::vector<std::pair<const Record *, const Record *>>
runtimeEnums(const RecordKeeper &records) {
  std::vector<std::pair<const Record *, const Record *>> enums;
  for (const Record *def : records.getAllDerivedDefinitions("EnumAttr"))
    if (def->getValueAsDef("dialect")->getName() == "HPSRT_Dialect")
      enums.push_back({def, def->getValueAsDef("enum")});
  return enums;
}

//===----------------------------------------------------------------------===//
// -gen-kernel-calls
//===----------------------------------------------------------------------===//

/// The expression that prints the constructor argument `named` of `op`.
std::string argumentLiteral(const Operator &op, const NamedAttribute &named) {
  Attribute base = named.attr.getBaseAttr();
  const Record &def = base.getDef();
  std::string getter = op.getGetterName(named.name);
  if (def.isSubClassOf("EnumAttr")) {
    const Record *info = def.getValueAsDef("enum");
    return llvm::formatv("enumLiteral(\"{0}\", {1}::{2}(op.{3}()))",
                         info->getValueAsString("className"),
                         info->getValueAsString("cppNamespace"),
                         info->getValueAsString("symbolToStringFnName"), getter)
        .str();
  }
  return llvm::formatv("parameterLiteral(op.{0}Attr(), \"{1}\")", getter,
                       runtimeParameterType(named))
      .str();
}

bool emitKernelCalls(const RecordKeeper &records, llvm::raw_ostream &os) {
  llvm::emitSourceFileHeader("Kernel calls of the hpsrt ops", os);
  std::vector<std::string> classes;
  for (const Record *def : kernelOps(records)) {
    Operator op(def);
    std::string cls = op.getQualCppClassName();
    classes.push_back(cls);
    os << "static KernelCall describeKernelCall(" << cls << " op) {\n"
       << "  KernelCall call;\n"
       << "  call.kernelClass = \"" << def->getValueAsString("kernelClass")
       << "\";\n"
       << "  call.runMethod = \"" << def->getValueAsString("runMethod")
       << "\";\n";
    for (const NamedAttribute &named : op.getAttributes())
      os << "  call.constructorArguments.push_back("
         << argumentLiteral(op, named) << ");\n";
    for (const RunParameter &p : runParameters(op)) {
      std::string getter = op.getGetterName(p.name);
      os << llvm::formatv("  call.runArguments.push_back(RunArgument{{\"{0}\", "
                          "{1}, {2}, valuesOf(op.{3}())});\n",
                          p.name, p.write ? "true" : "false",
                          p.variadic ? "true" : "false", getter);
    }
    os << "  return call;\n}\n\n";
  }
  os << "std::optional<KernelCall> describeKernelCall(::mlir::Operation *op) "
        "{\n"
     << "  return ::llvm::TypeSwitch<::mlir::Operation *, "
        "std::optional<KernelCall>>(op)\n";
  for (const std::string &cls : classes)
    os << "      .Case([](" << cls
       << " op) { return describeKernelCall(op); })\n";
  os << "      .Default([](::mlir::Operation *) { return std::nullopt; "
        "});\n}\n";
  os << "\nbool isKernelOp(::mlir::Operation *op) {\n  return ::llvm::isa<";
  llvm::interleaveComma(classes, os);
  os << ">(op);\n}\n";

  // Struct attributes print as the runtime's struct, fields in order.
  for (const Record *def : records.getAllDerivedDefinitions("HPSRT_Struct")) {
    AttrDef attr(def);
    std::string name = def->getValueAsString("structName").str();
    os << "\nstd::string structLiteral(" << attr.getCppClassName()
       << " attr) {\n  std::vector<std::string> fields = {";
    for (auto [i, param] : llvm::enumerate(attr.getParameters()))
      os << (i ? ", " : "") << "attributeLiteral(attr.get"
         << llvm::convertToCamelFromSnakeCase(param.getName(), true) << "())";
    os << "};\n  std::vector<std::string> defaults = {";
    for (auto [i, fallback] :
         llvm::enumerate(def->getValueAsListOfStrings("defaults")))
      os << (i ? ", " : "") << "\"" << fallback << "\"";
    os << "};\n  return \"" << name
       << "\" + fieldsLiteral(fields, defaults);\n}\n";
  }
  os << "\nstd::optional<std::string> structAttributeLiteral("
        "::mlir::Attribute attr) {\n";
  for (const Record *def : records.getAllDerivedDefinitions("HPSRT_Struct"))
    os << "  if (auto a = ::llvm::dyn_cast<" << AttrDef(def).getCppClassName()
       << ">(attr))\n    return structLiteral(a);\n";
  os << "  return std::nullopt;\n}\n";
  os << "\nstd::optional<std::string> enumAttributeLiteral("
        "::mlir::Attribute attr) {\n";
  for (auto [def, info] : runtimeEnums(records)) {
    os << llvm::formatv("  if (auto a = ::llvm::dyn_cast<{0}>(attr))\n"
                        "    return enumLiteral(\"{1}\", {2}::{3}("
                        "a.getValue()));\n",
                        AttrDef(def).getCppClassName(),
                        info->getValueAsString("className"),
                        info->getValueAsString("cppNamespace"),
                        info->getValueAsString("symbolToStringFnName"));
  }
  os << "  return std::nullopt;\n}\n";
  return false;
}

/// Each kernel op's verifier: a shape attribute `N` the kernel is built
/// with must be the shape of the operand or result `NData` it runs on, so a
/// lowering that builds a kernel for one shape and hands it a buffer of
/// another fails when the IR is verified, not in a user's bundle.
bool emitKernelVerifiers(const RecordKeeper &records, llvm::raw_ostream &os) {
  llvm::emitSourceFileHeader("Verifiers of the hpsrt kernel ops", os);
  for (const Record *def : kernelOps(records)) {
    Operator op(def);
    // Unqualified at the front: `::mlir::LogicalResult ::heterps::...`
    // would name a member of LogicalResult.
    os << "::mlir::LogicalResult "
       << StringRef(op.getQualCppClassName()).drop_while([](char c) {
            return c == ':';
          })
       << "::verify() {\n";
    auto valueNamed = [&](StringRef name) -> std::optional<std::string> {
      for (int i = 0, e = op.getNumOperands(); i < e; ++i)
        if (op.getOperand(i).name == name)
          return op.getGetterName(name);
      for (int i = 0, e = op.getNumResults(); i < e; ++i)
        if (op.getResultName(i) == name)
          return op.getGetterName(name);
      return std::nullopt;
    };
    // The element types the runtime class runs, where it does not run all.
    std::vector<StringRef> types = def->getValueAsListOfStrings("elementTypes");
    if (!types.empty()) {
      std::string list;
      for (StringRef type : types)
        list += (list.empty() ? "\"" : ", \"") + type.str() + "\"";
      os << llvm::formatv(
          "  if (::mlir::failed(verifyElementType(*this, \"{0}\", {1}(), "
          "{{{2}})))\n    return ::mlir::failure();\n",
          def->getValueAsString("kernelClass"), op.getGetterName("type"),
          list);
    }
    for (const NamedAttribute &named : op.getAttributes()) {
      if (named.attr.isOptional() ||
          named.attr.getStorageType().trim() != "::mlir::DenseI64ArrayAttr")
        continue;
      std::optional<std::string> value =
          valueNamed((named.name + "Data").str());
      if (!value)
        continue;
      os << llvm::formatv(
          "  if (::mlir::failed(verifyShapeAttribute(*this, \"{0}\", {1}(), "
          "{2}())))\n    return ::mlir::failure();\n",
          named.name, op.getGetterName(named.name), *value);
    }
    os << "  return ::mlir::success();\n}\n\n";
  }
  return false;
}

//===----------------------------------------------------------------------===//
// -gen-kernel-factory
//===----------------------------------------------------------------------===//

/// The runtime value type of a constructor parameter: its declared type
/// without `const` and `&`.
std::string runtimeValueType(const NamedAttribute &named) {
  std::string declared = runtimeParameterType(named);
  StringRef type = declared;
  type.consume_front("const ");
  type.consume_back(" &");
  type.consume_back(" *");
  return type.str();
}

/// Generated code runs inside `using namespace heterps::rt` (the runtime's
/// names unqualified, as in a stage program); the compiler's are qualified.
bool emitKernelFactory(const RecordKeeper &records, llvm::raw_ostream &os) {
  llvm::emitSourceFileHeader("Runtime kernels of the hpsrt ops", os);
  // Enums: case by case, by name, so a runtime enum missing a case fails
  // the build.
  for (auto [attr, info] : runtimeEnums(records)) {
    StringRef name = info->getValueAsString("className");
    std::string qualified =
        (info->getValueAsString("cppNamespace") + "::" + name).str();
    os << "template <>\n"
       << name << " runtimeValue<" << name
       << ">(::mlir::Attribute attr) {\n  switch (::llvm::cast<"
       << qualifiedAttrName(AttrDef(attr)) << ">(attr).getValue()) {\n";
    for (const EnumAttrCase &kase : mlir::tblgen::EnumAttr(info).getAllCases())
      os << llvm::formatv("  case {0}::{1}:\n    return {2}::{1};\n", qualified,
                          kase.getSymbol(), name);
    os << "  }\n  ::llvm::report_fatal_error(\"hpsrt: an unknown " << name
       << "\");\n}\n\n";
  }
  // Structs: field by field, by name.
  for (const Record *def : records.getAllDerivedDefinitions("HPSRT_Struct")) {
    AttrDef attr(def);
    std::string name = def->getValueAsString("structName").str();
    os << "template <>\n"
       << name << " runtimeValue<" << name
       << ">(::mlir::Attribute attr) {\n  auto a = ::llvm::cast<"
       << qualifiedAttrName(attr) << ">(attr);\n  " << name << " value;\n";
    for (const AttrOrTypeParameter &param : attr.getParameters())
      os << llvm::formatv(
          "  assignField(value.{0}, a.get{1}());\n", param.getName(),
          llvm::convertToCamelFromSnakeCase(param.getName(), true));
    os << "  return value;\n}\n\n";
  }
  std::vector<std::string> classes;
  for (const Record *def : kernelOps(records)) {
    Operator op(def);
    std::string cls = op.getQualCppClassName();
    std::string kernel = "cpu::" + def->getValueAsString("kernelClass").str();
    classes.push_back(cls);
    os << "static std::unique_ptr<RuntimeKernel>\nbuildKernel(" << cls
       << " op, cpu::Context &ctx) {\n";
    // Absent optional shapes are null pointers.
    std::vector<std::string> arguments = {"ctx"};
    for (const NamedAttribute &named : op.getAttributes()) {
      std::string getter = op.getGetterName(named.name) + "Attr";
      std::string type = runtimeValueType(named);
      if (named.attr.isOptional()) {
        os << llvm::formatv("  std::optional<{0}> {1};\n  if (op.{2}())\n"
                            "    {1} = runtimeValue<{0}>(op.{2}());\n",
                            type, named.name, getter);
        arguments.push_back(
            llvm::formatv("{0} ? &*{0} : nullptr", named.name).str());
        continue;
      }
      arguments.push_back(
          llvm::formatv("runtimeValue<{0}>(op.{1}())", type, getter).str());
    }
    os << "  auto kernel = std::make_unique<" << kernel << ">(\n      "
       << llvm::join(arguments, ",\n      ") << ");\n";
    // run()'s pointers: each parameter's operands or results by position.
    SmallVector<RunParameter> params = runParameters(op);
    for (const RunParameter &p : params)
      os << llvm::formatv("  auto {0}At = op.getODS{1}IndexAndLength({2});\n",
                          p.name, p.write ? "Result" : "Operand", p.index);
    os << "  return bindKernel(std::move(kernel),\n"
       << "                    [=](" << kernel
       << " &k, Buffers in, MutableBuffers out) {\n";
    std::vector<std::string> runArguments;
    for (const RunParameter &p : params) {
      StringRef buffers = p.write ? "out" : "in";
      if (p.variadic) {
        os << llvm::formatv("    auto {0} = {1}.slice({0}At.first, "
                            "{0}At.second).vec();\n",
                            p.name, buffers);
        runArguments.push_back((p.name + ".data()").str());
        continue;
      }
      runArguments.push_back(
          llvm::formatv("pointerAt({0}, {1}At)", buffers, p.name).str());
    }
    os << "    k." << def->getValueAsString("runMethod") << "(\n        "
       << llvm::join(runArguments, ",\n        ") << ");\n  });\n}\n\n";
  }
  os << "std::unique_ptr<RuntimeKernel> buildKernel(::mlir::Operation *op, "
        "cpu::Context &ctx) {\n"
     << "  return ::llvm::TypeSwitch<::mlir::Operation *, "
        "std::unique_ptr<RuntimeKernel>>(op)\n";
  for (const std::string &cls : classes)
    os << "      .Case([&](" << cls
       << " op) { return buildKernel(op, ctx); })\n";
  os << "      .Default([](::mlir::Operation *) { return nullptr; });\n}\n";
  return false;
}

/// The shared constants, for the compiler.
bool emitKernelConstants(const RecordKeeper &records, llvm::raw_ostream &os) {
  llvm::emitSourceFileHeader("Constants the compiler shares with the runtime",
                             os);
  for (const Record *def :
       records.getAllDerivedDefinitions("HPSRT_SharedConstant"))
    os << "constexpr " << def->getValueAsString("type") << " "
       << def->getValueAsString("name") << " = "
       << def->getValueAsString("value") << ";\n";
  return false;
}

mlir::GenRegistration
    kernelConstants("gen-kernel-constants",
                    "Constants the compiler shares with the runtime",
                    emitKernelConstants);
mlir::GenRegistration kernelAPI("gen-kernel-api",
                                "The runtime's kernel class declarations",
                                emitKernelAPI);
mlir::GenRegistration kernelVerifiers("gen-kernel-verifiers",
                                      "The hpsrt kernel ops' verifiers",
                                      emitKernelVerifiers);
mlir::GenRegistration kernelFactory("gen-kernel-factory",
                                    "The runtime kernels of the hpsrt ops",
                                    emitKernelFactory);
mlir::GenRegistration kernelCalls("gen-kernel-calls",
                                  "The compiler's kernel call descriptions",
                                  emitKernelCalls);

} // namespace
