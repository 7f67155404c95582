#!/usr/bin/env python3
"""Every source file that includes llvm/Support/JSON.h, itself or through
the project's headers, is named in a collc_llvm_json_sources() call of the
CMakeLists.txt of its folder or one above (the top CMakeLists.txt says why:
LLVM 14's JSON.h does not compile as C++20 under clang, so such a file
builds as C++17 there). A file left out breaks only the sanitizer builds,
which CI reaches last; this finds it in the first.

  check_llvm_json.py ROOT
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
LLVM_JSON = re.compile(r'^\s*#\s*include\s+[<"]llvm/Support/JSON\.h[>"]', re.M)
CALL = re.compile(r"^[ \t]*collc_llvm_json_sources\(([^)]*)\)", re.M)
TOPS = ["ir", "passes", "compiler", "plan", "runtime", "api", "tools", "tests", "python"]


def main(root):
    texts = {}
    for top in TOPS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name.endswith((".h", ".cpp", ".cu")):
                    full = os.path.join(dirpath, name)
                    with open(full, encoding="utf-8", errors="replace") as f:
                        texts[os.path.relpath(full, root)] = f.read()

    memo = {}

    def reaches_json(rel, seen=()):
        if rel in memo:
            return memo[rel]
        text = texts.get(rel)
        found = False
        if text is not None and rel not in seen:
            found = bool(LLVM_JSON.search(text))
            here = os.path.dirname(rel)
            for inc in INCLUDE.findall(text):
                # Project includes are from the root, or beside the file.
                for cand in (inc, os.path.normpath(os.path.join(here, inc))):
                    if cand in texts and reaches_json(cand, seen + (rel,)):
                        found = True
        memo[rel] = found
        return found

    listed = set()
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(("build", "."))]
        if "CMakeLists.txt" in files:
            with open(os.path.join(dirpath, "CMakeLists.txt"), encoding="utf-8") as f:
                for call in CALL.findall(f.read()):
                    for src in call.split():
                        listed.add(os.path.relpath(os.path.join(dirpath, src), root))

    missing = sorted(rel for rel in texts
                     if rel.endswith((".cpp", ".cu")) and reaches_json(rel) and rel not in listed)
    for rel in missing:
        print(f"{rel}: includes llvm/Support/JSON.h but is not named in a "
              f"collc_llvm_json_sources() call (it would not compile in the clang builds)")
    return 1 if missing else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
