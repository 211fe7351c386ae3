//===- Types.cpp - Element types and shapes -------------------------------===//

#include "heterps/Runtime/Types.h"

#include <array>
#include <cstring>
#include <sys/stat.h>

namespace heterps::rt {
namespace {
struct DTypeInfo {
  DType type;
  const char *name;
  size_t size;
};
constexpr std::array<DTypeInfo, 13> kDTypes = {{
    {DType::F32, "f32", 4},
    {DType::F64, "f64", 8},
    {DType::F16, "f16", 2},
    {DType::BF16, "bf16", 2},
    {DType::I8, "i8", 1},
    {DType::U8, "u8", 1},
    {DType::I16, "i16", 2},
    {DType::U16, "u16", 2},
    {DType::I32, "i32", 4},
    {DType::U32, "u32", 4},
    {DType::I64, "i64", 8},
    {DType::U64, "u64", 8},
    {DType::Bool, "bool", 1},
}};
} // namespace

size_t dtypeSize(DType type) { return kDTypes[size_t(type)].size; }
const char *dtypeName(DType type) { return kDTypes[size_t(type)].name; }

DType parseDType(const std::string &name) {
  for (const DTypeInfo &info : kDTypes)
    if (name == info.name)
      return info.type;
  throw Error("unknown element type '" + name + "'");
}

bool isFloat(DType type) {
  return type == DType::F32 || type == DType::F64 || type == DType::F16 ||
         type == DType::BF16;
}

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string shapeString(const Shape &shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

namespace {
template <size_t N>
const char *nameAt(const char *const (&names)[N], size_t index) {
  return index < N ? names[index] : "?";
}
} // namespace

const char *unaryKindName(UnaryKind kind) {
  static const char *const names[] = {
      "Identity",   "Relu",     "Sigmoid",     "Tanh",
      "GeluErf",    "GeluTanh", "Erf",         "Exp",
      "Log",        "Sqrt",     "Abs",         "Neg",
      "Reciprocal", "Floor",    "Ceil",        "Round",
      "Sign",       "Sin",      "Cos",         "Asin",
      "Acos",       "Atan",     "Softplus",    "Softsign",
      "HardSwish",  "Not",      "LeakyRelu",   "Elu",
      "Celu",       "Selu",     "HardSigmoid", "ThresholdedRelu",
      "Clip"};
  return nameAt(names, size_t(kind));
}

const char *binaryKindName(BinaryKind kind) {
  static const char *const names[] = {
      "Add",    "Sub",   "Mul",   "Div",       "Pow",     "Max",
      "Min",    "Mod",   "FMod",  "PRelu",     "And",     "Or",
      "Xor",    "Equal", "Less",  "LessEqual", "Greater", "GreaterEqual",
      "BitAnd", "BitOr", "BitXor"};
  return nameAt(names, size_t(kind));
}

const char *reduceKindName(ReduceKind kind) {
  static const char *const names[] = {"Sum",       "Mean",     "Max", "Min",
                                      "Prod",      "L1",       "L2",  "LogSum",
                                      "LogSumExp", "SumSquare"};
  return nameAt(names, size_t(kind));
}

const char *lossKindName(LossKind kind) {
  static const char *const names[] = {"bce", "softmax_ce", "mse"};
  return nameAt(names, size_t(kind));
}

float checkLossParameters(DType type, LossKind kind, int64_t n, int64_t m) {
  if (type != DType::F32)
    throw Error(std::string("Loss: element type ") + dtypeName(type) +
                " is not supported (f32 only)");
  if (kind != LossKind::BCE && kind != LossKind::SoftmaxCE &&
      kind != LossKind::MSE)
    throw Error("Loss: unknown loss kind " + std::to_string(int(kind)));
  if (n <= 0)
    throw Error(std::string("Loss (") + lossKindName(kind) +
                "): sample count n = " + std::to_string(n) +
                " is not positive");
  if (m <= 0)
    throw Error(
        std::string("Loss (") + lossKindName(kind) + "): " +
        (kind == LossKind::SoftmaxCE ? "class count" : "elements per sample") +
        " m = " + std::to_string(m) + " is not positive");
  return float(kind == LossKind::SoftmaxCE ? 1.0 / double(n)
                                           : 1.0 / (double(n) * double(m)));
}

int64_t gatesPerUnit(RecurrentCell cell) {
  switch (cell) {
  case RecurrentCell::RNN:
    return 1;
  case RecurrentCell::GRU:
    return 3;
  case RecurrentCell::LSTM:
    return 4;
  }
  throw Error("Recurrent: unknown cell kind " + std::to_string(int(cell)));
}

int activationsOf(RecurrentCell cell) {
  return cell == RecurrentCell::RNN ? 1 : cell == RecurrentCell::GRU ? 2 : 3;
}

void checkRecurrentParams(const RecurrentParams &p) {
  gatesPerUnit(p.cell); // a known cell
  if (p.steps < 1 || p.batch < 1 || p.hidden < 1)
    throw Error("Recurrent: steps " + std::to_string(p.steps) + ", batch " +
                std::to_string(p.batch) + " and hidden size " +
                std::to_string(p.hidden) + " must be positive");
  for (int i = 0, e = activationsOf(p.cell); i < e; ++i)
    if (p.activations[i] != UnaryKind::Sigmoid &&
        p.activations[i] != UnaryKind::Tanh &&
        p.activations[i] != UnaryKind::Relu)
      throw Error("Recurrent: activation " + std::to_string(i) +
                  " is not Sigmoid, Tanh or Relu");
  if (p.hasClip && !(p.clip >= 0.0f))
    throw Error("Recurrent: clip " + std::to_string(p.clip) +
                " must be non-negative");
  if (p.hasPeepholes && p.cell != RecurrentCell::LSTM)
    throw Error("Recurrent: peepholes belong to LSTM cells only");
  if (p.input < 0)
    throw Error("Recurrent: input size " + std::to_string(p.input) +
                " is negative");
}

void requireRegularFile(const std::string &path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0 || S_ISREG(status.st_mode))
    return;
  throw Error("'" + path + "' is " +
              (S_ISDIR(status.st_mode)    ? "a directory"
               : S_ISFIFO(status.st_mode) ? "a FIFO"
                                          : "a device or socket") +
              ", not a regular file");
}

} // namespace heterps::rt
