//===- MachineMemory.h - The memory of the machine a run is on -*- C++ -*-===//
//
// What sizes a run by the machine: the trainer refuses a step that cannot
// fit, the executor keeps its frames within a share.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_MACHINEMEMORY_H
#define HETERPS_RUNTIME_MACHINEMEMORY_H

#include <unistd.h>

namespace heterps::rt {

/// Bytes of physical memory; 0 where the system does not say.
inline double machineMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long pageBytes = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && pageBytes > 0 ? double(pages) * double(pageBytes) : 0;
}

} // namespace heterps::rt

#endif // HETERPS_RUNTIME_MACHINEMEMORY_H
