//===- InputFile.cpp - Reading a file a user names ------------------------===//

#include "heterps/Cluster/InputFile.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"

using namespace llvm;

Expected<std::unique_ptr<MemoryBuffer>>
heterps::cluster::readInputFile(StringRef path, StringRef what,
                                uint64_t mostBytes, bool isText) {
  std::string prefix =
      (what.empty() ? Twine("cannot read '") : "cannot read " + what + " '")
          .str() +
      path.str() + "': ";
  auto failure = [&](std::error_code code, const Twine &why) {
    return createStringError(code, prefix + why);
  };
  sys::fs::file_status status;
  if (std::error_code error = sys::fs::status(path, status))
    return failure(error, error.message());
  if (status.type() != sys::fs::file_type::regular_file)
    return failure(inconvertibleErrorCode(), "not a regular file");
  if (status.getSize() > mostBytes)
    return failure(inconvertibleErrorCode(),
                   Twine(status.getSize()) + " bytes, more than the " +
                       Twine(mostBytes) + " it may hold");
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(path, isText);
  if (!file)
    return failure(file.getError(), file.getError().message());
  return std::move(*file);
}
