//===- WindowAttrs.h - Conv/pool attributes with auto_pad -------*- C++ -*-===//

#ifndef HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_WINDOWATTRS_H
#define HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_WINDOWATTRS_H

#include "Support.h"

namespace heterps::hps {

/// Kernel, strides, dilations and explicit pads of a convolution or pooling
/// node, with ONNX defaults filled in and auto_pad resolved.
struct WindowAttrs {
  llvm::SmallVector<int64_t> kernel, strides, dilations, pads;
};

/// Conv's attributes, which ConvInteger and QLinearConv share.
inline constexpr llvm::StringRef kConvAttributes[] = {
    "auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"};

/// Resolves the window of `node` (input 0 is NC + spatial) over `kernel`
/// (from kernel_shape or the filter). Defaults: strides and dilations 1,
/// pads 0. NOTSET keeps `pads`, VALID zeroes them, SAME_UPPER/SAME_LOWER
/// pad so that output = ceil(input / stride) (the formula ONNX gives for
/// both Conv and pooling), the odd pad at the end / the beginning.
/// Fails for SAME_* over a dynamic spatial extent or a dynamic kernel, an
/// unknown auto_pad, a wrong-arity or out-of-range attribute.
mlir::FailureOr<WindowAttrs> resolveWindow(ONNXNode node,
                                           llvm::ArrayRef<int64_t> kernel);

} // namespace heterps::hps

#endif // HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_WINDOWATTRS_H
