//===- TrainMetrics.cpp - Loss, AUC and accuracy of a training run --------===//

#include "TrainMetrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace heterps::rt::train {
namespace {

/// Element `i` of a label tensor as a float (class ids stay exact up to
/// 2^24, far more classes than a prediction has).
float labelAt(const HostTensor &label, int64_t i) {
  switch (label.dtype) {
  case DType::F32:
    return reinterpret_cast<const float *>(label.data.data())[i];
  case DType::F64:
    return float(reinterpret_cast<const double *>(label.data.data())[i]);
  case DType::I64:
    return float(reinterpret_cast<const int64_t *>(label.data.data())[i]);
  case DType::I32:
    return float(reinterpret_cast<const int32_t *>(label.data.data())[i]);
  default:
    return std::nanf("");
  }
}

} // namespace

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

TrainMetrics::TrainMetrics(const TrainingSpec &spec)
    : lossKind(spec.loss), predictionOutput(spec.predictionOutput),
      lossOutput(spec.lossOutputIndex) {
  if (spec.loss == "bce")
    metricKind = Kind::Auc;
  else if (spec.loss == "softmax_ce")
    metricKind = Kind::Accuracy;
}

/// For bce, decided once from the first batch: the kind whose cross-entropy
/// reproduces the model's own per-sample loss, otherwise probabilities if
/// every value is one.
void TrainMetrics::decide(const HostTensor &prediction, const float *labels,
                          const float *loss, int64_t rows) {
  if (scoreKind != ScoreKind::Unknown || rows == 0)
    return;
  width = numElements(prediction.shape) / rows;
  if (prediction.dtype != DType::F32 || (width != 1 && width != 2)) {
    scoreKind = ScoreKind::None;
    return;
  }
  const float *values = reinterpret_cast<const float *>(prediction.data.data());
  bool probabilities = true;
  for (int64_t i = 0; i < rows && probabilities; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < width; ++j) {
      float v = values[i * width + j];
      probabilities = probabilities && v >= 0 && v <= 1;
      sum += v;
    }
    if (width == 2)
      probabilities = probabilities && std::fabs(sum - 1) < 1e-3;
  }
  scoreKind = probabilities ? ScoreKind::Probability : ScoreKind::Logit;
  if (probabilities && width == 1 && lossKind == "bce") {
    double asProbability = 0, asLogit = 0;
    for (int64_t i = 0; i < rows; ++i) {
      double p = std::clamp<double>(values[i], 1e-7, 1 - 1e-7);
      double y = labels[i], x = values[i];
      asProbability +=
          std::fabs(-(y * std::log(p) + (1 - y) * std::log(1 - p)) - loss[i]);
      double softplus = std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
      asLogit += std::fabs(softplus - y * x - loss[i]);
    }
    if (asLogit < asProbability)
      scoreKind = ScoreKind::Logit;
  }
}

void append(SampleResults &all, const SampleResults &part) {
  for (auto [to, from] : {std::pair{&all.losses, &part.losses},
                          std::pair{&all.scores, &part.scores},
                          std::pair{&all.labels, &part.labels}})
    to->insert(to->end(), from->begin(), from->end());
}

SampleResults inBatchOrder(const SampleResults &gathered,
                           const std::vector<float> &sizes, int64_t batches,
                           int workers) {
  if (sizes.size() != size_t(batches))
    throw Error("evaluation: the workers ran " + std::to_string(sizes.size()) +
                " batches, not " + std::to_string(batches));
  // Worker order visits worker 0's batches 0, W, 2W, ..., then worker 1's:
  // each batch's size, and where its samples start among the gathered ones.
  std::vector<size_t> size(sizes.size()), first(sizes.size());
  size_t samples = 0, k = 0;
  for (int64_t w = 0; w < workers; ++w)
    for (int64_t b = w; b < batches; b += workers, ++k) {
      size[size_t(b)] = size_t(sizes[k]);
      first[size_t(b)] = samples;
      samples += size[size_t(b)];
    }
  SampleResults ordered;
  for (auto [to, from] : {std::pair{&ordered.losses, &gathered.losses},
                          std::pair{&ordered.scores, &gathered.scores},
                          std::pair{&ordered.labels, &gathered.labels}}) {
    // Losses have one value per sample; scores and labels one or none.
    const size_t width = samples > 0 ? from->size() / samples : 0;
    if (width * samples != from->size())
      throw Error("evaluation: the workers' results hold " +
                  std::to_string(from->size()) + " values for " +
                  std::to_string(samples) + " samples");
    to->reserve(from->size());
    for (size_t b = 0; b < size.size(); ++b)
      to->insert(to->end(), from->begin() + ptrdiff_t(first[b] * width),
                 from->begin() + ptrdiff_t((first[b] + size[b]) * width));
  }
  return ordered;
}

