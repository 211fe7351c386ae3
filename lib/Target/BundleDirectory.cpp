//===- BundleDirectory.cpp - Where a bundle is written --------------------===//

#include "heterps/Target/BundleDirectory.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

using namespace llvm;

namespace {

/// `path` without trailing separators ("out/" is "out"; "/" stays "/").
StringRef withoutTrailingSlashes(StringRef path) {
  while (path.size() > 1 && sys::path::is_separator(path.back()))
    path = path.drop_back();
  return path;
}

/// Whether `directory` holds a bundle: its manifest names the format.
bool holdsBundle(StringRef directory) {
  SmallString<256> manifest(directory);
  sys::path::append(manifest, "manifest.json");
  sys::fs::file_status status;
  if (sys::fs::status(manifest, status) ||
      status.type() != sys::fs::file_type::regular_file)
    return false;
  ErrorOr<std::unique_ptr<MemoryBuffer>> text =
      MemoryBuffer::getFile(manifest, /*IsText=*/true);
  if (!text)
    return false;
  Expected<json::Value> parsed = json::parse((*text)->getBuffer());
  if (!parsed) {
    consumeError(parsed.takeError());
    return false;
  }
  const json::Object *root = parsed->getAsObject();
  std::optional<StringRef> format =
      root ? root->getString("format") : std::nullopt;
  return format && *format == "heterps-bundle";
}

/// A new, empty directory beside `directory` (see makeStagingDirectory).
std::string makeSiblingDirectory(StringRef given, StringRef purpose,
                                 std::string &error) {
  StringRef directory = withoutTrailingSlashes(given);
  SmallString<256> pattern(sys::path::parent_path(directory));
  if (!pattern.empty())
    if (std::error_code ec = sys::fs::create_directories(pattern)) {
      error = "cannot create '" + pattern.str().str() + "': " + ec.message();
      return "";
    }
  sys::path::append(pattern, "." + sys::path::filename(directory) + "." +
                                 purpose + "-XXXXXX");
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data())) {
    error = "cannot create a directory beside '" + given.str() +
            "' to build it in: " + std::strerror(errno);
    return "";
  }
  return name.data();
}

/// Every staging directory this process made: a process that must end at
/// once removes those still there. Never shrinks (a compile makes two).
struct StagingRegistry {
  std::mutex mutex;
  std::vector<std::string> paths;
};

StagingRegistry &stagingRegistry() {
  static auto *registry = new StagingRegistry; // outlives static destructors
  return *registry;
}

} // namespace

std::string heterps::target::bundleDestinationError(StringRef given) {
  StringRef directory = withoutTrailingSlashes(given);
  sys::fs::file_status status;
  if (std::error_code ec = sys::fs::status(directory, status, /*Follow=*/false);
      ec == std::errc::no_such_file_or_directory ||
      ec == std::errc::not_a_directory) {
    // Missing parents are made as the bundle is.
    StringRef parent = sys::path::parent_path(directory);
    if (parent.empty() || !sys::fs::exists(parent) ||
        sys::fs::is_directory(parent))
      return "";
    return "cannot create '" + given.str() + "': '" + parent.str() +
           "' is not a directory";
  } else if (ec) {
    return "cannot use '" + given.str() + "': " + ec.message();
  }
  if (status.type() == sys::fs::file_type::symlink_file)
    return "'" + given.str() +
           "' is a symbolic link; not replacing what it points to (give "
           "that path instead)";
  if (status.type() != sys::fs::file_type::directory_file)
    return "'" + given.str() + "' exists and is not a directory";
  std::error_code ec;
  sys::fs::directory_iterator entry(directory, ec), end;
  if (ec)
    return "cannot read '" + given.str() + "': " + ec.message();
  if (entry == end || holdsBundle(directory))
    return "";
  return "'" + given.str() +
         "' exists and is not a bundle (no manifest.json of a heterps "
         "bundle); not overwriting it";
}

std::string heterps::target::makeStagingDirectory(StringRef given,
                                                  StringRef purpose,
                                                  std::string &error) {
  std::string path = makeSiblingDirectory(given, purpose, error);
  if (!path.empty()) {
    StagingRegistry &registry = stagingRegistry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    registry.paths.push_back(path);
  }
  return path;
}

void heterps::target::removeStagingDirectoriesNow() {
  StagingRegistry &registry = stagingRegistry();
  // Not waiting for a holder: the process is ending, and one that died
  // holding the lock must not hang it.
  std::unique_lock<std::mutex> lock(registry.mutex, std::try_to_lock);
  if (!lock.owns_lock())
    return;
  for (const std::string &path : registry.paths)
    (void)sys::fs::remove_directories(path);
}

bool heterps::target::installBundleDirectory(StringRef staging, StringRef given,
                                             std::string &error) {
  StringRef directory = withoutTrailingSlashes(given);
  auto fail = [&](const Twine &message) {
    (void)sys::fs::remove_directories(staging);
    error = message.str();
    return false;
  };
  if (std::string refused = bundleDestinationError(given); !refused.empty())
    return fail(refused);
  // The earlier bundle or empty directory moves aside first and goes only
  // once the new one is in place; a failed rename puts it back.
  std::string aside;
  if (sys::fs::exists(directory)) {
    // Not a staging directory: it holds the earlier bundle, which an ending
    // process must not remove.
    aside = makeSiblingDirectory(directory, "replaced", error);
    if (aside.empty())
      return fail(error);
    if (std::error_code ec = sys::fs::rename(directory, aside)) {
      (void)sys::fs::remove_directories(aside);
      return fail("cannot replace '" + given + "': " + ec.message());
    }
  }
  if (std::error_code ec = sys::fs::rename(staging, directory)) {
    if (!aside.empty())
      (void)sys::fs::rename(aside, directory);
    return fail("cannot create '" + given + "': " + ec.message());
  }
  if (!aside.empty())
    (void)sys::fs::remove_directories(aside);
  return true;
}
