//===- Checkpoint.cpp - Trainer checkpoints: write, verify, find ---------===//
//
// DIR/step-<k>/trainer-state is text:
//
//   heterps-trainer-state 1
//   step <k>
//   samples <n>
//   data <the data source's position: offset=<o> line=<l> epoch=<e>
//         [head=<h>] for Criteo TSV, npy rows=<n> row=<r> epoch=<e> for
//         .npy arrays>
//   seed <s>
//   bundle <16 hex digits>
//   batch <b>
//   shuffle <0 or 1>
//   hash-buckets <ids per sparse field; 0: ids fed as they are>
//   lr-scale <x>
//   lr-warmup <from> <start step> <end step>   (none where end <= start)
//   sparse-staleness <s>
//   file <path relative to the checkpoint> <bytes> <checksum, 8 hex digits>
//   ...
//   crc32 <8 hex digits over every line before>
//
// Listing every file with its CRC lets a checkpoint be verified without
// knowing the parameter server's format, and catches a file swapped in from
// another checkpoint. From version 3 a file's checksum is the Adler-32 of
// its name, a NUL and its bytes. Versions 1 and 2 listed each whole file's
// CRC32, but the parameter server's files end with the CRC32 of what
// precedes it, and the CRC32 of such a file is the same constant
// (0x2144df1c) for every one: no swap was caught. Being linear, no CRC32 of
// it can tell two such files of one length apart; Adler-32 is not. Version
// 1 lacks the lines from shuffle to sparse-staleness (the recipe).
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/Trainer.h"

#include "../ps/CheckpointFiles.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>
#include <unistd.h>
#include <zlib.h>

namespace heterps::rt::train {
namespace {

namespace fs = std::filesystem;

constexpr const char *kStateName = "trainer-state";
constexpr const char *kStateMagic = "heterps-trainer-state";
constexpr int kStateVersion = 3;
constexpr const char *kRecipeKeys[] = {"shuffle", "hash-buckets", "lr-scale",
                                       "lr-warmup", "sparse-staleness"};

uint32_t updateCrc(uint32_t crc, const void *data, size_t bytes) {
  return ps::updateZlibChecksum(::crc32, crc, data, bytes);
}

uint32_t textCrc(const std::string &text) {
  return updateCrc(static_cast<uint32_t>(::crc32(0, nullptr, 0)), text.data(),
                   text.size());
}

std::string hex(uint64_t value, int digits) {
  char text[17];
  std::snprintf(text, sizeof text, "%0*llx", digits,
                static_cast<unsigned long long>(value));
  return text;
}

/// Size and checksum of a file as the trainer state lists it: from
/// version 3 (`named`) the Adler-32 of its listed `name`, a NUL and its
/// bytes, before that the CRC32 of its bytes.
std::pair<uint64_t, uint32_t>
fileChecksum(const fs::path &path, const std::string &name, bool named) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    throw Error("checkpoint file '" + path.string() +
                "' cannot be read: " + std::strerror(errno));
  std::vector<char> buffer(1 << 20);
  uint32_t crc = named ? static_cast<uint32_t>(::adler32(0, nullptr, 0))
                       : static_cast<uint32_t>(::crc32(0, nullptr, 0));
  if (named)
    crc = ps::updateZlibChecksum(::adler32, crc, name.c_str(), name.size() + 1);
  uint64_t bytes = 0;
  size_t got;
  while ((got = std::fread(buffer.data(), 1, buffer.size(), file)) > 0) {
    crc = ps::updateZlibChecksum(named ? ::adler32 : ::crc32, crc,
                                 buffer.data(), got);
    bytes += got;
  }
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed)
    throw Error("checkpoint file '" + path.string() + "' cannot be read");
  return {bytes, crc};
}

/// fsync of a file or directory, so its contents (or entries) are durable
/// before the rename that publishes them.
void syncPath(const fs::path &path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0)
    throw Error("cannot open '" + path.string() +
                "' to sync it: " + std::strerror(errno));
  int result = ::fsync(fd);
  ::close(fd);
  if (result != 0)
    throw Error("cannot sync '" + path.string() + "': " + std::strerror(errno));
}

void writeDurably(const fs::path &path, const std::string &text) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    throw Error("cannot create '" + path.string() +
                "': " + std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size() &&
            std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0;
  ok = std::fclose(file) == 0 && ok;
  if (!ok)
    throw Error("cannot write '" + path.string() +
                "': " + std::strerror(errno));
}

