/*===- collc.h - The C API of collc ------------------------------*- C -*-===*
 *
 * Compile a program's collectives to a plan, look at the plan, and replay it
 * every step on the local, mpi, gloo or nccl backend, from any language that
 * can call C (C11; no LLVM, no C++ and no CUDA in this header: a CUDA stream
 * is passed as a void *).
 *
 * In NCCL's manner:
 *  - every function returns a collcResult_t; on anything but collcSuccess,
 *    collcGetLastError() gives this thread's text naming the value and what
 *    was expected. No exception, abort or exit crosses this boundary.
 *  - objects are opaque handles (collcPlan_t, collcExecutor_t), created by a
 *    function that fills an out-pointer and released by its Destroy. A
 *    handle used after its Destroy, destroyed twice or not made by collc is
 *    refused with collcInvalidArgument (for the next 4096 destroys of its
 *    kind; not a call racing its Destroy on another thread: docs/c-api.md).
 *  - option and result structs are versioned: their first field `size` is
 *    sizeof the struct the caller was compiled with; initialize them with
 *    the *Init call (or the COLLC_*_INIT macro), then set what you need.
 *    A later version only adds fields at the end. `collcXInit(&s)` is a
 *    macro passing sizeof s to collcXInitSized, which fills exactly that
 *    size; the function collcXInit itself (what binaries built before the
 *    sized call use, and a pointer to it) fills version 1 of the struct
 *    only, which every caller's struct holds (docs/c-api.md, "Versioned
 *    structs").
 *  - ownership is stated on each function. Strings returned through
 *    `char **` are the caller's, released with collcFree(); `const char *`
 *    results belong to the handle they came from.
 *
 * Threads: one handle is used by one thread at a time; the ranks of the local
 * backend are executors driven from different threads of one process.
 *
 *===----------------------------------------------------------------------===*/
#ifndef COLLC_COLLC_H
#define COLLC_COLLC_H

#include "collc/version.h"

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define COLLC_API
#elif defined(COLLC_BUILDING_API)
#define COLLC_API __attribute__((visibility("default")))
#else
#define COLLC_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===------------------------------------------------------------------===*
 * Results and errors
 *===------------------------------------------------------------------===*/

typedef enum {
  collcSuccess = 0,
  collcInvalidArgument = 1, /* a null handle or pointer, a value out of range, bad input text */
  collcInvalidUsage = 2,    /* a call out of order (replay before capture, ...) */
  collcSystemError = 3,     /* the system failed: a file, memory, the library underneath */
  collcInternalError = 4,   /* a bug in collc: please report the last error text */
  collcTimeout = 5,         /* a peer did not arrive in time (the text names it) */
  collcMismatch = 6,        /* ranks disagree: plan digests, collectives */
  collcUnsupported = 7,     /* this build or machine cannot do it (the text says why) */
  collcRemoteError = 8,     /* a peer is gone or the group broke earlier */
  collcNumResults = 9
} collcResult_t;

/* A static string naming \p result ("collcTimeout: a peer did not arrive in
 * time"); never NULL. */
COLLC_API const char *collcGetErrorString(collcResult_t result);

/* The text of the last failure of a collc function on this thread, "" when
 * the last call succeeded. Owned by collc; valid until the next collc call
 * on this thread. */
COLLC_API const char *collcGetLastError(void);

/* Releases a string collc returned through a `char **` (NULL: nothing). */
COLLC_API void collcFree(void *p);

/* COLLC_VERSION_CODE of the library at run time (the header's may differ). */
COLLC_API collcResult_t collcGetVersion(int *version);

/*===------------------------------------------------------------------===*
 * Plans
 *===------------------------------------------------------------------===*/

typedef struct collcPlan *collcPlan_t;

typedef struct {
  size_t size;              /* sizeof(collcCompileOptions_t) */
  const char *pipeline;     /* NULL or "": the default pipeline (docs/passes.md) */
  const char *bucketPolicy; /* NULL: "ddp"; "ddp:50MiB", "fixed:25MiB", "auto", "none". Not with
                               pipeline. */
  int64_t world;            /* 0: the world the program declares; else 1..2^20 */
  uint64_t align;           /* alignment of tensors in buffers, a power of two; 0: 256 */
  int views;                /* 1 (default): zero-copy views; 0: pack every input */
  const char *sourceName;   /* NULL: "<program>"; names the text in diagnostics */
  /* Added in version 2 of the struct (a caller built against version 1 sets a
   * smaller size and gets the default): */
  uint64_t memoryBudget;    /* peak communication memory per rank to stay within, bytes; 0: none
                               (prefetch bounded as FSDP's default). Not with pipeline. */
} collcCompileOptions_t;

