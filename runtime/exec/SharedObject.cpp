//===- SharedObject.cpp - Is a stage library whole? ----------------------===//

#include "SharedObject.h"

#include "heterps/Runtime/Types.h"

#include <cerrno>
#include <cstdint>

#include <cstring>
#include <elf.h>
#include <fstream>
#include <vector>

namespace heterps::rt {

namespace {
/// Reads `count` records of `entrySize` bytes at `offset`, or fails naming
/// `what` when they run past the file's `size`.
template <typename Record>
std::vector<Record> readTable(std::ifstream &file, const std::string &path,
                              uint64_t size, uint64_t offset, uint64_t count,
                              uint64_t entrySize, const char *what) {
  if (count == 0)
    return {};
  if (entrySize < sizeof(Record) || offset > size ||
      count > (size - offset) / entrySize)
    throw Error(path + " is cut short or damaged: its " + what +
                " lies past its end (" + std::to_string(size) +
                " bytes); rebuild the bundle");
  std::vector<Record> records(count);
  for (uint64_t i = 0; i < count; ++i) {
    file.seekg(static_cast<std::streamoff>(offset + i * entrySize));
    file.read(reinterpret_cast<char *>(&records[i]), sizeof(Record));
  }
  if (!file)
    throw Error("cannot read " + path + ": " + std::strerror(errno));
  return records;
}
} // namespace

void checkSharedObjectWhole(const std::string &path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file)
    throw Error("cannot read " + path + ": " + std::strerror(errno));
  const uint64_t size = static_cast<uint64_t>(file.tellg());
  Elf64_Ehdr header{};
  file.seekg(0);
  if (size < sizeof(header) ||
      !file.read(reinterpret_cast<char *>(&header), sizeof(header)) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64)
    return;
  auto beyond = [&](uint64_t offset, uint64_t bytes) {
    return offset > size || bytes > size - offset;
  };
  for (const Elf64_Phdr &segment :
       readTable<Elf64_Phdr>(file, path, size, header.e_phoff, header.e_phnum,
                             header.e_phentsize, "program header table"))
    if (segment.p_type == PT_LOAD && beyond(segment.p_offset, segment.p_filesz))
      throw Error(path +
                  " is cut short or damaged: a segment it loads lies "
                  "past its end (" +
                  std::to_string(size) + " bytes); rebuild the bundle");
  // The section headers come last in the files linkers write, so a cut
  // anywhere after the segments shows here.
  for (const Elf64_Shdr &section :
       readTable<Elf64_Shdr>(file, path, size, header.e_shoff, header.e_shnum,
                             header.e_shentsize, "section header table"))
    if (section.sh_type != SHT_NOBITS &&
        beyond(section.sh_offset, section.sh_size))
      throw Error(path +
                  " is cut short or damaged: a section lies past its "
                  "end (" +
                  std::to_string(size) + " bytes); rebuild the bundle");
}

} // namespace heterps::rt
