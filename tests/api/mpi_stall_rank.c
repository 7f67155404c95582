/* One rank of an mpi run of the C API whose other rank stops, started by
 * `mpirun -np 2` (tests/python/test_mpi.py runs it beside its Python twin,
 * mpi_stall_rank.py): rank 1 stops itself (SIGSTOP) once both captured,
 * and nobody continues it. Rank 0's replay fails at its 2 s timeout,
 * naming rank 1; rank 0 says so, destroys its executor, calls
 * collcFinalize and exits with status 3. Neither may wait for the stopped
 * rank (MPI's teardown is collective): mpirun, seeing rank 0 end, ends the
 * job. */
#include <collc/collc.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static const char *Program = "program @two world(2) {\n"
                             "  group @dp = world\n"
                             "  %a = compute @fwd cost(1us) : f32[4]\n"
                             "  %r = all_reduce sum %a in @dp\n"
                             "  compute @use(%r) cost(1us)\n"
                             "}\n";

int main(void) {
  const char *r = getenv("OMPI_COMM_WORLD_RANK");
  int rank = r ? atoi(r) : -1;
  collcPlan_t plan;
  collcExecutor_t exec;
  collcExecutorOptions_t xopts = COLLC_EXECUTOR_OPTIONS_INIT;
  xopts.backend = "mpi";
  xopts.timeoutMs = 2000;
  float a[4] = {1, 2, 3, 4}, sum[4];
  if (rank < 0 || collcCompile(Program, NULL, &plan) != collcSuccess ||
      collcExecutorCreate(plan, rank, &xopts, &exec) != collcSuccess ||
      collcExecutorBind(exec, "a", a, sizeof a) != collcSuccess ||
      collcExecutorBind(exec, "r", sum, sizeof sum) != collcSuccess ||
      collcExecutorCapture(exec) != collcSuccess) {
    fprintf(stderr, "rank %d: setting up failed: %s\n", rank, collcGetLastError());
    return 1;
  }
  if (rank == 1)
    raise(SIGSTOP);
  collcResult_t res = collcExecutorReplay(exec, NULL, NULL);
  if (res == collcSuccess)
    res = collcExecutorSynchronize(exec, 10000);
  if (res == collcSuccess) {
    printf("rank %d: the replay did not fail\n", rank);
    return 1;
  }
  printf("rank %d: replay failed: %s\n", rank, collcGetLastError());
  fflush(stdout);
  if (collcExecutorDestroy(exec) != collcSuccess || collcPlanDestroy(plan) != collcSuccess ||
      collcFinalize() != collcSuccess) {
    fprintf(stderr, "rank %d: ending failed: %s\n", rank, collcGetLastError());
    return 1;
  }
  return 3;
}