#define COLLC_COMPILE_OPTIONS_INIT {sizeof(collcCompileOptions_t), NULL, NULL, 0, 0, 1, NULL, 0}
/* Fills the first \p size bytes of *options with the defaults and sets
 * options->size to \p size, which is sizeof the caller's struct: from version
 * 1's to the library's (this header's; else collcInvalidArgument, and nothing
 * is written). */
COLLC_API collcResult_t collcCompileOptionsInitSized(collcCompileOptions_t *options, size_t size);
/* Fills version 1 of the struct only (no memoryBudget), its size that
 * of version 1: the symbol that binaries built before collcCompileOptionsInitSized
 * call. A call written collcCompileOptionsInit(&s) is the macro below. */
COLLC_API collcResult_t collcCompileOptionsInit(collcCompileOptions_t *options);
#define collcCompileOptionsInit(options) \
  collcCompileOptionsInitSized((options), sizeof *(options))

/* Compiles the NUL-terminated program text \p program to a plan. \p options
 * may be NULL (all defaults). On success *plan is the caller's, released with
 * collcPlanDestroy. A program error's text is its located diagnostics. */
COLLC_API collcResult_t collcCompile(const char *program, const collcCompileOptions_t *options,
                                     collcPlan_t *plan);

/* Reads a plan from the NUL-terminated plan text \p text (as written by
 * collcPlanSave / `collc compile`). *plan is the caller's. */
COLLC_API collcResult_t collcPlanLoad(const char *text, collcPlan_t *plan);
/* Reads the plan file at \p path. *plan is the caller's. */
COLLC_API collcResult_t collcPlanLoadFile(const char *path, collcPlan_t *plan);

/* Writes the plan's text to \p path (through a temporary file renamed on
 * success: a failure leaves an old file as it was). */
COLLC_API collcResult_t collcPlanSave(collcPlan_t plan, const char *path);
/* The plan's text in *text, NUL-terminated; the caller frees it with
 * collcFree. */
COLLC_API collcResult_t collcPlanText(collcPlan_t plan, char **text);

/* The plan's digest ("xxh64:<hex>"; what every rank compares before it
 * replays). *digest belongs to the plan. */
COLLC_API collcResult_t collcPlanDigest(collcPlan_t plan, const char **digest);
/* The world the plan was compiled for. */
COLLC_API collcResult_t collcPlanWorld(collcPlan_t plan, int64_t *world);

/* The type of tensor \p name (`g0` or `%g0`) in the plan: *elemType spells its
 * element type ("f32", "bf16", ...: docs/ir.md), *rank is its number of
 * dimensions and *shape points at them (NULL for a scalar). All three belong
 * to the plan. What a binding's element type is checked against. */
COLLC_API collcResult_t collcPlanTensorType(collcPlan_t plan, const char *name,
                                            const char **elemType, int64_t *rank,
                                            const int64_t **shape);

/* What differs between plans \p a and \p b, in words, one difference a line,
 * most important first (the report of `collc diff`), into *diff, which the
 * caller frees with collcFree: "" when the plans agree on everything ranks
 * must agree on. */
COLLC_API collcResult_t collcPlanDiff(collcPlan_t a, collcPlan_t b, char **diff);

/* Releases the caller's reference (NULL: nothing). Executors created from the
 * plan keep it alive until they are destroyed. */
COLLC_API collcResult_t collcPlanDestroy(collcPlan_t plan);

/*===------------------------------------------------------------------===*
 * Looking at a plan: `collc dump` and `collc simulate`
 *===------------------------------------------------------------------===*/

typedef enum {
  collcDumpText = 0,  /* a readable summary */
  collcDumpJSON = 1,  /* JSON with `buckets` */
  collcDumpDot = 2,   /* a Graphviz graph */
  collcDumpTrace = 3, /* a Chrome/Perfetto trace of the simulated step */
  collcDumpNccl = 4   /* the CUDA/NCCL calls rank `rank` issues */
} collcDumpFormat_t;

