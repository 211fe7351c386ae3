//===- FaultInjection.cpp - Faults a test asks a rank to have -------------===//

#include "heterps/Runtime/FaultInjection.h"

#include "heterps/Runtime/Types.h"

#include <cctype>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <unistd.h>

namespace heterps::rt::train {
namespace {

const char *const kSpecForms =
    "a spec is kill|hang|exit:worker|shard|stage:RANK@STEP or "
    "kill-host:HOST@STEP";

std::string trim(const std::string &text) {
  size_t first = 0, last = text.size();
  while (first < last && std::isspace(static_cast<unsigned char>(text[first])))
    ++first;
  while (last > first &&
         std::isspace(static_cast<unsigned char>(text[last - 1])))
    --last;
  return text.substr(first, last - first);
}

/// Decimal digits only, as a non-negative number that fits; else nullopt.
std::optional<int64_t> parseWhole(const std::string &text) {
  if (text.empty() || text.size() > 18)
    return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

FaultSpec parseFaultSpec(const std::string &text) {
  auto fail = [&](const std::string &why) -> Error {
    return Error("fault spec '" + text + "': " + why + "; " + kSpecForms);
  };
  FaultSpec spec;
  spec.text = text;
  const size_t at = text.rfind('@');
  if (at == std::string::npos)
    throw fail("no '@STEP'");
  std::optional<int64_t> step = parseWhole(text.substr(at + 1));
  if (!step || *step < 1)
    throw fail("the step '" + text.substr(at + 1) +
               "' is not a whole number of at least 1");
  spec.step = *step;
  const std::string target = text.substr(0, at);

  const std::string hostPrefix = "kill-host:";
  if (target.compare(0, hostPrefix.size(), hostPrefix) == 0) {
    spec.action = FaultAction::Kill;
    spec.host = target.substr(hostPrefix.size());
    spec.index = -1;
    if (spec.host.empty() || spec.host.find(':') != std::string::npos ||
        spec.host.find_first_of(" \t") != std::string::npos)
      throw fail("the host '" + spec.host + "' is not a host name");
    return spec;
  }
  const size_t first = target.find(':');
  const size_t second =
      first == std::string::npos ? first : target.find(':', first + 1);
  if (second == std::string::npos ||
      target.find(':', second + 1) != std::string::npos)
    throw fail("expected ACTION:ROLE:RANK before '@'");
  const std::string action = target.substr(0, first);
  const std::string role = target.substr(first + 1, second - first - 1);
  const std::string index = target.substr(second + 1);
  if (action == "kill")
    spec.action = FaultAction::Kill;
  else if (action == "hang")
    spec.action = FaultAction::Hang;
  else if (action == "exit")
    spec.action = FaultAction::Exit;
  else
    throw fail("unknown action '" + action + "'");
  std::optional<RankRole> parsedRole = parseRankRole(role);
  if (!parsedRole)
    throw fail("unknown role '" + role + "'");
  spec.role = *parsedRole;
  std::optional<int64_t> rank = parseWhole(index);
  if (!rank || *rank > 1000000)
    throw fail("the rank '" + index + "' is not a whole number");
  spec.index = static_cast<int>(*rank);
  return spec;
}

std::string actionText(FaultAction action) {
  switch (action) {
  case FaultAction::Kill:
    return "kills itself";
  case FaultAction::Hang:
    return "stops itself";
  case FaultAction::Exit:
    return "exits " + std::to_string(kFaultExitCode);
  }
  return "fails";
}

} // namespace

bool FaultSpec::names(RankRole rankRole, int rankIndex,
                      const std::string &rankHost) const {
  if (!host.empty())
    return host == rankHost;
  return role == rankRole && index == rankIndex;
}

std::vector<FaultSpec> parseFaultSpecs(const std::string &text) {
  std::vector<FaultSpec> specs;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string::npos)
      end = text.size();
    const std::string piece = trim(text.substr(start, end - start));
    if (!piece.empty())
      specs.push_back(parseFaultSpec(piece));
    start = end + 1;
  }
  return specs;
}

