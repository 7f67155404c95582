#!/usr/bin/env bash
# The NCCL backend's device check: the one script a session runs on a GPU
# machine (docs/nccl.md, "The device check"). Build here first, then run it
# there with the build carried:
#   tests/gpu/check.sh --build-only                      (here: builds build-gpu/bin)
#   run: command "tests/gpu/device-run.sh", carry ["build-gpu/bin"], timeout_s 420
#
# What it does, each step bounded so that one hang cannot spend the window:
#  1. preflight: the carried binaries exist and load (ldd), with the
#     libraries carried beside them (bin/lib: Open MPI, Gloo, hiredis and
#     the rest a bare GPU image may lack), and whether they would load on a
#     bare image (glibc, libstdc++ and the machine's NCCL only); the NCCL
#     they load and its version; the GPU (nvidia-smi);
#  2. every test of collc_gpu_tests in its own process under `timeout`, in
#     the order of the suites: NcclBackend (no GPU needed), GpuPack (plain
#     CUDA), GpuComm (communicator start-up, one-rank calls), GpuCapture,
#     GpuSendRecv; NCCL_DEBUG=INFO to a log; COLLC_TIMEOUT_MS keeps every
#     wait inside collc short;
#  2b. the driver conformance suite on NCCL (collc_gpu_conformance: every op
#     and element type on one-rank communicators) in one process under
#     `timeout`, after the tests so that a failure there hides nothing;
#  2c. `collc run --backend nccl` of gpt2_ddp compiled for one rank, as
#     rank 0 of 1 meeting through a directory (a bare image has no mpirun):
#     ids through the CPU world, graph replay, results checked;
#  2d. the C API's nccl backend (collc_gpu_capi_tests: libcollc.so, copied
#     beside it, on one rank), each test in its own process under `timeout`;
#  3. collc_gpu_bench under `timeout`, with NCCL_DEBUG=WARN (an INFO line
#     per eager call would be what it measures);
#  4. compute-sanitizer (memcheck) on the pack test, where the machine has it;
#  5. a short summary, printed last (and kept in summary.txt).
# Files under $OUT (./gpu-out when unset), eight at most:
#   summary.txt preflight.txt tests.log nccl-info.log conformance.log run.log
#   bench.txt sanitizer.log
# Without a GPU every step that needs one is reported NOT RUN with the reason
# (the tests report themselves skipped, run: and capi: refused), and the
# summary says so (this works on any machine with the build; under a minute).
# NCCL's INFO log of every step that runs NCCL (the tests, conformance,
# run:, capi:) is gathered into nccl-info.log, each headed by its step.
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
# NCCL's INFO log, per process, for the steps that gather it (gather_nccl);
# the bench runs with WARN, so that no log line per call is what it times.
NCCL_INFO=(NCCL_DEBUG=INFO "NCCL_DEBUG_SUBSYS=${NCCL_DEBUG_SUBSYS:-INIT,ENV,GRAPH,COLL,P2P}"
  "NCCL_DEBUG_FILE=$SCRATCH/nccl.%p.log")
gather_nccl() { # $1: what ran, heading its logs in nccl-info.log
  for F in "$SCRATCH"/nccl.*.log; do
    [ -e "$F" ] || continue
    echo "===== $1 ($(basename "$F"))" >>"$NLOG"
    # Bounded per process: the start-up and the end are what tell.
    if [ "$(wc -l <"$F")" -gt 400 ]; then
      head -300 "$F" >>"$NLOG"
      echo "... $(($(wc -l <"$F") - 400)) lines left out ..." >>"$NLOG"
      tail -100 "$F" >>"$NLOG"
    else
      cat "$F" >>"$NLOG"
    fi
    rm -f "$F"
  done
}
sum "== collc device-run summary (docs/nccl.md, \"The device check\", explains each line)"

# --- 1. preflight ------------------------------------------------------------------------
if [ ! -x "$TESTS_BIN" ] || [ ! -x "$BENCH_BIN" ]; then
  sum "build:     NOT CARRIED: $TESTS_BIN or $BENCH_BIN is missing. Build with"
  sum "           'tests/gpu/check.sh --build-only' where LLVM 14 is, and run with carry [\"$BIN\"]"
  finish 3
