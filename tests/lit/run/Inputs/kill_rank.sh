#!/bin/sh
# kill_rank.sh VICTIM DIR COLLC-ARGS...: one rank of a spawn_ranks.py run.
# Every rank runs `collc COLLC-ARGS` with its flight record dumped to DIR,
# except rank VICTIM: it runs with its record dumped to DIR.probe, asks for
# dumps with SIGUSR1 until one holds a completed step (it is in its
# replays), then is killed (SIGKILL: it leaves no dump, as a dead rank
# does). The victim's shell then waits for the survivors' dumps, so that the
# launcher sees it fail only after they did. Every wait is bounded.
victim=$1 dir=$2
shift 2
if [ "$RANK" != "$victim" ]; then
  exec collc "$@" --record "$dir"
fi
collc "$@" --record "$dir.probe" &
pid=$!
# SIGUSR1 before collc catches it would end the process: wait for its
# handler (bit 10 of SigCgt).
i=0
until caught=$(awk '/^SigCgt/ {print $2}' /proc/$pid/status 2>/dev/null) &&
      [ $(( 0x$caught & 0x200 )) -ne 0 ]; do
  sleep 0.1; i=$((i + 1)); [ $i -lt 600 ] || { kill -KILL $pid; exit 3; }
done
i=0
until grep -qs '"completed"' "$dir.probe/collc-record-rank$RANK.json"; do
  kill -USR1 $pid; sleep 0.2; i=$((i + 1)); [ $i -lt 300 ] || { kill -KILL $pid; exit 4; }
done
kill -KILL $pid
wait $pid
i=0
until [ "$(ls "$dir" 2>/dev/null | wc -l)" -ge $((WORLD_SIZE - 1)) ]; do
  sleep 0.2; i=$((i + 1)); [ $i -lt 600 ] || exit 5
done
exit 1
