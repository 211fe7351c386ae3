//===- Job.h - heterps job: supervised, resizable training jobs -*- C++ -*-===//

#ifndef HETERPS_TOOLS_HETERPS_JOB_H
#define HETERPS_TOOLS_HETERPS_JOB_H

namespace heterps::driver {

/// `heterps job run|resize|status|stop ...` (docs/Jobs.md); argv[1] is
/// "job". Its own small flag parser: LLVM's command line has no nested
/// subcommands.
int jobCommand(int argc, char **argv);

} // namespace heterps::driver

#endif // HETERPS_TOOLS_HETERPS_JOB_H
