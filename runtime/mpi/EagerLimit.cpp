//===- runtime/mpi/EagerLimit.cpp - How much one eager message carries ----===//

#include "runtime/mpi/EagerLimit.h"

#include "llvm/ADT/StringRef.h"

#include <mpi.h>

#include <cctype>
#include <cstdlib>

namespace collc::rt::mpi {

namespace {

/// Room left in the eager limit for the transport's and the matching
/// layer's headers.
constexpr uint64_t HeaderMargin = 64;
/// btl_vader's and btl_sm's default eager limit.
constexpr uint64_t OpenMpiDefaultLimit = 4096;

/// The size an MCA variable in the environment sets, or 0: a number in C's
/// bases (as strtoull's base 0 reads it), then k, m or g for a power of
/// 1024, as Open MPI reads sizes.
uint64_t fromEnvironment(const char *Name) {
  const char *Text = getenv(Name);
  if (!Text)
    return 0;
  llvm::StringRef S = llvm::StringRef(Text).trim();
  unsigned Shift = 0;
  if (!S.empty()) {
    char Suffix = char(tolower(S.back()));
    Shift = Suffix == 'k' ? 10 : Suffix == 'm' ? 20 : Suffix == 'g' ? 30 : 0;
    if (Shift)
      S = S.drop_back();
  }
  uint64_t Size = 0;
  if (S.getAsInteger(0, Size) || Size > (UINT64_MAX >> Shift))
    return 0;
  return Size << Shift;
}

uint64_t readEagerPayload() {
#ifdef OPEN_MPI
  if (const char *Pml = getenv("OMPI_MCA_pml"); Pml && llvm::StringRef(Pml).contains("ucx"))
    return 0;
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