typedef struct {
  size_t size;              /* sizeof(collcDumpOptions_t) */
  collcDumpFormat_t format; /* collcDumpText */
  int explain;              /* 0; 1: include the passes' decisions */
  const char *link;         /* NULL: "h100-nvlink" (trace: the link class simulated, or
                               a link file path from `collc bench --calibrate`) */
  int64_t rank;             /* collcDumpNccl: the rank listed (0) */
  int64_t focusRank;        /* collcDumpDot: only this rank's ops; -1: all */
  int64_t focusBucket;      /* collcDumpDot: this bucket and its neighbours; -1: all */
  const char *focusSteps;   /* collcDumpDot: "A..B" (0-based); NULL: all */
} collcDumpOptions_t;

#define COLLC_DUMP_OPTIONS_INIT {sizeof(collcDumpOptions_t), collcDumpText, 0, NULL, 0, -1, -1, NULL}
/* Fills the first \p size bytes of *options with the defaults and sets
 * options->size to \p size, which is sizeof the caller's struct: from version
 * 1's to the library's (this header's; else collcInvalidArgument, and nothing
 * is written). */
COLLC_API collcResult_t collcDumpOptionsInitSized(collcDumpOptions_t *options, size_t size);
/* Fills version 1 of the struct only, its size that
 * of version 1: the symbol that binaries built before collcDumpOptionsInitSized
 * call. A call written collcDumpOptionsInit(&s) is the macro below. */
COLLC_API collcResult_t collcDumpOptionsInit(collcDumpOptions_t *options);
#define collcDumpOptionsInit(options) collcDumpOptionsInitSized((options), sizeof *(options))

/* The plan in \p options->format (NULL options: text) into *out, which the
 * caller frees with collcFree. The same text `collc dump` prints. */
COLLC_API collcResult_t collcPlanDump(collcPlan_t plan, const collcDumpOptions_t *options,
                                      char **out);

typedef struct {
  size_t size;           /* sizeof(collcSimResult_t), set by the caller */
  double stepUs;         /* one step, on the slowest rank */
  double computeOnlyUs;  /* the step with free communication */
  double exposedCommUs;  /* communication not hidden behind compute */
  double commBusyUs;     /* communication time of the slowest rank */
  int64_t slowestRank;
  /* Added in version 2 of the struct (a caller built against version 1 sets a
   * smaller size, and nothing beyond it is written): the plan's peak
   * communication memory per rank, as `collc simulate` and `collc dump` state
   * it (docs/passes.md, "Peak memory"). */
  uint64_t peakMemoryBytes;        /* the most communication holds at once on one rank */
  uint64_t peakMemoryTensorBytes;  /* of which tensors communication makes */
  uint64_t peakMemoryStagingBytes; /* of which pack/unpack staging buffers */
  int64_t peakMemoryTensors;       /* tensors live at the peak */
  int64_t peakMemoryRank;          /* the lowest rank that reaches it */
  int64_t peakMemoryComm;          /* the comm whose launch reaches it; -1: no communication
                                      allocates */
} collcSimResult_t;

#define COLLC_SIM_RESULT_INIT {sizeof(collcSimResult_t), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1}
/* Fills the first \p size bytes of *result with the defaults and sets
 * result->size to \p size, which is sizeof the caller's struct: from version
 * 1's to the library's (this header's; else collcInvalidArgument, and nothing
 * is written). */
COLLC_API collcResult_t collcSimResultInitSized(collcSimResult_t *result, size_t size);
/* Fills version 1 of the struct only (no peak memory), its size that
 * of version 1: the symbol that binaries built before collcSimResultInitSized
 * call. A call written collcSimResultInit(&s) is the macro below. */
COLLC_API collcResult_t collcSimResultInit(collcSimResult_t *result);
#define collcSimResultInit(result) collcSimResultInitSized((result), sizeof *(result))

/* Simulates one step of the plan with the cost model on link class \p link
 * (NULL: "h100-nvlink"; `collc simulate --list-links`) or a link file (a path
 * containing '/' or ending in .json, from `collc bench --calibrate`), as
 * `collc simulate`.
 * \p result is the caller's, its size set. */
COLLC_API collcResult_t collcPlanSimulate(collcPlan_t plan, const char *link,
                                          collcSimResult_t *result);

/*===------------------------------------------------------------------===*
 * Executors: bind, capture, replay every step
 *===------------------------------------------------------------------===*/

typedef struct collcExecutor *collcExecutor_t;

