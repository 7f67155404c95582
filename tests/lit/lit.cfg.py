# lit configuration of collc's golden tests. Every test runs with
# COLLC_VERIFY_ROUNDTRIP=1, so each `collc` invocation also checks that its
# input round-trips: print(parse(print(x))) == print(x).
import os
import shutil
import subprocess

import lit.formats

config.name = "collc"
# An external shell (bash), so tests can check exact exit codes with $?.
config.test_format = lit.formats.ShTest(execute_external=True)
config.excludes = ["Inputs"]
config.suffixes = [".coll", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.collc_obj_root, "tests", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.collc_bin_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.environment["COLLC_VERIFY_ROUNDTRIP"] = "1"
config.substitutions.append(("%examples", os.path.join(config.collc_src_root, "examples")))
config.substitutions.append(("%python", config.python_executable))
if config.have_nccl:
    config.available_features.add("nccl")
    # A machine with a CUDA GPU: tests of the refusal without one do not apply.
    if os.path.exists("/dev/nvidia0"):
        config.available_features.add("cuda-gpu")
for backend in ("mpi", "gloo"):
    if getattr(config, "have_" + backend, False):
        config.available_features.add(backend)
# AddressSanitizer reserves terabytes of address space for its shadow: a
# test that limits a process's address space (ulimit -v) cannot run there.
if "address" in config.sanitize:
    config.available_features.add("asan")
# Process-backend tests start their processes with mpirun, as the ctest
# tests do (tests/CMakeLists.txt: COLLC_MPIRUN).
config.substitutions.append(("%mpirun", config.mpirun))
# Root, able to run collc as an unprivileged user (setpriv): a limit on a
# user's threads (ulimit -u) binds only such a user, as a container's pids
# limit binds every process in it.
if os.geteuid() == 0 and shutil.which("setpriv"):
    try:
        probe = subprocess.run(
            ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
             os.path.join(config.collc_bin_dir, "collc"), "--version"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
        if probe.returncode == 0:
            config.available_features.add("unprivileged-user")
    except (OSError, subprocess.TimeoutExpired):
        pass
