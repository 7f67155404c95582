//===- runtime/nccl/CallWalk.cpp - Issuing a lowering's calls in order ----===//

#include "runtime/nccl/CallWalk.h"

using namespace llvm;

namespace collc::rt::nccl {

std::vector<const Call *> callsOf(const std::vector<Call> &List) {
  std::vector<const Call *> Out;
  Out.reserve(List.size());
  for (const Call &C : List)
    Out.push_back(&C);
  return Out;
}

std::vector<const Call *> stepCalls(const NcclRankPlan &L) {
  std::vector<const Call *> Out;
  for (const Call &S : L.Step) {
    if (S.Kind != CallKind::GraphLaunch) {
      Out.push_back(&S);
      continue;
    }
    for (const Call &C : L.Capture)
      if (C.Graph == S.Graph && C.Kind != CallKind::BeginCapture &&
          C.Kind != CallKind::EndCapture && C.Kind != CallKind::Instantiate)
        Out.push_back(&C);
  }
  return Out;
}

Error issueCalls(ArrayRef<const Call *> Calls, function_ref<Error(const Call &)> Issue) {
  unsigned Open = 0;
  for (const Call *C : Calls) {
    Error E = Issue(*C);
    if (!E) {
      if (C->Kind == CallKind::GroupStart)
        ++Open;
      else if (C->Kind == CallKind::GroupEnd && Open)
        --Open;
      continue;
    }
    // A failed GroupEnd has left its group (NCCL pops it whatever happens).
    if (C->Kind == CallKind::GroupEnd && Open)
      --Open;
    static const Call End{CallKind::GroupEnd};
    for (; Open; --Open)
      E = joinErrors(std::move(E), Issue(End));
    return E;
  }
  return Error::success();
}

} // namespace collc::rt::nccl
