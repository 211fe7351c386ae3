//===- LSTMPolicy.h - The rl strategy's policy network (internal) -*- C++ -*-//
//
// A one-layer LSTM reads one feature vector per layer (in topological order)
// and a softmax head emits a distribution over device classes for that
// layer. Trained with REINFORCE: gradients of sum_t log pi(a_t) scaled by
// the advantage, back-propagated through time, applied with Adam.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_SCHEDULE_LSTMPOLICY_H
#define HETERPS_LIB_SCHEDULE_LSTMPOLICY_H

#include <cstdint>
#include <random>
#include <vector>

namespace heterps {
namespace schedule {
namespace detail {

class LSTMPolicy {
public:
  /// `featureSize` inputs per step besides the one-hot previous action.
  LSTMPolicy(unsigned featureSize, unsigned hiddenSize, unsigned numActions,
             std::mt19937_64 &rng);

  /// What one sampled episode needs kept for backpropagation.
  struct Episode {
    std::vector<unsigned> actions;
    // Per step, concatenated: inputs, gates and states.
    std::vector<double> inputs, hPrev, cPrev, gateI, gateF, gateG, gateO, cell,
        tanhCell, probs;
  };

  /// Samples one action per row of `features` (row-major, featureSize wide).
  Episode sample(const std::vector<double> &features, unsigned steps,
                 std::mt19937_64 &rng) const;

  /// Adds the gradient of -advantage * sum log pi(a_t) - entropyWeight *
  /// sum H(pi_t) for `episode` to the accumulated gradient.
  void accumulateGradient(const Episode &episode, double advantage,
                          double entropyWeight);

  /// One Adam step with the accumulated gradient divided by `episodes`;
  /// clears it.
  void applyGradient(double learningRate, unsigned episodes);

private:
  unsigned inputSize() const { return featureSize + numActions + 1; }
  // Offsets of the parameter blocks in `params`.
  size_t offWx() const { return 0; }
  size_t offWh() const { return offWx() + 4 * hidden * inputSize(); }
  size_t offB() const { return offWh() + 4 * hidden * hidden; }
  size_t offV() const { return offB() + 4 * hidden; }
  size_t offD() const { return offV() + numActions * hidden; }
  size_t numParams() const { return offD() + numActions; }

  /// Refreshes `gateWeightsByInput` from `params`.
  void transposeGateWeights();

  unsigned featureSize, hidden, numActions;
  std::vector<double> params, grad, adamM, adamV;
  /// [Wx | Wh] transposed: per input (x, then h), its weight into each of
  /// the 4 * hidden gates. Sampling then accumulates every gate at once, a
  /// loop the compiler vectorises, in the order of the dot products (each
  /// gate's sum is the same, bit for bit).
  std::vector<double> gateWeightsByInput;
  unsigned adamSteps = 0;
};

} // namespace detail
} // namespace schedule
} // namespace heterps

#endif // HETERPS_LIB_SCHEDULE_LSTMPOLICY_H
