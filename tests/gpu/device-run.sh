#!/usr/bin/env bash
# The NCCL backend's device check: the one script a session runs on a GPU
# machine (docs/nccl.md, "The device check"). Build here first, then run it
# there with the build carried:
#   tests/gpu/check.sh --build-only                      (here: builds build-gpu/bin)
#   run: command "tests/gpu/device-run.sh", carry ["build-gpu/bin"], timeout_s 420
#
# What it does, each step bounded so that one hang cannot spend the window:
#  1. preflight: the carried binaries exist and load (ldd), the NCCL they
#     load and its version, the GPU (nvidia-smi);
#  2. every test of collc_gpu_tests in its own process under `timeout`, in
#     the order of the suites: NcclBackend (no GPU needed), GpuPack (plain
#     CUDA), GpuComm (communicator start-up, one-rank calls), GpuCapture,
#     GpuSendRecv; NCCL_DEBUG=INFO to a log; COLLC_TIMEOUT_MS keeps every
#     wait inside collc short;
#  2b. the driver conformance suite on NCCL (collc_gpu_conformance: every op
#     and element type on one-rank communicators) in one process under
#     `timeout`, after the tests so that a failure there hides nothing;
#  2c. `collc run --backend nccl` of gpt2_ddp compiled for one rank, under
#     `mpirun -np 1` (or, without mpirun, as rank 0 of 1 meeting through a
#     directory): ids through the CPU world, graph replay, results checked;
#  2d. the C API's nccl backend (collc_gpu_capi_tests: libcollc.so, copied
#     beside it, on one rank), each test in its own process under `timeout`;
#  3. collc_gpu_bench under `timeout`;
#  4. compute-sanitizer (memcheck) on the pack test, where the machine has it;
#  5. a short summary, printed last (and kept in summary.txt).
# Files under $OUT (./gpu-out when unset), eight at most:
#   summary.txt preflight.txt tests.log nccl-info.log conformance.log run.log
#   bench.txt sanitizer.log
# Without a GPU every GPU test reports itself skipped with its reason and the
# summary says so (this works on any machine with the build; under a minute).
# Exit status: 0 when nothing failed or timed out; 3 when the build was not
# carried or does not load.
#
# Knobs (environment): COLLC_GPU_BIN (build-gpu/bin), COLLC_TIMEOUT_MS (20000),
# COLLC_TEST_TIMEOUT_S (45, per test), COLLC_CONFORMANCE_TIMEOUT_S (60),
# COLLC_RUN_TIMEOUT_S (60), COLLC_BENCH_TIMEOUT_S (75),
# COLLC_SANITIZER_TIMEOUT_S (60), COLLC_DEVICE_BUDGET_S (370: no step starts
# that could end past it).
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$SECONDS
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
BIN=${COLLC_GPU_BIN:-build-gpu/bin}
TESTS_BIN=$BIN/collc_gpu_tests
BENCH_BIN=$BIN/collc_gpu_bench
CONF_BIN=$BIN/collc_gpu_conformance
export COLLC_TIMEOUT_MS=${COLLC_TIMEOUT_MS:-20000}
TEST_T=${COLLC_TEST_TIMEOUT_S:-45}
BENCH_T=${COLLC_BENCH_TIMEOUT_S:-75}
CONF_T=${COLLC_CONFORMANCE_TIMEOUT_S:-60}
SAN_T=${COLLC_SANITIZER_TIMEOUT_S:-60}
BUDGET=${COLLC_DEVICE_BUDGET_S:-370}
PRE=$OUT/preflight.txt LOG=$OUT/tests.log NLOG=$OUT/nccl-info.log
BENCH=$OUT/bench.txt SAN=$OUT/sanitizer.log SUMMARY=$OUT/summary.txt CONF=$OUT/conformance.log
: >"$PRE"; : >"$LOG"; : >"$NLOG"; : >"$SUMMARY"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

say() { echo "== $*"; }
sum() { printf '%s\n' "$*" >>"$SUMMARY"; }
left() { echo $((BUDGET - (SECONDS - START))); }
finish() { # $1: exit status
  sum "time:      $((SECONDS - START)) s (budget ${BUDGET} s)"
  echo
  cat "$SUMMARY"
  exit "$1"
}
sum "== collc device-run summary (docs/nccl.md, \"The device check\", explains each line)"