/// k for "step-<k>" (digits only), else -1.
int64_t stepOf(const std::string &name) {
  const std::string prefix = "step-";
  if (name.compare(0, prefix.size(), prefix) != 0 ||
      name.size() == prefix.size() || name.size() > prefix.size() + 18)
    return -1;
  int64_t step = 0;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9')
      return -1;
    step = step * 10 + (name[i] - '0');
  }
  return step;
}

std::string stepName(int64_t step) { return "step-" + std::to_string(step); }

} // namespace

std::string setAsideCheckpoints(const std::string &directory, int64_t after) {
  std::string names;
  for (const CheckpointEntry &entry : listCheckpoints(directory)) {
    if (entry.step <= after)
      continue;
    fs::path from(entry.path);
    fs::path to = from.parent_path() / ("damaged-" + from.filename().string());
    for (int n = 2; fs::exists(to); ++n)
      to = from.parent_path() /
           ("damaged-" + from.filename().string() + "." + std::to_string(n));
    std::error_code error;
    fs::rename(from, to, error);
    if (error)
      throw Error("cannot set aside the damaged checkpoint '" + entry.path +
                  "': " + error.message());
    names += (names.empty() ? "" : ", ") + to.filename().string();
  }
  return names;
}

std::vector<CheckpointEntry> listCheckpoints(const std::string &directory) {
  std::vector<CheckpointEntry> entries;
  std::error_code error;
  if (!fs::is_directory(directory, error))
    return entries;
  for (const fs::directory_entry &entry :
       fs::directory_iterator(directory, error)) {
    int64_t step = stepOf(entry.path().filename().string());
    if (step >= 0 && entry.is_directory(error))
      entries.push_back({step, entry.path().string()});
  }
  if (error)
    throw Error("cannot list checkpoint directory '" + directory +
                "': " + error.message());
  std::sort(entries.begin(), entries.end(),
            [](const CheckpointEntry &a, const CheckpointEntry &b) {
              return a.step < b.step;
            });
  return entries;
}

void tidyCheckpointDirectory(const std::string &directory) {
  std::error_code error;
  if (!fs::is_directory(directory, error))
    return;
  std::vector<fs::path> temporaries, moved;
  for (const fs::directory_entry &entry :
       fs::directory_iterator(directory, error)) {
    fs::path name = entry.path().filename();
    if (stepOf(name.stem().string()) < 0)
      continue;
    if (name.extension() == ".tmp")
      temporaries.push_back(entry.path());
    else if (name.extension() == ".old")
      moved.push_back(entry.path());
  }
  // A .tmp was never renamed into place: it is incomplete by construction.
  for (const fs::path &path : temporaries)
    fs::remove_all(path, error);
  // A .old is a complete checkpoint moved aside to make room for its
  // replacement; without the replacement it is the checkpoint of its step.
  for (const fs::path &path : moved) {
    fs::path final = path.parent_path() / path.stem();
    if (fs::exists(final, error))
      fs::remove_all(path, error);
    else
      fs::rename(path, final, error);
  }
}

