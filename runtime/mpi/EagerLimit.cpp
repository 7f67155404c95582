//===- runtime/mpi/EagerLimit.cpp - How much one eager message carries ----===//

#include "runtime/mpi/EagerLimit.h"

#include "llvm/ADT/StringRef.h"

#include <mpi.h>

#include <cstdlib>

namespace collc::rt::mpi {

namespace {

/// Room left in the eager limit for the transport's and the matching
/// layer's headers.
constexpr uint64_t HeaderMargin = 64;
/// btl_vader's and btl_sm's default eager limit.
constexpr uint64_t OpenMpiDefaultLimit = 4096;

/// The eager limit an MCA variable in the environment sets, or 0.
uint64_t fromEnvironment(const char *Name) {
  const char *Text = getenv(Name);
  uint64_t Limit = 0;
  if (!Text || llvm::StringRef(Text).trim().getAsInteger(10, Limit))
    return 0;
  return Limit;
}

uint64_t readEagerPayload() {
#ifdef OPEN_MPI
  uint64_t Limit = fromEnvironment("OMPI_MCA_btl_vader_eager_limit");
  if (Limit == 0)
    Limit = fromEnvironment("OMPI_MCA_btl_sm_eager_limit");
  if (Limit == 0)
    Limit = OpenMpiDefaultLimit;
  return Limit > HeaderMargin ? Limit - HeaderMargin : 0;
#else
  return 0;
#endif
}

} // namespace

uint64_t sharedMemoryEagerPayload() {
  static const uint64_t Payload = readEagerPayload();
  return Payload;
}

} // namespace collc::rt::mpi
