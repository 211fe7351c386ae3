//===- LayerGraph.cpp - Layer graph checks and cut traffic ----------------===//

#include "heterps/Cost/LayerGraph.h"

#include "llvm/ADT/Twine.h"

#include <cmath>

using namespace llvm;
using namespace heterps::cost;

static const StringLiteral kLayerKindNames[kNumLayerKinds] = {
    "dense",   "elementwise",   "normalization",
    "pooling", "data-movement", "embedding"};

StringRef heterps::cost::toString(LayerKind kind) {
  return kLayerKindNames[static_cast<unsigned>(kind)];
}

std::optional<LayerKind> heterps::cost::parseLayerKind(StringRef name) {
  for (unsigned i = 0; i != kNumLayerKinds; ++i)
    if (kLayerKindNames[i] == name)
      return static_cast<LayerKind>(i);
  return std::nullopt;
}

Error LayerGraph::verify() const {
  if (layers.empty())
    return createStringError(inconvertibleErrorCode(), "layer graph is empty");
  for (unsigned i = 0, e = layers.size(); i != e; ++i) {
    const Layer &layer = layers[i];
    auto fail = [&](const Twine &problem) {
      return createStringError(inconvertibleErrorCode(),
                               "layer " + Twine(i) + " ('" + layer.name +
                                   "'): " + problem);
    };
    for (unsigned input : layer.inputs)
      if (input >= i)
        return fail("reads layer " + Twine(input) +
                    ", which is not earlier in topological order");
    const std::pair<double, const char *> numbers[] = {
        {layer.forwardFlopsPerSample, "forward FLOPs"},
        {layer.memoryBytesPerSample, "memory bytes"},
        {layer.parameterBytes, "parameter bytes"},
        {layer.embeddingRowBytes, "embedding row bytes"},
        {layer.lookupsPerSample, "lookups per sample"},
        {layer.outputBytesPerSample, "output bytes"}};
    for (auto [value, what] : numbers)
      if (!std::isfinite(value) || value < 0)
        return fail(Twine(what) + " must be finite and non-negative");
    if (layer.kind != LayerKind::EmbeddingLookup &&
        (layer.lookupsPerSample > 0 || layer.embeddingRows > 0))
      return fail("only embedding lookups have table rows and lookups");
  }
  return Error::success();
}

std::vector<double> LayerGraph::cutBytesPerSample() const {
  unsigned n = layers.size();
  // A producer's output crosses every cut between it and its last reader.
  std::vector<unsigned> lastReader(n, 0);
  for (unsigned i = 0; i != n; ++i)
    for (unsigned input : layers[i].inputs)
      lastReader[input] = std::max(lastReader[input], i);
  std::vector<double> delta(n + 1, 0.0);
  for (unsigned producer = 0; producer != n; ++producer) {
    if (lastReader[producer] <= producer)
      continue;
    delta[producer + 1] += layers[producer].outputBytesPerSample;
    delta[lastReader[producer] + 1] -= layers[producer].outputBytesPerSample;
  }
  std::vector<double> cut(n + 1, 0.0);
  double running = 0;
  for (unsigned c = 1; c <= n; ++c) {
    running += delta[c];
    cut[c] = std::max(running, 0.0);
  }
  return cut;
}
