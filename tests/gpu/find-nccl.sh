# Sourced by tests/gpu/check.sh and tests/gpu/device-run.sh: puts the
# machine's own libnccl.so.2 on LD_LIBRARY_PATH (the CUDA toolkit's, the
# system's, or pip's nvidia-nccl; the binaries link the CUDA runtime
# statically and NCCL dynamically) and sets NCCL_DIR to where it was found
# ("" when nowhere: the dynamic loader's own search is then all there is).
NCCL_DIR=""
for Dir in ${NCCL_HOME:+$NCCL_HOME/lib} /usr/local/cuda/lib64 /usr/local/cuda/lib \
  /usr/lib/x86_64-linux-gnu \
  $(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null); do
  if [ -e "$Dir/libnccl.so.2" ]; then
    NCCL_DIR=$Dir
    export LD_LIBRARY_PATH="$Dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    break
  fi
done