typedef struct {
  size_t size;            /* sizeof(collcExecutorOptions_t) */
  const char *backend;    /* NULL: "local"; "mpi", "gloo"; "nccl" (GPU memory: below) */
  /* Where the ranks of one run meet. local: any name shared by the run's
   * executors (NULL: "collc"; two runs alive at once in one process use two
   * names). gloo: "file:DIR" or "redis://HOST:PORT". mpi: NULL or "mpi".
   * nccl (one process per rank, as `collc run --backend nccl`): where the
   * NCCL unique ids are exchanged: NULL or "mpi" (under mpirun), "file:DIR"
   * or "redis://HOST:PORT" (a Gloo world on that store). */
  const char *rendezvous;
  int64_t timeoutMs;      /* every wait; 0: COLLC_TIMEOUT_MS, else 300000 */
  int digestHandshake;    /* 1 (default): compare plan digests across ranks at capture */
  /* The fields below are read only when `size` covers them (a caller built
   * against an older collc.h gets their defaults). */
  int64_t device;  /* nccl: the CUDA device; -1 (default): the launcher's local rank
                      (mpirun, srun, torchrun; 0 without one) modulo the devices */
  int asyncReplay; /* CPU backends: 0 (default): a replay returns once this rank's
                      step is done; 1: it queues the step on the executor's thread
                      and returns (collcExecutorSynchronize waits for it) */
} collcExecutorOptions_t;

#define COLLC_EXECUTOR_OPTIONS_INIT {sizeof(collcExecutorOptions_t), NULL, NULL, 0, 1, -1, 0}
/* Fills the first \p size bytes of *options with the defaults and sets
 * options->size to \p size, which is sizeof the caller's struct: from version
 * 1's to the library's (this header's; else collcInvalidArgument, and nothing
 * is written). */
COLLC_API collcResult_t collcExecutorOptionsInitSized(collcExecutorOptions_t *options,
                                                      size_t size);
/* Fills version 1 of the struct only (no device, asyncReplay), its size that
 * of version 1: the symbol that binaries built before collcExecutorOptionsInitSized
 * call. A call written collcExecutorOptionsInit(&s) is the macro below. */
COLLC_API collcResult_t collcExecutorOptionsInit(collcExecutorOptions_t *options);
#define collcExecutorOptionsInit(options) \
  collcExecutorOptionsInitSized((options), sizeof *(options))

/* The executor of rank \p rank (0..world-1) of \p plan. \p options may be
 * NULL (local, defaults). The executor holds a reference to the plan. *exec
 * is the caller's, released with collcExecutorDestroy. On mpi the first
 * executor of the process initializes MPI with MPI_THREAD_MULTIPLE, or adopts
 * the MPI the program initialized itself (at that level); collcFinalize ends
 * it. */
COLLC_API collcResult_t collcExecutorCreate(collcPlan_t plan, int64_t rank,
                                            const collcExecutorOptions_t *options,
                                            collcExecutor_t *exec);

/* The rank the executor runs. */
COLLC_API collcResult_t collcExecutorRank(collcExecutor_t exec, int64_t *rank);

/* Where an executor's bindings and tensors live. */
typedef enum { collcMemoryHost = 0, collcMemoryDevice = 1 } collcMemory_t;

/* Stores where \p exec's tensors live: collcMemoryHost (bound with
 * collcExecutorBind; collcExecutorTensor gives host addresses) or
 * collcMemoryDevice (nccl: collcExecutorBindDevice, collcExecutorSetStream,
 * device addresses). What a caller asks instead of comparing backend names. */
COLLC_API collcResult_t collcExecutorMemory(collcExecutor_t exec, collcMemory_t *memory);

/* Binds tensor \p name (`g0` or `%g0`) to \p bytes of host memory at \p data,
 * which stays the caller's and must outlive the executor or the next bind of
 * the name. \p bytes must be the tensor's size exactly. Binding again
 * requires capturing again. An nccl executor binds device memory instead
 * (collcInvalidUsage). */
COLLC_API collcResult_t collcExecutorBind(collcExecutor_t exec, const char *name, void *data,
                                          size_t bytes);

/* The nccl backend's collcExecutorBind: \p name to \p bytes of memory at
 * \p devicePtr on the executor's device, the caller's as with
 * collcExecutorBind. collcInvalidUsage on an executor of another backend.
 * (collcExecutorCreate itself refuses "nccl" with collcUnsupported when this
 * build has no NCCL backend or this machine no GPU, saying which.) */
