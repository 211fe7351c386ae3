//===- InputFile.h - Reading a file a user names ----------------*- C++ -*-===//
//
// Every file named on a command line (a model, a cluster, a profile
// database, a calibration) is read through readInputFile: a FIFO named
// there blocked the read forever, deaf to Ctrl-C, and /dev/zero read until
// memory ran out.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_CLUSTER_INPUTFILE_H
#define HETERPS_CLUSTER_INPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>

namespace heterps::cluster {

/// The contents of `path`, a regular file of at most `mostBytes`; errors
/// read "cannot read WHAT 'PATH': why" (`what`: "cluster file", ...; empty
/// for "cannot read 'PATH': why").
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef path, llvm::StringRef what, uint64_t mostBytes,
              bool isText = false);

} // namespace heterps::cluster

#endif // HETERPS_CLUSTER_INPUTFILE_H