SampleResults TrainMetrics::collect(const std::vector<HostTensor> &outputs,
                                    const HostTensor &label, int64_t rows) {
  SampleResults results;
  const float *loss =
      reinterpret_cast<const float *>(outputs[lossOutput].data.data());
  results.losses.assign(loss, loss + rows);
  if (metricKind == Kind::None || rows == 0)
    return results;
  // One label per sample; a wider label (multi-output bce) has no AUC.
  if (numElements(label.shape) != rows)
    return results;
  std::vector<float> labelValues(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i)
    labelValues[size_t(i)] = labelAt(label, i);
  const HostTensor &prediction = outputs[predictionOutput];
  if (prediction.dtype != DType::F32)
    return results;
  const float *values = reinterpret_cast<const float *>(prediction.data.data());
  if (metricKind == Kind::Accuracy) {
    // The predicted class: the largest score (first of ties); softmax keeps
    // the order of the logits, so probabilities and logits agree.
    int64_t classes = numElements(prediction.shape) / rows;
    for (int64_t i = 0; i < rows; ++i) {
      const float *row = values + i * classes;
      results.scores.push_back(
          float(std::max_element(row, row + classes) - row));
    }
  } else {
    decide(prediction, labelValues.data(), loss, rows);
    if (scoreKind != ScoreKind::Probability && scoreKind != ScoreKind::Logit)
      return results;
    for (int64_t i = 0; i < rows; ++i)
      results.scores.push_back(width == 1 ? values[i]
                               : scoreKind == ScoreKind::Probability
                                   ? values[2 * i + 1]
                                   : values[2 * i + 1] - values[2 * i]);
  }
  results.labels = std::move(labelValues);
  return results;
}

void TrainMetrics::add(const SampleResults &results) {
  for (float value : results.losses)
    lossSum += value;
  count += int64_t(results.losses.size());
  if (results.scores.size() != results.labels.size())
    throw Error("TrainMetrics: " + std::to_string(results.scores.size()) +
                " scores but " + std::to_string(results.labels.size()) +
                " labels");
  if (metricKind == Kind::Accuracy) {
    for (size_t i = 0; i < results.scores.size(); ++i)
      correct += results.scores[i] == results.labels[i];
  } else if (metricKind == Kind::Auc) {
    if (scoreKind == ScoreKind::Probability)
      meter.add(results.scores.data(), results.labels.data(),
                results.scores.size());
    else if (scoreKind == ScoreKind::Logit)
      meter.addLogits(results.scores.data(), results.labels.data(),
                      results.scores.size());
  }
  scores.insert(scores.end(), results.scores.begin(), results.scores.end());
  labels.insert(labels.end(), results.labels.begin(), results.labels.end());
}

void TrainMetrics::reset() {
  lossSum = 0;
  count = correct = 0;
  scores.clear();
  labels.clear();
  meter.reset();
}

double TrainMetrics::loss() const {
  return count ? lossSum / double(count) : std::nan("");
}

bool TrainMetrics::hasMetric() const {
  return metricKind != Kind::None && !scores.empty();
}

double TrainMetrics::metric() const {
  if (!hasMetric())
    return std::nan("");
  if (metricKind == Kind::Accuracy)
    return double(correct) / double(scores.size());
  // A diverged model (NaN scores) is reported, not crashed on.
  for (float score : scores)
    if (std::isnan(score))
      return std::nan("");
  return data::computeAuc(scores, labels);
}

std::string TrainMetrics::metricText() const {
  switch (metricKind) {
  case Kind::Auc:
    return "  auc " + fixed(metric());
  case Kind::Accuracy:
    return "  accuracy " + fixed(metric());
  case Kind::None:
    break;
  }
  return "";
}

} // namespace heterps::rt::train
