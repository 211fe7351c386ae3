//===- BenchFlags.h - `--flag value` parsing of the PS benchmarks -*- C++
//-*-===//
//
// The parameter-server benchmarks take every setting as `--flag value`.
// parseFlags runs each flag's setter on its value; an unknown flag, a
// missing value or one the setter refuses (it returns false or throws, as
// std::stoul does) ends the program with one message naming the flag.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_BENCH_PS_BENCHFLAGS_H
#define HETERPS_BENCH_PS_BENCHFLAGS_H

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <string>

namespace heterps::bench {

using FlagSetters =
    std::map<std::string, std::function<bool(const std::string &value)>>;

inline void parseFlags(const char *tool, int argc, char **argv,
                       const FlagSetters &setters) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto setter = setters.find(flag);
    if (setter == setters.end()) {
      std::fprintf(stderr, "%s: unknown flag %s\n", tool, flag.c_str());
      std::exit(2);
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: %s needs a value\n", tool, flag.c_str());
      std::exit(2);
    }
    const std::string value = argv[++i];
    bool accepted = false;
    try {
      accepted = setter->second(value);
    } catch (const std::exception &) {
    }
    if (!accepted) {
      std::fprintf(stderr, "%s: %s %s: not a value it takes\n", tool,
                   flag.c_str(), value.c_str());
      std::exit(2);
    }
  }
}

} // namespace heterps::bench

#endif // HETERPS_BENCH_PS_BENCHFLAGS_H