# --- 1. preflight ------------------------------------------------------------------------
if [ ! -x "$TESTS_BIN" ] || [ ! -x "$BENCH_BIN" ]; then
  sum "build:     NOT CARRIED: $TESTS_BIN or $BENCH_BIN is missing. Build with"
  sum "           'tests/gpu/check.sh --build-only' where LLVM 14 is, and run with carry [\"$BIN\"]"
  finish 3
fi
. tests/gpu/find-nccl.sh
{
  echo "# $(date -u +%FT%TZ) on $(hostname)"
  echo "# ldd $TESTS_BIN (NCCL_DIR=${NCCL_DIR:-none found})"
  ldd "$TESTS_BIN"
  echo "# $(ldd --version 2>&1 | head -1)"
} >>"$PRE" 2>&1
MISSING=$(ldd "$TESTS_BIN" "$BENCH_BIN" 2>&1 | grep 'not found' | awk '{print $1}' | sort -u | tr '\n' ' ')
if [ -n "$MISSING" ]; then
  sum "build:     carried, but does not load: missing $MISSING(NCCL looked for in"
  sum "           \$NCCL_HOME/lib, /usr/local/cuda/lib64, /usr/lib/x86_64-linux-gnu, pip's nvidia-nccl)"
  finish 3
fi
NCCL_LINE=$(timeout 20 "$BENCH_BIN" --version 2>&1 | tail -1)
echo "# $NCCL_LINE" >>"$PRE"
case $NCCL_LINE in
NCCL*) ;;
*)
  sum "build:     carried, but the bench does not start: $NCCL_LINE (preflight.txt)"
  finish 3
  ;;
esac
sum "build:     $BIN carried and loads ($(ldd --version 2>&1 | head -1 | awk '{print "glibc " $NF}'))"
sum "nccl:      $NCCL_LINE"
if command -v nvidia-smi >/dev/null; then
  timeout 20 nvidia-smi >>"$PRE" 2>&1
  GPU=$(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
else
  echo "# nvidia-smi: not on this machine" >>"$PRE"
  GPU=""
fi
say "preflight done: $NCCL_LINE; GPU: ${GPU:-none seen}"

# --- 2. the tests, one process each ------------------------------------------------------
SUITES="NcclBackend GpuPack GpuComm GpuCapture GpuSendRecv"
LIST=$(timeout 30 "$TESTS_BIN" --gtest_list_tests 2>>"$PRE" |
  awk '/^[^ ]/ {s=$1} /^  / {print s $1}')
ORDERED=""
for S in $SUITES; do
  ORDERED+=$(printf '%s\n' $LIST | grep "^$S\." | tr '\n' ' ')
done
OTHERS=$(printf '%s\n' $LIST | grep -v -E "^($(echo $SUITES | tr ' ' '|'))\." | tr '\n' ' ')
ORDERED+=" $OTHERS"
[ -n "${OTHERS// /}" ] && sum "note:      tests outside the known suites, run last: $OTHERS"

PASS=0 FAIL=0 TIMEOUT=0 SKIP=0 NOTRUN=0 TOTAL=0
declare -A SKIPWHY # reason -> count
PROBLEMS=""
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=${NCCL_DEBUG_SUBSYS:-INIT,ENV,GRAPH,COLL,P2P}
for T in $ORDERED; do
  TOTAL=$((TOTAL + 1))
  if [ "$(left)" -lt "$TEST_T" ]; then
    NOTRUN=$((NOTRUN + 1))
    PROBLEMS+="  NOT RUN  $T (budget spent)"$'\n'
    continue
  fi
  export NCCL_DEBUG_FILE=$SCRATCH/nccl.%p.log
  T0=$SECONDS
  timeout -k 5 "$TEST_T" "$TESTS_BIN" --gtest_filter="$T" --gtest_color=no >"$SCRATCH/out" 2>&1
  RC=$?
  DT=$((SECONDS - T0))
  {
    echo "===== $T: rc $RC, ${DT} s"
    cat "$SCRATCH/out"
  } >>"$LOG"
  for F in "$SCRATCH"/nccl.*.log; do
    [ -e "$F" ] || continue
    echo "===== $T ($(basename "$F"))" >>"$NLOG"
    # Bounded per test: the start-up and the end are what tell.
    if [ "$(wc -l <"$F")" -gt 400 ]; then
      head -300 "$F" >>"$NLOG"
      echo "... $(($(wc -l <"$F") - 400)) lines left out ..." >>"$NLOG"
      tail -100 "$F" >>"$NLOG"
    else
      cat "$F" >>"$NLOG"
    fi
    rm -f "$F"
  done
  if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then
    TIMEOUT=$((TIMEOUT + 1))
    PROBLEMS+="  TIMEOUT  $T (killed after ${TEST_T} s)"$'\n'
    say "$T: TIMEOUT after ${TEST_T} s"
  elif [ "$RC" = 0 ] && grep -q '^\[  SKIPPED \] 1 test' "$SCRATCH/out"; then
    SKIP=$((SKIP + 1))
    WHY=$(awk '/: Skipped$/ {getline; print; exit}' "$SCRATCH/out")
    WHY=${WHY:-no reason given}
    SKIPWHY[$WHY]=$((${SKIPWHY[$WHY]:-0} + 1))
    say "$T: skipped: $WHY"
  elif [ "$RC" = 0 ] && grep -q '^\[  PASSED  \] 1 test' "$SCRATCH/out"; then
    PASS=$((PASS + 1))
    say "$T: passed (${DT} s)"
  else
    FAIL=$((FAIL + 1))
    FIRST=$(grep -m1 -A1 -E ': Failure$|^unknown file: Failure|Segmentation|Aborted|terminate called' \
      "$SCRATCH/out" | tail -1 | cut -c1-160)
    PROBLEMS+="  FAILED   $T (rc $RC, ${DT} s): ${FIRST:-see tests.log}"$'\n'
    say "$T: FAILED (rc $RC)"
  fi
done
NOGPU=""
for W in "${!SKIPWHY[@]}"; do
  case $W in "no CUDA GPU"*) NOGPU=$W ;; esac
