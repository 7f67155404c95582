//===- api/BackendSessions.cpp - What process backends keep alive -------===//

#include "api/BackendSessions.h"

#include "api/ApiError.h"

#include "runtime/process/ProcessBackends.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <mutex>
#include <string>

using namespace llvm;

namespace collc::api {

namespace {

struct Sessions {
  std::mutex Lock;
  /// By backend name: ends in name order (std::map), never by address.
  std::map<std::string, std::shared_ptr<void>> Started;
};

Sessions &sessions() {
  static Sessions S;
  return S;
}

} // namespace

Expected<std::shared_ptr<void>> holdBackendSession(StringRef Backend) {
  Sessions &S = sessions();
  std::lock_guard<std::mutex> G(S.Lock);
  auto It = S.Started.find(Backend.str());
  if (It != S.Started.end())
    return It->second;
  Expected<std::shared_ptr<void>> Started = rt::startProcessBackend(Backend);
  if (!Started)
    return Started.takeError();
  S.Started[Backend.str()] = *Started;
  return *Started;
}

Expected<rt::RendezvousAddress> prepareProcessBackend(StringRef Backend, StringRef Rendezvous,
                                                      std::shared_ptr<void> &Session) {
  if (!rt::isProcessBackend(Backend))
    return makeApiError(collcInvalidArgument,
                        formatv("options->backend is \"{0}\": expected local, {1}", Backend,
                                rt::processBackendNames()));
  if (Error E = rt::checkProcessBackendBuilt(Backend))
    return E;
  Expected<rt::RendezvousAddress> Where = rt::parseRendezvous(
      Rendezvous.empty() ? rt::defaultRendezvous(Backend) : Rendezvous, "options->rendezvous");
  if (!Where)
    return makeApiError(collcInvalidArgument, toString(Where.takeError()));
  // Before the backend's session starts (MPI_Init for mpi).
  if (std::optional<std::string> Why = rt::rendezvousMismatch(Backend, *Where))
    return makeApiError(collcInvalidArgument, *Why);
  if (StringRef Needed = rt::sessionBackendFor(Backend, *Where); !Needed.empty()) {
    Expected<std::shared_ptr<void>> S = holdBackendSession(Needed);
    if (!S)
      return S.takeError();
    Session = std::move(*S);
  }
  return Where;
}

Error endBackendSessions() {
  Sessions &S = sessions();
  std::lock_guard<std::mutex> G(S.Lock);
  for (const auto &[Name, Session] : S.Started)
    if (Session.use_count() > 1)
      return makeApiError(collcInvalidUsage,
                          formatv("collcFinalize: {0} executor(s) of the {1} backend are still "
                                  "alive: expected every executor destroyed first "
                                  "(collcExecutorDestroy)",
                                  Session.use_count() - 1, Name));
  S.Started.clear();
  return Error::success();
}

} // namespace collc::api
