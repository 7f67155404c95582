# Sourced by tests/gpu/check.sh and tests/gpu/device-run.sh: the sonames a
# bare GPU image has (glibc's, the C++ runtime's, and the machine's own
# NCCL; the CUDA runtime is linked into the binaries). Every other library
# the device binaries load travels beside them in bin/lib.
BARE_IMAGE_LIBS='^(linux-vdso|ld-linux-x86-64|libc|libm|libdl|libpthread|librt|libresolv|libstdc\+\+|libgcc_s|libnccl)\.so'
