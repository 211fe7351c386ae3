//===- TrainingStageFixture.cpp - A hand-written training stage -----------===//
//
// A stage program for the training tests, written against StageABI.h the way
// generated training stages use it: logistic regression over the 13 dense
// features (dense parameter "dense/w" [13] and "bias" [1]) and the 26 sparse
// ids (table "emb" of 26 x kBuckets rows of dim 1; field j's ids are offset
// by j * kBuckets, and odd fields address their row with a negative id, as
// ONNX Gather allows). Each run is one micro-batch of kBatch samples: the
// forward pass, the per-sample bce loss, and the gradients of the
// micro-batch's mean loss pushed to the server. Where the server offers
// stage ABI 5's parameterOnDevice and pushDenseFromDevice, the stage reads
// and pushes its dense parameters through them, as a GPU stage does (here
// the "device" memory is a host dense cache's).
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/StageABI.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int64_t kBatch = 8, kDense = 13, kSparse = 26, kBuckets = 256;
constexpr int64_t kRows = kSparse * kBuckets;

struct Stage {
  HpsStageConfig config;
  const float *weights = nullptr, *bias = nullptr;
  std::vector<int64_t> ids = std::vector<int64_t>(kBatch * kSparse);
  std::vector<float> rows = std::vector<float>(kBatch * kSparse);
  std::vector<float> rowGradients = std::vector<float>(kBatch * kSparse);
};

void setError(char *error, size_t errorBytes, const std::string &text) {
  if (!error || errorBytes == 0)
    return;
  std::strncpy(error, text.c_str(), errorBytes - 1);
  error[errorBytes - 1] = '\0';
}

} // namespace

extern "C" {

int hps_stage_abi_version(void) { return HPS_STAGE_ABI_VERSION; }

const char *hps_stage_describe(void) {
  return "stage_0 (cpu.test): logistic regression";
}

void hps_stage_buffers(size_t *inputCount, const uint64_t **inputBytes,
                       size_t *outputCount, const uint64_t **outputBytes) {
  // dense f32 [kBatch, kDense], ids i64 [kBatch, kSparse], labels f32
  // [kBatch, 1]; probabilities f32 [kBatch, 1], losses f32 [kBatch].
  static const uint64_t in[] = {kBatch * kDense * 4, kBatch * kSparse * 8,
                                kBatch * 4};
  static const uint64_t out[] = {kBatch * 4, kBatch * 4};
  *inputCount = 3;
  *inputBytes = in;
  *outputCount = 2;
  *outputBytes = out;
}

void *hps_stage_create(const HpsStageConfig *config, char *error,
                       size_t errorBytes) {
  if (!config->lookupParameter) {
    setError(error, errorBytes, "this stage needs a training run");
    return nullptr;
  }
  auto *stage = new Stage{*config};
  if (config->parameterOnDevice) {
    if (config->parameterOnDevice(config->server, "dense/w", &stage->weights,
                                  error, errorBytes) != 0 ||
        config->parameterOnDevice(config->server, "bias", &stage->bias, error,
                                  errorBytes) != 0) {
      delete stage;
      return nullptr;
    }
  } else {
    stage->weights = config->lookupParameter(config->server, "dense/w");
    stage->bias = config->lookupParameter(config->server, "bias");
  }
  if (!stage->weights || !stage->bias) {
    setError(error, errorBytes, "the server lacks 'dense/w' or 'bias'");
    delete stage;
    return nullptr;
  }
  return stage;
}

int hps_stage_run(void *opaque, const void *const *inputs, void *const *outputs,
                  char *error, size_t errorBytes) {
  Stage &stage = *static_cast<Stage *>(opaque);
  const HpsStageConfig &config = stage.config;
  const auto *dense = static_cast<const float *>(inputs[0]);
  const auto *raw = static_cast<const int64_t *>(inputs[1]);
  const auto *labels = static_cast<const float *>(inputs[2]);
  auto *probabilities = static_cast<float *>(outputs[0]);
  auto *losses = static_cast<float *>(outputs[1]);

  for (int64_t i = 0; i < kBatch; ++i)
    for (int64_t j = 0; j < kSparse; ++j) {
      int64_t id = raw[i * kSparse + j] + j * kBuckets;
      stage.ids[i * kSparse + j] = j % 2 ? id - kRows : id;
    }
  if (config.pullRows(config.server, "emb", stage.ids.data(), stage.ids.size(),
                      stage.rows.data(), error, errorBytes) != 0)
    return 1;

  float weightGradient[kDense] = {}, biasGradient = 0;
  for (int64_t i = 0; i < kBatch; ++i) {
    double z = *stage.bias;
    for (int64_t j = 0; j < kSparse; ++j)
      z += stage.rows[i * kSparse + j];
    for (int64_t k = 0; k < kDense; ++k)
      z += stage.weights[k] * dense[i * kDense + k];
    double p = 1 / (1 + std::exp(-z)), y = labels[i];
    probabilities[i] = static_cast<float>(p);
    losses[i] = static_cast<float>(std::max(z, 0.0) +
                                   std::log1p(std::exp(-std::fabs(z))) - y * z);
    float g = static_cast<float>((p - y) / kBatch);
    for (int64_t k = 0; k < kDense; ++k)
      weightGradient[k] += g * dense[i * kDense + k];
    biasGradient += g;
    for (int64_t j = 0; j < kSparse; ++j)
      stage.rowGradients[i * kSparse + j] = g;
  }
  auto pushDense = config.pushDenseFromDevice ? config.pushDenseFromDevice
                                              : config.pushDense;
  if (pushDense(config.server, "dense/w", weightGradient, kDense, error,
                errorBytes) != 0 ||
      pushDense(config.server, "bias", &biasGradient, 1, error, errorBytes) !=
          0 ||
      config.pushRows(config.server, "emb", stage.ids.data(), stage.ids.size(),
                      stage.rowGradients.data(), error, errorBytes) != 0)
    return 1;
  return 0;
}

void hps_stage_destroy(void *stage) { delete static_cast<Stage *>(stage); }
}
