#!/usr/bin/env python3
"""Faults in multi-process runs of `collc run`, and how every process ends.

  fault_matrix.py --collc BIN --program FILE [--mpirun CMD]
                  [--backends mpi,gloo,gloo-redis]
                  [--ranks 2,3,4] [--signals kill,stop]
                  [--points start,join,mid-step,between-steps]
                  [--repeat N | --quick] [--timeout-ms T] [--no-resume]

A scenario is a backend (mpi under mpirun; gloo on a file: rendezvous, or
gloo-redis on a redis:// one, a redis-server of its own per run), a
number of processes, a signal (SIGKILL, or SIGSTOP for twice the timeout and
then SIGCONT) and the point where one rank receives it:

  start          before the processes meet (on mpi before MPI_Init)
  join           while the processes join their groups: on gloo the
                 faulting rank is started first and stopped once it claimed
                 its rank in the run's first group (a claim file, or a Redis
                 key), and the fault strikes once every other has claimed
                 too (all wait for it there); on mpi before
                 the executor's groups are made, which the others are making
  mid-step       in the second of three steps, at the rank's middle compute
  between-steps  after the first step, before the second
  finalize       (not in the default list) after the run reported, before
                 MPI_Finalize

The rank stops or kills itself at the point (`collc run --inject-fault`,
tools/collc/InjectedFault.h), except gloo's join, which this script
signals from outside; the faulting rank turns with the run. Every run
checks what docs/cli.md promises of a run that loses a rank:

  - every process (the ranks, and mpirun) ends within 3x --timeout-ms of
    the fault, or of the resume for a stop;
  - exit statuses in the documented set: 0-3 for a rank (and for mpirun,
    which exits with the first failing rank's status), the injected signal
    for the faulting rank, 128+9 from mpirun after a SIGKILL;
  - no death by another signal (mpirun's "exited on signal N" included);
  - no "PLEASE submit a bug report" (LLVM's crash banner), no
    "terminate called";
  - no process left, and nothing of the run in /dev/shm (a name with
    "collc" in it, or Open MPI's segment of the job);
  - a rank killed in a gloo join is named by every other.

--quick runs each (backend, signal, point) once, the number of processes
turning through --ranks (what ctest runs); --repeat N runs every scenario N
times. --no-resume never continues a stopped rank: under mpirun the job must
then end within 3x the timeout of the fault all the same (mpirun ends the
stopped process when another ends without MPI_Finalize). Prints one line
per run and a table of the figures per scenario; exits 1 when any run broke
a promise.
"""

import argparse
import glob
import socket
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from spawn_ranks import Redis

BACKENDS = ["mpi", "gloo", "gloo-redis"]
POINTS = ["start", "join", "mid-step", "between-steps"]
MORE_POINTS = ["finalize"]
DOCUMENTED = {0, 1, 2, 3}
POLL = 0.01


def proc_stat(pid):
    """(state, session) of process pid, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return fields[0], int(fields[3])
    except (OSError, IndexError, ValueError):
        return None


def alive(pid):
    st = proc_stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def in_sessions(sessions):
    """The pids of the live processes in any of the sessions."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = proc_stat(int(entry))
            if st and st[1] in sessions and st[0] not in ("Z", "X"):
                out.append(int(entry))
    return out


def environ(pid):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            return dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
    except OSError:
        return {}


def redis_claims(port):
    """The claims in the Redis server on port: the values of the keys
    GroupStore claims ranks under ("PREFIX/collc.claim.R")."""
    def command(sock, *words):
        sock.sendall(b"*%d\r\n" % len(words) + b"".join(
            b"$%d\r\n%s\r\n" % (len(w), w) for w in words))
    def reply(f):
        line = f.readline().rstrip(b"\r\n")
        kind, rest = line[:1], line[1:]
        if kind == b"*":
            return [reply(f) for _ in range(max(int(rest), 0))]
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else f.read(n + 2)[:-2]
        if kind == b"-":
            raise OSError(rest.decode(errors="replace"))
        return rest
    with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
        f = sock.makefile("rb")
        command(sock, b"KEYS", b"*/collc.claim.*")
        keys = reply(f)
        if not keys:
            return []
        command(sock, b"MGET", *keys)
        return [v for v in reply(f) if v is not None]


def shm_names():
    try:
        return set(os.listdir("/dev/shm"))
    except OSError:
        return set()


def claim_files(rdv):
    """The claims in the rendezvous directory rdv (ProbedStore's
    "collc-claim-HASH" files)."""
    out = []
    for path in glob.glob(os.path.join(rdv, "collc-claim-*")):
        if "." in os.path.basename(path):
            continue  # written aside, not yet linked into place
        try:
            with open(path, "rb") as f:
                out.append(f.read(200))
        except OSError:
            pass
    return out


