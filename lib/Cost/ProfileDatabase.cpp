//===- ProfileDatabase.cpp - Measured layer times as JSON -----------------===//
//
// Format: {"version": 1, "entries": [{"key": "fc1", "device_class":
// "gpu.v100", "batch_size": 256, "seconds_per_batch": 0.0012}, ...]}
//
//===----------------------------------------------------------------------===//

#include "heterps/Cluster/InputFile.h"
#include "heterps/Cluster/JsonLimits.h"
#include "heterps/Cost/CostModel.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace llvm;
using namespace heterps::cost;

Expected<ProfileDatabase> ProfileDatabase::parse(StringRef jsonText,
                                                 StringRef bufferName) {
  auto fail = [&](const Twine &problem) {
    return createStringError(inconvertibleErrorCode(),
                             bufferName + ": " + problem);
  };
  Expected<json::Value> value = heterps::cluster::parseJson(jsonText);
  if (!value)
    return fail(toString(value.takeError()));
  const json::Object *root = value->getAsObject();
  if (!root)
    return fail("expected a JSON object");
  // A misspelt field ("entires") would leave the database empty, and
  // every plan priced by the roofline without a word.
  for (const auto &[name, field] : *root)
    if (name != "version" && name != "entries")
      return fail("unknown field '" + StringRef(name) +
                  "' (a database holds version and entries)");
  std::optional<int64_t> version = root->getInteger("version");
  if (!version || *version != 1)
    return fail("expected \"version\": 1");
  const json::Array *list = root->getArray("entries");
  if (!list)
    return fail("expected an \"entries\" array");
  ProfileDatabase db;
  // An entry's fields, and whether each is a string (else a number).
  static const std::pair<StringRef, bool> kFields[] = {
      {"key", true},
      {"device_class", true},
      {"batch_size", false},
      {"seconds_per_batch", false}};
  for (size_t i = 0, e = list->size(); i != e; ++i) {
    const json::Object *entry = (*list)[i].getAsObject();
    if (!entry)
      return fail("entry " + Twine(i) +
                  " is not an object (of key, device_class, batch_size and "
                  "seconds_per_batch)");
    for (const auto &member : *entry)
      if (llvm::none_of(kFields, [&](const auto &known) {
            return known.first == StringRef(member.first);
          }))
        return fail("entry " + Twine(i) + ": unknown field '" +
                    StringRef(member.first) +
                    "' (an entry holds key, device_class, batch_size and "
                    "seconds_per_batch)");
    for (auto [name, isString] : kFields)
      if (isString ? !entry->getString(name) : !entry->getNumber(name))
        return fail("entry " + Twine(i) + ": '" + name + "' " +
                    (entry->get(name) ? "must be a " : "is missing; give a ") +
                    (isString ? "string" : "number"));
    StringRef key = *entry->getString("key");
    StringRef cls = *entry->getString("device_class");
    double batch = *entry->getNumber("batch_size");
    double seconds = *entry->getNumber("seconds_per_batch");
    // Bounded so that scaled to any batch a layer's time stays finite: a
    // time of 1e308, or a batch of 1e-300, priced plans at inf (invalid
    // JSON in the plan) and 2.8e301 per million samples.
    if (!(batch >= 1 && batch <= 1e9) || batch != std::floor(batch) ||
        !(seconds >= 0 && seconds <= 1e6))
      return fail("entry " + Twine(i) + " ('" + key + "' on " + cls +
                  ") needs a batch_size that is a whole number from 1 to "
                  "1e9 and a seconds_per_batch from 0 to 1e6");
    // Two times for one layer and class: which one prices the plan would
    // depend on the order. The same entry twice (merged files) is fine.
    if (auto found = db.entries.find({key.str(), cls.str()});
        found != db.entries.end() && (found->second.batchSize != batch ||
                                      found->second.secondsPerBatch != seconds))
      return fail("entry " + Twine(i) + " ('" + key + "' on " + cls +
                  ") repeats an earlier entry's layer and class with "
                  "another time");
    db.record(key, cls, batch, seconds);
  }
  return db;
}

Expected<ProfileDatabase> ProfileDatabase::load(StringRef path) {
  Expected<std::unique_ptr<MemoryBuffer>> file =
      heterps::cluster::readInputFile(path, "profile database",
                                      heterps::cluster::kMostJsonFileBytes);
  if (!file)
    return file.takeError();
  return parse((*file)->getBuffer(), path);
}

std::string ProfileDatabase::toJSON() const {
  json::Array list;
  for (const auto &[key, entry] : entries)
    list.push_back(json::Object{{"key", key.first},
                                {"device_class", key.second},
                                {"batch_size", entry.batchSize},
                                {"seconds_per_batch", entry.secondsPerBatch}});
  json::Value root = json::Object{{"version", 1}, {"entries", std::move(list)}};
  std::string text;
  raw_string_ostream os(text);
  os << formatv("{0:2}", root) << "\n";
  return text;
}

Error ProfileDatabase::save(StringRef path) const {
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_Text);
  if (ec)
    return createStringError(ec, "cannot write profile database '" + path +
                                     "': " + ec.message());
  os << toJSON();
  return Error::success();
}

void ProfileDatabase::record(StringRef key, StringRef deviceClass,
                             double batchSize, double secondsPerBatch) {
  entries[{key.str(), deviceClass.str()}] = Entry{batchSize, secondsPerBatch};
}

std::optional<double> ProfileDatabase::lookup(const Layer &layer,
                                              StringRef deviceClass,
                                              double batchSize) const {
  for (const std::string *key : {&layer.name, &layer.signature}) {
    if (key->empty())
      continue;
    auto it = entries.find({*key, deviceClass.str()});
    if (it != entries.end())
      return it->second.secondsPerBatch * batchSize / it->second.batchSize;
  }
  return std::nullopt;
}
