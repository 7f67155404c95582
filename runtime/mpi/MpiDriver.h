//===- runtime/mpi/MpiDriver.h - Processes under mpirun, over Open MPI -*- C++ -*-===//
//
// The mpi backend: one process per rank (mpirun, srun), host memory, Open
// MPI underneath. Every operation is validated on the caller's thread and
// enqueued on the HostStream as a polled task: it issues MPI's nonblocking
// call (MPI_Iallreduce, Iallgather, Ireduce_scatter_block, Ibcast,
// Ialltoall, Ialltoallv, Isend/Irecv, Ibarrier; on the caller's thread when
// nothing is queued before it and no copy or large exchange comes first),
// then is called for one MPI_Test at a time until it completes or the
// group's timeout passes (MpiRequest.h; the timeout names who did not
// arrive). An all_reduce of two members is an exchange of Isend/Irecv
// (PairAllReduce.h); a large one of more that MPI's nonblocking call does
// slowly passes a gate before MPI's blocking call (ArrivalGate.h); a small
// one of more in a captured plan is set up once as Open MPI's persistent
// collective (PersistentAllReduce.h).
// Reductions collc has and MPI lacks are staged on the host
// (ReduceStaging.h); data movement goes as unsigned integers of the
// element's size, so every element type moves.
//
// Groups: MPI cannot build a communicator from a name alone. The world is
// a dup of MPI_COMM_WORLD (join checks the size and rank against it), and
// every other group is a split of the world (GroupsBySplit: the executor
// splits on every rank, in plan group order).
//
// MPI must be initialized by an MpiSession the program's main holds.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_MPIDRIVER_H
#define COLLC_RUNTIME_MPI_MPIDRIVER_H

#include "runtime/exec/HostDriverBase.h"
#include "runtime/mpi/MpiGroup.h"
#include "runtime/mpi/PersistentAllReduce.h"

#include <memory>
#include <optional>

namespace collc::rt::mpi {

/// Types, elements(), the stream calls and the reductions without a factor
/// come from HostDriverBase (every element type moves; narrow floats reduce
/// through f32).
struct MpiDriver : HostDriverBase<MpiDriver> {
  using Communicator = std::shared_ptr<MpiGroup>;
  /// The group's name: MPI needs no id beyond MPI_COMM_WORLD.
  using UniqueId = std::string;

  static llvm::StringRef name() { return "mpi"; }
  /// Groups other than the world come from split() of the world, called by
  /// every rank in the same order (see DriverExecutor).
  static constexpr bool GroupsBySplit = true;

  // The driver's operations (runtime/exec/DriverOps.def), as MPI runs them:
  // - join: a dup of MPI_COMM_WORLD; Ranks and Rank must be its size and
  //   this process's rank in it.
  // - allGatherWords runs on the caller's thread, stream or not, and needs
  //   no outstanding stream work on the communicator (MPI pairs collectives
  //   by issue order).
  // - split: MPI_Comm_split, after a bounded exchange of every rank's
  //   (color, key) that names a rank that does not come; null for a
  //   negative color.
  // - health never blocks: the failure that broke the group, naming its
  //   peer.
#define COLLC_UNSCALED_OP(Result, Name, Params)
#define COLLC_DRIVER_OP(Result, Name, Params) static Result Name Params;
#include "runtime/exec/DriverOps.def"
  /// The interface's all_reduce, beside the prepared one below.
  using HostDriverBase::allReduce;

  // --- beyond the driver's operations ------------------------------------------
  /// Whether an all_reduce of \p WireBytes of \p Wire elements (the type
  /// MPI reduces) by \p Op in a group of \p Ranks, passing MPI's in place
  /// or not (\p InPlace), passes a gate with a deadline and then calls MPI's
  /// blocking collective, rather than MPI_Iallreduce (whichever was faster
  /// here: MpiDriver.cpp).
  static bool gatesAllReduce(size_t Ranks, uint64_t WireBytes, bool InPlace, ElemType Wire,
                             ReduceOp Op);
  /// The wire size from which an all_reduce of more than two members may
  /// be gated (below it, never: MpiDriver.cpp says why).
  static constexpr uint64_t GatedFromBytes = 256 << 10;

  // --- captured plans ----------------------------------------------------------
  /// An all_reduce set up once: Open MPI's persistent collective
  /// (PersistentAllReduce.h), and what completes its result (avg divides).
  struct PreparedCall {
    std::shared_ptr<PersistentAllReduce> Call;
    ElemType T;
    ReduceOp Op;
    char *Out;
    uint64_t Count;
  };
  /// Null where none is set up.
  using PreparedAllReduce = std::shared_ptr<const PreparedCall>;
  /// Whether an all_reduce of \p WireBytes of \p T by \p Op in a group of
  /// \p Ranks is set up once when captured: where it would take
  /// MPI_Iallreduce (more than two members, below the gate's size, no
  /// staged input), on facts every member shares, and where this MPI has
  /// persistent collectives.
  static bool setsUpAllReduce(size_t Ranks, uint64_t WireBytes, ElemType T, ReduceOp Op);
  /// Whether an all_reduce of \p T by \p Op from \p Src into \p Dst on
  /// \p C passes MPI_IN_PLACE, where that is this rank's own (its input and
  /// output the same memory) and MPI asks it of every member or none: more
  /// than two members (two exchange) and no staged input (that is reduced
  /// in scratch on every member alike). None elsewhere.
  static std::optional<bool> passesInPlace(const Communicator &C, const Resource &Src,
                                           const Resource &Dst, ElemType T, ReduceOp Op);
  /// Checks the call as allReduceScaled does and, where setsUpAllReduce,
  /// sets it up: a collective call the executor makes at capture, on every
  /// rank in plan order. Null otherwise (allReduceScaled serves).
  static llvm::Expected<PreparedAllReduce> prepareAllReduce(const Communicator &C,
                                                            const Resource &Src,
                                                            const Resource &Dst, Elems E,
                                                            ReduceOp Op, ElemType T, double Scale);
  /// Launches \p P (not null) on \p S, as allReduceScaled would its call.
  static llvm::Error allReduce(const PreparedAllReduce &P, CommStream S);

  // Streams: HostDriverBase's (the host comm stream every host backend uses).
};

static_assert(ExecutorDriver<MpiDriver>);

} // namespace collc::rt::mpi

#endif
