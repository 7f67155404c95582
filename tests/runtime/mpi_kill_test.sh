#!/bin/sh
# A rank SIGKILLed mid-step under mpirun (issue 11, item 5). What Open MPI
# 4.1 does, and what this checks: mpirun notices the killed process, kills
# the survivors and exits non-zero, within BOUND seconds; no process of the
# job remains. (The survivors' collc deadline, COLLC_TIMEOUT_MS, is set far
# beyond the bound: mpirun ends them, not their timeout.)
# Usage: mpi_kill_test.sh MPIEXEC PROGRAM BOUND_SECONDS
set -u
MPIEXEC=$1 PROGRAM=$2 BOUND=$3
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
START=$(date +%s)
# Its own session, so that a hang is ended with the whole group.
COLLC_TIMEOUT_MS=600000 setsid "$MPIEXEC" --allow-run-as-root --oversubscribe -np 2 \
  "$PROGRAM" "$DIR" >"$DIR/out" 2>&1 &
JOB=$!
WAITED=0
while kill -0 $JOB 2>/dev/null && [ $WAITED -lt $((BOUND * 4)) ]; do
  sleep 0.25
  WAITED=$((WAITED + 1))
done
if kill -0 $JOB 2>/dev/null; then
  kill -KILL -- -$JOB 2>/dev/null
  wait $JOB
  echo "FAIL: mpirun still running after ${BOUND}s"; cat "$DIR/out"; exit 1
fi
wait $JOB
RC=$?
ELAPSED=$(($(date +%s) - START))
cat "$DIR/out"
echo "mpirun exited with $RC after ${ELAPSED}s"
[ $RC -ne 0 ] || { echo "FAIL: mpirun exited 0"; exit 1; }
grep -q "signal 9" "$DIR/out" || { echo "FAIL: mpirun did not report the SIGKILL"; exit 1; }
# mpirun may exit while a survivor it signalled is still dying: a grace of
# up to 15 s, then none may remain.
for F in "$DIR"/pid.*; do
  [ -e "$F" ] || { echo "FAIL: no pid file"; exit 1; }
  PID=$(cat "$F")
  GRACE=0
  while kill -0 "$PID" 2>/dev/null && [ $GRACE -lt 60 ]; do
    sleep 0.25
    GRACE=$((GRACE + 1))
  done
  if kill -0 "$PID" 2>/dev/null; then
    echo "FAIL: process $PID ($F) still runs: $(cat /proc/$PID/stat 2>/dev/null)"
    kill -KILL "$PID"; exit 1
  fi
  [ $GRACE -eq 0 ] || echo "process $PID ended $((GRACE * 250)) ms after mpirun"
done
[ "$(ls "$DIR"/pid.* | wc -l)" -eq 2 ] || { echo "FAIL: expected two pid files"; exit 1; }
echo "PASS: the job ended non-zero within ${BOUND}s and no process remains"
