#!/bin/sh
# Runs mpirun with a temporary directory of its own (TMPDIR), removed after.
# Two mpiruns that start at the same moment race to create Open MPI's
# session directory under a shared /tmp ("mkdir /tmp/ompi.HOST.0: File
# exists") and one of them fails; ctest and lit start several at once.
# Usage: mpirun_private_tmp.sh MPIRUN ARGS...
dir=$(mktemp -d "${TMPDIR:-/tmp}/collc-mpirun.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
trap 'exit 143' TERM INT
TMPDIR=$dir "$@"
