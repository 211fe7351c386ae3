//===- JsonLimits.cpp - Nesting checked before llvm::json parses ----------===//

#include "heterps/Cluster/JsonLimits.h"

using namespace llvm;

namespace heterps::cluster {

Expected<json::Value> parseJson(StringRef text) {
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
    } else if (inString) {
      if (c == '\\')
        ++i; // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMostJsonNesting)
        return createStringError(
            inconvertibleErrorCode(),
            "[%u:%u]: arrays and objects nest more than %u levels deep", line,
            unsigned(i - lineStart + 1), kMostJsonNesting);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return json::parse(text);
}

} // namespace heterps::cluster