done
if [ -n "$NOGPU" ]; then
  sum "gpu:       NONE: $NOGPU"
else
  sum "gpu:       ${GPU:-present (nvidia-smi did not name it)}"
fi
sum "tests:     $PASS passed, $FAIL failed, $TIMEOUT timed out, $SKIP skipped, $NOTRUN not run, of $TOTAL (one process each, ${TEST_T} s limit, COLLC_TIMEOUT_MS=$COLLC_TIMEOUT_MS)"
[ -n "$PROBLEMS" ] && printf '%s' "$PROBLEMS" >>"$SUMMARY"
for W in "${!SKIPWHY[@]}"; do
  sum "  SKIPPED  ${SKIPWHY[$W]} x: $W"
done

# --- 2b. the conformance suite on NCCL, one process ---------------------------------------
if [ ! -x "$CONF_BIN" ]; then
  sum "conform:   not carried ($CONF_BIN is missing)"
elif [ "$(left)" -lt "$CONF_T" ]; then
  sum "conform:   not run (budget spent)"
else
  say "collc_gpu_conformance"
  COLLC_CONFORMANCE_BIG_BYTES=${COLLC_CONFORMANCE_BIG_BYTES:-1048576} \
    timeout -k 5 "$CONF_T" "$CONF_BIN" --gtest_color=no >"$CONF" 2>&1
  RC=$?
  CPASS=$(grep -c '^\[       OK \]' "$CONF")
  CFAIL=$(grep -c '^\[  FAILED  \] .*(' "$CONF")
  CSKIP=$(grep -c '^\[  SKIPPED \] .*(' "$CONF")
  case $RC in
  124 | 137)
    TIMEOUT=$((TIMEOUT + 1))
    sum "conform:   TIMEOUT after ${CONF_T} s: $CPASS passed, $CFAIL failed before it (conformance.log)"
    ;;
  *)
    [ "$CFAIL" -gt 0 ] || [ "$RC" != 0 ] && FAIL=$((FAIL + 1))
    sum "conform:   $CPASS passed, $CFAIL failed, $CSKIP skipped (rc $RC; conformance.log)"
    grep '^\[  FAILED  \] .*(' "$CONF" | head -5 | sed 's/^/  /' >>"$SUMMARY"
    ;;
  esac