std::string
writeCheckpoint(const std::string &directory, const TrainerState &state,
                const std::function<void(const std::string &)> &writeServer,
                int keep) {
  if (state.position.empty() || state.position.find('\n') != std::string::npos)
    throw Error("data position '" + state.position +
                "' cannot be recorded in a checkpoint (empty or multi-line)");
  std::error_code error;
  fs::create_directories(directory, error);
  if (error)
    throw Error("cannot create checkpoint directory '" + directory +
                "': " + error.message());
  const fs::path final = fs::path(directory) / stepName(state.step);
  const fs::path temporary = final.string() + ".tmp";
  const fs::path previous = final.string() + ".old";
  fs::remove_all(temporary, error);
  if (!fs::create_directory(temporary, error) || error)
    throw Error("cannot create '" + temporary.string() +
                "': " + error.message());

  // A checkpoint that cannot be written whole (a full disk) leaves
  // nothing: its part would take the space the next one needs.
  struct RemoveUnlessKept {
    const fs::path &path;
    bool kept = false;
    ~RemoveUnlessKept() {
      std::error_code ignored;
      if (!kept)
        fs::remove_all(path, ignored);
    }
  } partial{temporary};

  writeServer((temporary / "ps").string());

  std::vector<std::string> files;
  for (const fs::directory_entry &entry :
       fs::recursive_directory_iterator(temporary, error))
    if (entry.is_regular_file())
      files.push_back(fs::relative(entry.path(), temporary).generic_string());
  if (error)
    throw Error("cannot list '" + temporary.string() + "': " + error.message());
  std::sort(files.begin(), files.end());

  std::ostringstream text;
  text << kStateMagic << " " << (state.recipe ? kStateVersion : 1) << "\n"
       << "step " << state.step << "\n"
       << "samples " << state.samples << "\n"
       << "data " << state.position << "\n"
       << "seed " << state.seed << "\n"
       << "bundle " << state.bundle << "\n"
       << "batch " << state.batch << "\n";
  if (state.recipe) {
    const TrainingRecipe &recipe = *state.recipe;
    const LearningRateSchedule &rate = recipe.learningRate;
    text << std::setprecision(17) << "shuffle " << int(recipe.shuffle) << "\n"
         << "hash-buckets " << recipe.hashBuckets << "\n"
         << "lr-scale " << rate.scale << "\n"
         << "lr-warmup " << rate.from << " " << rate.start << " " << rate.end
         << "\n"
         << "sparse-staleness " << recipe.sparseStaleness << "\n";
  }
  for (const std::string &file : files) {
    if (file.find_first_of(" \n") != std::string::npos)
      throw Error("checkpoint file name '" + file + "' holds a blank");
    auto [bytes, crc] = fileChecksum(temporary / file, file,
                                     /*named=*/state.recipe.has_value());
    text << "file " << file << " " << bytes << " " << hex(crc, 8) << "\n";
  }
  std::string body = text.str();
  body += "crc32 " + hex(textCrc(body), 8) + "\n";
  writeDurably(temporary / kStateName, body);
  syncPath(temporary);

  // A directory cannot be renamed over a non-empty one: move the old
  // checkpoint of this step aside, move the new one in, drop the old one.
  fs::remove_all(previous, error);
  if (fs::exists(final)) {
    fs::rename(final, previous, error);
    if (error)
      throw Error("cannot move '" + final.string() +
                  "' aside: " + error.message());
  }
  fs::rename(temporary, final, error);
  if (error)
    throw Error("cannot rename '" + temporary.string() + "' to '" +
                final.string() + "': " + error.message());
  partial.kept = true;
  syncPath(directory);
  fs::remove_all(previous, error);

  // Keep the newest `keep` up to this step. Newer ones can only be
  // checkpoints a resume skipped as corrupt, which it set aside
  // (setAsideCheckpoints); any other is left alone.
  std::vector<CheckpointEntry> older;
  for (const CheckpointEntry &entry : listCheckpoints(directory))
    if (entry.step <= state.step)
      older.push_back(entry);
  size_t retain = static_cast<size_t>(std::max(keep, 1));
  for (size_t i = 0; i + retain < older.size(); ++i) {
    fs::remove_all(older[i].path, error);
    if (error)
      throw Error("cannot delete old checkpoint '" + older[i].path +
                  "': " + error.message());
  }
  return final.string();
}

