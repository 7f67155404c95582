//===- tools/collc/bench/RawMpi.cpp - MPI_Allreduce, for collc bench ---------===//
//
// The blocking MPI_Allreduce a program would call. Its waits are MPI's own
// (unbounded): under mpirun a process that dies ends the job, which is the
// behaviour a user of raw MPI gets and what this engine stands for.
//
//===----------------------------------------------------------------------===//

#include "tools/collc/bench/RawEngine.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/mpi/MpiDriver.h"
#include "runtime/mpi/MpiSession.h"

#include "llvm/Support/FormatVariadic.h"

#include <climits>
#include <mpi.h>
#include <optional>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

using namespace llvm;

namespace collc::tool {

namespace {

class RawMpi final : public RawEngine {
public:
  RawMpi(std::unique_ptr<rt::mpi::MpiSession> Session, MPI_Comm Comm)
      : Session(std::move(Session)), Comm(Comm) {}
  ~RawMpi() override {
    freePersistent();
    MPI_Comm_free(&Comm); // before the session finalizes
  }

  StringRef name() const override { return "MPI_Allreduce"; }
  std::string replayAlgorithm() const override {
    return formatv("between two processes, an exchange of its own over MPI_Isend/MPI_Irecv "
                   "(runtime/mpi/PairAllReduce.h); with more, below {0} bytes Open MPI's "
                   "persistent all_reduce, set up at capture (runtime/mpi/PersistentAllReduce.h), "
                   "from there MPI's nonblocking or (behind a gate) blocking all_reduce "
                   "(docs/runtime.md)",
                   rt::mpi::MpiDriver::GatedFromBytes);
  }

  Error allReduce(const float *Src, float *Dst, uint64_t Count) override {
    if (Count > uint64_t(INT_MAX))
      return failure("MPI_Allreduce", formatv("{0} elements exceed MPI's int count", Count));
    return check("MPI_Allreduce",
                 MPI_Allreduce(Src, Dst, int(Count), MPI_FLOAT, MPI_SUM, Comm));
  }

#if OMPI_HAVE_MPI_EXT_PCOLLREQ
  /// Open MPI's persistent all_reduce, at sizes from 8 B to 16 MiB. Where
  /// the replay sets its all_reduce up as one (MpiDriver::setsUpAllReduce),
  /// its line shows what the replay adds to that call; elsewhere, which of
  /// the two is faster: the measurement behind the choice.
  std::vector<OtherWay> otherWays() const override {
    int World = 0;
    MPI_Comm_size(Comm, &World);
    OtherWay Own{"Open MPI's persistent all_reduce, the replay's own call, called directly",
                 OtherWay::Question::ReplayCost,
                 {}};
    OtherWay Choice{"Open MPI's persistent all_reduce (MPIX_Allreduce_init once; MPI_Start and "
                    "MPI_Wait per call)",
                    OtherWay::Question::Faster,
                    {}};
    for (uint64_t Bytes : {8ull, 4ull << 10, 64ull << 10, 1ull << 20, 16ull << 20})
      (rt::mpi::MpiDriver::setsUpAllReduce(size_t(World), Bytes, ElemType::F32, ReduceOp::Sum)
           ? Own
           : Choice)
          .Sizes.push_back(Bytes);
    std::vector<OtherWay> Ways;
    for (OtherWay *W : {&Own, &Choice})
      if (!W->Sizes.empty())
        Ways.push_back(std::move(*W));
    return Ways;
  }

  Error otherAllReduce(size_t, const float *Src, float *Dst, uint64_t Count) override {
    if (Count > uint64_t(INT_MAX))
      return failure("MPIX_Allreduce_init", formatv("{0} elements exceed MPI's int count", Count));
    // One request for the buffers of the calls in a row; made anew (on
    // every rank alike: the bench calls in one order) when they change.
    if (!Persistent || Persistent->Src != Src || Persistent->Dst != Dst ||
        Persistent->Count != Count) {
      freePersistent();
      MPI_Request Req = MPI_REQUEST_NULL;
      if (Error E =
              check("MPIX_Allreduce_init", MPIX_Allreduce_init(Src, Dst, int(Count), MPI_FLOAT,
                                                               MPI_SUM, Comm, MPI_INFO_NULL, &Req)))
        return E;
      Persistent = PersistentCall{Src, Dst, Count, Req};
    }
    if (Error E = check("MPI_Start", MPI_Start(&Persistent->Req)))
      return E;
    return check("MPI_Wait", MPI_Wait(&Persistent->Req, MPI_STATUS_IGNORE));
  }
#endif

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

  /// Inactive between calls (each waits for its end), so it can be freed.
  void freePersistent() {
    if (Persistent && Persistent->Req != MPI_REQUEST_NULL)
      MPI_Request_free(&Persistent->Req);
    Persistent.reset();
  }

  std::unique_ptr<rt::mpi::MpiSession> Session;
  MPI_Comm Comm;
  struct PersistentCall {
    const float *Src;
    float *Dst;
    uint64_t Count;
    MPI_Request Req;
  };
  std::optional<PersistentCall> Persistent;
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
