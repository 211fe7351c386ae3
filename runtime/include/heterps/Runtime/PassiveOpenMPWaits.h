//===- PassiveOpenMPWaits.h - OpenMP workers that sleep -------*- C++ -*-===//
//
// Training alternates OpenMP kernels with serial parameter-server and data
// work; spinning OpenMP workers steal the cores that work needs (2.5 to 5x
// slower steps on 2 shared cores, docs/Training.md). libgomp reads
// OMP_WAIT_POLICY once, as it loads, which for a program that links it is
// before main: setting the variable in main does nothing.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PASSIVEOPENMPWAITS_H
#define HETERPS_RUNTIME_PASSIVEOPENMPWAITS_H

#include <cstdlib>
#include <unistd.h>

namespace heterps::rt {

/// Runs this program again, with the same arguments (`argv` as main got
/// it), with OMP_WAIT_POLICY=PASSIVE set, so that OpenMP reads it as it
/// loads; returns only where the variable was set already (a user's own
/// setting wins, and the second start returns here) or the program cannot
/// be run again (no /proc: it goes on with OpenMP's default).
inline void runWithPassiveOpenMPWaits(char **argv) {
  if (std::getenv("OMP_WAIT_POLICY"))
    return;
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/1);
  ::execv("/proc/self/exe", argv);
}

} // namespace heterps::rt

#endif // HETERPS_RUNTIME_PASSIVEOPENMPWAITS_H
