#!/usr/bin/env python3
"""Run a command and fail if its peak resident memory passes a limit.

  peak_rss.py LIMIT_MIB [--expect-failure] -- CMD ARGS...

Exits with the command's status, or 99 (saying the figures) when its peak
RSS exceeded LIMIT_MIB. With --expect-failure it exits 0 when the command
failed (as `not` would) and 1 when it succeeded, so that 99 still fails a
test that expects a refusal. Used instead of `ulimit -v`, which sanitizer builds
cannot run under (they reserve terabytes of address space for shadow memory).
"""
import resource
import subprocess
import sys

def main():
    args = sys.argv[1:]
    expect_failure = len(args) > 1 and args[1] == "--expect-failure"
    if expect_failure:
        del args[1]
    if len(args) < 3 or args[1] != "--":
        sys.exit("usage: peak_rss.py LIMIT_MIB [--expect-failure] -- CMD ARGS...")
    limit_mib = int(args[0])
    command = args[2:]
    status = subprocess.call(command)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak_kib > limit_mib * 1024:
        sys.stderr.write("peak_rss: %s used %d MiB at its peak, over the limit of %d MiB\n"
                         % (command[0], peak_kib // 1024, limit_mib))
        sys.exit(99)
    if expect_failure:
        sys.exit(0 if status != 0 else 1)
    sys.exit(status if status >= 0 else 128 - status)

main()
