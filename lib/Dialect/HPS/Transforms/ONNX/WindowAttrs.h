//===- WindowAttrs.h - Conv/pool attributes with auto_pad -------*- C++ -*-===//

#ifndef HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_WINDOWATTRS_H
#define HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_WINDOWATTRS_H

#include "../ONNXPattern.h"

namespace heterps::hps {

/// Strides, dilations and explicit pads of a convolution or pooling node
/// over `spatial` axes, with ONNX defaults and auto_pad resolved.
struct WindowAttrs {
  llvm::SmallVector<int64_t> kernel, strides, dilations, pads;
};

/// `kernel` holds the window extents (from kernel_shape or the filter).
/// Fails when auto_pad is SAME_* and a spatial input extent is dynamic, or
/// when an attribute has the wrong arity.
mlir::FailureOr<WindowAttrs> resolveWindow(ONNXNode node,
                                           llvm::ArrayRef<int64_t> kernel);

} // namespace heterps::hps

#endif // HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_WINDOWATTRS_H
