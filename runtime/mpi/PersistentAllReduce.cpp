//===- runtime/mpi/PersistentAllReduce.cpp - A captured all_reduce, set up once --===//

#include "runtime/mpi/PersistentAllReduce.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/Support/FormatVariadic.h"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

using namespace llvm;

namespace collc::rt::mpi {

namespace {
std::atomic<uint64_t> Live{0};
} // namespace

uint64_t PersistentAllReduce::live() { return Live.load(std::memory_order_relaxed); }

bool PersistentAllReduce::available() {
#if OMPI_HAVE_MPI_EXT_PCOLLREQ
  return true;
#else
  return false;
#endif
}

Expected<std::shared_ptr<PersistentAllReduce>>
PersistentAllReduce::create(std::shared_ptr<MpiGroup> G, const void *Send, void *Recv,
                            uint64_t Count, MpiReduction M) {
  if (Error E = G->check())
    return E;
#if OMPI_HAVE_MPI_EXT_PCOLLREQ
  MPI_Request Req = MPI_REQUEST_NULL;
  // Counts fit: MpiDriver refuses more than INT_MAX elements.
  if (int Rc =
          MPIX_Allreduce_init(Send, Recv, int(Count), M.Type, M.Op, G->comm(), MPI_INFO_NULL, &Req);
      Rc != MPI_SUCCESS)
    // The members' tag counters may now differ: nothing more on this group.
    return G->breakWith(mpiError(Rc, "all_reduce (MPIX_Allreduce_init)", G->name()));
  Live.fetch_add(1, std::memory_order_relaxed);
  return std::shared_ptr<PersistentAllReduce>(new PersistentAllReduce(std::move(G), Req));
#else
  (void)Send, (void)Recv, (void)Count, (void)M;
  return makeError(ErrorKind::Unsupported,
                   "this MPI has no persistent collectives (MPIX_Allreduce_init)");
#endif
}

PersistentAllReduce::~PersistentAllReduce() {
  Live.fetch_sub(1, std::memory_order_relaxed);
  int Finalized = 0;
  MPI_Finalized(&Finalized);
  if (!Finalized && !Active.load(std::memory_order_acquire) && Req != MPI_REQUEST_NULL)
    MPI_Request_free(&Req);
}

Error PersistentAllReduce::run(MpiRequest &R, HostStream::Poll &Q) {
  if (R.started())
    return poll(R, Q);
  // Only a launch that gave up leaves it running, and that broke the
  // group (refused here with its first failure); never start a request
  // that is still active.
  if (Error E = G->check())
    return E;
  if (Active.load(std::memory_order_acquire))
    return makeError(ErrorKind::Broken,
                     formatv("group '{0}': an all_reduce was launched while its last launch "
                             "still runs",
                             G->name()));
  return poll(R, Q);
}

Error PersistentAllReduce::poll(MpiRequest &R, HostStream::Poll &Q) {
  Error E = R.run(*G, Q, "all_reduce", -1, [&](MPI_Request *Out) {
    // MPI_Start and MPI_Test act on the request a handle names: this copy
    // names the one set up, which stays allocated when it completes.
    *Out = Req;
    int Rc = MPI_Start(Out);
    if (Rc == MPI_SUCCESS)
      Active.store(true, std::memory_order_release);
    return Rc;
  });
  if (!E && !Q.More)
    Active.store(false, std::memory_order_release);
  return E;
}

} // namespace collc::rt::mpi
