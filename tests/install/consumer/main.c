/* A training loop's view of collc, in C: compile a program for 2 ranks,
 * run each rank on its own thread of the local backend, and check that
 * after one step an all_reduce's result is the average of what the two
 * ranks wrote. Usage: consumer PROGRAM.coll */
#include <collc/collc.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                              \
  do {                                                                           \
    collcResult_t r_ = (call);                                                   \
    if (r_ != collcSuccess) {                                                    \
      fprintf(stderr, "%s: %s\n", collcGetErrorString(r_), collcGetLastError()); \
      return r_;                                                                 \
    }                                                                            \
  } while (0)

enum { N = 768 }; /* f32[768]: the final layer norm's weight gradient */

typedef struct {
  collcPlan_t plan;
  int64_t rank;
  collcExecutor_t exec;
  float result[N];
  collcResult_t status;
} Rank;

/* Called at every compute of the step: the backward of ln_f writes its
 * gradient (here: rank + 1 + i) where the plan keeps it. */
static collcResult_t compute(const char *name, uint32_t index, void *user) {
  Rank *me = (Rank *)user;
  (void)index;
  if (strcmp(name, "bwd.transformer.ln_f") != 0)
    return collcSuccess;
  void *grad;
  size_t bytes;
  CHECK(collcExecutorTensor(me->exec, "g.transformer.ln_f.weight", &grad, &bytes));
  for (size_t i = 0; i < bytes / sizeof(float); ++i)
    ((float *)grad)[i] = (float)(me->rank + 1 + i);
  return collcSuccess;
}

static collcResult_t step(Rank *me) {
  collcExecutorOptions_t options = COLLC_EXECUTOR_OPTIONS_INIT;
  options.backend = "local";
  options.rendezvous = "consumer";
  CHECK(collcExecutorCreate(me->plan, me->rank, &options, &me->exec));
  size_t unbound;
  const char *first;
  CHECK(collcExecutorUnbound(me->exec, &unbound, &first));
  if (unbound != 0) {
    fprintf(stderr, "rank %lld: %zu tensors to bind, %s first\n", (long long)me->rank, unbound,
            first);
    return collcInvalidUsage;
  }
  CHECK(collcExecutorCapture(me->exec));
  CHECK(collcExecutorReplay(me->exec, compute, me));
  CHECK(collcExecutorSynchronize(me->exec, 10000));
  void *avg;
  size_t bytes;
  CHECK(collcExecutorTensor(me->exec, "r.transformer.ln_f.weight", &avg, &bytes));
  memcpy(me->result, avg, sizeof me->result);
  return collcExecutorDestroy(me->exec);
}

static void *run(void *arg) {
  Rank *me = (Rank *)arg;
  me->status = step(me);
  return NULL;
}

static char *readFile(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
    free(text);
    text = NULL;
  }
  if (text)
    text[n] = '\0';
  fclose(f);
  return text;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PROGRAM.coll\n", argv[0]);
    return 2;
  }
  char *program = readFile(argv[1]);
  if (!program) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  collcCompileOptions_t options = COLLC_COMPILE_OPTIONS_INIT;
  options.world = 2; /* the example declares 8 ranks; run it on 2 */
  options.sourceName = argv[1];
  collcPlan_t plan;
  CHECK(collcCompile(program, &options, &plan));
  free(program);
  const char *digest;
  CHECK(collcPlanDigest(plan, &digest));
  collcSimResult_t sim = COLLC_SIM_RESULT_INIT;
  CHECK(collcPlanSimulate(plan, "h100-nvlink", &sim));
  printf("plan %s: simulated step %.3f ms on h100-nvlink\n", digest, sim.stepUs / 1000);

  static Rank ranks[2];
  pthread_t other;
  for (int r = 0; r < 2; ++r) {
    ranks[r].plan = plan;
    ranks[r].rank = r;
  }
  pthread_create(&other, NULL, run, &ranks[1]);
  run(&ranks[0]);
  pthread_join(other, NULL);
  CHECK(collcPlanDestroy(plan));
  for (int r = 0; r < 2; ++r)
    if (ranks[r].status != collcSuccess)
      return 1;

  /* all_reduce avg of (1 + i) and (2 + i) on both ranks. */
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < N; ++i)
      if (ranks[r].result[i] != (float)i + 1.5f) {
        fprintf(stderr, "rank %d: r.transformer.ln_f.weight[%d] is %g, expected %g\n", r, i,
                ranks[r].result[i], (float)i + 1.5f);
        return 1;
      }
  printf("2 ranks replayed one step; r.transformer.ln_f.weight is the average of both ranks' "
         "g.transformer.ln_f.weight\n");
  return 0;
}
