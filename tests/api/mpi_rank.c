/* One rank of an mpi run of the C API, started by `mpirun -np 2`: creates
 * the mpi executor of its own rank from a plan, binds, captures, replays
 * twice and checks the sums of both ranks' all_reduces. With
 * COLLC_TEST_OWN_MPI the program initializes and finalizes MPI itself
 * (collc adopts it); without, collc starts MPI and collcFinalize ends it,
 * or with COLLC_TEST_EXIT_FINALIZES the process's exit does. */
#include <collc/collc.h>

#include <stdio.h>
#include <stdlib.h>

#ifdef COLLC_TEST_OWN_MPI
#include <mpi.h>
#endif

#define CHECK(call)                                                                          \
  do {                                                                                       \
    collcResult_t r_ = (call);                                                               \
    if (r_ != collcSuccess) {                                                                \
      fprintf(stderr, "rank %d: %s: %s: %s\n", rank, #call, collcGetErrorString(r_),         \
              collcGetLastError());                                                          \
      return 1;                                                                              \
    }                                                                                        \
  } while (0)

static const char *Program = "program @two world(2) {\n"
                             "  group @dp = world\n"
                             "  %a = compute @fwd cost(1us) : f32[4]\n"
                             "  %b = compute @fwd2 cost(1us) : f32[2, 3]\n"
                             "  %r = all_reduce sum %a in @dp\n"
                             "  %s = all_reduce sum %b in @dp\n"
                             "  compute @use(%r, %s) cost(1us)\n"
                             "}\n";

/* The rank mpirun gave this process, without calling MPI (Open MPI's
 * variable; PMI_RANK under MPICH's hydra). */
static int rankFromLauncher(void) {
  const char *r = getenv("OMPI_COMM_WORLD_RANK");
  if (!r)
    r = getenv("PMI_RANK");
  return r ? atoi(r) : -1;
}

int main(void) {
  int rank = rankFromLauncher();
#ifdef COLLC_TEST_OWN_MPI
  int provided = 0;
  MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
#endif
  if (rank < 0) {
    fprintf(stderr, "not started by mpirun (no OMPI_COMM_WORLD_RANK)\n");
    return 1;
  }
  collcCompileOptions_t copts = COLLC_COMPILE_OPTIONS_INIT;
  copts.pipeline = "verify,check-cross-rank,order,schedule,plan-memory"; /* unfused */
  collcPlan_t plan;
  CHECK(collcCompile(Program, &copts, &plan));

  collcExecutorOptions_t xopts = COLLC_EXECUTOR_OPTIONS_INIT;
  xopts.backend = "mpi";
  xopts.timeoutMs = 30000;
  collcExecutor_t exec;
  CHECK(collcExecutorCreate(plan, rank, &xopts, &exec));
  int64_t got;
  CHECK(collcExecutorRank(exec, &got));
  float a[4], b[6], r[4], s[6];
  for (int i = 0; i < 4; ++i)
    a[i] = (float)(i + 10 * rank);
  for (int i = 0; i < 6; ++i)
    b[i] = (float)(rank + 1);
  CHECK(collcExecutorBind(exec, "a", a, sizeof a));
  CHECK(collcExecutorBind(exec, "b", b, sizeof b));
  CHECK(collcExecutorBind(exec, "r", r, sizeof r));
  CHECK(collcExecutorBind(exec, "s", s, sizeof s));
  CHECK(collcExecutorCapture(exec));
  for (int step = 0; step < 2; ++step) {
    CHECK(collcExecutorReplay(exec, NULL, NULL));
    CHECK(collcExecutorSynchronize(exec, 10000));
    /* sum over ranks 0 and 1: (i) + (i + 10) and 1 + 2 */
    for (int i = 0; i < 4; ++i)
      if (r[i] != (float)(2 * i + 10)) {
        fprintf(stderr, "rank %d step %d: r[%d] is %g, expected %d\n", rank, step, i, r[i],
                2 * i + 10);
        return 1;
      }
    for (int i = 0; i < 6; ++i)
      if (s[i] != 3.0f) {
        fprintf(stderr, "rank %d step %d: s[%d] is %g, expected 3\n", rank, step, i, s[i]);
        return 1;
      }
  }
  if (collcFinalize() != collcInvalidUsage) {
    fprintf(stderr, "rank %d: collcFinalize with an executor alive was not refused\n", rank);
    return 1;
  }
  CHECK(collcExecutorDestroy(exec));
  CHECK(collcPlanDestroy(plan));
#ifdef COLLC_TEST_OWN_MPI
  CHECK(collcFinalize()); /* collc's part only: MPI stays the program's */
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (finalized) {
    fprintf(stderr, "rank %d: collcFinalize finalized an MPI the program owns\n", rank);
    return 1;
  }
  MPI_Finalize();
#elif !defined(COLLC_TEST_EXIT_FINALIZES)
  CHECK(collcFinalize());
#endif
  printf("rank %lld of 2: mpi all_reduce sums ok through the C API\n", (long long)got);
  return 0;
}
