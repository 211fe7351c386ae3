//===- BundleDirectory.h - Where a bundle is written ------------*- C++ -*-===//
//
// A bundle is built in a directory of its own beside its destination and
// moved there in one rename, so a failure leaves nothing half-written, and
// it replaces only an earlier bundle or an empty directory: what a user
// keeps at or beside the destination is never removed.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_TARGET_BUNDLEDIRECTORY_H
#define HETERPS_TARGET_BUNDLEDIRECTORY_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace heterps::target {

/// Why a bundle may not be written to `directory`, or "": it may be absent
/// (its parent must then be a directory), an empty directory or an earlier
/// bundle (a manifest.json of format heterps-bundle), and not a symbolic
/// link, whose target would be replaced.
std::string bundleDestinationError(llvm::StringRef directory);

/// Makes a new, empty directory beside `directory`, named
/// `.NAME.PURPOSE-XXXXXX` (unique: two builds of one destination never share
/// it), and returns its path; "" with `error` set where it cannot.
std::string makeStagingDirectory(llvm::StringRef directory,
                                 llvm::StringRef purpose, std::string &error);

/// Removes the staging directories this process made that are still there,
/// without unwinding: for a process ending at once (out of memory).
void removeStagingDirectoriesNow();

/// Moves a finished bundle from `staging` to `directory`, replacing an
/// earlier bundle or an empty directory there and nothing else (checked
/// again now: the destination may have changed while the bundle was
/// built). On failure `staging` is removed, `directory` is as it was and
/// `error` says why.
bool installBundleDirectory(llvm::StringRef staging, llvm::StringRef directory,
                            std::string &error);

} // namespace heterps::target

#endif // HETERPS_TARGET_BUNDLEDIRECTORY_H
