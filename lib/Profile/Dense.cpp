//===- Dense.cpp - gemm, matmul and conv as oneDNN primitives -------------===//

#include "Kernel.h"

#include "heterps/Dialect/HPS/IR/HPSOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace heterps::hps;
using namespace heterps::profile::detail;
using tag = dnnl::memory::format_tag;

namespace {

/// A 2-D operand of `rows` x `cols` read transposed from its stored layout
/// when `transposed` (the stored tensor is cols x rows): strides do the
/// transpose, so no copy is timed.
dnnl::memory::desc matrix(int64_t rows, int64_t cols, dt type,
                          bool transposed) {
  return dnnl::memory::desc({rows, cols}, type,
                            transposed ? Dims{1, rows} : Dims{cols, 1});
}

void buildGemm(GemmOp gemm, KernelBuilder &b) {
  Dims a = b.dims(gemm.getA().getType()), w = b.dims(gemm.getB().getType());
  if (a.size() != 2 || w.size() != 2)
    throw Unsupported{"gemm operands must be 2-D"};
  int64_t m = gemm.getTransA() ? a[1] : a[0];
  int64_t k = gemm.getTransA() ? a[0] : a[1];
  int64_t n = gemm.getTransB() ? w[0] : w[1];
  dt type = b.dataType(gemm.getResult().getType());
  auto src = matrix(m, k, b.dataType(gemm.getA().getType()), gemm.getTransA());
  auto weights =
      matrix(k, n, b.dataType(gemm.getB().getType()), gemm.getTransB());
  auto dst = KernelBuilder::plain({m, n}, type);
  // C broadcasts to (M, N): matmul's bias takes any of 1xN, Mx1, MxN, 1x1.
  dnnl::memory::desc bias;
  if (Value c = gemm.getC()) {
    Dims cDims = padRank(b.dims(c.getType()), 2);
    if (cDims.size() != 2)
      throw Unsupported{"gemm C of rank above 2"};
    bias = KernelBuilder::plain(cDims, b.dataType(c.getType()));
  }
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, bias, dst),
                                  b.getEngine());
  b.add(pd, dnnl::matmul(pd));
}

void buildMatMul(MatMulOp matmul, KernelBuilder &b) {
  Dims a = b.dims(matmul.getA().getType()), w = b.dims(matmul.getB().getType());
  auto aType = cast<RankedTensorType>(matmul.getA().getType());
  auto wType = cast<RankedTensorType>(matmul.getB().getType());
  // numpy promotion of 1-D operands; the dropped unit dim costs nothing.
  if (aType.getRank() == 1)
    a = {1, a[0]};
  if (wType.getRank() == 1)
    w = {w[0], 1};
  size_t rank = std::max(a.size(), w.size());
  a = padRank(a, rank);
  w = padRank(w, rank);
  Dims d(rank);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (a[i] != w[i] && a[i] != 1 && w[i] != 1)
      throw Unsupported{"matmul batch dims do not broadcast"};
    d[i] = std::max(a[i], w[i]);
  }
  d[rank - 2] = a[rank - 2];
  d[rank - 1] = w[rank - 1];
  dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(
          KernelBuilder::plain(a, b.dataType(matmul.getA().getType())),
          KernelBuilder::plain(w, b.dataType(matmul.getB().getType())),
          KernelBuilder::plain(d, b.dataType(matmul.getResult().getType()))),
      b.getEngine());
  b.add(pd, dnnl::matmul(pd));
}

/// `values` if it has `n` entries, else `n` copies of `fallback`.
void buildConv(ConvOp conv, KernelBuilder &b) {
  Dims src = b.dims(conv.getInput().getType());
  Dims filter = b.dims(conv.getFilter().getType());
  Dims dst = b.dims(conv.getResult().getType());
  if (src.size() < 3 || src.size() > 5 || filter.size() != src.size())
    throw Unsupported{"oneDNN convolutions are 1-D to 3-D"};
  size_t n = src.size() - 2;
  int64_t group = std::max<int64_t>(conv.getGroup(), 1);
  Dims strides = spatial(conv.getStrides(), n, 1);
  WindowDims window = windowDims(conv.getDilations(), conv.getPads(), n);
  Dims weights = filter;
  if (group > 1) {
    weights[0] /= group;
    weights.insert(weights.begin(), group);
  }
  dt type = b.dataType(conv.getResult().getType());
  // Activations stay in the plain NC[D]HW layout layers exchange; weights
  // take oneDNN's preferred layout, a one-off reorder at load time.
  dnnl::memory::desc bias;
  if (Value value = conv.getBias())
    bias = KernelBuilder::plain({filter[0]}, b.dataType(value.getType()));
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      KernelBuilder::plain(src, b.dataType(conv.getInput().getType())),
      dnnl::memory::desc(weights, b.dataType(conv.getFilter().getType()),
                         tag::any),
      bias, KernelBuilder::plain(dst, type), strides, window.dilations,
      window.padBegin, window.padEnd);
  dnnl::convolution_forward::primitive_desc pd(desc, b.getEngine());
  b.add(pd, dnnl::convolution_forward(pd));
}

} // namespace

bool heterps::profile::detail::buildDense(Operation *op, KernelBuilder &b) {
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](GemmOp gemm) { return buildGemm(gemm, b), true; })
      .Case([&](MatMulOp matmul) { return buildMatMul(matmul, b), true; })
      .Case([&](ConvOp conv) { return buildConv(conv, b), true; })
      .Default([](Operation *) { return false; });
}
