//===- AlignedBuffer.h - 64-byte aligned channel memory ---------*- C++ -*-===//
//
// The buffer of one channel: 64-byte aligned (what the kernels' vector
// loads like best). The executor's frames and a stage rank's inputs and
// outputs hold their channels in these.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_ALIGNEDBUFFER_H
#define HETERPS_RUNTIME_ALIGNEDBUFFER_H

#include "heterps/Runtime/Types.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

namespace heterps::rt {

class AlignedBuffer {
public:
  /// Throws Error when the memory cannot be had.
  explicit AlignedBuffer(size_t bytes)
      : memory(static_cast<char *>(std::aligned_alloc(
            64, std::max<size_t>(64, (bytes + 63) / 64 * 64)))) {
    if (!memory)
      throw Error("out of memory for a " + std::to_string(bytes) +
                  "-byte channel buffer");
  }
  char *data() const { return memory.get(); }

private:
  struct Free {
    void operator()(char *pointer) const { std::free(pointer); }
  };
  std::unique_ptr<char, Free> memory;
};

} // namespace heterps::rt

#endif // HETERPS_RUNTIME_ALIGNEDBUFFER_H
