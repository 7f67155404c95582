#!/usr/bin/env python3
"""Start N ranks of a multi-process run, as a launcher would (torchrun-style).

  spawn_ranks.py -n N [--rendezvous file|redis|torch [--pause-redis]] [--timeout S]
                 [--expect-exit any|nonzero] -- CMD ARGS...

Each rank is CMD ARGS with RANK, WORLD_SIZE, LOCAL_RANK and COLLC_RENDEZVOUS
in its environment, in a process group of its own. For `file` the ranks meet
in a fresh temporary directory; for `redis` a redis-server is started on
127.0.0.1 on a free port (no persistence) and stopped afterwards; with
--pause-redis it is stopped (SIGSTOP) before the ranks start, a server that
accepts connections and never answers. For `torch` the ranks get
torchrun's environment instead of COLLC_RENDEZVOUS (LOCAL_WORLD_SIZE,
GROUP_RANK 0, MASTER_ADDR 127.0.0.1 and a free MASTER_PORT, where rank 0's
torch TCPStore listens), as torchrun would start them on one host. Every line
a rank prints comes out prefixed "[rank r]".

On a timeout or the first failing rank the others are killed (their whole
process groups). The exit status is the first failing rank's (0 when all
succeed); --expect-exit nonzero inverts that for tests that expect failure
(0 when every rank failed, no hang), and --expect-exit any only asks that
nobody hangs. A timeout exits 124. The server and the directory go on every
path, signals included.
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kill_group(proc, sig=signal.SIGKILL):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Redis:
    """A redis-server of our own on 127.0.0.1, on a port free just now."""

    def __init__(self, deadline):
        server = shutil.which("redis-server")
        if not server:
            raise RuntimeError("redis-server is not installed (Debian package redis-server)")
        self.workdir = tempfile.mkdtemp(prefix="collc-redis-")
        last = ""
        for _ in range(5):  # the port may be taken between probe and bind
            self.port = free_port()
            self.proc = subprocess.Popen(
                [server, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                 "--appendonly", "no", "--dir", self.workdir, "--protected-mode", "no"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
            if self._wait_ping(deadline):
                return
            last = self.proc.stdout.read().decode(errors="replace") if self.proc.poll() is not None else ""
            self.stop()
        raise RuntimeError("redis-server did not answer PING: " + last[-500:])

    def _wait_ping(self, deadline):
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def pause(self):
        """Stops the server (SIGSTOP): its port still accepts, nothing answers."""
        kill_group(self.proc, signal.SIGSTOP)

    def stop(self):
        if self.proc.poll() is None:
            kill_group(self.proc, signal.SIGCONT)  # a paused server ends too
            kill_group(self.proc, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                kill_group(self.proc)
                self.proc.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def pump(rank, stream, lock):
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace").rstrip("\n")
        with lock:
            sys.stdout.write("[rank %d] %s\n" % (rank, line))
            sys.stdout.flush()
    stream.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, required=True, help="number of ranks")
    ap.add_argument("--rendezvous", choices=["file", "redis", "torch"], default="file")
    ap.add_argument("--pause-redis", action="store_true",
                    help="stop the redis-server (SIGSTOP) once it answered, before the ranks start")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds for the whole run")
    ap.add_argument("--expect-exit", choices=["zero", "any", "nonzero"], default="zero")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd or args.n < 1:
        ap.error("give -n N >= 1 and a command after --")

    deadline = time.monotonic() + args.timeout
    procs, pumps, redis, tmpdir = [], [], None, None
    lock = threading.Lock()

    def on_signal(signum, _frame):
        raise KeyboardInterrupt("signal %d" % signum)

    signal.signal(signal.SIGTERM, on_signal)
    status = 0
    try:
        if args.rendezvous == "redis":
            redis = Redis(deadline)
            where = "redis://127.0.0.1:%d" % redis.port
            if args.pause_redis:
                redis.pause()
        elif args.rendezvous == "torch":
            where = "127.0.0.1:%d" % free_port()
        else:
            tmpdir = tempfile.mkdtemp(prefix="collc-rdv-")
            where = "file:" + tmpdir
        print("spawn_ranks: %d ranks meet at %s" % (args.n, where), flush=True)
        for r in range(args.n):
            env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(args.n), LOCAL_RANK=str(r))
            if args.rendezvous == "torch":
                env.pop("COLLC_RENDEZVOUS", None)
                env.update(LOCAL_WORLD_SIZE=str(args.n), GROUP_RANK="0",
                           MASTER_ADDR="127.0.0.1", MASTER_PORT=where.split(":")[1])
            else:
                env["COLLC_RENDEZVOUS"] = where
            p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
            procs.append(p)
            t = threading.Thread(target=pump, args=(r, p.stdout, lock), daemon=True)
            t.start()
            pumps.append(t)
        failed = None  # (rank, status) of the first rank to fail
        while any(p.poll() is None for p in procs):
            for r, p in enumerate(procs):
                if failed is None and p.poll() not in (None, 0):
                    failed = (r, p.returncode)
            if failed is not None and args.expect_exit == "zero":
                break  # one failed: the rest would only wait for it
            if time.monotonic() > deadline:
                alive = [r for r, p in enumerate(procs) if p.poll() is None]
                print("spawn_ranks: timeout after %gs; killing ranks %s" % (args.timeout, alive),
                      flush=True)
                status = 124
                break
            time.sleep(0.05)
        for p in procs:
            if p.poll() is None:
                kill_group(p)
        for p in procs:
            p.wait()
        for t in pumps:
            t.join(timeout=5)
        if status == 0:
            codes = [p.returncode for p in procs]
            if failed is None:
                failed = next(((r, c) for r, c in enumerate(codes) if c != 0), None)
            print("spawn_ranks: exit statuses %s" % codes, flush=True)
            if args.expect_exit == "zero":
                status = 0 if failed is None else (failed[1] if failed[1] > 0 else 128 - failed[1])
            elif args.expect_exit == "nonzero":
                status = 0 if all(c != 0 for c in codes) else 1
    except (KeyboardInterrupt, RuntimeError, OSError) as e:
        print("spawn_ranks: %s" % e, flush=True)
        status = 1
    finally:
        for p in procs:
            if p.poll() is None:
                kill_group(p)
                p.wait()
        if redis:
            redis.stop()
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
