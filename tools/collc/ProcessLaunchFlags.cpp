//===- tools/collc/ProcessLaunchFlags.cpp - Where a process rank stands -------===//

#include "tools/collc/ProcessLaunchFlags.h"

#include "runtime/process/ProcessBackends.h"
#include "runtime/shm/Transport.h"

using namespace llvm;

namespace collc::tool {

ProcessLaunchFlags::ProcessLaunchFlags(cl::SubCommand &Sub, bool WithLocalWorld)
    : Rendezvous("rendezvous",
                 cl::desc("Where the processes meet: file:DIR (a directory new to this run), "
                          "redis://HOST:PORT or mpi (default: COLLC_RENDEZVOUS, else mpi for "
                          "--backend mpi and nccl)"),
                 cl::sub(Sub)),
      Transport("transport",
                cl::desc("What carries the bytes of mpi and gloo groups: auto (shared memory "
                         "within a host where a group allows it), shm (shared memory, or an "
                         "error saying why not), engine (MPI or Gloo alone) (default: "
                         "COLLC_TRANSPORT, else auto)"),
                cl::sub(Sub)),
      Rank("rank", cl::desc("This process's rank (default: the launcher's)"), cl::init(-1),
           cl::sub(Sub)),
      World("world", cl::desc("Processes in the run (default: the launcher's)"), cl::init(-1),
            cl::sub(Sub)),
      LocalRank("local-rank", cl::desc("Rank on this host (default: the launcher's)"), cl::init(-1),
                cl::sub(Sub)) {
  if (WithLocalWorld)
    LocalWorld.emplace("local-world",
                       cl::desc("Processes of the run on this host, which share its memory "
                                "budget (default: the launcher's, else the whole world)"),
                       cl::init(-1), cl::sub(Sub));
}

std::vector<const cl::opt<int64_t> *> ProcessLaunchFlags::placeFlags() const {
  std::vector<const cl::opt<int64_t> *> Flags = {&Rank, &World, &LocalRank};
  if (LocalWorld)
    Flags.push_back(&*LocalWorld);
  return Flags;
}

Expected<ProcessLaunch> ProcessLaunchFlags::resolve(StringRef Backend) const {
  auto Fail = [&](const Twine &Why) {
    return createStringError(inconvertibleErrorCode(), ("--backend " + Backend + ": " + Why).str());
  };
  rt::PlaceFlags Flags;
  // -1 is the defaults' value: a value given must be a place.
  for (const cl::opt<int64_t> *O : placeFlags())
    if (O->getNumOccurrences() && *O < 0)
      return Fail(
          ("--" + O->ArgStr + " " + Twine(O->getValue()) + ": expected a non-negative number")
              .str());
  if (Rank >= 0)
    Flags.Rank = Rank;
  if (World >= 0)
    Flags.World = World;
  if (LocalRank >= 0)
    Flags.LocalRank = LocalRank;
  if (LocalWorld && *LocalWorld >= 0)
    Flags.LocalWorld = int64_t(*LocalWorld);
  Expected<rt::ProcessPlace> Place = rt::placeFromLauncher(Flags);
  if (!Place)
    return Fail(toString(Place.takeError()));
  if (Error E = rt::checkProcessWorld(Backend, *Place))
    return Fail(toString(std::move(E)));
  std::string Text = Rendezvous;
  StringRef Source = "--rendezvous";
  if (Text.empty()) {
    std::optional<std::string> Env = rt::processEnvironment("COLLC_RENDEZVOUS");
    Text = Env.value_or(rt::defaultRendezvous(Backend).str());
    Source = Env ? "COLLC_RENDEZVOUS" : "the backend's default";
  }
  if (Text.empty())
    return Fail("needs --rendezvous file:DIR|redis://HOST:PORT (or COLLC_RENDEZVOUS)");
  Expected<rt::RendezvousAddress> Where = rt::parseRendezvous(Text, Source);
  if (!Where)
    return Fail(toString(Where.takeError()));
  // Before anything meets through it (the plans' digests first).
  if (std::optional<std::string> Why = rt::rendezvousMismatch(Backend, *Where))
    return Fail(*Why);
  if (Transport.getNumOccurrences()) {
    if (Backend != "mpi" && Backend != "gloo")
      return Fail("--transport applies to mpi and gloo, whose groups may share memory");
    Expected<rt::shm::Transport> T = rt::shm::parseTransport(Transport, "--transport");
    if (!T)
      return Fail(toString(T.takeError()));
    rt::shm::setTransport(*T);
  } else if (Expected<rt::shm::Transport> T = rt::shm::processTransport(); !T) {
    return Fail(toString(T.takeError()));
  }
  return ProcessLaunch{std::move(*Place), std::move(*Where)};
}

Error ProcessLaunchFlags::refuseOnLocal() const {
  std::vector<const cl::Option *> Given = {&Rendezvous, &Transport};
  for (const cl::opt<int64_t> *O : placeFlags())
    Given.push_back(O);
  for (const cl::Option *O : Given)
    if (O->getNumOccurrences())
      return createStringError(inconvertibleErrorCode(),
                               ("--" + O->ArgStr +
                                " applies to a backend with one process per rank (mpi, gloo, "
                                "nccl); --backend local runs every rank as a thread of this "
                                "process")
                                   .str());
  return Error::success();
}

} // namespace collc::tool