fi
. tests/gpu/find-nccl.sh
# The libraries built here that a bare GPU image lacks travel in bin/lib
# (tests/gpu/check.sh --build-only puts them there).
BIN_ABS=$(cd "$BIN" && pwd)
CARRIED=$BIN_ABS/lib
[ -d "$CARRIED" ] && export LD_LIBRARY_PATH="$CARRIED${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{
  echo "# $(date -u +%FT%TZ) on $(hostname)"
  echo "# ldd $TESTS_BIN (NCCL_DIR=${NCCL_DIR:-none found}; carried: $CARRIED)"
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
# Would the carried binaries load on a bare image? Every library ldd
# resolves must be carried (under bin/lib) or be one a bare GPU image has:
# glibc's, the C++ runtime's, the machine's NCCL (the CUDA runtime is
# linked in).
. tests/gpu/bare-image.sh
BINARIES=$(ls "$BIN"/collc "$BIN"/collc_gpu_* "$BIN"/libcollc.so* 2>/dev/null | tr '\n' ' ')
RESOLVED=$(for F in $BINARIES; do ldd "$F" 2>&1; done |
  awk '/=> not found/ {print $1, "missing"; next} /=> \// {print $1, $3}' | sort -u)
{
  echo "# what the carried binaries resolve (ldd, LD_LIBRARY_PATH with $CARRIED first)"
  echo "$RESOLVED"
} >>"$PRE"
CARRIED_NAMES=$(echo "$RESOLVED" | awk -v D="$BIN_ABS/" 'index($2, D) == 1 {print $1}' | sort -u | tr '\n' ' ')
BEYOND=$(echo "$RESOLVED" | awk -v D="$BIN_ABS/" 'NF && index($2, D) != 1 {print $1}' |
  grep -v -E "$BARE_IMAGE_LIBS" | sort -u | tr '\n' ' ')
if [ -z "${BEYOND// /}" ]; then
  sum "libs:      they need ${CARRIED_NAMES:-nothing }from $BIN and else only glibc, libstdc++ and NCCL: they load on a bare image"
else
  sum "libs:      they need ${CARRIED_NAMES:+${CARRIED_NAMES}from $BIN, and }${BEYOND}which a bare image lacks and $BIN does not carry (rebuild with tests/gpu/check.sh --build-only): they do not load on a bare image"
fi
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
for T in $ORDERED; do
  TOTAL=$((TOTAL + 1))
  if [ "$(left)" -lt "$TEST_T" ]; then
    NOTRUN=$((NOTRUN + 1))
    PROBLEMS+="  NOT RUN  $T (budget spent)"$'\n'
    continue
  fi
  T0=$SECONDS
  env "${NCCL_INFO[@]}" timeout -k 5 "$TEST_T" "$TESTS_BIN" --gtest_filter="$T" --gtest_color=no \
    >"$SCRATCH/out" 2>&1
  RC=$?
  DT=$((SECONDS - T0))
  {
    echo "===== $T: rc $RC, ${DT} s"
    cat "$SCRATCH/out"
  } >>"$LOG"
  gather_nccl "$T"
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
if [ -n "$NOGPU" ]; then
  sum "tests:     $PASS passed, $FAIL failed, $TIMEOUT timed out of the $((PASS + FAIL + TIMEOUT)) that need no GPU; NOT RUN: the ${SKIPWHY[$NOGPU]} that need one (one process each, ${TEST_T} s limit, COLLC_TIMEOUT_MS=$COLLC_TIMEOUT_MS)"
else
  sum "tests:     $PASS passed, $FAIL failed, $TIMEOUT timed out, $SKIP skipped, $NOTRUN not run, of $TOTAL (one process each, ${TEST_T} s limit, COLLC_TIMEOUT_MS=$COLLC_TIMEOUT_MS)"
fi
[ -n "$PROBLEMS" ] && printf '%s' "$PROBLEMS" >>"$SUMMARY"
for W in "${!SKIPWHY[@]}"; do
  [ "$W" = "$NOGPU" ] && continue
  sum "  SKIPPED  ${SKIPWHY[$W]} x: $W"
done