class Run:
    """One run of one scenario: starts the processes, injects the fault,
    watches every process end, and says what broke a promise."""

    def __init__(self, args, backend, ranks, sig, point, fault_rank):
        self.args, self.backend, self.ranks = args, backend, ranks
        self.kind = backend.split("-")[0]  # the --backend: mpi or gloo
        self.redis = None    # gloo-redis: the run's server
        self.sig, self.point, self.fault_rank = sig, point, fault_rank
        self.timeout_s = args.timeout_ms / 1000.0
        self.work = tempfile.mkdtemp(prefix="collc-faults-")
        self.procs = []      # (label, Popen, output path)
        self.sessions = set()
        self.ends = {}       # pid -> when it was last seen gone
        self.seen = set()    # every pid of the run seen alive
        self.jobid = None    # Open MPI's, for its shared-memory segments
        self.problems = []
        self.fault_at = self.resumed_at = None
        self.target = None   # the faulting rank's pid
        self.output = ""     # every process's, for a failure's report

    # --- starting -----------------------------------------------------------
    def command(self, inject):
        cmd = [self.args.collc, "run", self.args.program, "--backend", self.kind,
               "--steps", "3", "--shrink", "64", "--timeout-ms", str(self.args.timeout_ms)]
        if inject:
            cmd += ["--inject-fault", "%d:%s:%s" % (self.fault_rank, self.point, self.sig)]
        return cmd

    def spawn(self, label, cmd, env):
        out = os.path.join(self.work, label.replace(" ", "_") + ".out")
        with open(out, "wb") as f:
            p = subprocess.Popen(cmd, env=env, stdout=f, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
        self.procs.append((label, p, out))
        self.sessions.add(p.pid)
        self.seen.add(p.pid)
        return p

    def start_gloo(self):
        if self.backend == "gloo-redis":
            self.redis = Redis(time.monotonic() + 30)
            address = "redis://127.0.0.1:%d" % self.redis.port
            claims = lambda: redis_claims(self.redis.port)
        else:
            rdv = os.path.join(self.work, "rdv")
            os.mkdir(rdv)
            address = "file:" + rdv
            claims = lambda: claim_files(rdv)
        external = self.point == "join"
        pids = {}

        def start(r):
            env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(self.ranks), LOCAL_RANK=str(r),
                       COLLC_RENDEZVOUS=address)
            pids[r] = self.spawn("rank %d" % r, self.command(not external), env).pid

        if not external:
            for r in range(self.ranks):
                start(r)
            self.target = pids[self.fault_rank]
            return
        # The faulting rank first, stopped once it claimed its rank (so
        # that the join cannot end without it); then the others; the fault
        # once every rank has claimed: all are then in the join, waiting
        # for the faulting rank (its claim, its pairs' addresses, its
        # connect). A kill then ends the stopped rank; a stop keeps it.
        start(self.fault_rank)
        self.target = pids[self.fault_rank]
        if not self.wait_claims(claims, {self.target}):
            self.problems.append("rank %d did not claim its rank" % self.fault_rank)
            return
        os.kill(self.target, signal.SIGSTOP)
        for r in range(self.ranks):
            if r != self.fault_rank:
                start(r)
        if not self.wait_claims(claims, set(pids.values())):
            self.problems.append("the ranks did not all claim their ranks")
            return
        if self.sig == "kill":
            os.kill(self.target, signal.SIGKILL)
        self.fault_at = time.monotonic()

    def wait_claims(self, claims, pids):
        """Until a claim names each of pids (GroupStore's "HOST:PID ...")."""
        deadline = time.monotonic() + 6 * self.timeout_s
        while time.monotonic() < deadline:
            claimed = set()
            try:
                held = claims()
            except OSError:
                held = []
            for text in held:
                try:
                    claimed.add(int(text.split(b" ", 1)[0].rsplit(b":", 1)[1]))
                except (IndexError, ValueError):
                    pass
            if pids <= claimed:
                return True
            if not all(alive(p) for p in pids):
                return False
            time.sleep(POLL / 2)
        return False

    def start_mpi(self):
        mpirun = shlex.split(self.args.mpirun)
        self.spawn("mpirun", mpirun + ["-np", str(self.ranks)] + self.command(True), dict(os.environ))

    def look_for_fault(self, now):
        """The fault's moment: when the faulting rank is first seen stopped
        or gone."""
        if self.target is None or self.fault_at is not None:
            return
        st = proc_stat(self.target)
        if st is None or st[0] in ("Z", "X", "T", "t"):
            self.fault_at = self.ends.get(self.target, now)

    def find_mpi_target(self):
        """The faulting rank's pid, and the job's id, from the ranks'
        environment; or, where the rank killed itself before it was seen,
        the moment its word reached mpirun's output."""
        for pid in in_sessions(self.sessions):
            env = environ(pid)
            rank = env.get(b"OMPI_COMM_WORLD_RANK")
            if rank is not None and self.jobid is None:
                self.jobid = int(env.get(b"OMPI_MCA_ess_base_jobid", b"0")) or None
            if rank == str(self.fault_rank).encode():
                self.target = pid
                return
        if self.fault_at is None:
            with open(self.procs[0][2], "rb") as f:
                if b"rank %d: injected" % self.fault_rank in f.read():
                    self.fault_at = time.monotonic()

    # --- watching -----------------------------------------------------------
    def watch(self):
        shm_before = shm_names()
        try:
            self.start_and_watch()
        except BaseException:
            self.end_all()  # interrupted: nothing of the run may remain
            raise
        finally:
            if self.redis:
                self.redis.stop()
        self.check_shm(shm_before)

    def start_and_watch(self):
        self.start_mpi() if self.kind == "mpi" else self.start_gloo()
        hard_stop = time.monotonic() + 12 * self.timeout_s + 30
        while time.monotonic() < hard_stop:
            now = time.monotonic()
            if self.target is None and self.kind == "mpi":
                self.find_mpi_target()
            self.look_for_fault(now)
            if (self.sig == "stop" and not self.args.no_resume and self.fault_at is not None
                    and self.resumed_at is None and now >= self.fault_at + 2 * self.timeout_s):
                if alive(self.target):
                    os.kill(self.target, signal.SIGCONT)
                self.resumed_at = now
            live = set(in_sessions(self.sessions))
            self.seen |= live
            for pid in self.seen - live:
                self.ends.setdefault(pid, now)
            for _, p, _ in self.procs:
                p.poll()
            if not live and all(p.returncode is not None for _, p, _ in self.procs):
                self.look_for_fault(now)  # the run may end as the fault strikes
                break
            time.sleep(POLL)
        left = in_sessions(self.sessions)
        if left:
            self.problems.append("processes still running at the hard stop: %s" % left)
            self.end_all()
        for _, p, _ in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def end_all(self):
        """Continues and ends every process left: asked first (mpirun then
        ends its job and removes its shared memory), then killed."""
        def signal_all(sig):
            for pid in in_sessions(self.sessions):
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        signal_all(signal.SIGCONT)
        signal_all(signal.SIGTERM)
        deadline = time.monotonic() + 15
        while in_sessions(self.sessions) and time.monotonic() < deadline:
            time.sleep(0.1)
        signal_all(signal.SIGKILL)

    def check_shm(self, before):
        time.sleep(0.05)
        ours = "%x." % self.jobid if self.jobid else None
        for name in sorted(shm_names() - before):
            if "collc" in name or (ours and ("." + ours) in name + "."):
                self.problems.append("left in /dev/shm: " + name)
                try:
                    os.unlink(os.path.join("/dev/shm", name))
                except OSError:
                    pass

    def reference(self):
        return "resume" if self.resumed_at else "fault"

    def timeline(self):
        """When each process ended, in timeouts after the fault."""
        if self.fault_at is None:
            return "-"
        return " ".join("%.2f" % ((t - self.fault_at) / self.timeout_s)
                        for t in sorted(self.ends.values()))

    # --- judging ------------------------------------------------------------
    def judge(self):
        if self.fault_at is None:
            self.problems.append("the fault was never injected (the run ended before the point)")
        # A stop is judged from the resume, where the run lasted until then.
        ref = self.resumed_at or self.fault_at
        self.last_exit = None
        if ref is not None:
            late = max(self.ends.values(), default=ref) - ref
            self.last_exit = max(late, 0.0)
            if late > 3 * self.timeout_s:
                self.problems.append("a process ended %.1f s after the %s (bound %.1f s)" % (
                    late, self.reference(), 3 * self.timeout_s))
        injected = signal.SIGKILL if self.sig == "kill" else None
        self.codes = []
        for label, p, out in self.procs:
            rc = p.returncode
            self.codes.append(rc)
            text = open(out, "rb").read().decode(errors="replace")
            self.output += text
            faulting = (self.kind == "gloo" and p.pid == self.target)
            if rc < 0 and not (faulting and -rc == injected):
                self.problems.append("%s died by signal %d" % (label, -rc))
            elif rc >= 0 and rc not in DOCUMENTED and not (
                    label == "mpirun" and injected and rc == 128 + injected):
                self.problems.append("%s exited %d, outside the documented set" % (label, rc))
            for line in text.splitlines():
                if "exited on signal" in line:
                    num = line.split("exited on signal", 1)[1].split()[0]
                    if not (num.isdigit() and int(num) == injected):
                        self.problems.append("%s: %s" % (label, line.strip()))
            for banner in ("PLEASE submit a bug report", "terminate called"):
                if banner in text:
                    self.problems.append("%s printed %r" % (label, banner))
            # A rank killed in a gloo join is named by every other
            # (docs/runtime.md): it claimed its rank, and its pid is seen
            # ("rank F of N" is a rank's own name, not a blame).
            named = re.compile(r"\brank %d\b(?! of )" % self.fault_rank)
            if (self.kind == "gloo" and self.point == "join" and self.sig == "kill"
                    and not faulting and not named.search(text)):
                self.problems.append("%s did not name rank %d" % (label, self.fault_rank))
        shutil.rmtree(self.work, ignore_errors=True)
        return not self.problems


