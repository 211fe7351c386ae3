//===- TestSupport.h - Helpers shared by the runtime's unit tests ---------===//
//
// Header-only helpers that several test files need alike: a scratch
// directory that is fresh on construction and removed on destruction,
// whole-file text reads and writes, and an environment variable set for a
// scope. Nothing here is part of the runtime.
//
// Scratch directories lie under fs::temp_directory_path() and carry the
// process id (and, per test, a tag or the running test's name), so test
// binaries run side by side under `ctest -j` never share one.
//
// The namespace is not `testing`: test files say `using namespace
// heterps::rt`, which would make a plain `testing::` ambiguous with
// GoogleTest's.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_UNITTESTS_TESTSUPPORT_H
#define HETERPS_RUNTIME_UNITTESTS_TESTSUPPORT_H

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <unistd.h>

// Tests without GoogleTest (MpiJobTest) use the rest of this file.
#if __has_include(<gtest/gtest.h>)
#include <gtest/gtest.h>
#define HETERPS_TEST_SUPPORT_HAVE_GTEST 1
#endif

namespace heterps::rt::testsupport {

/// This process's id as text: what keeps scratch directories of test
/// processes running at once apart.
inline std::string processId() { return std::to_string(::getpid()); }

#ifdef HETERPS_TEST_SUPPORT_HAVE_GTEST
/// The name of the running GoogleTest test: a scratch tag unique per test.
inline std::string currentTestName() {
  return ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

/// `body` throws an error (the runtime's Error is one) whose text contains
/// `text`.
template <typename F> void expectErrorContaining(F &&body, const char *text) {
  try {
    body();
    ADD_FAILURE() << "no error; expected one containing \"" << text << "\"";
  } catch (const std::runtime_error &error) {
    EXPECT_NE(std::string(error.what()).find(text), std::string::npos)
        << error.what();
  }
}
#endif

/// A fresh, empty directory under the temporary directory, removed with all
/// it holds when this goes away. `scratch / "file"` names a file in it.
class ScratchDirectory {
public:
  /// <temp>/<name>, exactly: `name` must already be unique to its users
  /// (several processes that agree on it share the directory).
  explicit ScratchDirectory(const std::string &name)
      : path(std::filesystem::temp_directory_path() / name) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  /// <temp>/<prefix>-<pid>-<tag>: one per process and, with a tag per test,
  /// one per test.
  ScratchDirectory(const std::string &prefix, const std::string &tag)
      : ScratchDirectory(prefix + "-" + processId() + "-" + tag) {}
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  ScratchDirectory(const ScratchDirectory &) = delete;
  ScratchDirectory &operator=(const ScratchDirectory &) = delete;

  std::string operator/(const std::string &name) const {
    return (path / name).string();
  }

  std::filesystem::path path;
};

/// Replaces the file at `path` with `text`, byte for byte.
inline void writeText(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// The bytes of the file at `path` ("" if it cannot be read).
inline std::string readText(const std::string &path) {
  std::ifstream stream(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(stream)),
                     std::istreambuf_iterator<char>());
}

/// Sets (or, with nullopt, unsets) an environment variable for its
/// lifetime, then puts back what was there.
class ScopedEnvironment {
public:
  ScopedEnvironment(const char *name, std::optional<std::string> value)
      : name(name) {
    if (const char *old = std::getenv(name))
      previous = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnvironment() {
    if (previous)
      ::setenv(name, previous->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ScopedEnvironment(const ScopedEnvironment &) = delete;
  ScopedEnvironment &operator=(const ScopedEnvironment &) = delete;

private:
  const char *name;
  std::optional<std::string> previous;
};

} // namespace heterps::rt::testsupport

#endif // HETERPS_RUNTIME_UNITTESTS_TESTSUPPORT_H
