//===- LayerGraphBuilder.h - hps function -> cost::LayerGraph ---*- C++ -*-===//
//
// The adapter between the dialect and the plain C++ planning libraries:
// every placeable op of a function becomes one cost::Layer with its per-sample
// FLOPs, memory traffic, parameters and activations, computed from the op's
// semantics and shapes.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_DIALECT_HPS_TRANSFORMS_LAYERGRAPHBUILDER_H
#define HETERPS_DIALECT_HPS_TRANSFORMS_LAYERGRAPHBUILDER_H

#include "heterps/Cost/LayerGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/SmallVector.h"

namespace heterps::hps {

/// A layer's forward work: FLOPs over one run, and its kind.
struct LayerWork {
  double flops = 0;
  cost::LayerKind kind = cost::LayerKind::Elementwise;
};

} // namespace heterps::hps

#include "heterps/Dialect/HPS/Transforms/LayerWorkInterface.h.inc"

namespace heterps::hps {

/// Attaches each layer op's work rule as its LayerWorkOpInterface (an
/// extension of the hps dialect; --hps-place loads it, a tool that builds
/// layer graphs itself registers it).
void registerLayerWorkModels(mlir::DialectRegistry &registry);

struct ExtractedLayerGraph {
  cost::LayerGraph graph;
  /// graph.layers[i] describes ops[i]; ops are in block (topological) order.
  llvm::SmallVector<mlir::Operation *> ops;
};

/// Builds the layer graph of `func`. Dynamic dimensions are taken as
/// `batch`; counts are divided by the samples one run of the function
/// carries (the static leading extent of its first input, else `batch`) to
/// give per-sample figures. The layer work models must be registered in
/// the function's context.
ExtractedLayerGraph buildLayerGraph(mlir::func::FuncOp func, int64_t batch,
                                    cost::Mode mode);

} // namespace heterps::hps

#endif // HETERPS_DIALECT_HPS_TRANSFORMS_LAYERGRAPHBUILDER_H
