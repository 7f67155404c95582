//===- ir/RankMasks.cpp - Which ranks run each op -------------------------===//

#include "ir/RankMasks.h"

using namespace llvm;

namespace collc {

RankMasks::RankMasks(const Program &P, ErrorHandler OnError) {
  Index.reserve(P.ops().size());
  for (OpId I = 0; I != P.ops().size(); ++I) {
    const Op &O = P.ops()[I];
    bool GroupCovers = O.Group == InvalidId || P.group(O.Group).coversWorld();
    if (!O.When && GroupCovers) {
      Index.push_back(-1);
      continue;
    }
    BitVector Mask(P.worldSize());
    bool Reported = false;
    for (int64_t R = 0; R != P.worldSize(); ++R) {
      Expected<bool> Runs = collc::runsOn(P, O, R);
      if (!Runs) {
        handleAllErrors(Runs.takeError(), [&](const RankExprError &E) {
          if (!Reported && OnError)
            OnError(I, R, E);
          Reported = true;
        });
        continue;
      }
      if (*Runs)
        Mask.set(R);
    }
    if (Mask.all()) {
      Index.push_back(-1);
      continue;
    }
    Index.push_back(Masks.size());
    Masks.push_back(std::move(Mask));
  }
}

} // namespace collc
