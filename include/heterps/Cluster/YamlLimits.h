//===- YamlLimits.h - What the YAML files HeterPS reads may hold -*- C++
//-*-===//
//
// llvm::yaml builds and skips its nodes recursively, so a file nested a few
// ten thousand levels deep overflows the stack before any check of ours
// runs. The cluster and job readers check the text first.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_CLUSTER_YAMLLIMITS_H
#define HETERPS_CLUSTER_YAMLLIMITS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace heterps::cluster {

/// The largest YAML file read (a cluster or job description is a few KiB).
inline constexpr uint64_t kMostYamlBytes = 16u << 20;

/// Reads the YAML file `path` (`what` names it in errors: "cluster file"):
/// a regular file of at most kMostYamlBytes whose flow collections ('[',
/// '{') nest at most 64 deep and whose lines start at most 1024 columns in
/// (block nesting), in UTF-8 (checkYamlEncoding) and with no tags
/// (checkNoYamlTags); else an Error naming the file and, for the text's
/// checks, the line and column.
llvm::Expected<std::string> readYamlFile(llvm::StringRef path,
                                         llvm::StringRef what);

/// An Error naming the line and column of the first byte of `text` that is
/// not UTF-8 (YAML's encoding; LLVM's scanner reports such a byte as "Got
/// empty plain scalar").
llvm::Error checkYamlEncoding(llvm::StringRef text, llvm::StringRef bufferName);

/// The nesting check of readYamlFile on `text`, errors naming `bufferName`.
llvm::Error checkYamlNesting(llvm::StringRef text, llvm::StringRef bufferName);

/// An Error naming the line and column of the first tag ("!!str") in
/// `text`: the readers type every field themselves, and a tag that
/// changed a value's type would be silently ignored. Call after
/// checkYamlNesting (the walk recurses).
llvm::Error checkNoYamlTags(llvm::StringRef text, llvm::StringRef bufferName);

} // namespace heterps::cluster

#endif // HETERPS_CLUSTER_YAMLLIMITS_H
