//===- RandomModels.h - Random layer graphs and clusters for tests -*- C++ -*-//

#ifndef HETERPS_UNITTESTS_SCHEDULE_RANDOMMODELS_H
#define HETERPS_UNITTESTS_SCHEDULE_RANDOMMODELS_H

#include "heterps/Cluster/ClusterSpec.h"
#include "heterps/Cost/LayerGraph.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace heterps {
namespace testing {

inline double logUniform(std::mt19937_64 &rng, double low, double high) {
  std::uniform_real_distribution<double> u(std::log(low), std::log(high));
  return std::exp(u(rng));
}

/// A chain with occasional skip connections; any layer kind.
inline cost::LayerGraph randomGraph(std::mt19937_64 &rng, unsigned numLayers) {
  cost::LayerGraph graph;
  graph.mode = rng() % 4 ? cost::Mode::Training : cost::Mode::Inference;
  for (unsigned l = 0; l != numLayers; ++l) {
    cost::Layer layer;
    layer.name = "l" + std::to_string(l);
    layer.kind = static_cast<cost::LayerKind>(rng() % cost::kNumLayerKinds);
    layer.opName = "hps." + cost::toString(layer.kind).str();
    if (layer.kind == cost::LayerKind::EmbeddingLookup) {
      layer.embeddingRows = 1 + rng() % 10'000'000;
      layer.embeddingRowBytes = 4.0 * (4 + rng() % 60);
      layer.lookupsPerSample = 1 + rng() % 40;
      layer.outputBytesPerSample =
          layer.lookupsPerSample * layer.embeddingRowBytes;
    } else {
      layer.forwardFlopsPerSample = logUniform(rng, 1e3, 1e8);
      layer.memoryBytesPerSample = logUniform(rng, 1e2, 1e6);
      if (layer.kind == cost::LayerKind::DenseCompute)
        layer.parameterBytes = logUniform(rng, 1e3, 1e8);
      layer.outputBytesPerSample = logUniform(rng, 1e2, 1e5);
    }
    if (l > 0)
      layer.inputs.push_back(l - 1);
    if (l > 1 && rng() % 4 == 0)
      layer.inputs.push_back(rng() % (l - 1));
    graph.layers.push_back(std::move(layer));
  }
  return graph;
}

/// A CTR model: embedding lookups read by a concat, then a dense tower of
/// gemm + activation (+ occasional normalization) layers.
inline cost::LayerGraph ctrGraph(std::mt19937_64 &rng, unsigned numLayers) {
  cost::LayerGraph graph;
  unsigned numEmbeddings = std::max(1u, numLayers / 4);
  for (unsigned e = 0; e != numEmbeddings; ++e) {
    cost::Layer layer;
    layer.name = "emb" + std::to_string(e);
    layer.opName = "hps.embedding";
    layer.kind = cost::LayerKind::EmbeddingLookup;
    layer.embeddingRows = 1'000'000 + rng() % 100'000'000;
    layer.embeddingRowBytes = 4.0 * (8 << (rng() % 4));
    layer.lookupsPerSample = 1 + rng() % 8;
    layer.outputBytesPerSample = layer.embeddingRowBytes;
    graph.layers.push_back(std::move(layer));
  }
  cost::Layer concat;
  concat.name = "concat";
  concat.opName = "hps.concat";
  concat.kind = cost::LayerKind::DataMovement;
  for (unsigned e = 0; e != numEmbeddings; ++e) {
    concat.inputs.push_back(e);
    concat.outputBytesPerSample += graph.layers[e].outputBytesPerSample;
  }
  concat.memoryBytesPerSample = 2 * concat.outputBytesPerSample;
  graph.layers.push_back(concat);
  double width = concat.outputBytesPerSample / 4;
  while (graph.layers.size() < numLayers) {
    unsigned previous = graph.layers.size() - 1;
    double out =
        std::max(1.0, std::round(width * (0.5 + (rng() % 100) / 100.0)));
    cost::Layer fc;
    fc.name = "fc" + std::to_string(graph.layers.size());
    fc.opName = "hps.gemm";
    fc.kind = cost::LayerKind::DenseCompute;
    fc.forwardFlopsPerSample = 2 * width * out;
    fc.parameterBytes = 4 * width * out;
    fc.memoryBytesPerSample = 4 * (width + out) + fc.parameterBytes / 256;
    fc.outputBytesPerSample = 4 * out;
    fc.inputs = {previous};
    graph.layers.push_back(fc);
    width = out;
    if (graph.layers.size() == numLayers)
      break;
    cost::Layer act;
    bool norm = rng() % 5 == 0;
    act.name = (norm ? "norm" : "relu") + std::to_string(graph.layers.size());
    act.opName = norm ? "hps.layer_norm" : "hps.relu";
    act.kind =
        norm ? cost::LayerKind::Normalization : cost::LayerKind::Elementwise;
    act.forwardFlopsPerSample = (norm ? 8 : 1) * width;
    act.memoryBytesPerSample = 8 * width;
    act.outputBytesPerSample = 4 * width;
    act.inputs = {unsigned(graph.layers.size() - 1)};
    graph.layers.push_back(act);
  }
  return graph;
}

/// A ShuffleNet-v2-like CNN: a stem, then stages of units that split the
/// channels in two, run one half through 1x1 conv - depthwise 3x3 conv -
/// 1x1 conv, concatenate it with the other half (the skip branch) and
/// shuffle the channels (reshape, transpose, reshape); each stage starts
/// with a downsampling unit whose two branches both convolve. Per-sample
/// figures as the layer graph builder computes them for float32.
inline cost::LayerGraph shuffleNetGraph(unsigned baseChannels,
                                        std::vector<unsigned> unitsPerStage) {
  cost::LayerGraph graph;
  auto add = [&](const char *op, cost::LayerKind kind, double flops,
                 double memory, double params, double out,
                 std::vector<unsigned> inputs) {
    cost::Layer layer;
    layer.name = std::string(op) + "_" + std::to_string(graph.size());
    layer.opName = std::string("hps.") + op;
    layer.kind = kind;
    layer.forwardFlopsPerSample = flops;
    layer.memoryBytesPerSample = memory;
    layer.parameterBytes = params;
    layer.outputBytesPerSample = out;
    layer.inputs = std::move(inputs);
    graph.layers.push_back(std::move(layer));
    return graph.size() - 1;
  };
  using cost::LayerKind;
  // A convolution of `in` to `out` channels over a k x k window (depthwise:
  // one input channel per output) producing pixels x pixels, then ReLU.
  auto conv = [&](unsigned input, double in, double out, double k,
                  double pixels, bool depthwise, bool relu) {
    double outputs = out * pixels * pixels;
    double fanIn = depthwise ? k * k : in * k * k;
    double params = 4 * (fanIn * out + out);
    double inBytes = 4 * in * pixels * pixels;
    unsigned layer =
        add("conv", LayerKind::DenseCompute, 2 * fanIn * outputs,
            inBytes + 4 * outputs + params / 256, params, 4 * outputs, {input});
    if (relu)
      layer = add("relu", LayerKind::Elementwise, outputs, 8 * outputs, 0,
                  4 * outputs, {layer});
    return layer;
  };
  auto shuffle = [&](unsigned a, unsigned b, double channels, double pixels) {
    double bytes = 4 * channels * pixels * pixels;
    unsigned layer =
        add("concat", LayerKind::DataMovement, 0, 2 * bytes, 0, bytes, {a, b});
    for (const char *op : {"reshape", "transpose", "reshape"})
      layer = add(op, LayerKind::DataMovement, 0, 2 * bytes, 0, bytes, {layer});
    return layer;
  };
  double pixels = 112;
  unsigned x = conv(0, 3, baseChannels, 3, pixels, false, true);
  graph.layers[0].inputs.clear(); // the stem reads the model's input
  pixels /= 2;
  double bytes = 4 * baseChannels * pixels * pixels;
  x = add("max_pool", LayerKind::Pooling, 9 * bytes / 4, 5 * bytes, 0, bytes,
          {x});
  double channels = baseChannels;
  for (unsigned stage = 0; stage != unitsPerStage.size(); ++stage) {
    double out = double(2 * baseChannels << stage), half = out / 2;
    double inPixels = pixels;
    pixels /= 2;
    // Downsampling unit: both branches convolve the whole input.
    unsigned left = conv(x, channels, channels, 3, pixels, true, false);
    left = conv(left, channels, half, 1, pixels, false, true);
    unsigned right = conv(x, channels, half, 1, inPixels, false, true);
    right = conv(right, half, half, 3, pixels, true, false);
    right = conv(right, half, half, 1, pixels, false, true);
    x = shuffle(left, right, out, pixels);
    channels = out;
    for (unsigned unit = 1; unit < unitsPerStage[stage]; ++unit) {
      double halfBytes = 4 * half * pixels * pixels;
      unsigned skip = add("slice", LayerKind::DataMovement, 0, 3 * halfBytes, 0,
                          halfBytes, {x});
      unsigned branch = add("slice", LayerKind::DataMovement, 0, 3 * halfBytes,
                            0, halfBytes, {x});
      branch = conv(branch, half, half, 1, pixels, false, true);
      branch = conv(branch, half, half, 3, pixels, true, false);
      branch = conv(branch, half, half, 1, pixels, false, true);
      x = shuffle(skip, branch, out, pixels);
    }
  }
  x = conv(x, channels, 1024, 1, pixels, false, true);
  x = add("global_average_pool", LayerKind::Pooling, 1024 * pixels * pixels,
          4 * 1024 * pixels * pixels, 0, 4 * 1024, {x});
  add("gemm", LayerKind::DenseCompute, 2 * 1024 * 1000,
      4 * (1024 + 1000) + 4 * 1025 * 1000 / 256, 4 * 1025 * 1000, 4 * 1000,
      {x});
  return graph;
}

/// 1 to `maxClasses` device classes with random speeds, prices, counts and
/// links; `bothKinds` forces at least one CPU and one GPU class.
inline cluster::ClusterSpec randomCluster(std::mt19937_64 &rng,
                                          unsigned maxClasses, bool bothKinds,
                                          unsigned maxCount = 6) {
  cluster::ClusterSpec spec;
  unsigned numClasses = 1 + rng() % maxClasses;
  if (bothKinds)
    numClasses = std::max(2u, numClasses);
  for (unsigned c = 0; c != numClasses; ++c) {
    cluster::DeviceClass cls;
    bool gpu = bothKinds && c < 2 ? c == 1 : rng() % 2;
    cls.kind = gpu ? cluster::DeviceKind::GPU : cluster::DeviceKind::CPU;
    cls.name = std::string(gpu ? "gpu" : "cpu") + ".c" + std::to_string(c);
    cls.peakGflops =
        gpu ? logUniform(rng, 4000, 70000) : logUniform(rng, 200, 6000);
    cls.memoryBandwidthGBps =
        gpu ? logUniform(rng, 300, 3500) : logUniform(rng, 20, 300);
    cls.memoryGiB = gpu ? logUniform(rng, 8, 80) : logUniform(rng, 16, 512);
    cls.pricePerHour = gpu ? logUniform(rng, 0.5, 4) : logUniform(rng, 0.1, 3);
    cls.count = 1 + rng() % maxCount;
    cls.perMachine = 1 + rng() % 4;
    cls.launchOverheadUs = gpu ? logUniform(rng, 2, 10) : 1;
    spec.classes.push_back(cls);
  }
  spec.network = {logUniform(rng, 1, 12.5), logUniform(rng, 5, 50)};
  spec.parameterServer = {logUniform(rng, 1, 12.5), logUniform(rng, 5, 50)};
  for (unsigned a = 0; a != numClasses; ++a) {
    for (unsigned b = a; b != numClasses; ++b)
      if (rng() % 2) {
        cluster::Link link;
        link.from = a;
        link.to = b;
        link.scope =
            rng() % 2 ? cluster::LinkScope::Intra : cluster::LinkScope::Inter;
        link.params = {logUniform(rng, 2, 100), logUniform(rng, 1, 20)};
        spec.links.push_back(link);
      }
    if (rng() % 2) {
      cluster::Link link;
      link.from = a;
      link.toPS = true;
      link.scope = cluster::LinkScope::Intra;
      link.params = {logUniform(rng, 5, 50), logUniform(rng, 0.5, 5)};
      spec.links.push_back(link);
    }
  }
  return spec;
}

} // namespace testing
} // namespace heterps

#endif // HETERPS_UNITTESTS_SCHEDULE_RANDOMMODELS_H
