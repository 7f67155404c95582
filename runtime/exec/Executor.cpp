//===- runtime/exec/Executor.cpp - The executor interface ------------------===//

#include "runtime/exec/Executor.h"

#include "runtime/exec/RecordSignal.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace llvm;

namespace collc::rt {

StringRef memoryKindName(MemoryKind K) {
  return K == MemoryKind::Host ? "host memory" : "device memory";
}

Executor::Executor() = default;

Executor::~Executor() {
  if (!Record || !Record->options().DumpAtExit || Record->options().Dir.empty())
    return;
  // Nobody to return an error to at the end: it is said.
  if (Error E = dumpFlightRecord(Record->options().Dir, DumpReason::Exit))
    errs() << "collc: " << toString(std::move(E)) << '\n';
}

void Executor::startRecord(std::unique_ptr<FlightRecorder> R) {
  Enrolled.reset();
  Record = std::move(R);
  if (!Record->options().Dir.empty())
    Enrolled = std::make_unique<RecordSignalEnrollment>(*Record);
}

void Executor::setRecordPlace(StringRef Dir, bool AtExit) {
  Enrolled.reset(); // no SIGUSR1 dump reads the place while it changes
  Record->setDumpPlace(Dir.str(), AtExit);
  if (!Dir.empty())
    Enrolled = std::make_unique<RecordSignalEnrollment>(*Record);
}

Error Executor::dumpFlightRecord(StringRef Dir, DumpReason Why) const {
  StringRef To = Dir.empty() ? StringRef(Record->options().Dir) : Dir;
  if (To.empty())
    return makeError(ErrorKind::InvalidArgument,
                     formatv("rank {0}: no directory to dump the flight record into (give one, "
                             "or set the executor's record directory)",
                             rank()));
  return rt::dumpFlightRecord(*Record, To, Why);
}

Error Executor::failed(Error E, std::optional<int64_t> Blamed) {
  return recordFailure(*Record, std::move(E), Blamed);
}

Error Executor::unsupported(const Twine &What) const {
  return makeError(ErrorKind::Unsupported,
                   formatv("the {0} backend does not support {1}", backend(), What.str()));
}

Expected<MutableArrayRef<char>> Executor::homeForCopy(uint32_t T, uint64_t Bytes,
                                                      StringRef Verb) {
  const plan::Plan &P = plan();
  if (T >= P.Tensors.size())
    return makeError(ErrorKind::InvalidArgument,
                     formatv("{0}: tensor #{1} is not in 0..{2} of plan @{3}", Verb, T,
                             int64_t(P.Tensors.size()) - 1, P.Program));
  Expected<MutableArrayRef<char>> Home = tensor(P.Tensors[T].Name);
  if (!Home)
    return Home.takeError();
  if (Home->size() != Bytes)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("{0} %{1}: {2} bytes, but the tensor has {3}", Verb,
                             P.Tensors[T].Name, Bytes, Home->size()));
  return Home;
}

Error Executor::copyIn(uint32_t Tensor, ArrayRef<char> From) {
  Expected<MutableArrayRef<char>> Home = homeForCopy(Tensor, From.size(), "copying into");
  if (!Home)
    return Home.takeError();
  if (!From.empty())
    std::memcpy(Home->data(), From.data(), From.size());
  return Error::success();
}

Error Executor::copyOut(uint32_t Tensor, MutableArrayRef<char> To) {
  Expected<MutableArrayRef<char>> Home = homeForCopy(Tensor, To.size(), "copying out of");
  if (!Home)
    return Home.takeError();
  if (!To.empty())
    std::memcpy(To.data(), Home->data(), To.size());
  return Error::success();
}

Error Executor::setStream(void *) {
  return unsupported("a caller's stream (its steps run on the host: a step has ended when "
                     "replay returns)");
}

// A peer lost between replays is seen here first (a host step has ended
// when its replay returned): it is a failure of this rank's run like one
// seen in a step, so it is recorded, and dumped where the run keeps records.
Error Executor::synchronize(std::optional<std::chrono::milliseconds>) {
  return failed(health(), std::nullopt);
}

std::vector<std::string> Executor::notes() const { return {}; }

std::vector<GroupPath> Executor::paths() const { return {}; }

std::string describe(const GroupPath &P) {
  return formatv("{0}{1} ({2} processes): {3}: {4}", P.Group == "the world" ? "" : "group ",
                 P.Group, P.Processes, P.Path, P.Why);
}

const std::vector<TraceEvent> &Executor::trace() const {
  static const std::vector<TraceEvent> None;
  return None;
}

void Executor::clearTrace() {}

} // namespace collc::rt