# --- 2b. the conformance suite on NCCL, one process ---------------------------------------
if [ ! -x "$CONF_BIN" ]; then
  sum "conform:   NOT RUN: not carried ($CONF_BIN is missing)"
elif [ "$(left)" -lt "$CONF_T" ]; then
  sum "conform:   NOT RUN: budget spent"
else
  say "collc_gpu_conformance"
  COLLC_CONFORMANCE_BIG_BYTES=${COLLC_CONFORMANCE_BIG_BYTES:-1048576} \
    env "${NCCL_INFO[@]}" timeout -k 5 "$CONF_T" "$CONF_BIN" --gtest_color=no >"$CONF" 2>&1
  RC=$?
  gather_nccl "collc_gpu_conformance"
  # One line per case as it ends ("(12 ms)"); gtest's closing list repeats
  # the failures without their time.
  CPASS=$(grep -c -E '^\[       OK \] .* \([0-9]+ ms\)$' "$CONF")
  CFAIL=$(grep -c -E '^\[  FAILED  \] .* \([0-9]+ ms\)$' "$CONF")
  CSKIP=$(grep -c -E '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$CONF")
  # What a case costs (its communicators are made once per world for the
  # whole suite: NcclConformanceTest.cpp).
  CTIME=$(grep -E '^\[       OK \] .* \([0-9]+ ms\)$' "$CONF" | sed -E 's/.*\(([0-9]+) ms\)$/\1/' |
    awk '{n++; s+=$1; if ($1 > m) m = $1} END {if (n) printf "%d ms per case on average, %d at most", s / n, m}')
  case $RC in
  124 | 137)
    TIMEOUT=$((TIMEOUT + 1))
    sum "conform:   TIMEOUT after ${CONF_T} s: $CPASS passed, $CFAIL failed before it (conformance.log)"
    ;;
  *)
    if [ -n "$NOGPU" ] && [ "$CPASS" = 0 ] && [ "$CFAIL" = 0 ] && [ "$RC" = 0 ]; then
      sum "conform:   NOT RUN: no GPU ($CSKIP cases skipped; conformance.log)"
    else
      [ "$CFAIL" -gt 0 ] || [ "$RC" != 0 ] && FAIL=$((FAIL + 1))
      sum "conform:   $CPASS passed, $CFAIL failed, $CSKIP skipped (rc $RC; ${CTIME:-no case timed}; conformance.log)"
      grep -E '^\[  FAILED  \] .* \([0-9]+ ms\)$' "$CONF" | head -5 | sed 's/^/  /' >>"$SUMMARY"
    fi
    ;;
  esac
fi

# --- 2c. collc run --backend nccl, one process ------------------------------------------------
COLLC_BIN=$BIN/collc
RUN_T=${COLLC_RUN_TIMEOUT_S:-60}
RUNLOG=$OUT/run.log
MISSING=$([ -x "$COLLC_BIN" ] && ldd "$COLLC_BIN" 2>&1 | grep 'not found' | awk '{print $1}' | sort -u | tr '\n' ' ')
if [ ! -x "$COLLC_BIN" ]; then
  sum "run:       NOT RUN: not carried ($COLLC_BIN is missing)"
elif [ -n "$MISSING" ]; then
  FAIL=$((FAIL + 1))
  sum "run:       collc does not load: missing $MISSING"
elif [ "$(left)" -lt "$RUN_T" ]; then
  sum "run:       NOT RUN: budget spent"
