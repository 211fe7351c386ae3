//===- Elastic.h - heterps elastic: the cluster-wide autoscaler -*- C++ -*-===//

#ifndef HETERPS_TOOLS_HETERPS_ELASTIC_H
#define HETERPS_TOOLS_HETERPS_ELASTIC_H

namespace heterps::driver {

/// `heterps elastic simulate|generate ...` (docs/Autoscaler.md); argv[1] is
/// "elastic". Its own small flag parser, like `heterps job`: LLVM's command
/// line has no nested subcommands.
int elasticCommand(int argc, char **argv);

} // namespace heterps::driver

#endif // HETERPS_TOOLS_HETERPS_ELASTIC_H
