//===- Datagen.cpp - heterps datagen --------------------------------------===//
//
// Compiled with exceptions, like Run.cpp: the data library reports by
// throwing, and runDatagenCommand turns that into one message.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "heterps/Runtime/CtrDataGen.h"

#include <algorithm>
#include <iostream>

namespace heterps::driver {

int datagen(int64_t rows, uint64_t seed, const std::string &output,
            std::optional<uint64_t> modelSeed, int64_t maxVocab) {
  rt::data::CtrGenOptions options;
  options.modelSeed = modelSeed;
  if (maxVocab > 0) {
    // The default Criteo-like spread, capped: small vocabularies make data
    // a model learns from few rows (tests).
    options.vocabSizes = rt::data::defaultVocabSizes();
    for (int64_t &size : options.vocabSizes)
      size = std::min(size, maxVocab);
  }
  return rt::data::runDatagenCommand(rows, seed, output, std::cerr, options);
}

} // namespace heterps::driver
