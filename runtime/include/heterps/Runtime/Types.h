//===- Types.h - Element types, shapes and errors of the runtime -*- C++
//-*-===//
//
// Plain C++ shared by the kernel libraries, generated stage programs and the
// executor. The runtime depends on none of the compiler: a bundle carries
// everything it needs as data.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_TYPES_H
#define HETERPS_RUNTIME_TYPES_H

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace heterps::rt {

/// Element types, named as in the bundle manifest ("f32", "i64", ...).
/// Bool is one byte holding 0 or 1.
enum class DType : uint8_t {
  F32,
  F64,
  F16,
  BF16,
  I8,
  U8,
  I16,
  U16,
  I32,
  U32,
  I64,
  U64,
  Bool
};

/// Bytes per element.
size_t dtypeSize(DType type);
/// "f32", "i64", "bool", ...
const char *dtypeName(DType type);
/// The inverse of dtypeName; throws Error for an unknown name.
DType parseDType(const std::string &name);
bool isFloat(DType type);

using Shape = std::vector<int64_t>;
/// Product of the extents (1 for rank 0).
int64_t numElements(const Shape &shape);
/// "2x3x4" ("scalar" for rank 0).
std::string shapeString(const Shape &shape);

/// Everything the runtime reports: kernel construction with parameters a
/// backend cannot run, out-of-range ids, I/O. The message names the thing.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Throws Error "'PATH' is a FIFO, not a regular file" (a directory, a
/// device or socket) where `path` exists and is not a regular file; a
/// missing one is left to its opening. Readers check before they open: a
/// FIFO without a writer blocks the open, a device (/dev/zero) reads for
/// ever.
void requireRegularFile(const std::string &path);

/// Elementwise functions of one tensor. Parameters live in UnaryParams.
enum class UnaryKind {
  Identity,
  Relu,
  Sigmoid,
  Tanh,
  GeluErf,  // x * Phi(x)
  GeluTanh, // tanh approximation
  Erf,
  Exp,
  Log,
  Sqrt,
  Abs,
  Neg,
  Reciprocal,
  Floor,
  Ceil,
  Round, // half to even
  Sign,
  Sin,
  Cos,
  Asin,
  Acos,
  Atan,
  Softplus,
  Softsign,
  HardSwish,
  Not,             // bool only
  LeakyRelu,       // alpha
  Elu,             // alpha
  Celu,            // alpha
  Selu,            // alpha, gamma = beta
  HardSigmoid,     // alpha, beta
  ThresholdedRelu, // alpha
  Clip             // lo, hi (open bounds are +-infinity)
};

struct UnaryParams {
  float alpha = 0.0f;
  float beta = 0.0f;
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
};

/// The cell of an ONNX recurrent op (RNN, GRU, LSTM).
enum class RecurrentCell { RNN, GRU, LSTM };

/// One direction of a recurrent op, as the Recurrent kernel runs it:
/// `activations` are ONNX's f (RNN); f, g (GRU); f, g, h (LSTM), each
/// Sigmoid, Tanh or Relu; `clip` bounds the inputs of f and g when
/// hasClip.
struct RecurrentParams {
  RecurrentCell cell = RecurrentCell::LSTM;
  int64_t steps = 0, batch = 0, hidden = 0;
  bool reverse = false;
  UnaryKind activations[3] = {UnaryKind::Sigmoid, UnaryKind::Tanh,
                              UnaryKind::Tanh};
  bool hasClip = false;
  float clip = 0.0f;
  bool linearBeforeReset = false; // GRU
  bool hasRecurrentBias = false, hasLengths = false, hasPeepholes = false;
  /// When positive: the kernel projects an input of this size itself, a few
  /// steps at a time, instead of reading a projection made before it
  /// (which takes T x B x G floats of memory and a pass through it).
  int64_t input = 0;
};

/// Gates per hidden unit: RNN 1, GRU 3 (z, r, h), LSTM 4 (i, o, f, c).
int64_t gatesPerUnit(RecurrentCell cell);
/// The activations a cell uses: 1 (RNN), 2 (GRU) or 3 (LSTM).
int activationsOf(RecurrentCell cell);
/// Throws Error("Recurrent: ...") for parameters no backend runs: sizes
/// that are not positive, an activation other than Sigmoid, Tanh and Relu,
/// a negative clip, peepholes on a cell other than LSTM.
void checkRecurrentParams(const RecurrentParams &params);

/// An activation fused after a dense kernel (Gemm, MatMul, Conv).
struct Activation {
  UnaryKind kind = UnaryKind::Identity;
  UnaryParams params;
};

/// How an NC[D]HW activation tensor is laid out in memory. Plain: dense
/// row-major. Native: the layout the backend's convolutions work in (cpu:
/// oneDNN's channel-blocked nC[D]HW8c, or 16c where AVX-512 is there; gpu:
/// Plain). A code generator picks Native only for f32 tensors whose channel
/// count is a multiple of kNativeChannelMultiple: such a tensor has exactly
/// the bytes of a plain one, so elementwise kernels over operands of one
/// shape (all in one layout) work on it unchanged, and chains of
/// convolutions skip the reorders in between. ChannelsLast: N[D]HWC, of any
/// element type and channel count (cpu: the layout oneDNN's int8
/// convolutions run in, so chains of quantized convolutions keep it; gpu:
/// not supported).
enum class Layout { Plain, Native, ChannelsLast };
constexpr int64_t kNativeChannelMultiple = 16;

/// The layouts of a convolution's x-shaped and y-shaped activations (for
/// its adjoints: x or dx, and dy).
struct ConvLayouts {
  Layout x = Layout::Plain;
  Layout y = Layout::Plain;
};

/// Optional parts of a Conv: the layouts of x and y, and a residual added
/// before the activation, y = act(conv(x) + bias + residual), with the
/// residual of y's shape and layout (a ResNet block's shortcut).
struct ConvOptions {
  Layout x = Layout::Plain;
  Layout y = Layout::Plain;
  bool residual = false;
  /// The operands are integers whose sums f32 holds exactly in any order (a
  /// quantized conv): no algorithm that rounds in between (Winograd, FFT).
  bool exact = false;
};

/// Elementwise functions of two tensors with numpy broadcasting.
/// Comparisons produce Bool. Div truncates for integers; Mod takes the sign
/// of the divisor (Python), FMod of the dividend (C). PRelu: lhs if lhs >= 0
/// else rhs * lhs. And/Or/Xor are on Bool.
enum class BinaryKind {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Max,
  Min,
  Mod,
  FMod,
  PRelu,
  And,
  Or,
  Xor,
  Equal,
  Less,
  LessEqual,
  Greater,
  GreaterEqual,
  // Bitwise, on integers (ONNX BitwiseAnd / Or / Xor); And, Or and Xor are
  // the logical ones, on bool.
  BitAnd,
  BitOr,
  BitXor
};

/// ONNX reductions: L1 = sum |x|, L2 = sqrt(sum x^2), LogSum = log(sum x),
/// LogSumExp = log(sum exp x), SumSquare = sum x^2. Over an empty set: Sum 0,
/// Prod 1, Max -inf (lowest), Min +inf (highest).
enum class ReduceKind {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  LogSum,
  LogSumExp,
  SumSquare
};

/// "Relu", "Add", "LogSumExp", ...: the enumerators' names, for messages.
const char *unaryKindName(UnaryKind kind);
const char *binaryKindName(BinaryKind kind);
const char *reduceKindName(ReduceKind kind);

enum class PoolKind { Max, AvgExcludePad, AvgIncludePad };
enum class PadMode { Constant, Reflect, Edge };
enum class EmbeddingPooling { None, Sum, Mean };
/// How Scatter combines an update with the element it lands on.
enum class ScatterReduction { None, Add, Mul, Max, Min };

/// Training losses (hps.loss / hps.loss_grad): binary cross-entropy per
/// element, cross-entropy of a softmax over each sample's classes, mean
/// squared error.
enum class LossKind { BCE, SoftmaxCE, MSE };

/// "bce", "softmax_ce", "mse": the names the IR and bundles use.
const char *lossKindName(LossKind kind);
/// Checks a Loss kernel's parameters (both backends take the same): throws
/// Error naming the bad one. Returns the gradient's scale: 1/n for
/// softmax_ce (one loss per sample), 1/(n*m) otherwise.
float checkLossParameters(DType type, LossKind kind, int64_t n, int64_t m);

} // namespace heterps::rt

#endif // HETERPS_RUNTIME_TYPES_H
