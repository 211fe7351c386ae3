//===- YamlLimits.cpp - What the YAML files HeterPS reads may hold --------===//

#include "heterps/Cluster/YamlLimits.h"
#include "heterps/Cluster/InputFile.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"

using namespace llvm;

namespace heterps::cluster {

namespace {
constexpr unsigned kMostFlowDepth = 64;
constexpr unsigned kMostIndent = 1024;
} // namespace

Error checkYamlEncoding(StringRef text, StringRef bufferName) {
  const auto *begin = reinterpret_cast<const UTF8 *>(text.data());
  const UTF8 *at = begin;
  if (isLegalUTF8String(&at, begin + text.size()))
    return Error::success();
  StringRef before = text.take_front(at - begin);
  size_t lineStart = before.find_last_of('\n');
  lineStart = lineStart == StringRef::npos ? 0 : lineStart + 1;
  return createStringError(
      inconvertibleErrorCode(),
      "%s:%u:%u: error: byte 0x%02x is not UTF-8 text (YAML files are "
      "UTF-8; save it as UTF-8)",
      bufferName.str().c_str(), unsigned(before.count('\n') + 1),
      unsigned(before.size() - lineStart + 1), unsigned(*at));
}

Error checkYamlNesting(StringRef text, StringRef bufferName) {
  unsigned line = 1, flow = 0, indicators = 0;
  size_t lineStart = 0;
  auto tooDeep = [&](size_t at, const char *how) {
    return createStringError(
        inconvertibleErrorCode(), "%s:%u:%u: error: nested too deeply (%s)",
        bufferName.str().c_str(), line, unsigned(at - lineStart + 1), how);
  };
  auto isBreak = [&](size_t i) { return text[i] == '\n' || text[i] == '\r'; };
  // After a line break at i (\r\n is one), the next line starts.
  auto newLine = [&](size_t &i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n')
      ++i;
    ++line;
    lineStart = i + 1;
    indicators = 0;
  };
  auto spaceOrEnd = [&](size_t i) {
    return i >= text.size() || text[i] == ' ' || text[i] == '\t' || isBreak(i);
  };
  // Where a value (a quoted scalar, a flow collection) may begin: at a
  // line's start, after an indicator ("- ", "? ", ": ") or, in flow,
  // after "[", "{" or ",". Elsewhere a quote or bracket is plain text.
  bool valueMayStart = true, leading = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (isBreak(i)) {
      newLine(i);
      valueMayStart = leading = true;
      continue;
    }
    if (c == ' ' || c == '\t')
      continue;
    if (c == '#' &&
        (i == lineStart || text[i - 1] == ' ' || text[i - 1] == '\t')) {
      while (i + 1 < text.size() && !isBreak(i + 1))
        ++i;
      continue;
    }
    if ((c == '-' || c == '?' || c == ':') && spaceOrEnd(i + 1)) {
      // Each block indicator may open a level: LLVM's parser recurses.
      if (++indicators > kMostIndent)
        return tooDeep(i, "more than 1024 block indicators on a line");
      valueMayStart = true;
      continue;
    }
    if (leading) {
      leading = false;
      if (i - lineStart > kMostIndent)
        return tooDeep(i, "a line starts more than 1024 columns in");
    }
    if ((c == '"' || c == '\'') && valueMayStart) {
      // A quoted scalar's brackets are text ('' and \" do not end it).
      for (++i; i < text.size(); ++i) {
        if (isBreak(i)) {
          newLine(i);
        } else if (c == '"' && text[i] == '\\') {
          if (i + 1 < text.size() && isBreak(i + 1))
            newLine(++i);
          else
            ++i;
        } else if (text[i] == c) {
          if (c == '\'' && i + 1 < text.size() && text[i + 1] == '\'')
            ++i;
          else
            break;
        }
      }
      valueMayStart = false;
    } else if ((c == '[' || c == '{') && (valueMayStart || flow > 0)) {
      if (++flow > kMostFlowDepth)
        return tooDeep(i, "more than 64 levels of [ ] and { }");
      valueMayStart = true;
    } else if ((c == ']' || c == '}') && flow > 0) {
      --flow;
      valueMayStart = false;
    } else if (c == ',' && flow > 0) {
      valueMayStart = true;
    } else {
      valueMayStart = false;
    }
  }
  return Error::success();
}

namespace {
/// The first node under `node` (itself included) with a tag; null if none
/// (or where the text stops parsing: the reader reports that itself).
yaml::Node *firstTagged(yaml::Node *node) {
  if (!node)
    return nullptr;
  if (!node->getRawTag().empty())
    return node;
  if (auto *mapping = dyn_cast<yaml::MappingNode>(node)) {
    for (yaml::KeyValueNode &entry : *mapping) {
      if (yaml::Node *found = firstTagged(entry.getKey()))
        return found;
      if (yaml::Node *found = firstTagged(entry.getValue()))
        return found;
    }
  } else if (auto *sequence = dyn_cast<yaml::SequenceNode>(node)) {
    for (yaml::Node &item : *sequence)
      if (yaml::Node *found = firstTagged(&item))
        return found;
  }
  return nullptr;
}
} // namespace

Error checkNoYamlTags(StringRef text, StringRef bufferName) {
  SourceMgr sourceMgr;
  // Syntax errors are the reader's to report, with its own context.
  sourceMgr.setDiagHandler([](const SMDiagnostic &, void *) {});
  yaml::Stream stream(MemoryBufferRef(text, bufferName), sourceMgr);
  for (yaml::Document &document : stream) {
    yaml::Node *tagged = firstTagged(document.getRoot());
    if (!tagged)
      continue;
    std::string message;
    raw_string_ostream os(message);
    sourceMgr.setDiagHandler(nullptr);
    SMDiagnostic diagnostic = sourceMgr.GetMessage(
        tagged->getSourceRange().Start, SourceMgr::DK_Error,
        "YAML tags are not supported here ('" + tagged->getRawTag() +
            "'): every field has its own type");
    diagnostic.print(nullptr, os, /*ShowColors=*/false);
    return createStringError(inconvertibleErrorCode(), "%s",
                             StringRef(message).rtrim().str().c_str());
  }
  return Error::success();
}

Expected<std::string> readYamlFile(StringRef path, StringRef what) {
  Expected<std::unique_ptr<MemoryBuffer>> file =
      readInputFile(path, what, kMostYamlBytes, /*isText=*/true);
  if (!file)
    return file.takeError();
  std::string text = (*file)->getBuffer().str();
  if (Error error = checkYamlEncoding(text, path))
    return std::move(error);
  if (Error error = checkYamlNesting(text, path))
    return std::move(error);
  if (Error error = checkNoYamlTags(text, path))
    return std::move(error);
  return text;
}

} // namespace heterps::cluster
