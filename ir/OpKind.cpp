//===- ir/OpKind.cpp - The kinds of IR op ---------------------------------===//
//
// One row per kind, generated from ir/Collectives.def in the enum's order,
// so a kind's row is at its enumerator's index.
//
//===----------------------------------------------------------------------===//

#include "ir/OpKind.h"

#include "ir/NamedRows.h"

#include <iterator>
#include <string>

using namespace llvm;

namespace collc {

namespace {
struct OpKindInfo {
  const char *Name;
  bool Communication, Collective, Reduce, Root, Splits, Results;
};
} // namespace

static constexpr OpKindInfo Infos[] = {
#define COLLC_LOCAL_OP(Enum, Spelling, Reduce, Root, Splits, Results)                             \
  {Spelling, false, false, Reduce, Root, Splits, Results},
#define COLLC_COLLECTIVE(Enum, Spelling, Reduce, Root, Splits, Results)                           \
  {Spelling, true, true, Reduce, Root, Splits, Results},
#define COLLC_POINT_TO_POINT(Enum, Spelling, Reduce, Root, Splits, Results)                       \
  {Spelling, true, false, Reduce, Root, Splits, Results},
#include "ir/Collectives.def"
};
static_assert(std::size(Infos) == NumOpKinds, "one row per kind");

static const OpKindInfo &info(OpKind K) { return Infos[unsigned(K)]; }

StringRef opKindName(OpKind K) { return info(K).Name; }

Optional<OpKind> parseOpKind(StringRef Name) { return enumNamed<OpKind>(Infos, Name); }

StringRef allOpKindNames() {
  static const std::string Names = [] {
    std::string S;
    for (unsigned I = 0; I != NumOpKinds; ++I)
      S += std::string(I == 0 ? "" : I + 1 == NumOpKinds ? " or " : ", ") + Infos[I].Name;
    return S;
  }();
  return Names;
}

bool isCommunication(OpKind K) { return info(K).Communication; }
bool isCollective(OpKind K) { return info(K).Collective; }
bool hasReduceOp(OpKind K) { return info(K).Reduce; }
bool hasRoot(OpKind K) { return info(K).Root; }
bool takesSplits(OpKind K) { return info(K).Splits; }
bool hasResults(OpKind K) { return info(K).Results; }

} // namespace collc
