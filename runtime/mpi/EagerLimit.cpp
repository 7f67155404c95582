//===- runtime/mpi/EagerLimit.cpp - How much one eager message carries ----===//

#include "runtime/mpi/EagerLimit.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"

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

/// Names of the variables read here, vader's first, as Open MPI 4 reads
/// them (sm is its alias there).
constexpr const char *LimitVariables[] = {"OMPI_MCA_btl_vader_eager_limit",
                                          "OMPI_MCA_btl_sm_eager_limit"};

/// \p Text as Open MPI reads a size (a number in C's bases, as strtoull's
/// base 0 reads it, then k, m or g for a power of 1024), UINT64_MAX where
/// that passes 64 bits; std::nullopt where it is no such size ("-5" among
/// them, which Open MPI takes for 2^64 - 5).
std::optional<uint64_t> parseSize(llvm::StringRef Text) {
  llvm::StringRef S = Text.trim();
  unsigned Shift = 0;
  if (!S.empty()) {
    char Suffix = char(tolower(S.back()));
    Shift = Suffix == 'k' ? 10 : Suffix == 'm' ? 20 : Suffix == 'g' ? 30 : 0;
    if (Shift)
      S = S.drop_back();
  }
  uint64_t Size = 0;
  if (S.getAsInteger(0, Size))
    return std::nullopt;
  return Size > (UINT64_MAX >> Shift) ? UINT64_MAX : Size << Shift;
}

/// The size MCA variable \p Name sets in the environment: std::nullopt when
/// it is unset, 0 when it is not a size (parseSize) within the sane range.
std::optional<uint64_t> fromEnvironment(const char *Name) {
  const char *Text = getenv(Name);
  if (!Text)
    return std::nullopt;
  std::optional<uint64_t> Size = parseSize(Text);
  return Size && *Size >= SaneLimitFrom && *Size <= SaneLimitTo ? *Size : 0;
}

uint64_t readEagerPayload() {
#ifdef OPEN_MPI
  if (const char *Pml = getenv("OMPI_MCA_pml"); Pml && llvm::StringRef(Pml).contains("ucx"))
    return 0;
  // vader's name first, as Open MPI 4 reads it (sm is its alias there).
  std::optional<uint64_t> Limit = fromEnvironment(LimitVariables[0]);
  if (!Limit)
    Limit = fromEnvironment(LimitVariables[1]);
  uint64_t L = Limit.value_or(OpenMpiDefaultLimit);
  return L > HeaderMargin ? L - HeaderMargin : 0;
#else
  return 0;
#endif
}

} // namespace

llvm::Error refuseMisreadEagerLimits() {
#ifdef OPEN_MPI
  for (const char *Name : LimitVariables) {
    const char *Text = getenv(Name);
    if (!Text)
      continue;
    // Seen with Open MPI 4.1 between two processes: 2^60 works, 2^61 and
    // 2^62 hang it at 512 B, -5 and 2^64 - 1 crash it, and 10^20 (which it
    // reads as 2^64 - 1, as strtoull saturates) gave wrong results. What
    // this does not read as Open MPI does (a sign, junk after a number) is
    // refused with them.
    std::optional<uint64_t> Size = parseSize(Text);
    if (!Size || *Size >= (uint64_t(1) << 61))
      return makeError(ErrorKind::InvalidArgument,
                       llvm::formatv("{0}='{1}': expected an eager limit such as 4096 or 4k, "
                                     "below 2^61 bytes (its default is 4096): Open MPI reads a "
                                     "negative or overlong one as a size near 2^64, and hangs, "
                                     "crashes or computes wrong results with such a limit",
                                     Name, Text));
  }
#endif
  return llvm::Error::success();
}

uint64_t sharedMemoryEagerPayload() {
  static const uint64_t Payload = readEagerPayload();
  return Payload;
}

} // namespace collc::rt::mpi