COLLC_API collcResult_t collcExecutorBindDevice(collcExecutor_t exec, const char *name,
                                                void *devicePtr, size_t bytes);

/* The nccl backend: the CUDA stream the caller computes on (a cudaStream_t,
 * passed as a void *). Every replay is ordered after the work enqueued on
 * it so far, and the work enqueued on it afterwards runs after the step
 * (events; the step itself runs on the executor's comm stream). Required
 * before capture. NULL is refused: collc cannot tell the legacy default
 * stream from the per-thread one of a caller built with
 * --default-stream per-thread; pass cudaStreamLegacy or cudaStreamPerThread
 * (or a stream of your own). The stream must outlive the executor's
 * replays. */
COLLC_API collcResult_t collcExecutorSetStream(collcExecutor_t exec, void *cudaStream);

/* Where tensor \p name lives: a view slot inside a plan buffer (the model
 * writes its input there: zero copy) or the memory bound to it; on nccl a
 * device address. *data belongs to the executor (or to the binder). */
COLLC_API collcResult_t collcExecutorTensor(collcExecutor_t exec, const char *name, void **data,
                                            size_t *bytes);

/* How many tensors this rank touches that are neither views nor bound
 * (capture refuses while any is left); \p name of the first, or "", which
 * belongs to the executor until its next call. */
COLLC_API collcResult_t collcExecutorUnbound(collcExecutor_t exec, size_t *count,
                                             const char **firstName);

/* Resolves the plan for this rank; the first capture compares plan digests
 * with every rank (collcMismatch names the ranks that differ). Every rank
 * captures at the same point: it is a collective. */
COLLC_API collcResult_t collcExecutorCapture(collcExecutor_t exec);

/* Runs the model's compute op \p computeName (the \p index-th compute of the
 * plan). Return collcSuccess, or another result to stop the step: the replay
 * returns that result, its text naming the compute. It may read and write
 * the executor's tensors (collcExecutorTensor); a call that would change,
 * wait for or destroy the executor of its own step (bind, capture, replay,
 * synchronize, destroy) returns collcInvalidUsage. */
typedef collcResult_t (*collcComputeFn)(const char *computeName, uint32_t index, void *user);

/* One step: every launch, wait and compute of this rank in plan order.
 * \p compute is called at each compute step (NULL: none is run). On CPU
 * backends it blocks until this rank's part of the step is done, unless the
 * executor was created with asyncReplay = 1: then the step is queued on the
 * executor's thread, which runs \p compute (\p user must stay valid until
 * collcExecutorSynchronize returns), and the call returns at once (an error
 * of an earlier queued step is returned here, or by synchronize). On nccl
 * \p compute enqueues the model's work on the caller's stream
 * (collcExecutorSetStream); the step is enqueued on the GPU between that
 * work and what the caller enqueues next, and the call returns at once. */
COLLC_API collcResult_t collcExecutorReplay(collcExecutor_t exec, collcComputeFn compute,
                                            void *user);

/* Waits until the work of the replays issued so far is done, at most
 * \p timeoutMs (>= 0; 0: only check), and reports a lost peer or the
 * error of a queued step. Past the deadline it returns collcTimeout naming
 * what is still pending (the step, and the compute or op it is at) and
 * leaves the executor as it was: call it again, or destroy the executor
 * (which waits for the pending work up to the executor's timeoutMs). On
 * CPU backends without asyncReplay a replay returns done, so this checks the
 * group's health. */
COLLC_API collcResult_t collcExecutorSynchronize(collcExecutor_t exec, int64_t timeoutMs);

/* Releases the executor (NULL: nothing): waits for its enqueued work (each
 * wait bounded by its timeoutMs), leaves its groups and drops its plan
 * reference. */
COLLC_API collcResult_t collcExecutorDestroy(collcExecutor_t exec);

/* --- Flight records (docs/diagnose.md) ---------------------------------------
 * Every executor keeps a ring of its rank's last comm events in plan terms
 * (op, group, step, program line, state, times): a dump of every rank tells
 * `collc diagnose` where each one was when a step hung or a rank died. */

/* From now on, dumps the record of \p exec into the directory \p dir (made
 * if missing; NULL or "": nowhere), one JSON file per rank,
 * dir/collc-record-rank<R>.json, written whole or not at all: when a
 * capture, replay or synchronize of it fails or times out, when the
 * process gets SIGUSR1, and, with \p atExit non-zero, when it is
 * destroyed. Not while a step of it is queued or runs. (Node COLLC_2 of
 * the version script.) */