fi

# --- 2c. collc run --backend nccl, one process ------------------------------------------------
COLLC_BIN=$BIN/collc
RUN_T=${COLLC_RUN_TIMEOUT_S:-60}
RUNLOG=$OUT/run.log
MISSING=$([ -x "$COLLC_BIN" ] && ldd "$COLLC_BIN" 2>&1 | grep 'not found' | awk '{print $1}' | sort -u | tr '\n' ' ')
if [ ! -x "$COLLC_BIN" ]; then
  sum "run:       not carried ($COLLC_BIN is missing)"
elif [ -n "$MISSING" ]; then
  FAIL=$((FAIL + 1))
  sum "run:       collc does not load: missing $MISSING"
elif [ "$(left)" -lt "$RUN_T" ]; then
  sum "run:       not run (budget spent)"
else
  if command -v mpirun >/dev/null; then
    LAUNCH=(mpirun --allow-run-as-root --oversubscribe -np 1) PLACE=() HOW="mpirun -np 1"
  else
    mkdir -p "$SCRATCH/rendezvous"
    LAUNCH=() PLACE=(--rank 0 --world 1 --rendezvous "file:$SCRATCH/rendezvous")
    HOW="no mpirun: rank 0 of 1, rendezvous file:"
  fi
  say "collc run --backend nccl ($HOW)"
  timeout -k 5 "$RUN_T" "${LAUNCH[@]}" "$COLLC_BIN" run examples/gpt2_ddp.coll --backend nccl \
    --shrink 16 --steps 5 "${PLACE[@]}" >"$RUNLOG" 2>&1
  RC=$?
  if [ "$RC" = 0 ] && grep -q '^verified: ' "$RUNLOG"; then
    sum "run:       ok ($HOW): $(grep -m1 '^verified: ' "$RUNLOG" | cut -c1-120)"
    grep -E '^step [0-9]' "$RUNLOG" | sed 's/^/  | /' >>"$SUMMARY"
  elif [ -n "$NOGPU" ] && grep -q 'no CUDA GPU' "$RUNLOG"; then
    sum "run:       refused, as it must without a GPU ($HOW; run.log)"
  elif [ "$RC" = 124 ] || [ "$RC" = 137 ]; then
    TIMEOUT=$((TIMEOUT + 1))
    sum "run:       TIMEOUT after ${RUN_T} s ($HOW; run.log)"
  else
    FAIL=$((FAIL + 1))
    sum "run:       FAILED rc $RC ($HOW): $(grep -m1 -i 'error\|collc run:' "$RUNLOG" | cut -c1-160)"
  fi
fi

# --- 2d. the C API's nccl backend, one process a test -------------------------------------
CAPI_BIN=$BIN/collc_gpu_capi_tests
CAPILOG=$OUT/tests.log
MISSING=$([ -x "$CAPI_BIN" ] && ldd "$CAPI_BIN" 2>&1 | grep -E 'not found' | awk '{print $1}' | sort -u | tr '\n' ' ')
if [ ! -x "$CAPI_BIN" ]; then
  sum "capi:      not carried ($CAPI_BIN is missing)"
elif [ -n "$MISSING" ]; then
  FAIL=$((FAIL + 1))
  sum "capi:      collc_gpu_capi_tests does not load: missing $MISSING"
