//===- YamlLimits.cpp - What the YAML files HeterPS reads may hold --------===//

#include "heterps/Cluster/YamlLimits.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

namespace heterps::cluster {

namespace {
constexpr unsigned kMostFlowDepth = 64;
constexpr unsigned kMostIndent = 1024;
} // namespace

Error checkYamlNesting(StringRef text, StringRef bufferName) {
  unsigned line = 1, flow = 0;
  size_t lineStart = 0;
  auto tooDeep = [&](size_t at, const char *how) {
    return createStringError(
        inconvertibleErrorCode(), "%s:%u:%u: error: nested too deeply (%s)",
        bufferName.str().c_str(), line, unsigned(at - lineStart + 1), how);
  };
  bool atIndent = true; // before the line's first character besides "- "
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
      atIndent = true;
      continue;
    }
    if (atIndent) {
      if (c == ' ' || (c == '-' && i + 1 < text.size() && text[i + 1] == ' '))
        continue;
      atIndent = false;
      if (i - lineStart > kMostIndent)
        return tooDeep(i, "a line starts more than 1024 columns in");
    }
    if (c == '#' &&
        (i == lineStart || text[i - 1] == ' ' || text[i - 1] == '\t')) {
      while (i + 1 < text.size() && text[i + 1] != '\n')
        ++i;
    } else if (c == '"' || c == '\'') {
      // A quoted scalar's brackets are text ('' and \" do not end it).
      for (++i; i < text.size(); ++i) {
        if (text[i] == '\n') {
          ++line;
          lineStart = i + 1;
        } else if (c == '"' && text[i] == '\\') {
          ++i;
        } else if (text[i] == c) {
          if (c == '\'' && i + 1 < text.size() && text[i + 1] == '\'')
            ++i;
          else
            break;
        }
      }
    } else if (c == '[' || c == '{') {
      if (++flow > kMostFlowDepth)
        return tooDeep(i, "more than 64 levels of [ ] and { }");
    } else if ((c == ']' || c == '}') && flow > 0) {
      --flow;
    }
  }
  return Error::success();
}

Expected<std::string> readYamlFile(StringRef path, StringRef what) {
  sys::fs::file_status status;
  if (std::error_code error = sys::fs::status(path, status))
    return createStringError(error, "cannot read %s '%s': %s",
                             what.str().c_str(), path.str().c_str(),
                             error.message().c_str());
  if (status.type() != sys::fs::file_type::regular_file)
    return createStringError(inconvertibleErrorCode(),
                             "cannot read %s '%s': not a regular file",
                             what.str().c_str(), path.str().c_str());
  if (status.getSize() > kMostYamlBytes)
    return createStringError(inconvertibleErrorCode(),
                             "cannot read %s '%s': %llu bytes, more than the "
                             "%llu a description may hold",
                             what.str().c_str(), path.str().c_str(),
                             (unsigned long long)status.getSize(),
                             (unsigned long long)kMostYamlBytes);
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return createStringError(file.getError(), "cannot read %s '%s': %s",
                             what.str().c_str(), path.str().c_str(),
                             file.getError().message().c_str());
  std::string text = (*file)->getBuffer().str();
  if (Error error = checkYamlNesting(text, path))
    return std::move(error);
  return text;
}

} // namespace heterps::cluster