TrainerState verifyCheckpoint(const std::string &checkpoint) {
  const fs::path directory(checkpoint);
  const fs::path statePath = directory / kStateName;
  auto corrupt = [&](const std::string &why) {
    return Error("checkpoint file '" + statePath.string() +
                 "' is corrupt: " + why);
  };
  std::ifstream stream(statePath, std::ios::binary);
  if (!stream)
    throw Error("checkpoint file '" + statePath.string() + "' is missing");
  std::string bytes((std::istreambuf_iterator<char>(stream)),
                    std::istreambuf_iterator<char>());
  const std::string marker = "crc32 ";
  size_t last = bytes.rfind(marker);
  if (last == std::string::npos || (last != 0 && bytes[last - 1] != '\n') ||
      bytes.size() != last + marker.size() + 9 || bytes.back() != '\n')
    throw corrupt("no checksum line at its end");
  std::string body = bytes.substr(0, last);
  if (bytes.substr(last + marker.size(), 8) != hex(textCrc(body), 8))
    throw corrupt("CRC32 mismatch");

  TrainerState state;
  std::map<std::string, bool> seen;
  std::vector<std::tuple<std::string, uint64_t, std::string>> files;
  std::istringstream lines(body);
  std::string line;
  bool header = false, namedChecksums = false;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    if (key == kStateMagic) {
      int version = 0;
      fields >> version;
      if (version < 1 || version > kStateVersion)
        throw corrupt("unsupported version " + std::to_string(version));
      if (version >= 2)
        state.recipe.emplace();
      namedChecksums = version >= 3;
      header = true;
      continue;
    }
    if (key == "data") {
      // The data source parses it when the run resumes: only it knows
      // its format.
      std::string rest;
      std::getline(fields, rest);
      state.position = rest.empty() ? rest : rest.substr(1);
      if (state.position.empty())
        throw corrupt("empty data position");
    } else if (key == "step") {
      fields >> state.step;
    } else if (key == "samples") {
      fields >> state.samples;
    } else if (key == "seed") {
      fields >> state.seed;
    } else if (key == "bundle") {
      fields >> state.bundle;
    } else if (key == "batch") {
      fields >> state.batch;
    } else if (state.recipe && key == "shuffle") {
      int shuffle = -1;
      fields >> shuffle;
      if (shuffle != 0 && shuffle != 1)
        throw corrupt("bad line '" + line + "'");
      state.recipe->shuffle = shuffle == 1;
    } else if (state.recipe && key == "hash-buckets") {
      fields >> state.recipe->hashBuckets;
    } else if (state.recipe && key == "lr-scale") {
      fields >> state.recipe->learningRate.scale;
    } else if (state.recipe && key == "lr-warmup") {
      LearningRateSchedule &rate = state.recipe->learningRate;
      fields >> rate.from >> rate.start >> rate.end;
    } else if (state.recipe && key == "sparse-staleness") {
      fields >> state.recipe->sparseStaleness;
    } else if (key == "file") {
      std::string name, crc;
      uint64_t size = 0;
      fields >> name >> size >> crc;
      if (name.empty() || name[0] == '/' ||
          name.find("..") != std::string::npos)
        throw corrupt("bad line '" + line + "'");
      files.emplace_back(name, size, crc);
    } else {
      throw corrupt("bad line '" + line + "'");
    }
    if (key != "data" && fields.fail())
      throw corrupt("bad line '" + line + "'");
    seen[key] = true;
  }
  if (!header)
    throw corrupt("not a trainer state");
  for (const char *key : {"step", "samples", "data", "seed", "bundle", "batch"})
    if (!seen.count(key))
      throw corrupt(std::string("no '") + key + "' line");
  if (state.recipe)
    for (const char *key : kRecipeKeys)
      if (!seen.count(key))
        throw corrupt(std::string("no '") + key + "' line");
  bool hasServer = false;
  for (const auto &[name, size, crc] : files) {
    const fs::path path = directory / name;
    std::error_code error;
    if (!fs::is_regular_file(path, error))
      throw Error("checkpoint file '" + path.string() + "' is missing");
    auto [bytes, actual] = fileChecksum(path, name, namedChecksums);
    if (bytes != size)
      throw Error("checkpoint file '" + path.string() +
                  "' is corrupt: " + std::to_string(bytes) +
                  " bytes, the trainer state says " + std::to_string(size));
    if (hex(actual, 8) != crc)
      throw Error("checkpoint file '" + path.string() +
                  "' is corrupt: its checksum differs from the trainer "
                  "state's");
    // A multi-process run's shards each write a part, ps/shard-<r>/.
    hasServer = hasServer || name == "ps/metadata" ||
                (name.compare(0, 9, "ps/shard-") == 0 && name.size() > 9 + 9 &&
                 name.compare(name.size() - 9, 9, "/metadata") == 0);
  }
  if (!hasServer)
    throw corrupt("it lists no parameter-server checkpoint (ps/metadata or "
                  "ps/shard-<r>/metadata)");
  return state;
}

std::optional<FoundCheckpoint>
findResumeCheckpoint(const std::string &directory,
                     const std::vector<std::string> &identities,
                     std::ostream &warnings) {
  std::vector<CheckpointEntry> entries = listCheckpoints(directory);
  for (auto entry = entries.rbegin(); entry != entries.rend(); ++entry) {
    TrainerState state;
    try {
      state = verifyCheckpoint(entry->path);
    } catch (const Error &error) {
      // One write: in an MPI job, other ranks' and mpirun's messages share
      // the stream, and a line written in pieces came out split by them.
      warnings << ("warning: skipping checkpoint '" + entry->path +
                   "': " + error.what() + "\n")
               << std::flush;
      continue;
    }
    if (std::find(identities.begin(), identities.end(), state.bundle) ==
        identities.end())
      throw Error("checkpoint '" + entry->path +
                  "' was written by another bundle (identity " + state.bundle +
                  ", this bundle's is " + identities.front() +
                  "); resume with the bundle that wrote it or use another "
                  "--checkpoint-dir");
    if (state.step != entry->step)
      throw Error("checkpoint '" + entry->path + "' records step " +
                  std::to_string(state.step) + ", not the step of its name");
    return FoundCheckpoint{entry->path, state};
  }
  if (!entries.empty())
    throw NoCheckpointVerifies("no checkpoint in '" + directory +
                               "' verifies (" + std::to_string(entries.size()) +
                               " tried; see the warnings above)");
  return std::nullopt;
}

} // namespace heterps::rt::train
