//===- FreshLibrary.h - dlopen of the file now at a path ---------*- C++
//-*-===//
//
// glibc's dlopen hands back a library this process already loaded from the
// same path name, whatever file is at that path now: a bundle recompiled
// to the same place in one process (Python's compile cache, a notebook)
// ran its old stage code with no error, and the cache's check of a rebuilt
// entry looked at the old library. Private to runtime/exec.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_EXEC_FRESHLIBRARY_H
#define HETERPS_RUNTIME_EXEC_FRESHLIBRARY_H

#include <string>

namespace heterps::rt {

/// dlopen(RTLD_NOW | RTLD_LOCAL) of the file at `path` as it is now: loaded
/// through a link of a name used once, so that no earlier load from `path`
/// answers; a file already loaded (the same device and inode) is still
/// shared, as glibc does. Null with `error` set (naming `path`) on failure.
void *openFreshLibrary(const std::string &path, std::string &error);

} // namespace heterps::rt

#endif // HETERPS_RUNTIME_EXEC_FRESHLIBRARY_H
