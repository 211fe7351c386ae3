//===- LayerGraph.h - The layer graph the cost model reads ------*- C++ -*-===//
//
// A model reduced to what placement needs: per-sample work and traffic of
// every layer and which layers feed which. Layers are in topological order.
// Plain C++; the MLIR adapter that fills it lives with the passes.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_COST_LAYERGRAPH_H
#define HETERPS_COST_LAYERGRAPH_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heterps {
namespace cost {

/// What bounds a layer and how well devices run it (see CostOptions).
enum class LayerKind {
  DenseCompute,   ///< gemm, matmul, conv: compute bound.
  Elementwise,    ///< activations, adds: memory bound.
  Normalization,  ///< batch/layer norm, softmax.
  Pooling,        ///< max/average pooling, reductions.
  DataMovement,   ///< concat, reshape, transpose, gather of activations.
  EmbeddingLookup ///< sparse rows pulled from the parameter server.
};

inline constexpr unsigned kNumLayerKinds = 6;

llvm::StringRef toString(LayerKind kind);
std::optional<LayerKind> parseLayerKind(llvm::StringRef name);

struct Layer {
  std::string name;
  std::string opName;    ///< e.g. "hps.gemm".
  std::string signature; ///< op + shapes, key for the profile database.
  LayerKind kind = LayerKind::Elementwise;
  double forwardFlopsPerSample = 0;
  /// Forward memory traffic, not counting gathered embedding rows (the cost
  /// model adds lookupsPerSample * embeddingRowBytes itself).
  double memoryBytesPerSample = 0;
  double parameterBytes = 0; ///< Dense parameters (all-reduced).
  // Embedding lookups only: the table lives in the parameter server.
  uint64_t embeddingRows = 0;
  double embeddingRowBytes = 0;
  double lookupsPerSample = 0;
  double outputBytesPerSample = 0; ///< Activation this layer produces.
  std::vector<unsigned> inputs;    ///< Indices of earlier layers it reads.
};

enum class Mode { Training, Inference };

struct LayerGraph {
  std::vector<Layer> layers;
  Mode mode = Mode::Training;

  unsigned size() const { return layers.size(); }
  bool training() const { return mode == Mode::Training; }

  /// Checks topological order, input indices and that every number is finite
  /// and non-negative.
  llvm::Error verify() const;

  /// Activation bytes per sample that cross the cut between layer `cut - 1`
  /// and layer `cut` (1 <= cut < size()): outputs of layers before the cut
  /// read by a layer at or after it. A linear pipeline relays a tensor through
  /// every stage between its producer and its consumers, so this is the
  /// traffic of a stage boundary at that cut.
  std::vector<double> cutBytesPerSample() const;
};

} // namespace cost
} // namespace heterps

#endif // HETERPS_COST_LAYERGRAPH_H
