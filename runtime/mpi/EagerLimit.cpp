//===- runtime/mpi/EagerLimit.cpp - How much one eager message carries ----===//

#include "runtime/mpi/EagerLimit.h"

#include "llvm/ADT/StringRef.h"

#include <mpi.h>

#include <cctype>
#include <cstdlib>
#include <optional>

namespace collc::rt::mpi {

namespace {

/// Room left in the eager limit for the transport's and the matching
/// layer's headers.
constexpr uint64_t HeaderMargin = 64;
/// btl_vader's and btl_sm's default eager limit.
constexpr uint64_t OpenMpiDefaultLimit = 4096;

/// Limits below or above these are not taken: Open MPI refuses some
/// (a limit below its headers), and reads others its own way (it takes
/// "-5" as 2^64 - 5) and then fails in its transport.
constexpr uint64_t SaneLimitFrom = 256, SaneLimitTo = 1 << 20;

/// The size MCA variable \p Name sets in the environment: std::nullopt when
/// it is unset, 0 when it is not a size this reads alike with Open MPI (a
/// number in C's bases, as strtoull's base 0 reads it, then k, m or g for a
/// power of 1024) within the sane range.
std::optional<uint64_t> fromEnvironment(const char *Name) {
  const char *Text = getenv(Name);
  if (!Text)
    return std::nullopt;
  llvm::StringRef S = llvm::StringRef(Text).trim();
  unsigned Shift = 0;
  if (!S.empty()) {
    char Suffix = char(tolower(S.back()));
    Shift = Suffix == 'k' ? 10 : Suffix == 'm' ? 20 : Suffix == 'g' ? 30 : 0;
    if (Shift)
      S = S.drop_back();
  }
  uint64_t Size = 0;
  if (S.getAsInteger(0, Size) || Size > (SaneLimitTo >> Shift))
    return 0;
  Size <<= Shift;
  return Size >= SaneLimitFrom ? Size : 0;
}

uint64_t readEagerPayload() {
#ifdef OPEN_MPI
  if (const char *Pml = getenv("OMPI_MCA_pml"); Pml && llvm::StringRef(Pml).contains("ucx"))
    return 0;
  // vader's name first, as Open MPI 4 reads it (sm is its alias there).
  std::optional<uint64_t> Limit = fromEnvironment("OMPI_MCA_btl_vader_eager_limit");
  if (!Limit)
    Limit = fromEnvironment("OMPI_MCA_btl_sm_eager_limit");
  uint64_t L = Limit.value_or(OpenMpiDefaultLimit);
  return L > HeaderMargin ? L - HeaderMargin : 0;
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
