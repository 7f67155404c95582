// The GPU test and bench binaries (and libcollc.so in a build with NCCL,
// api/CMakeLists.txt) are built here and may run on a GPU machine with an
// older C library. LLVMSupport (Debian's, built against
// glibc 2.36) calls arc4random, which older glibc lacks; defining it here
// binds the call to this definition instead of to GLIBC_2.36.
#include <cstdint>
#include <sys/random.h>

extern "C" uint32_t arc4random(void) {
  uint32_t V = 0;
  while (getrandom(&V, sizeof(V), 0) != sizeof(V)) {
  }
  return V;
}
