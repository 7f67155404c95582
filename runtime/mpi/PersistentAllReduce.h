//===- runtime/mpi/PersistentAllReduce.h - A captured all_reduce, set up once -*- C++ -*-===//
//
// Open MPI's persistent collectives (MPIX_Allreduce_init once, MPI_Start at
// each call) build libnbc's schedule and scratch once, where every
// MPI_Iallreduce builds them anew. Beside the replay on MPI_Iallreduce,
// `collc bench --backend mpi` measured the persistent call 6-16% faster
// from 8 B to 64 KiB on 4 processes, and the same at 1 MiB. So an
// all_reduce of a captured plan that would take MPI_Iallreduce (more than
// two members, below the gate's size, no staged input:
// MpiDriver::prepareAllReduce) is set up at capture and started at each
// launch; its wait is the same polled test with the group's deadline
// (MpiRequest.h).
//
// libnbc takes the request's tag when it is set up, from the counter its
// nonblocking calls on the communicator share, so every member must set up
// the same requests in the same order: the executor does it at capture, in
// plan order, and whether a call is set up depends only on what every
// member shares (the group's size, the type, the operation, the count).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_PERSISTENTALLREDUCE_H
#define COLLC_RUNTIME_MPI_PERSISTENTALLREDUCE_H

#include "runtime/exec/HostStream.h"
#include "runtime/mpi/MpiGroup.h"
#include "runtime/mpi/MpiRequest.h"
#include "runtime/mpi/MpiUserOps.h"

#include <atomic>
#include <memory>

namespace collc::rt::mpi {

class PersistentAllReduce {
public:
  /// Whether this build's MPI offers persistent collectives.
  static bool available();
  /// How many are set up in this process and not yet freed (or left to
  /// MPI): what a test sees of the executor's choice.
  static uint64_t live();

  /// Sets up the all_reduce of \p Count elements of \p M from \p Send
  /// (MPI_IN_PLACE: in \p Recv) into \p Recv on \p G: a collective call,
  /// made by every member in the same order.
  static llvm::Expected<std::shared_ptr<PersistentAllReduce>>
  create(std::shared_ptr<MpiGroup> G, const void *Send, void *Recv, uint64_t Count, MpiReduction M);

  /// Frees the request unless a launch left it running (a timeout: MPI
  /// cannot cancel it, so it is left to MPI, as AbandonedMemory.h does).
  ~PersistentAllReduce();
  PersistentAllReduce(const PersistentAllReduce &) = delete;
  PersistentAllReduce &operator=(const PersistentAllReduce &) = delete;

  const std::shared_ptr<MpiGroup> &communicator() const { return G; }

  /// One poll of a launch whose state is \p R: the first call starts the
  /// request (announced on the arrival board), each later one tests it;
  /// \p Q.More until it completes.
  llvm::Error run(MpiRequest &R, HostStream::Poll &Q);

private:
  llvm::Error poll(MpiRequest &R, HostStream::Poll &Q);

  PersistentAllReduce(std::shared_ptr<MpiGroup> G, MPI_Request Req) : G(std::move(G)), Req(Req) {}

  std::shared_ptr<MpiGroup> G;
  MPI_Request Req;
  /// Started and not seen complete; read by the destructor on another
  /// thread.
  std::atomic<bool> Active{false};
};

} // namespace collc::rt::mpi

#endif
