#!/usr/bin/env python3
"""Keeps collc's layers: a file may include only from its own folder's layer
and the layers below it (docs/architecture.md has the picture).

  check_layering.py ROOT              checks the tree at ROOT
  check_layering.py --self-test ROOT  plants a violation in a copy of the
                                      library folders and expects the check
                                      to name it

Each row of LAYERS is a folder and what its files may include: whole
folders, or single files where a layer may see only part of one below it
(the plan and the runtime see the IR's types and op vocabulary, not its
programs). A file belongs to the longest folder that contains it; an include
of a project file outside every listed folder is itself an error, so a new
folder must be placed in the table before it is used.
"""
import os
import re
import shutil
import sys
import tempfile

# The part of the IR that the plan and the runtime see: element types and
# reduce ops (premul_sum's factor among them), and the tables their enums
# are generated from (op kinds, element types, reduce ops).
IR_VOCABULARY = ["ir/Types.h", "ir/PremulFactor.h", "ir/Collectives.def", "ir/ElemTypes.def",
                 "ir/ReduceOps.def"]

# What the tool's layers see of the libraries: everything but the C API.
BELOW_TOOLS = ["ir", "passes", "passes/analysis", "compiler", "plan", "plan/analysis",
               "compiler/dump", "runtime/exec", "runtime/verify", "runtime/interfaces",
               "runtime/launch", "runtime/local", "runtime/shm", "runtime/mpi", "runtime/gloo",
               "runtime/nccl", "runtime/process", "runtime/diagnose"]

