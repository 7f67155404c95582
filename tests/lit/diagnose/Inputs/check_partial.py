#!/usr/bin/env python3
"""With up to half of a seeded fault's dumps deleted, `collc diagnose` still
names the true culprit or says it cannot: it never names a wrong one.

  check_partial.py COLLC DUMPDIR CULPRIT

Runs the diagnosis on every subset of the dumps in DUMPDIR that leaves out
at most half of the world's ranks (at least one dump kept), and fails on
the first that names a culprit other than CULPRIT. Prints how many sets
named it and how many were undecided.
"""

import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile

WORLD = 4


def main():
    collc, dumps, culprit = sys.argv[1], sys.argv[2], int(sys.argv[3])
    files = sorted(os.listdir(dumps))
    named = undecided = 0
    work = tempfile.mkdtemp(prefix="collc-partial-")
    try:
        for drop in range(0, WORLD // 2 + 1):
            for gone in itertools.combinations(files, drop):
                kept = [f for f in files if f not in gone]
                if not kept:
                    continue
                d = os.path.join(work, "set")
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
                for f in kept:
                    shutil.copy(os.path.join(dumps, f), d)
                out = subprocess.run([collc, "diagnose", d, "--format", "json"],
                                     capture_output=True, text=True, check=True).stdout
                got = json.loads(out)["culprits"]
                if got == [culprit]:
                    named += 1
                elif got == []:
                    undecided += 1
                else:
                    print("without %s: named %s, not rank %d" % (list(gone), got, culprit))
                    return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("named rank %d in %d sets, undecided in %d, never another" % (culprit, named, undecided))
    return 0


if __name__ == "__main__":
    sys.exit(main())