else
  CP=0 CF=0 CS=0 CSKIPWHY=""
  for T in $(timeout 30 "$CAPI_BIN" --gtest_list_tests 2>/dev/null |
    awk '/^[^ ]/ {s=$1} /^  / {print s $1}'); do
    if [ "$(left)" -lt "$TEST_T" ]; then
      sum "capi:      $T not run (budget spent)"
      continue
    fi
    timeout -k 5 "$TEST_T" "$CAPI_BIN" --gtest_filter="$T" --gtest_color=no >"$SCRATCH/out" 2>&1
    RC=$?
    { echo "===== $T: rc $RC"; cat "$SCRATCH/out"; } >>"$CAPILOG"
    if [ "$RC" = 0 ] && grep -q '^\[  SKIPPED \] 1 test' "$SCRATCH/out"; then
      CS=$((CS + 1))
      CSKIPWHY=$(awk '/: Skipped$/ {getline; print; exit}' "$SCRATCH/out")
    elif [ "$RC" = 0 ] && grep -q '^\[  PASSED  \] 1 test' "$SCRATCH/out"; then
      CP=$((CP + 1))
    else
      CF=$((CF + 1))
      FAIL=$((FAIL + 1))
      sum "  FAILED   $T (rc $RC; tests.log)"
    fi
  done
  sum "capi:      $CP passed, $CF failed, $CS skipped${CSKIPWHY:+ ($CSKIPWHY)} (collc.h on nccl, one rank)"
fi

# --- 3. the bench ------------------------------------------------------------------------
if [ -n "$NOGPU" ]; then
  "$BENCH_BIN" >"$BENCH" 2>&1
  sum "bench:     skipped: no GPU"
elif [ "$(left)" -lt "$BENCH_T" ]; then
  sum "bench:     not run (budget spent)"
else
  say "collc_gpu_bench"
  timeout -k 5 "$BENCH_T" "$BENCH_BIN" --examples "$PWD/examples" --steps 30 \
    --timeout-ms "$COLLC_TIMEOUT_MS" >"$BENCH" 2>&1
  RC=$?
  case $RC in
  0) sum "bench:     ok (bench.txt; host us per step, eager vs graph; pack vs cudaMemcpy GB/s)" ;;
  124 | 137) sum "bench:     TIMEOUT after ${BENCH_T} s (bench.txt has what it printed)" ;;
  *) sum "bench:     FAILED rc $RC: $(tail -1 "$BENCH" | cut -c1-160)" ;;
  esac
  grep -v -E '^#|^$' "$BENCH" | sed 's/^/  | /' >>"$SUMMARY"
fi

# --- 4. compute-sanitizer on the pack kernels ------------------------------------------------
SANBIN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
PACKTEST=$(printf '%s\n' $ORDERED | grep '^GpuPack\.' | head -1)
if [ -z "$SANBIN" ]; then
  echo "compute-sanitizer: not on this machine" >"$SAN"
  sum "sanitizer: not on this machine"
elif [ -n "$NOGPU" ]; then
  echo "compute-sanitizer at $SANBIN; no GPU" >"$SAN"
  sum "sanitizer: skipped: no GPU"
elif [ "$(left)" -lt "$SAN_T" ]; then
  sum "sanitizer: not run (budget spent)"
else
  say "compute-sanitizer memcheck on $PACKTEST"
  timeout -k 5 "$SAN_T" "$SANBIN" --tool memcheck --error-exitcode 3 "$TESTS_BIN" \
    --gtest_filter="$PACKTEST" --gtest_color=no >"$SAN" 2>&1
  RC=$?
  ERRS=$(grep -m1 'ERROR SUMMARY' "$SAN" | sed 's/.*ERROR SUMMARY: //')
  case $RC in
  0) sum "sanitizer: memcheck on $PACKTEST: ${ERRS:-0 errors}" ;;
  124 | 137) sum "sanitizer: TIMEOUT after ${SAN_T} s on $PACKTEST" ;;
  *) sum "sanitizer: memcheck on $PACKTEST: rc $RC, ${ERRS:-see sanitizer.log}" ;;
  esac
fi

# --- 5. the verdict ------------------------------------------------------------------------
sum "files:     $(cd "$OUT" && ls | tr '\n' ' ')under $OUT"
if [ "$FAIL" -gt 0 ] || [ "$TIMEOUT" -gt 0 ]; then
  sum "result:    FAIL"
  finish 1
elif [ -n "$NOGPU" ]; then
  sum "result:    NO GPU: the checks that need none passed ($PASS); every GPU test skipped"
  finish 0
else
  [ "$NOTRUN" -gt 0 ] && sum "result:    PASS, but $NOTRUN not run" || sum "result:    PASS"
  finish 0
fi