# Bottom to top. Order matters only for reading.
LAYERS = [
    ("ir", []),
    ("passes/analysis", ["ir"]),
    ("passes", ["ir", "passes/analysis"]),
    # ir/Quoting.h: the plan file spells its quoted strings (source, note,
    # why) exactly as the IR does, from the one quoting module.
    # ir/InputFile.h: the plan reader reads its files as every input is read.
    # The plan is the runtime's input, a layer of its own below the compiler
    # (as LLVM's object format is apart from codegen): it sees the IR's
    # vocabulary, never its programs or the passes.
    ("plan", [*IR_VOCABULARY, "ir/Quoting.h", "ir/InputFile.h"]),
    # A plan seen by the step simulator, and the IR-to-plan kind mapping:
    # what `collc simulate PLAN` and the dumps need; the runtime never does.
    ("plan/analysis", ["ir", "passes/analysis", "plan"]),
    ("compiler", ["ir", "passes", "passes/analysis", "plan", "plan/analysis"]),
    # The ways to look at a plan (text, JSON, DOT, the simulated trace):
    # printed by the tool and by the C API alike.
    ("compiler/dump", ["ir", "passes/analysis", "compiler", "plan", "plan/analysis"]),
    # ir/Quoting.h: a runtime error escapes the bytes that peers, stores and
    # libraries put in it as the IR's diagnostics do (RuntimeError.h).
    ("runtime/exec", [*IR_VOCABULARY, "ir/Quoting.h", "plan"]),
    ("runtime/verify", [*IR_VOCABULARY, "plan", "runtime/exec"]),
    # The diagnosis of a run's flight records (collc's and PyTorch's): it
    # reads the dumps runtime/exec writes and checks them against a plan,
    # for `collc diagnose`.
    ("runtime/diagnose", [*IR_VOCABULARY, "plan", "runtime/exec"]),
    ("runtime/interfaces", [*IR_VOCABULARY, "runtime/exec"]),
    # Where a process learns its rank and world and how to meet its peers
    # (launcher environment, rendezvous address): shared by the process
    # backends and the tool.
    ("runtime/launch", [*IR_VOCABULARY, "runtime/exec"]),
    ("runtime/local", [*IR_VOCABULARY, "plan", "runtime/exec", "runtime/interfaces"]),
    # The shared-memory transport: the local backend's algorithms and kernels
    # across the processes of a host, under the process backends.
    ("runtime/shm", [*IR_VOCABULARY, "runtime/exec", "runtime/local"]),
    ("runtime/mpi", [*IR_VOCABULARY, "plan", "runtime/exec", "runtime/interfaces",
                     "runtime/launch", "runtime/local", "runtime/shm"]),
    # ir/Quoting.h: bytes read from the rendezvous store are quoted in
    # messages as the IR quotes a string (GroupStore.h).
    ("runtime/gloo", [*IR_VOCABULARY, "ir/Quoting.h", "plan", "runtime/exec", "runtime/interfaces",
                      "runtime/launch", "runtime/local", "runtime/shm"]),
    # runtime/launch: the unique ids travel over the run's CPU world, seen
    # only through its neutral WorldGather (never runtime/mpi or runtime/gloo).
    # ir/RankSimulation.h: the one cross-rank simulation (it sees no program),
    # which the stream-order check runs over the NCCL issue order.
    ("runtime/nccl", [*IR_VOCABULARY, "ir/RankSimulation.h", "ir/Ids.h", "plan",
                      "runtime/exec", "runtime/interfaces", "runtime/launch"]),
    # The table of process backends (mpi, gloo, nccl) that the tool and the C
    # API create executors from, and the CPU world a run's processes meet in.
    # runtime/interfaces: the eager communicator (EagerComm.h) each backend makes.
    ("runtime/process", [*IR_VOCABULARY, "plan", "runtime/exec", "runtime/verify",
                         "runtime/interfaces", "runtime/launch", "runtime/mpi", "runtime/gloo",
                         "runtime/nccl", "runtime/shm"]),
    # The C API (collc.h) over the compiler and the runtime: a library, so it
    # sits below the tool and sees none of it.
    ("api", ["ir", "passes", "passes/analysis", "compiler", "plan", "plan/analysis", "compiler/dump",
             "runtime/exec", "runtime/interfaces", "runtime/launch", "runtime/local", "runtime/nccl",
             "runtime/process"]),
    # The bench harness is a library below the commands: it sees the run
    # harness (LocalRun.h) and the input helpers (ToolSupport.h) of the
    # tool, never a command, so no include runs back up inside the tool.
    ("tools/collc/bench", [*BELOW_TOOLS, "tools/collc/LocalRun.h", "tools/collc/ToolSupport.h"]),
    ("tools", [*BELOW_TOOLS, "tools/collc/bench"]),
]
LIBRARY_ROOTS = ["ir", "passes", "plan", "compiler", "runtime", "api", "tools"]
SOURCE = re.compile(r"\.(h|cpp|cu|def)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    best = None
    for folder, _ in LAYERS:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def allowed(includer_layer, target):
    if layer_of(target) == includer_layer:
        return True
    for entry in dict(LAYERS)[includer_layer]:
        if target == entry or (layer_of(target) == entry and not entry.endswith((".h", ".def"))):
            return True
    return False


def check(root):
    errors = []
    for top in LIBRARY_ROOTS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not SOURCE.search(name):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root)
                mine = layer_of(rel)
                with open(full, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for m in INCLUDE.finditer(text):
                    target = m.group(1)
                    if target.split("/")[0] not in LIBRARY_ROOTS:
                        continue  # a file of its own folder by bare name, or a system header
                    line = text.count("\n", 0, m.start()) + 1
                    if mine is None:
                        errors.append(f"{rel}:{line}: {rel} is in no layer of check_layering.py")
                    elif layer_of(target) is None:
                        errors.append(f"{rel}:{line}: includes {target}, which is in no layer")
                    elif not allowed(mine, target):
                        errors.append(
                            f"{rel}:{line}: layer {mine} includes {target} (layer "
                            f"{layer_of(target)}); {mine} may include only "
                            f"{', '.join(dict(LAYERS)[mine]) or 'itself'}")
    return sorted(errors) + unit_cycles(root)


def unit_of(path):
    """A header and its implementation are one unit: foo.h and foo.cpp."""
    return re.sub(r"\.(h|cpp|cu)$", "", path)


def unit_cycles(root):
    """Includes between units never run back up: no unit reaches itself
    through the includes of its files (tools/collc/A.cpp including B.h
    while B.cpp includes A.h is such a cycle, inside one layer as across
    layers). Named by the shortest cycle, in sorted order."""
    edges = {}
    for top in LIBRARY_ROOTS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not SOURCE.search(name) or name.endswith(".def"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                src = unit_of(rel)
                for m in INCLUDE.finditer(text):
                    target = m.group(1)
                    if target.split("/")[0] not in LIBRARY_ROOTS or target.endswith(".def"):
                        continue
                    if unit_of(target) != src:
                        edges.setdefault(src, set()).add(unit_of(target))
    errors = []
    seen_cycles = set()
    for start in sorted(edges):
        # Breadth first from start: the shortest way back to it.
        parent = {start: None}
        queue = [start]
        found = None
        while queue and not found:
            nxt = []
            for u in queue:
                for v in sorted(edges.get(u, ())):
                    if v == start:
                        found = u
                        break
                    if v not in parent:
                        parent[v] = u
                        nxt.append(v)
                if found:
                    break
            queue = nxt
        if not found:
            continue
        path = [found]
        while parent[path[-1]] is not None:
            path.append(parent[path[-1]])
        cycle = list(reversed(path))
        key = frozenset(cycle)
        if key in seen_cycles:
            continue
        seen_cycles.add(key)
        errors.append("include cycle: " + " -> ".join(cycle + [start]) +
                      " (a unit is a header with its .cpp; includes run one way)")
    return errors


def plant(tmp, path, includes):
    full = os.path.join(tmp, path)
    with open(full, "w") as f:
        f.write("".join(f'#include "{i}"\n' for i in includes))
    return full


def self_test(root):
    with tempfile.TemporaryDirectory() as tmp:
        for top in LIBRARY_ROOTS:
            shutil.copytree(os.path.join(root, top), os.path.join(tmp, top))
        if check(tmp):
            print("self-test: the copy already has violations", file=sys.stderr)
            return 1
        # One planted violation of each rule, each alone in the copy.
        cases = [
            ([("ir/Planted.h", ["ir/Types.h", "runtime/exec/Executor.h"])],
             "ir/Planted.h:2: layer ir includes runtime/exec/Executor.h"),
            # The plan sees no compiler, the runtime no compiler and no
            # simulator's view of a plan.
            ([("plan/Planted.h", ["compiler/Compile.h"])],
             "plan/Planted.h:1: layer plan includes compiler/Compile.h"),
            ([("runtime/exec/Planted.h", ["plan/analysis/PlanStepModel.h"])],
             "runtime/exec/Planted.h:1: layer runtime/exec includes plan/analysis/PlanStepModel.h"),
            ([("runtime/local/Planted.h", ["compiler/Lowering.h"])],
             "runtime/local/Planted.h:1: layer runtime/local includes compiler/Lowering.h"),
            # The bench harness sees no command of the tool.
            ([("tools/collc/bench/Planted.h", ["tools/collc/ProcessRun.h"])],
             "tools/collc/bench/Planted.h:1: layer tools/collc/bench includes "
             "tools/collc/ProcessRun.h"),
            # Inside the tool, includes run one way.
            ([("tools/collc/PlantedA.h", ["tools/collc/PlantedB.h"]),
              ("tools/collc/PlantedB.cpp", ["tools/collc/PlantedA.h"])],
             "include cycle: tools/collc/PlantedA -> tools/collc/PlantedB -> tools/collc/PlantedA"),
        ]
        for files, want in cases:
            planted = [plant(tmp, path, incs) for path, incs in files]
            errors = check(tmp)
            for full in planted:
                os.remove(full)
            if len(errors) != 1 or not errors[0].startswith(want):
                print(f"self-test: expected one error starting with {want!r}, got {errors}",
                      file=sys.stderr)
                return 1
            print(f"self-test: the planted violation is caught: {errors[0]}")
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        return self_test(argv[2])
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    errors = check(argv[1])
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f"{len(errors)} layering violation(s)", file=sys.stderr)
        return 1
    print("layering: every include respects the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
