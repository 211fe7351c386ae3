//===- PoolingNormalization.cpp - Pools, norms, softmax, reductions -------===//

#include "Kernel.h"

#include "heterps/Dialect/HPS/IR/HPSOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace heterps::hps;
using namespace heterps::profile::detail;
using dnnl::algorithm;
using dnnl::prop_kind;

namespace {

void addPooling(KernelBuilder &b, algorithm kind, Type srcType, Type dstType,
                const Dims &kernel, const Dims &strides, const Dims &dilations,
                const Dims &padBegin, Dims padEnd) {
  Dims src = b.dims(srcType), dst = b.dims(dstType);
  size_t n = kernel.size();
  // ceil_mode and ONNX's end pads: take the end pad that gives the result
  // shape oneDNN's floor formula expects.
  for (size_t i = 0; i != n; ++i) {
    int64_t extent = (kernel[i] - 1) * (dilations[i] + 1) + 1;
    int64_t floorOut =
        (src[i + 2] + padBegin[i] + padEnd[i] - extent) / strides[i] + 1;
    if (floorOut != dst[i + 2])
      padEnd[i] = std::max<int64_t>(0, (dst[i + 2] - 1) * strides[i] + extent -
                                           src[i + 2] - padBegin[i]);
  }
  dnnl::pooling_v2_forward::desc desc(
      prop_kind::forward_inference, kind, b.plain(srcType), b.plain(dstType),
      strides, kernel, dilations, padBegin, padEnd);
  dnnl::pooling_v2_forward::primitive_desc pd(desc, b.getEngine());
  b.add(pd, dnnl::pooling_v2_forward(pd));
}

template <typename PoolOp>
void buildWindowPool(PoolOp pool, algorithm kind, KernelBuilder &b) {
  Dims src = b.dims(pool.getInput().getType());
  size_t n = pool.getKernelShape().size();
  if (src.size() != n + 2 || n < 1 || n > 3)
    throw Unsupported{"oneDNN pools 1-D to 3-D NC[D]HW tensors"};
  WindowDims window = windowDims(pool.getDilations(), pool.getPads(), n);
  addPooling(b, kind, pool.getInput().getType(), pool.getResult().getType(),
             Dims(pool.getKernelShape().begin(), pool.getKernelShape().end()),
             spatial(pool.getStrides(), n, 1), window.dilations,
             window.padBegin, window.padEnd);
}

void buildGlobalPool(Operation *op, algorithm kind, KernelBuilder &b) {
  Type srcType = op->getOperand(0).getType();
  Dims src = b.dims(srcType);
  if (src.size() < 3 || src.size() > 5) {
    // No spatial axes: the result is the input.
    b.addReorder(b.plain(srcType), b.plain(op->getResult(0).getType()));
    b.note("no spatial axes, timed as a copy");
    return;
  }
  size_t n = src.size() - 2;
  addPooling(b, kind, srcType, op->getResult(0).getType(),
             Dims(src.begin() + 2, src.end()), Dims(n, 1), Dims(n, 0),
             Dims(n, 0), Dims(n, 0));
}

void buildBatchNorm(BatchNormOp bn, KernelBuilder &b) {
  // Running statistics: the inference form of the op (training's batch
  // statistics cost about the same extra pass over the data).
  auto flags = dnnl::normalization_flags::use_global_stats |
               dnnl::normalization_flags::use_scale |
               dnnl::normalization_flags::use_shift;
  dnnl::batch_normalization_forward::desc desc(
      prop_kind::forward_inference, b.plain(bn.getInput().getType()),
      bn.getEpsilon().convertToFloat(), flags);
  dnnl::batch_normalization_forward::primitive_desc pd(desc, b.getEngine());
  b.add(pd, dnnl::batch_normalization_forward(pd));
}

void buildLayerNorm(LayerNormOp ln, KernelBuilder &b) {
  Dims src = b.dims(ln.getInput().getType());
  int64_t axis = normAxis(ln.getAxis(), src.size());
  // oneDNN normalises the last axis: fold [axis, rank) into one.
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i != src.size(); ++i)
    (int64_t(i) < axis ? outer : inner) *= src[i];
  auto flags = dnnl::normalization_flags::use_scale;
  if (ln.getBias())
    flags = flags | dnnl::normalization_flags::use_shift;
  dnnl::layer_normalization_forward::desc desc(
      prop_kind::forward_inference,
      KernelBuilder::plain({outer, inner}, b.dataType(ln.getInput().getType())),
      ln.getEpsilon().convertToFloat(), flags);
  dnnl::layer_normalization_forward::primitive_desc pd(desc, b.getEngine());
  b.add(pd, dnnl::layer_normalization_forward(pd));
}

