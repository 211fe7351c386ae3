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
#include "llvm/ADT/SmallVector.h"

namespace heterps::hps {

struct ExtractedLayerGraph {
  cost::LayerGraph graph;
  /// graph.layers[i] describes ops[i]; ops are in block (topological) order.
  llvm::SmallVector<mlir::Operation *> ops;
};

/// Builds the layer graph of `func`. Dynamic dimensions are taken as
/// `batch`; counts are divided by the samples one run of the function
/// carries (the static leading extent of its first input, else `batch`) to
/// give per-sample figures.
ExtractedLayerGraph buildLayerGraph(mlir::func::FuncOp func, int64_t batch,
                                    cost::Mode mode);

} // namespace heterps::hps

#endif // HETERPS_DIALECT_HPS_TRANSFORMS_LAYERGRAPHBUILDER_H
