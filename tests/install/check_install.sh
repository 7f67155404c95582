#!/bin/sh
# Installs the build to a temporary prefix, checks what a consumer gets, and
# builds and runs the C consumer project against it, twice: through
# find_package(collc) and through pkg-config.
#   check_install.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/collc-install.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
PREFIX=$TMP/prefix

cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
# Where the build put libraries and headers (GNUInstallDirs: lib, lib64,
# lib/x86_64-linux-gnu ...): everything below looks there.
cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
LIBDIR=$(cache CMAKE_INSTALL_LIBDIR)
INCDIR=$(cache CMAKE_INSTALL_INCLUDEDIR)
LIBDIR=${LIBDIR:-lib} INCDIR=${INCDIR:-include}

# The public headers are collc.h and its generated version header, which
# include nothing but each other and the C library's stddef.h/stdint.h.
headers=$(cd "$PREFIX/$INCDIR" && find . -type f | sort | tr '\n' ' ')
[ "$headers" = "./collc/collc.h ./collc/version.h " ] || {
  echo "installed headers: $headers; expected ./collc/collc.h ./collc/version.h"; exit 1; }
bad=$(grep -hE '^[[:space:]]*#[[:space:]]*include' "$PREFIX/$INCDIR"/collc/*.h |
      grep -vE '"collc/version.h"|<stddef.h>|<stdint.h>' || true)
[ -z "$bad" ] || { echo "an installed header includes more than collc.h allows: $bad"; exit 1; }

# libcollc.so exports the C API and nothing else, and needs no LLVM.
LIB=$PREFIX/$LIBDIR/libcollc.so
exported=$(nm -D --defined-only "$LIB" | awk '$2 != "A" {print $3}' | sort)
others=$(echo "$exported" | grep -v '^collc[A-Z]' || true)
[ -z "$others" ] || { echo "libcollc.so exports more than the C API: $others"; exit 1; }
echo "libcollc.so exports $(echo "$exported" | wc -l) functions, all collc*"
if ldd "$LIB" | grep -i llvm; then echo "libcollc.so needs LLVM at run time"; exit 1; fi
# The versioned structs' Init (docs/c-api.md, "Versioned structs"): the
# symbols of version 1, which older binaries call, stay in their node
# beside the sized ones; collc.h's Init macros compile as strict C11, pass
# the caller's size and fill the whole struct.
nodes=$(objdump -T "$LIB" | awk '!/\*UND\*/ && $NF ~ /^collc/ {print $NF " " $(NF-1)}')
for f in CompileOptionsInit DumpOptionsInit SimResultInit ExecutorOptionsInit; do
  for want in "collc$f COLLC_0" "collc${f}Sized COLLC_0_INIT_SIZED"; do
    echo "$nodes" | grep -qxF "$want" || {
      echo "libcollc.so does not export ${want% *} in node ${want#* }: $(echo "$nodes" |
        grep "collc$f")"; exit 1; }
  done
done
# A function added since has a node of its own.
echo "$nodes" | grep -qxF "collcExecutorMemory COLLC_1" || {
  echo "libcollc.so does not export collcExecutorMemory in node COLLC_1"; exit 1; }
cat > "$TMP/init.c" <<'EOF'
#include <collc/collc.h>

#include <stdio.h>

int main(void) {
  collcCompileOptions_t c;
  collcDumpOptions_t d;
  collcSimResult_t r;
  collcExecutorOptions_t e;
  if (collcCompileOptionsInit(&c) || collcDumpOptionsInit(&d) || collcSimResultInit(&r) ||
      collcExecutorOptionsInit(&e)) {
    fprintf(stderr, "an Init failed: %s\n", collcGetLastError());
    return 1;
  }
  if (c.size != sizeof c || d.size != sizeof d || r.size != sizeof r || e.size != sizeof e ||
      c.memoryBudget != 0 || r.peakMemoryComm != -1 || e.device != -1) {
    fprintf(stderr, "the Init macros did not fill the caller's structs\n");
    return 1;
  }
  return 0;
}
EOF
cc -std=c11 -Wall -Wextra -pedantic -Werror -I"$PREFIX/$INCDIR" -o "$TMP/init" "$TMP/init.c" \
   -L"$PREFIX/$LIBDIR" -lcollc
LD_LIBRARY_PATH=$PREFIX/$LIBDIR "$TMP/init"
echo "libcollc.so exports the Init symbols of version 1 and the sized ones; the Init macros fill C11 structs"
for lib in compiler runtime local; do
  [ -f "$PREFIX/$LIBDIR/libcollc_$lib.a" ] || { echo "missing static libcollc_$lib.a"; exit 1; }
done

EXAMPLE=$SRC/examples/gpt2_ddp.coll
cmake -S "$SRC/tests/install/consumer" -B "$TMP/build" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$TMP/build" >/dev/null
"$TMP/build/consumer" "$EXAMPLE"

PKG_CONFIG_PATH=$PREFIX/$LIBDIR/pkgconfig
export PKG_CONFIG_PATH
got=$(pkg-config --variable=libdir collc)
[ "$(cd "$got" && pwd -P)" = "$(cd "$PREFIX/$LIBDIR" && pwd -P)" ] || {
  echo "collc.pc's libdir is $got: expected $PREFIX/$LIBDIR"; exit 1; }
cc -std=c11 -o "$TMP/consumer-pc" "$SRC/tests/install/consumer/main.c" \
   $(pkg-config --cflags --libs collc) -lpthread
LD_LIBRARY_PATH=$PREFIX/$LIBDIR "$TMP/consumer-pc" "$EXAMPLE" >/dev/null
echo "pkg-config: the consumer builds and runs too"

# A multiarch LIBDIR (three levels under the prefix) and an absolute one:
# the .pc collc writes for them still names the prefix's directories.
for libdir in lib/x86_64-linux-gnu "$TMP/abs/lib"; do
  case $libdir in /*) dir=$libdir ;; *) dir=$TMP/multi/$libdir ;; esac
  mkdir -p "$dir/pkgconfig"
  cmake -DOUT="$dir/pkgconfig/collc.pc" -DLIBDIR="$libdir" -DINCLUDEDIR=include -DVERSION=0 \
        -P "$SRC/cmake/CollcPkgConfig.cmake"
  got=$(PKG_CONFIG_PATH=$dir/pkgconfig pkg-config --variable=libdir collc)
  [ "$(cd "$got" && pwd -P)" = "$(cd "$dir" && pwd -P)" ] || {
    echo "collc.pc for LIBDIR $libdir names libdir $got: expected $dir"; exit 1; }
done
echo "pkg-config: collc.pc names the right libdir for lib, a multiarch and an absolute LIBDIR"

# docs/c-api.md shows the consumer as it is.
awk '/^```c$/{on=1; next} /^```$/{on=0} on' "$SRC/docs/c-api.md" > "$TMP/doc-example.c"
cmp -s "$TMP/doc-example.c" "$SRC/tests/install/consumer/main.c" || {
  echo "docs/c-api.md's C example differs from tests/install/consumer/main.c"
  diff "$TMP/doc-example.c" "$SRC/tests/install/consumer/main.c" | head; exit 1; }
echo "docs/c-api.md's example is tests/install/consumer/main.c"

# The collc tool is installed and says collc's version (not LLVM's).
want="collc version $(cache CMAKE_PROJECT_VERSION)"
got=$("$PREFIX/$(cache CMAKE_INSTALL_BINDIR)/collc" --version)
[ "$got" = "$want" ] || { echo "collc --version printed '$got': expected '$want'"; exit 1; }
echo "the installed collc says: $got"

# The installed Python package finds the installed libcollc.so by itself
# (no COLLC_LIBRARY), when an interpreter here has numpy.
PY=""
for py in /usr/bin/python3 python3; do
  if "$py" -c "import numpy" 2>/dev/null; then PY=$py; break; fi
done
if [ -n "$PY" ]; then
  env -u COLLC_LIBRARY PYTHONPATH="$PREFIX/$LIBDIR/python3/site-packages" "$PY" -c '
import collc, sys
p = collc.compile(open(sys.argv[1]).read(), world=2)
assert collc._lib.lib._name.startswith(sys.argv[2]), collc._lib.lib._name
print("python: the installed package loads", collc._lib.lib._name, "and compiles", p.digest)
' "$EXAMPLE" "$PREFIX/$LIBDIR/"
else
  echo "python: skipped (no interpreter here imports numpy)"
fi

# Where this build has torch's backend "collc" (cmake/CollcTorch.cmake),
# the installed package registers it from the installed extension.
if ls "$BUILD"/python/collc/torch/_c10d*.so >/dev/null 2>&1; then
  env -u COLLC_LIBRARY -u COLLC_TORCH_EXTENSION \
      PYTHONPATH="$PREFIX/$LIBDIR/python3/site-packages" /usr/bin/python3 -c '
import sys, torch.distributed as dist
import collc.torch
ext = collc.torch._backend._c10d
assert ext is not None, collc.torch._backend._why_not
assert ext.__file__.startswith(sys.argv[1]), ext.__file__
assert "COLLC" in dist.Backend._plugins, dist.Backend._plugins
print("python: the installed collc.torch registers backend collc from", ext.__file__)
' "$PREFIX/$LIBDIR/"
fi