template <typename SoftmaxLikeOp, typename Primitive>
void buildSoftmax(SoftmaxLikeOp op, KernelBuilder &b) {
  Type type = op.getInput().getType();
  int axis = normAxis(op.getAxis(), b.dims(type).size());
  typename Primitive::desc desc(prop_kind::forward_inference, b.plain(type),
                                axis);
  typename Primitive::primitive_desc pd(desc, b.getEngine());
  b.add(pd, Primitive(pd));
}

void buildReduce(ReduceOp reduce, KernelBuilder &b) {
  Type srcType = reduce.getInput().getType();
  Dims src = b.dims(srcType), dst = src;
  if (reduce.getAxes().empty())
    dst.assign(src.size(), 1);
  for (int64_t axis : reduce.getAxes())
    dst[normAxis(axis, src.size())] = 1;
  dt type = b.dataType(srcType);
  algorithm kind = algorithm::reduction_sum;
  float p = 0;
  dnnl::post_ops post;
  switch (reduce.getKind()) {
  case ReduceKind::Sum:
    break;
  case ReduceKind::Mean:
    kind = algorithm::reduction_mean;
    break;
  case ReduceKind::Max:
    kind = algorithm::reduction_max;
    break;
  case ReduceKind::Min:
    kind = algorithm::reduction_min;
    break;
  case ReduceKind::Prod:
    kind = algorithm::reduction_mul;
    break;
  case ReduceKind::L1:
    kind = algorithm::reduction_norm_lp_sum, p = 1;
    break;
  case ReduceKind::L2:
    kind = algorithm::reduction_norm_lp_sum, p = 2;
    break;
  case ReduceKind::SumSquare:
    kind = algorithm::reduction_norm_lp_power_p_sum, p = 2;
    break;
  case ReduceKind::LogSum:
    post.append_eltwise(1.f, algorithm::eltwise_log, 0.f, 0.f);
    break;
  case ReduceKind::LogSumExp: {
    // exp over the input, then sum with a log post-op.
    auto srcMd = KernelBuilder::plain(src, type);
    dnnl::eltwise_forward::primitive_desc exp(
        dnnl::eltwise_forward::desc(prop_kind::forward_inference,
                                    algorithm::eltwise_exp, srcMd),
        b.getEngine());
    b.add(exp, dnnl::eltwise_forward(exp));
    post.append_eltwise(1.f, algorithm::eltwise_log, 0.f, 0.f);
    break;
  }
  }
  dnnl::primitive_attr attr;
  if (post.len() > 0)
    attr.set_post_ops(post);
  dnnl::reduction::primitive_desc pd(
      dnnl::reduction::desc(kind, KernelBuilder::plain(src, type),
                            KernelBuilder::plain(dst, type), p, 0.f),
      attr, b.getEngine());
  b.add(pd, dnnl::reduction(pd));
}

} // namespace

bool heterps::profile::detail::buildPoolingNormalization(Operation *op,
                                                         KernelBuilder &b) {
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](MaxPoolOp pool) {
        return buildWindowPool(pool, algorithm::pooling_max, b), true;
      })
      .Case([&](AvgPoolOp pool) {
        algorithm kind = pool.getCountIncludePad()
                             ? algorithm::pooling_avg_include_padding
                             : algorithm::pooling_avg_exclude_padding;
        return buildWindowPool(pool, kind, b), true;
      })
      .Case([&](GlobalMaxPoolOp pool) {
        return buildGlobalPool(pool, algorithm::pooling_max, b), true;
      })
      .Case([&](GlobalAvgPoolOp pool) {
        return buildGlobalPool(pool, algorithm::pooling_avg_exclude_padding, b),
               true;
      })
      .Case([&](BatchNormOp bn) { return buildBatchNorm(bn, b), true; })
      .Case([&](LayerNormOp ln) { return buildLayerNorm(ln, b), true; })
      .Case([&](SoftmaxOp softmax) {
        return buildSoftmax<SoftmaxOp, dnnl::softmax_forward>(softmax, b), true;
      })
      .Case([&](LogSoftmaxOp softmax) {
        return buildSoftmax<LogSoftmaxOp, dnnl::logsoftmax_forward>(softmax, b),
               true;
      })
      .Case([&](ReduceOp reduce) { return buildReduce(reduce, b), true; })
      .Default([](Operation *) { return false; });
}