else
  # Rank 0 of 1, meeting through a directory: a bare image has no mpirun.
  mkdir -p "$SCRATCH/rendezvous"
  HOW="rank 0 of 1, rendezvous file:"
  say "collc run --backend nccl ($HOW)"
  env "${NCCL_INFO[@]}" timeout -k 5 "$RUN_T" "$COLLC_BIN" run examples/gpt2_ddp.coll \
    --backend nccl --shrink 16 --steps 5 --rank 0 --world 1 \
    --rendezvous "file:$SCRATCH/rendezvous" >"$RUNLOG" 2>&1
  RC=$?
  gather_nccl "collc run --backend nccl"
  # Its first error, not a note.
  ERROR=$(grep -v '^collc run: note:' "$RUNLOG" | grep -m1 -i -E '^collc run:|error' | cut -c1-160)
  if [ "$RC" = 0 ] && grep -q '^verified: ' "$RUNLOG"; then
    sum "run:       ok ($HOW): $(grep -m1 '^verified: ' "$RUNLOG" | cut -c1-120)"
    grep -E '^step [0-9]' "$RUNLOG" | sed 's/^/  | /' >>"$SUMMARY"
  elif [ -n "$NOGPU" ] && grep -q 'no CUDA GPU' "$RUNLOG"; then
    sum "run:       NOT RUN: no GPU (collc run refused, as it must: $ERROR)"
  elif [ "$RC" = 124 ] || [ "$RC" = 137 ]; then
    TIMEOUT=$((TIMEOUT + 1))
    sum "run:       TIMEOUT after ${RUN_T} s ($HOW; run.log)"
  else
    FAIL=$((FAIL + 1))
    sum "run:       FAILED rc $RC ($HOW): ${ERROR:-see run.log}"
  fi
fi

# --- 2d. the C API's nccl backend, one process a test -------------------------------------
CAPI_BIN=$BIN/collc_gpu_capi_tests
CAPILOG=$OUT/tests.log
MISSING=$([ -x "$CAPI_BIN" ] && ldd "$CAPI_BIN" 2>&1 | grep -E 'not found' | awk '{print $1}' | sort -u | tr '\n' ' ')
if [ ! -x "$CAPI_BIN" ]; then
  sum "capi:      NOT RUN: not carried ($CAPI_BIN is missing)"
elif [ -n "$MISSING" ]; then
  FAIL=$((FAIL + 1))
  sum "capi:      collc_gpu_capi_tests does not load: missing $MISSING"
else
  CP=0 CF=0 CS=0 CN=0 CSKIPWHY=""
  for T in $(timeout 30 "$CAPI_BIN" --gtest_list_tests 2>/dev/null |
    awk '/^[^ ]/ {s=$1} /^  / {print s $1}'); do
    if [ "$(left)" -lt "$TEST_T" ]; then
      CN=$((CN + 1))
      continue
    fi
    env "${NCCL_INFO[@]}" timeout -k 5 "$TEST_T" "$CAPI_BIN" --gtest_filter="$T" --gtest_color=no \
      >"$SCRATCH/out" 2>&1
    RC=$?
    { echo "===== $T: rc $RC"; cat "$SCRATCH/out"; } >>"$CAPILOG"
    gather_nccl "$T"
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
  if [ -n "$NOGPU" ] && [ "$CP" = 0 ] && [ "$CF" = 0 ]; then
    sum "capi:      NOT RUN: no GPU ($CS tests skipped: ${CSKIPWHY:-no reason given})"
  else
    NOTE=""
    [ "$CN" -gt 0 ] && NOTE=", $CN not run (budget spent)"
    sum "capi:      $CP passed, $CF failed, $CS skipped${CSKIPWHY:+ ($CSKIPWHY)}$NOTE (collc.h on nccl, one rank)"
  fi
fi

# --- 3. the bench ------------------------------------------------------------------------
if [ -n "$NOGPU" ]; then
  "$BENCH_BIN" >"$BENCH" 2>&1
  sum "bench:     NOT RUN: no GPU"
elif [ "$(left)" -lt "$BENCH_T" ]; then
  sum "bench:     NOT RUN: budget spent"
else
  say "collc_gpu_bench"
  NCCL_DEBUG=WARN timeout -k 5 "$BENCH_T" "$BENCH_BIN" --examples "$PWD/examples" --steps 30 \
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
  sum "sanitizer: NOT RUN: compute-sanitizer is not on this machine"
elif [ -n "$NOGPU" ]; then
  echo "compute-sanitizer at $SANBIN; no GPU" >"$SAN"
  sum "sanitizer: NOT RUN: no GPU"
elif [ "$(left)" -lt "$SAN_T" ]; then
  sum "sanitizer: NOT RUN: budget spent"
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
  sum "result:    NO GPU: the checks that need none passed ($PASS); every step that needs one NOT RUN"
  finish 0
else
  [ "$NOTRUN" -gt 0 ] && sum "result:    PASS, but $NOTRUN not run" || sum "result:    PASS"
  finish 0
fi
