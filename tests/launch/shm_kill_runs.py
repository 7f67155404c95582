#!/usr/bin/env python3
"""Kill a random rank of a run at a random moment, many times over.

  shm_kill_runs.py [--runs N] [-n RANKS] [--timeout-ms T] [--seed S]
                   [--latest-kill-ms L] -- CMD ARGS...

Each run starts RANKS processes of CMD ARGS (RANK, WORLD_SIZE, LOCAL_RANK,
LOCAL_WORLD_SIZE, COLLC_RENDEZVOUS=file:DIR of a fresh directory,
COLLC_TIMEOUT_MS=T; each in a process group of its own), sleeps a random
0..L ms, and SIGKILLs a random rank. CMD must run until a step fails, then
print "lost: rank P: WHY" and exit non-zero (collc_gloo_rank until-lost 0).
A run passes when every survivor exits non-zero within 2 x T of the kill
having printed a line that names the killed rank ("rank K"), no process of
the run is left once they have (each checked alive with kill(pid, 0)), and
/dev/shm holds nothing of collc's it did not hold before the run. Every process and
the directory go on every path. Each run's line says whether the kill came
before the victim's steps (while the processes meet and form their
groups) or in them, and the slowest survivor's time from the kill to the
line naming it and to its exit (which CMD delays by the timeout, so that
it is not the next lost peer of those still finding out); the last line
sums the runs up.
"""

import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time


def dev_shm():
    """collc's names in /dev/shm (other programs', Open MPI's among them, come
    and go with the host's other jobs). collc's segments are memory files
    with no name there: any is a fault."""
    try:
        return {n for n in os.listdir("/dev/shm") if "collc" in n}
    except OSError:
        return set()


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def read_lines(proc, into):
    """Appends (arrival time, line) for each line \p proc prints."""
    for raw in proc.stdout:
        into.append((time.monotonic(), raw.decode(errors="replace").rstrip("\n")))


def one_run(args, run, rng):
    """Returns (ok, why, slowest_ms)."""
    workdir = tempfile.mkdtemp(prefix="collc-kill-")
    before = dev_shm()
    procs, outputs, readers = [], [], []
    try:
        for rank in range(args.n):
            env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(args.n), LOCAL_RANK=str(rank),
                       LOCAL_WORLD_SIZE=str(args.n), COLLC_RENDEZVOUS="file:" + workdir,
                       COLLC_TIMEOUT_MS=str(args.timeout_ms))
            p = subprocess.Popen(args.cmd, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, start_new_session=True)
            procs.append(p)
            outputs.append([])
            t = threading.Thread(target=read_lines, args=(p, outputs[-1]), daemon=True)
            t.start()
            readers.append(t)
        victim = rng.randrange(args.n)
        time.sleep(rng.uniform(0, args.latest_kill_ms / 1000.0))
        killed_at = time.monotonic()
        kill_group(procs[victim])
        deadline = killed_at + 2 * args.timeout_ms / 1000.0
        exits = {}
        for rank, p in enumerate(procs):
            if rank == victim:
                p.wait()
                continue
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()) + 0.5)
            except subprocess.TimeoutExpired:
                said = "\n".join(f"  +{(t - killed_at) * 1000:.0f} ms: {line}"
                                 for t, line in list(outputs[rank]))
                return False, f"run {run}: rank {rank} still ran 2 x {args.timeout_ms} ms after " \
                              f"rank {victim} was killed; it said:\n{said}", 0
            exits[rank] = (p.returncode, (time.monotonic() - killed_at) * 1000)
        for t in readers:
            t.join(timeout=5)
        slowest = named_by = 0.0
        for rank, (code, ms) in exits.items():
            text = "\n".join(line for _, line in outputs[rank])
            if code == 0:
                return False, f"run {run}: rank {rank} exited 0 after rank {victim} was " \
                              f"killed:\n{text}", 0
            naming = [at for at, line in outputs[rank] if re.search(rf"\brank {victim}\b", line)]
            if not naming:
                return False, f"run {run}: rank {rank} did not name the killed rank {victim}:\n" \
                              f"{text}", 0
            slowest = max(slowest, ms)
            named_by = max(named_by, (naming[0] - killed_at) * 1000)
            if ms > 2 * args.timeout_ms + 500:
                return False, f"run {run}: rank {rank} took {ms:.0f} ms", 0
        when = "in its steps" if any(line == "ready" for _, line in outputs[victim]) \
            else "before its steps"
        for p in procs:
            try:
                os.kill(p.pid, 0)
                return False, f"run {run}: process {p.pid} is still there", 0
            except ProcessLookupError:
                pass
        left = dev_shm() - before
        if left:
            return False, f"run {run}: left in /dev/shm: {sorted(left)}", 0
        print(f"run {run}: rank {victim} killed {when}; {len(exits)} survivors named it within "
              f"{named_by:.0f} ms and exited within {slowest:.0f} ms", flush=True)
        return True, "", (named_by, slowest)
    finally:
        for p in procs:
            kill_group(p)
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("-n", type=int, default=4)
    ap.add_argument("--timeout-ms", type=int, default=5000)
    ap.add_argument("--latest-kill-ms", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.cmd and args.cmd[0] == "--":
        args.cmd = args.cmd[1:]
    if not args.cmd:
        ap.error("no command")
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    print(f"seed {seed}", flush=True)
    named_by = slowest = 0.0
    for run in range(args.runs):
        ok, why, ms = one_run(args, run, rng)
        if not ok:
            print("FAILED: " + why, flush=True)
            return 1
        named_by, slowest = max(named_by, ms[0]), max(slowest, ms[1])
    print(f"passed: {args.runs} runs of {args.n} processes; every survivor named the killed rank "
          f"within {named_by:.0f} ms and exited non-zero within {slowest:.0f} ms of the kill "
          f"(2 x timeout = {2 * args.timeout_ms} ms); no process and nothing of collc's in "
          f"/dev/shm left", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
