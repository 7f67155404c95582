//===- tools/collc/bench/RawMpi.cpp - MPI_Allreduce, for collc bench ---------===//
//
// The blocking MPI_Allreduce a program would call. Its waits are MPI's own
// (unbounded): under mpirun a process that dies ends the job, which is the
// behaviour a user of raw MPI gets and what this engine stands for.
//
//===----------------------------------------------------------------------===//

#include "tools/collc/bench/RawEngine.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/mpi/MpiSession.h"

#include "llvm/Support/FormatVariadic.h"

#include <climits>
#include <mpi.h>

using namespace llvm;

namespace collc::tool {

namespace {

class RawMpi final : public RawEngine {
public:
  RawMpi(std::unique_ptr<rt::mpi::MpiSession> Session, MPI_Comm Comm)
      : Session(std::move(Session)), Comm(Comm) {}
  ~RawMpi() override { MPI_Comm_free(&Comm); } // before the session finalizes

  StringRef name() const override { return "MPI_Allreduce"; }
  std::string replayAlgorithm() const override {
    return "between two processes, an exchange of its own over MPI_Isend/MPI_Irecv "
           "(runtime/mpi/PairAllReduce.h); with more, MPI's nonblocking or (behind a gate) "
           "blocking all_reduce (docs/runtime.md)";
  }

  Error allReduce(const float *Src, float *Dst, uint64_t Count) override {
    if (Count > uint64_t(INT_MAX))
      return failure("MPI_Allreduce", formatv("{0} elements exceed MPI's int count", Count));
    return check("MPI_Allreduce",
                 MPI_Allreduce(Src, Dst, int(Count), MPI_FLOAT, MPI_SUM, Comm));
  }

  Expected<std::vector<uint32_t>> allGatherWords(ArrayRef<uint32_t> Mine) override {
    int World = 0;
    MPI_Comm_size(Comm, &World);
    std::vector<uint32_t> All(Mine.size() * size_t(World));
    if (Error E = check("MPI_Allgather", MPI_Allgather(Mine.data(), int(Mine.size()), MPI_UINT32_T,
                                                       All.data(), int(Mine.size()),
                                                       MPI_UINT32_T, Comm)))
      return E;
    return All;
  }

private:
  static Error failure(StringRef What, const Twine &Why) {
    return rt::makeError(rt::ErrorKind::Backend, ("raw " + What + ": " + Why).str());
  }
  static Error check(StringRef What, int Rc) {
    if (Rc == MPI_SUCCESS)
      return Error::success();
    char Text[MPI_MAX_ERROR_STRING];
    int Len = 0;
    MPI_Error_string(Rc, Text, &Len);
    return failure(What, StringRef(Text, size_t(Len)));
  }

  std::unique_ptr<rt::mpi::MpiSession> Session;
  MPI_Comm Comm;
};

} // namespace

Expected<std::unique_ptr<RawEngine>> createRawMpiEngine(const rt::ProcessPlace &Place,
                                                        const rt::RendezvousAddress &,
                                                        std::chrono::milliseconds) {
  Expected<std::unique_ptr<rt::mpi::MpiSession>> Session = rt::mpi::MpiSession::start();
  if (!Session)
    return Session.takeError();
  int World = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &World);
  if (World != Place.World)
    return rt::makeError(rt::ErrorKind::Backend,
                         formatv("MPI_COMM_WORLD has {0} processes, but {1} says {2}", World,
                                 Place.Source, Place.World)
                             .str());
  MPI_Comm Comm;
  if (MPI_Comm_dup(MPI_COMM_WORLD, &Comm) != MPI_SUCCESS)
    return rt::makeError(rt::ErrorKind::Backend, "raw MPI: MPI_Comm_dup failed");
  // Errors as values, not MPI's default abort.
  MPI_Comm_set_errhandler(Comm, MPI_ERRORS_RETURN);
  return std::make_unique<RawMpi>(std::move(*Session), Comm);
}

} // namespace collc::tool
