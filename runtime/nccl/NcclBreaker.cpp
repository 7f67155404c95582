//===- runtime/nccl/NcclBreaker.cpp - How an NCCL executor breaks ---------===//

#include "runtime/nccl/NcclBreaker.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/nccl/NcclStepWait.h"

using namespace llvm;

namespace collc::rt::nccl {

void NcclBreaker::operator()(const std::string &Why) {
  std::lock_guard<std::mutex> G(Lock);
  State.breakWith(
      Why, [&] { Graphs.destroy(); },
      [&](const std::string &Reason) {
        for (size_t K = R.Comms.size(); K-- > 0;)
          R.Comms[K]->abort(Reason);
        if (R.Root)
          R.Root->abort(Reason);
      });
}

bool NcclBreaker::broken() const {
  std::lock_guard<std::mutex> G(Lock);
  return State.broken();
}

Error NcclBreaker::refusal(const Twine &Verb, const Twine &Where) const {
  std::lock_guard<std::mutex> G(Lock);
  return handleErrors(State.refuse(Verb.str()), [&](const RuntimeError &E) {
    return makeError(E.kind(), Where + ": " + E.text(), E.peer());
  });
}

Error NcclBreaker::usable(const Twine &Verb, const Twine &Where) {
  if (Error E = refusal(Verb, Where))
    return E;
  if (Error E = commsHealth(R)) {
    (*this)(toString(std::move(E)));
    return refusal(Verb, Where);
  }
  return Error::success();
}

Error NcclBreaker::breakOn(Error E) {
  return handleErrors(std::move(E), [&](std::unique_ptr<RuntimeError> RE) -> Error {
    if (RE->kind() == ErrorKind::Timeout || RE->kind() == ErrorKind::Broken)
      (*this)(RE->text());
    return Error(std::move(RE));
  });
}

} // namespace collc::rt::nccl
