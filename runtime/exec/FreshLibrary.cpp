//===- FreshLibrary.cpp - dlopen of the file now at a path ----------------===//

#include "FreshLibrary.h"

#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

namespace heterps::rt {

namespace {
/// dlerror()'s text with the name opened replaced by the library's.
std::string loadError(const std::string &opened, const std::string &path) {
  const char *text = ::dlerror();
  std::string message = text ? text : "unknown error";
  for (size_t at = 0; (at = message.find(opened, at)) != std::string::npos;
       at += path.size())
    message.replace(at, opened.size(), path);
  return "cannot load " + path + ": " + message;
}
} // namespace

void *openFreshLibrary(const std::string &path, std::string &error) {
  // The link's directory is unique to this process and load; the link
  // lives only while dlopen maps the file (the mapping keeps the file).
  static std::atomic<unsigned long> loads{0};
  const char *tmp = std::getenv("TMPDIR");
  std::string directory = std::string(tmp && *tmp ? tmp : "/tmp") +
                          "/heterps-library." + std::to_string(::getpid()) +
                          "." + std::to_string(loads++);
  char absolute[PATH_MAX];
  std::string link;
  if (::realpath(path.c_str(), absolute) &&
      ::mkdir(directory.c_str(), 0700) == 0) {
    std::string name = path.substr(path.find_last_of('/') + 1);
    link = directory + "/" + name;
    if (::symlink(absolute, link.c_str()) != 0)
      link.clear();
  }
  // Without a link (no writable temporary directory), the path itself: the
  // old behaviour, right for every path loaded once.
  const std::string &opened = link.empty() ? path : link;
  void *handle = ::dlopen(opened.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    error = loadError(opened, path);
  if (!link.empty())
    ::unlink(link.c_str());
  ::rmdir(directory.c_str());
  return handle;
}

} // namespace heterps::rt
