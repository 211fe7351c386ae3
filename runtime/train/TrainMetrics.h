//===- TrainMetrics.h - Loss, AUC and accuracy of a training run -*- C++
//-*-===//
//
// What the trainer reports besides speed, whatever the data: the mean
// per-sample loss for every loss; the AUC (and, when evaluating, the
// log-loss) for bce; the accuracy for softmax_ce; nothing more for mse.
// Private to runtime/train.
//
// Results are collected per sample (loss, label, score), so data-parallel
// workers can gather their slices on the leader, which adds them up.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_TRAIN_TRAINMETRICS_H
#define HETERPS_RUNTIME_TRAIN_TRAINMETRICS_H

#include "heterps/Runtime/Bundle.h"
#include "heterps/Runtime/CtrDataMetrics.h"
#include "heterps/Runtime/Tensor.h"

#include <string>
#include <vector>

namespace heterps::rt::train {

/// One run of the bundle, per sample. `scores` are the binary scores (bce)
/// or the predicted class ids (softmax_ce), as floats; empty when the loss
/// has no metric or the prediction gives none. `labels` go with `scores`.
struct SampleResults {
  std::vector<float> losses, scores, labels;
};

/// Appends `part` to `all`, field by field.
void append(SampleResults &all, const SampleResults &part);

/// Results of `batches` batches run round-robin by `workers` workers
/// (batch b by worker b % workers) and gathered in worker order, put back
/// in batch order. `sizes` holds the sample count of each worker's batches,
/// gathered the same way. Throws Error when the results do not add up to
/// those counts.
SampleResults inBatchOrder(const SampleResults &gathered,
                           const std::vector<float> &sizes, int64_t batches,
                           int workers);

/// How a bce prediction turns into a score for AUC and log-loss.
enum class ScoreKind {
  Unknown,     // not decided yet
  Probability, // one value per sample in [0, 1], or two that sum to 1
  Logit,       // one logit per sample, or two class logits
  None         // no binary score (more classes, not f32)
};

class TrainMetrics {
public:
  enum class Kind { None, Auc, Accuracy };

  explicit TrainMetrics(const TrainingSpec &spec);

  Kind kind() const { return metricKind; }
  /// Per-sample results of the first `rows` samples of a run's outputs;
  /// `label` is the label input the run was given.
  SampleResults collect(const std::vector<HostTensor> &outputs,
                        const HostTensor &label, int64_t rows);
  /// Adds results (this worker's, or the gathered ones of every worker).
  void add(const SampleResults &results);
  void reset();

  int64_t samples() const { return count; }
  /// Mean per-sample loss (NaN without samples).
  double loss() const;
  /// AUC (bce) or accuracy (softmax_ce); NaN where there is none.
  double metric() const;
  /// Whether metric() has scores behind it: false for mse, and for a bce
  /// prediction that is no binary score.
  bool hasMetric() const;
  /// bce: mean log-loss of the scores (NaN otherwise).
  double logLoss() const { return meter.value(); }
  /// "  auc 0.7421" or "  accuracy 0.9120" (fixed, 4 digits); "" for mse.
  std::string metricText() const;

private:
  void decide(const HostTensor &prediction, const float *labels,
              const float *loss, int64_t rows);

  std::string lossKind;
  Kind metricKind = Kind::None;
  int predictionOutput, lossOutput;
  ScoreKind scoreKind = ScoreKind::Unknown;
  int64_t width = 1;
  // Accumulated.
  double lossSum = 0;
  int64_t count = 0, correct = 0;
  std::vector<float> scores, labels;
  data::LogLossMeter meter;
};

/// "0.1234": `value` with `digits` decimals, as progress lines print.
std::string fixed(double value, int digits = 4);

} // namespace heterps::rt::train

#endif // HETERPS_RUNTIME_TRAIN_TRAINMETRICS_H
