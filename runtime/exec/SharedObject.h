//===- SharedObject.h - Is a stage library whole? -----------------*- C++
//-*-===//
//
// dlopen maps a library's segments as its headers describe them; a file cut
// short (a disk that filled up while a bundle was built or copied) maps
// pages past its end, and the first touch of one kills the process with
// SIGBUS, far from any error the loader could report. Private to
// runtime/exec.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_EXEC_SHAREDOBJECT_H
#define HETERPS_RUNTIME_EXEC_SHAREDOBJECT_H

#include <string>

namespace heterps::rt {

/// Throws an Error naming `path` unless every part of the ELF file that its
/// headers place (program and section header tables, loaded segments,
/// sections) lies within it. A file that is not 64-bit ELF is left to
/// dlopen, whose message names it.
void checkSharedObjectWhole(const std::string &path);

} // namespace heterps::rt

#endif // HETERPS_RUNTIME_EXEC_SHAREDOBJECT_H