void checkFaultsFitRanks(const std::vector<FaultSpec> &specs,
                         const RankCounts &ranks, const std::string &source) {
  for (size_t i = 0; i < specs.size(); ++i) {
    const FaultSpec &spec = specs[i];
    // The same fault however spelled (kill:worker:00@3 is kill:worker:0@3).
    for (size_t j = 0; j < i; ++j)
      if (specs[j].action == spec.action && specs[j].role == spec.role &&
          specs[j].index == spec.index && specs[j].host == spec.host &&
          specs[j].step == spec.step)
        throw Error(
            source + spec.text + " is given twice" +
            (specs[j].text == spec.text ? "" : " (as " + specs[j].text + ")") +
            "; each fires once");
    if (!spec.host.empty())
      continue;
    const int count = spec.role == RankRole::Worker  ? ranks.workers
                      : spec.role == RankRole::Shard ? ranks.shards
                                                     : ranks.stages;
    if (spec.index < count)
      continue;
    const std::string role = rankRoleName(spec.role);
    throw Error(source + spec.text + " names " + role + " " +
                std::to_string(spec.index) + ", but the job runs " +
                (ranks.atMost && count > 0 ? "at most " : "") +
                (count == 0
                     ? "no " + role + " ranks"
                     : std::to_string(count) + " " + role +
                           (count == 1 ? "" : "s") + " (numbered from 0)") +
                ": it would never fire");
  }
}

void checkLivenessEnvironment() {
  (void)HeartbeatOptions::fromEnvironment(RankRole::Worker);
  (void)FaultInjector::fromEnvironment(RankRole::Worker, 0);
}

FaultInjector FaultInjector::fromEnvironment(RankRole role, int index) {
  const char *text = std::getenv("HETERPS_FAULT");
  std::vector<FaultSpec> specs;
  if (text && *text) {
    try {
      specs = parseFaultSpecs(text);
    } catch (const Error &error) {
      throw Error(std::string("environment variable HETERPS_FAULT: ") +
                  error.what());
    }
  }
  return FaultInjector(role, index, specs.empty() ? "" : rankHost(), specs);
}

FaultInjector::FaultInjector(RankRole role, int index, const std::string &host,
                             const std::vector<FaultSpec> &specs)
    : role(role), index(index), host(host) {
  for (const FaultSpec &spec : specs)
    if (spec.names(role, index, host))
      mine.push_back(spec);
}

std::vector<FaultSpec> FaultInjector::after(int64_t lastStep) const {
  std::vector<FaultSpec> late;
  for (const FaultSpec &spec : mine)
    if (spec.step > lastStep)
      late.push_back(spec);
  return late;
}

std::string FaultInjector::describe(const FaultSpec &spec) const {
  return spec.text + ": " + rankRoleName(role) + " " + std::to_string(index) +
         " on " + host + " " + actionText(spec.action) + " after step " +
         std::to_string(spec.step);
}

void FaultInjector::act(int64_t step, Heartbeat &heartbeat) const {
  for (const FaultSpec &spec : mine) {
    if (spec.step != step)
      continue;
    // The supervisor counts the steps a killed rank lost from its last
    // beat; the beat thread, woken by the step, may not have written yet.
    heartbeat.beatNow();
    // One write: ranks of a job share mpirun's stderr.
    const std::string line =
        "heterps: fault injection: " + describe(spec) + "\n";
    size_t done = 0;
    while (done < line.size()) {
      ssize_t written =
          ::write(STDERR_FILENO, line.data() + done, line.size() - done);
      if (written <= 0)
        break;
      done += size_t(written);
    }
    switch (spec.action) {
    case FaultAction::Kill:
      std::raise(SIGKILL);
      break;
    case FaultAction::Hang:
      // Only this rank stops; SIGCONT lets it go on.
      std::raise(SIGSTOP);
      break;
    case FaultAction::Exit:
      // Without destructors or atexit handlers: other threads still run.
      std::_Exit(kFaultExitCode);
    }
  }
}

} // namespace heterps::rt::train
