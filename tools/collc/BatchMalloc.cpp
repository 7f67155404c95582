//===- tools/collc/BatchMalloc.cpp - Heap tuning for batch tools -----===//

#include "tools/collc/BatchMalloc.h"

#include <cstdlib> // defines __GLIBC__ on glibc systems

#if defined(__GLIBC__)
#include <cstdint>
#include <malloc.h>
#endif

namespace collc {

void tuneMallocForBatchWork() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);               // large blocks come from the heap too...
  mallopt(M_TRIM_THRESHOLD, INT32_MAX); // ...and stay there for the next pass
#endif
}

} // namespace collc
