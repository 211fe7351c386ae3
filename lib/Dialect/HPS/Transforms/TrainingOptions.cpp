//===- TrainingOptions.cpp - What hps-autodiff accepts --------------------===//

#include "heterps/Dialect/HPS/Transforms/TrainingOptions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace llvm;

std::string
heterps::hps::trainingOptionsError(StringRef loss, StringRef optimizer,
                                   double learningRate, double momentum,
                                   const TrainingOptionNames &names) {
  if (loss.empty())
    return formatv("the {0} option is required (bce, softmax-ce or mse)",
                   names.loss);
  if (!is_contained({"bce", "softmax-ce", "softmax_ce", "mse"}, loss))
    return formatv("{0} '{1}' is not one of: bce, softmax-ce, mse", names.loss,
                   loss);
  if (!is_contained({"sgd", "adam", "adagrad"}, optimizer))
    return formatv("{0} '{1}' is not one of: sgd, adam, adagrad",
                   names.optimizer, optimizer);
  // The server keeps them as floats: 1e39 passed as a double became inf
  // there. It refuses the rest too, but only when a run starts.
  for (auto [name, value] :
       {std::pair<const char *, double>{names.learningRate, learningRate},
        {names.momentum, momentum}})
    if (!std::isfinite(value) || value < 0 ||
        value > std::numeric_limits<float>::max())
      return formatv("{0} {1} must be a finite number of at least 0 (and at "
                     "most {2}, a float's largest)",
                     name, format("%g", value),
                     format("%g", std::numeric_limits<float>::max()));
  // The server's SGD takes [0, 1) (runtime/ps/Optimizers.cpp): at 1 or more
  // the velocity grows without bound.
  if (momentum >= 1)
    return formatv("{0} {1} must be below 1 (0.9 is usual)", names.momentum,
                   format("%g", momentum));
  // Adam and Adagrad have no momentum of this kind: the bundle recorded it
  // and training ignored it.
  if (momentum != 0 && optimizer != "sgd")
    return formatv("{0} is for sgd; {1} has none (leave {0} out)",
                   names.momentum, optimizer);
  return "";
}
