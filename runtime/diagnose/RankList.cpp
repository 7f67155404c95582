//===- runtime/diagnose/RankList.cpp - Ranks said in words -----------------===//

#include "runtime/diagnose/RankList.h"

#include "plan/Plan.h"

#include "llvm/ADT/StringExtras.h"

namespace collc::diag {

std::string rankList(llvm::ArrayRef<int64_t> Ranks) {
  if (Ranks.empty())
    return "no rank";
  if (Ranks.size() == 1)
    return "rank " + std::to_string(Ranks.front());
  std::string Out = "ranks ";
  for (size_t I = 0; I != Ranks.size(); ++I)
    Out += (I == 0 ? "" : I + 1 == Ranks.size() ? " and " : ", ") + std::to_string(Ranks[I]);
  return Out;
}

std::string rankRange(llvm::ArrayRef<int64_t> Ranks) {
  plan::RankSet S;
  S.All = false;
  for (int64_t R : Ranks)
    S.Ranks.push_back(int32_t(R));
  return S.str();
}

std::string capitalized(llvm::StringRef Text) {
  std::string Out = Text.str();
  if (!Out.empty())
    Out[0] = llvm::toUpper(Out[0]);
  return Out;
}

} // namespace collc::diag
