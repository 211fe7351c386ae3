//===- heterps-tblgen.cpp - TableGen with HeterPS's generators ------------===//
//
// mlir-tblgen's driver: every generator of MLIR is there, and those of
// KernelAPIGen.cpp register themselves beside them.
//
//===----------------------------------------------------------------------===//

#include "mlir/Tools/mlir-tblgen/MlirTblgenMain.h"

int main(int argc, char **argv) { return mlir::MlirTblgenMain(argc, argv); }
