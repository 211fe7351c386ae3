//===- Datagen.cpp - heterps datagen
//---------------------------------------===//
//
// Compiled with exceptions, like Run.cpp: the data library reports by
// throwing, and runDatagenCommand turns that into one message.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "heterps/Runtime/CtrDataGen.h"

#include <iostream>

namespace heterps::driver {

int datagen(int64_t rows, uint64_t seed, const std::string &output) {
  return rt::data::runDatagenCommand(rows, seed, output, std::cerr);
}

} // namespace heterps::driver
