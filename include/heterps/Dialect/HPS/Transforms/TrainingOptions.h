//===- TrainingOptions.h - What hps-autodiff accepts ------------*- C++ -*-===//
//
// The checks of the training options, shared by --hps-autodiff and the
// driver, which runs them on its flags before it reads the model: an
// unknown loss is then named by its flag, not blamed on the model.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_DIALECT_HPS_TRANSFORMS_TRAININGOPTIONS_H
#define HETERPS_DIALECT_HPS_TRANSFORMS_TRAININGOPTIONS_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace heterps::hps {

/// How the caller's user spelled each option ("--lr" or "learning-rate").
struct TrainingOptionNames {
  const char *loss;
  const char *optimizer;
  const char *learningRate;
  const char *momentum;
};

/// What is wrong with these options, or "" when they train.
std::string trainingOptionsError(llvm::StringRef loss,
                                 llvm::StringRef optimizer, double learningRate,
                                 double momentum,
                                 const TrainingOptionNames &names);

} // namespace heterps::hps

#endif // HETERPS_DIALECT_HPS_TRANSFORMS_TRAININGOPTIONS_H