def scenarios(args):
    combos = [(b, s, p) for b in args.backends for s in args.signals for p in args.points]
    if args.quick:
        for i, (b, s, p) in enumerate(combos):
            n = args.ranks[i % len(args.ranks)]
            yield b, n, s, p, i % n
        return
    for b, s, p in combos:
        for n in args.ranks:
            for k in range(args.repeat):
                yield b, n, s, p, k % n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--collc", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--mpirun", default="mpirun --allow-run-as-root --oversubscribe",
                    help="the mpirun command line, as one shell-quoted string")
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--ranks", default="2,3,4")
    ap.add_argument("--signals", default="kill,stop")
    ap.add_argument("--points", default=",".join(POINTS))
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--timeout-ms", type=int, default=3000)
    ap.add_argument("--no-resume", action="store_true")
    args = ap.parse_args()
    # ctest's timeout: end the run under way as an interrupt would.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    args.backends = args.backends.split(",")
    args.ranks = [int(n) for n in args.ranks.split(",")]
    args.signals = args.signals.split(",")
    args.points = args.points.split(",")
    for p in args.points:
        if p not in POINTS + MORE_POINTS:
            ap.error("unknown point " + p)
    for b in args.backends:
        if b not in BACKENDS:
            ap.error("unknown backend %s (expected one of %s)" % (b, ", ".join(BACKENDS)))
    if args.no_resume and args.backends != ["mpi"]:
        ap.error("--no-resume is for mpi only: a stopped gloo rank stays until resumed")

    figures = {}  # scenario -> [runs, failures, [last exit / T], {codes}]
    failed = 0
    for backend, n, sig, point, fault_rank in scenarios(args):
        run = Run(args, backend, n, sig, point, fault_rank)
        run.watch()
        ok = run.judge()
        key = (backend, n, sig, point)
        f = figures.setdefault(key, [0, 0, [], 0, {}])
        f[0] += 1
        if run.fault_at is not None and run.ends:
            f[2].append((max(run.ends.values()) - run.fault_at) / run.timeout_s)
        f[3] += run.resumed_at is not None
        for c in run.codes:
            f[4][c] = f[4].get(c, 0) + 1
        tail = "last exit %.2f T after the %s" % (run.last_exit / run.timeout_s, run.reference()) \
            if run.last_exit is not None else "no fault"
        print("%-10s np%d %-4s %-13s rank %d: %s; %s; statuses %s; ends/T %s" % (
            backend, n, sig, point, fault_rank, "ok" if ok else "FAIL", tail, run.codes,
            run.timeline()), flush=True)
        if not ok:
            failed += 1
            f[1] += 1
            for problem in run.problems:
                print("    " + problem)
            print("    output:\n      " + run.output.strip().replace("\n", "\n      "))
            sys.stdout.flush()
    # From the fault to the last process's end, in timeouts; "held": runs
    # of a stop that lasted until the resume.
    print("\n%-10s %-4s %-4s %-13s %5s %5s %9s %9s %5s  statuses" % (
        "", "np", "sig", "point", "runs", "fail", "median/T", "max/T", "held"))
    for (backend, n, sig, point), (runs, fails, lates, held, codes) in sorted(figures.items()):
        print("%-10s %-4d %-4s %-13s %5d %5d %9.2f %9.2f %5d  %s" % (
            backend, n, sig, point, runs, fails,
            statistics.median(lates) if lates else float("nan"),
            max(lates) if lates else float("nan"), held,
            " ".join("%d:%d" % kv for kv in sorted(codes.items()))))
    print("\n%d of %d runs broke a promise" % (failed, sum(f[0] for f in figures.values())))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