COLLC_API collcResult_t collcExecutorRecordTo(collcExecutor_t exec, const char *dir, int atExit);

/* Dumps the record of \p exec now into \p dir (NULL: the directory of
 * collcExecutorRecordTo; collcInvalidArgument when there is none). */
COLLC_API collcResult_t collcExecutorRecordDump(collcExecutor_t exec, const char *dir);

/* Ends what collc started for process backends once every executor is
 * destroyed (collcInvalidUsage while one is alive): finalizes MPI if collc
 * initialized it (MPI cannot start again in this process), or leaves an MPI
 * the program initialized to the program, which finalizes it after this
 * call. Without it, collc finalizes its MPI when the process exits. Nothing
 * to do when no mpi executor was created. */
COLLC_API collcResult_t collcFinalize(void);

/*===------------------------------------------------------------------===*
 * Where this process stands: its launcher's rank and world
 *===------------------------------------------------------------------===*/

/* This process's place in its run, as its launcher says it (mpirun, srun or
 * torchrun's variables: docs/runtime.md, "Launchers"): *rank of *world,
 * *localRank of the *localWorld processes on this host, and *launcher names
 * the launcher ("mpirun", "srun", "torchrun"; owned by collc, valid until
 * the next collc call on this thread). Any pointer but rank and world may
 * be NULL. collcInvalidArgument when no launcher's variables are set, or
 * one holds a value that is not a number in range (the text names it). */
COLLC_API collcResult_t collcLauncherPlace(int64_t *rank, int64_t *world, int64_t *localRank,
                                           int64_t *localWorld, const char **launcher);

/*===------------------------------------------------------------------===*
 * The program's store: processes meet where the program already does
 *===------------------------------------------------------------------===*/

/* A key-value store the program's processes already share (torch's TCPStore
 * under torchrun), lent to collc so that its gloo groups meet there too:
 * rendezvous "store:NAME". Each function returns 0 on success and any other
 * value on failure; \p user is the struct's. */
typedef struct {
  size_t size; /* sizeof(collcStore_t) */
  void *user;
  /* Sets \p key to \p bytes at \p value. */
  int (*set)(void *user, const char *key, const void *value, size_t bytes);
  /* Calls deliver(ctx, value, bytes) once with \p key's value, waiting for
   * the key as long as the store waits; \p value need live only during
   * that call. */
  int (*get)(void *user, const char *key,
             void (*deliver)(void *ctx, const void *value, size_t bytes), void *ctx);
  /* *allSet = 1 when every one of the \p count keys is set now, else 0;
   * never waits. */
  int (*check)(void *user, const char *const *keys, size_t count, int *allSet);
  /* Adds \p delta to the integer at \p key (0 when unset), atomically across
   * processes, and stores the sum in *sum. */
  int (*add)(void *user, const char *key, int64_t delta, int64_t *sum);
  /* 1: every process of the run is on this host (gloo listens on the
   * loopback address); 0: they may not be (it listens on the host's name,
   * or COLLC_GLOO_HOSTNAME). */
  int oneHost;
} collcStore_t;

/* Registers *\p store as rendezvous "store:\p name" for this process (name:
 * letters, digits, '_', '-', '.'), in place of one registered before under
 * that name: groups formed after meet in the new one. collc copies the
 * struct; its functions and user pointer must stay valid until the name is
 * registered again or the process ends. The gloo backend meets through one
 * rendezvous per process, so a process uses one name. */
COLLC_API collcResult_t collcStoreRegister(const char *name, const collcStore_t *store);

/*===------------------------------------------------------------------===*
 * Eager collectives: a communicator of one group, op by op
 *===------------------------------------------------------------------===*/

/* What a framework's process group runs on (torch.distributed's collc
 * backend): every call checks its arguments, enqueues the operation and
 * returns a ticket at once; collcCommWait waits for it. The memory of an
 * operation is the caller's and must stay valid until its ticket is
 * waited for. Collectives run in the order issued; a send or recv runs in
 * order with the others of its peer and direction only, so a send and a
 * recv between two ranks progress together. Counts are elements of
 * \p elemType, spelled as in plans ("f32", "bf16", "i64": docs/ir.md);
 * \p op is "sum", "prod", "min", "max" or "avg". Unlike executors, a
 * communicator may be used from several threads at once (one destroys it). */
