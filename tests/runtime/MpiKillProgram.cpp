//===- tests/runtime/MpiKillProgram.cpp - A rank SIGKILLed mid-step ---------===//
//
// Run by mpi_kill_test.sh under `mpirun -np 2`: every rank writes its pid
// to DIR/pid.<rank>, then all_reduces step after step; rank 1 raises SIGKILL
// in the middle of step 3 (after issuing, before waiting). What Open MPI
// does then is the test's to check (mpirun ends the job, non-zero).
//
//===----------------------------------------------------------------------===//

#include "runtime/mpi/MpiDriver.h"
#include "runtime/mpi/MpiSession.h"

#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <fstream>
#include <unistd.h>
#include <vector>

using namespace collc;
using namespace collc::rt;
using D = mpi::MpiDriver;

int main(int Argc, char **Argv) {
  if (Argc != 2) {
    llvm::errs() << "usage: collc_mpi_kill_program DIR\n";
    return 2;
  }
  auto Session = mpi::MpiSession::start();
  if (!Session) {
    llvm::errs() << llvm::toString(Session.takeError()) << '\n';
    return 1;
  }
  int Rank = 0, World = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &Rank);
  MPI_Comm_size(MPI_COMM_WORLD, &World);
  std::ofstream(std::string(Argv[1]) + "/pid." + std::to_string(Rank)) << getpid() << '\n';
  auto C = D::join("kill", size_t(World), size_t(Rank));
  if (!C) {
    llvm::errs() << llvm::toString(C.takeError()) << '\n';
    return 1;
  }
  D::StreamOwner S = D::createStream("kill");
  std::vector<float> Data(1 << 16, 1.0f);
  auto R = D::resource(Data.data(), Data.size() * 4);
  for (int Step = 1; Step <= 1000; ++Step) {
    if (llvm::Error E = D::allReduce(*C, R, R, {ElemType::F32, Data.size()}, ReduceOp::Avg,
                                     D::streamOf(S))) {
      llvm::errs() << "rank " << Rank << ": " << llvm::toString(std::move(E)) << '\n';
      return 1;
    }
    D::flush(D::streamOf(S));
    if (Rank == 1 && Step == 3)
      raise(SIGKILL);
    if (llvm::Error E = D::synchronize(D::streamOf(S))) {
      llvm::errs() << "rank " << Rank << ": " << llvm::toString(std::move(E)) << '\n';
      return 1;
    }
  }
  llvm::errs() << "rank " << Rank << ": all steps ran; rank 1 was not killed\n";
  return 3;
}
