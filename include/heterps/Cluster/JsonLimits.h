//===- JsonLimits.h - What the JSON files HeterPS reads may hold -*- C++
//-*-===//
//
// llvm::json parses arrays and objects recursively, so a file of a few
// ten thousand '[' overflows the stack (a SIGSEGV, not an error). Every
// JSON file the compiler and the cluster tools read (profiles,
// calibrations, manifests, job and service state, traces) goes through
// parseJson, which checks the nesting first.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_CLUSTER_JSONLIMITS_H
#define HETERPS_CLUSTER_JSONLIMITS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>

namespace heterps::cluster {

/// The deepest nesting of arrays and objects parseJson takes; the files
/// HeterPS writes nest fewer than 10 levels.
inline constexpr unsigned kMostJsonNesting = 512;

/// The largest JSON file a user may name (a profile database, a
/// calibration): far above any HeterPS writes.
inline constexpr uint64_t kMostJsonFileBytes = uint64_t(1) << 30;

/// llvm::json::parse of `text` after checking that its arrays and objects
/// nest at most kMostJsonNesting deep; deeper is an error naming the line
/// and column of the first bracket past the limit.
llvm::Expected<llvm::json::Value> parseJson(llvm::StringRef text);

} // namespace heterps::cluster

#endif // HETERPS_CLUSTER_JSONLIMITS_H