typedef struct collcComm *collcComm_t;
typedef uint64_t collcTicket_t;

typedef struct {
  size_t size;            /* sizeof(collcCommOptions_t) */
  const char *backend;    /* NULL: "local"; "mpi", "gloo" */
  const char *rendezvous; /* as collcExecutorOptions_t's; gloo: also "store:NAME" */
  const char *group;      /* the group's name, the same on its every rank; NULL: "world".
                             Two communicators of one process name two groups. */
  int64_t timeoutMs;      /* every wait; 0: COLLC_TIMEOUT_MS, else 300000 */
} collcCommOptions_t;

#define COLLC_COMM_OPTIONS_INIT {sizeof(collcCommOptions_t), NULL, NULL, NULL, 0}
/* Fills the first \p size bytes of *options with the defaults and sets
 * options->size to \p size (sizeof the caller's struct). */
COLLC_API collcResult_t collcCommOptionsInitSized(collcCommOptions_t *options, size_t size);
#define collcCommOptionsInit(options) collcCommOptionsInitSized((options), sizeof *(options))

/* This process's communicator, rank \p rank of \p world, in the group
 * options->group: every rank of the group creates its own (a collective).
 * *comm is the caller's, released with collcCommDestroy. */
COLLC_API collcResult_t collcCommCreate(int64_t rank, int64_t world,
                                        const collcCommOptions_t *options, collcComm_t *comm);

/* \p count elements at \p data reduced with every rank's, in place. */
COLLC_API collcResult_t collcCommAllReduce(collcComm_t comm, void *data, uint64_t count,
                                           const char *elemType, const char *op,
                                           collcTicket_t *ticket);
/* Rank \p root's \p bytes at \p data into every rank's. */
COLLC_API collcResult_t collcCommBroadcast(collcComm_t comm, void *data, uint64_t bytes,
                                           int64_t root, collcTicket_t *ticket);
/* Every rank's \p bytes at \p in, in rank order at \p out (world x bytes). */
COLLC_API collcResult_t collcCommAllGather(collcComm_t comm, const void *in, void *out,
                                           uint64_t bytes, collcTicket_t *ticket);
/* Rank r's \p count elements at \p out: every rank's r-th chunk of \p count
 * elements at \p in (world x count), reduced with \p op. */
COLLC_API collcResult_t collcCommReduceScatter(collcComm_t comm, const void *in, void *out,
                                               uint64_t count, const char *elemType,
                                               const char *op, collcTicket_t *ticket);
/* sendCounts[r] elements to rank r, packed in rank order at \p in;
 * recvCounts[r] from rank r, packed at \p out (world entries each). */
COLLC_API collcResult_t collcCommAllToAll(collcComm_t comm, const void *in, void *out,
                                          const char *elemType, const uint64_t *sendCounts,
                                          const uint64_t *recvCounts, collcTicket_t *ticket);
COLLC_API collcResult_t collcCommSend(collcComm_t comm, const void *data, uint64_t bytes,
                                      int64_t peer, collcTicket_t *ticket);
/* Exactly \p bytes from \p peer (a send of another size fails both). */
COLLC_API collcResult_t collcCommRecv(collcComm_t comm, void *data, uint64_t bytes, int64_t peer,
                                      collcTicket_t *ticket);
COLLC_API collcResult_t collcCommBarrier(collcComm_t comm, collcTicket_t *ticket);

/* Waits for \p ticket (and what ran before it in its order): \p timeoutMs
 * -1 waits up to the communicator's timeout, past which it is broken (every
 * later call refused); 0..86400000 waits at most that long, past which
 * collcTimeout says it is still running and it goes on (wait again). A
 * failure names the peer; the operation's memory is free once this returns
 * anything but collcTimeout. */
COLLC_API collcResult_t collcCommWait(collcComm_t comm, collcTicket_t ticket, int64_t timeoutMs);
/* *done = 1 when \p ticket has run (its error, if any, is collcCommWait's). */
COLLC_API collcResult_t collcCommTest(collcComm_t comm, collcTicket_t ticket, int *done);

/* Releases the communicator (NULL: nothing) once what it enqueued has run. */
COLLC_API collcResult_t collcCommDestroy(collcComm_t comm);

#ifdef __cplusplus
}
#endif

#endif /* COLLC_COLLC_H */
