#!/usr/bin/env python3
"""check_architecture.py SRCDIR BUILDDIR: docs/ARCHITECTURE.md against the build.

Fails (exit 1, one line per problem) when the doc names a source or doc
file (a word ending in .c, .h, .md or .sh) that does not exist, when a
name with a '*' matches no file, or when a .c file the build compiles into
gatelab (every target's sources under src/ and analysis/, from meson's
introspection in BUILDDIR/meson-info) is not named in the doc by its name
or its path, or its folder is not. A bare name counts as existing when
some file of the repository (tests/ls_files.sh) or a header the build
generates (under BUILDDIR/src) has it; a name with a '/' must be that path. Exit 2 when an
input is missing.
"""
import fnmatch
import json
import os
import re
import subprocess
import sys

DOC = "docs/ARCHITECTURE.md"
NAME = re.compile(r"[A-Za-z0-9_*./-]*[A-Za-z0-9_*]\.(?:c|h|md|sh)\b")


def main():
    if len(sys.argv) != 3:
        print("usage: check_architecture.py SRCDIR BUILDDIR", file=sys.stderr)
        return 2
    src, build = sys.argv[1], sys.argv[2]
    intro = os.path.join(build, "meson-info", "intro-targets.json")
    try:
        with open(os.path.join(src, DOC), encoding="utf-8") as f:
            doc = f.read()
        with open(intro, encoding="utf-8") as f:
            targets = json.load(f)
        tracked = subprocess.run(["bash", os.path.join(src, "tests", "ls_files.sh"), "*"],
                                 check=True, capture_output=True, text=True).stdout.split()
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        print(f"check_architecture: {e}", file=sys.stderr)
        return 2

    generated = {f for _, _, fs in os.walk(os.path.join(build, "src")) for f in fs
                 if f.endswith(".h")}
    sources = set()
    for t in targets:
        for ts in t.get("target_sources", []):
            for s in ts.get("sources", []):
                rel = os.path.relpath(s, src)
                if rel.endswith(".c") and re.match(r"(src|analysis)/", rel):
                    sources.add(rel)
    if not sources:
        print(f"check_architecture: {intro} lists no source under src/ or analysis/")
        return 1

    paths = set(tracked)
    bases = {os.path.basename(p) for p in tracked} | generated
    names = set(NAME.findall(doc))
    bad = 0
    for n in sorted(names):
        if "*" in n:
            pool = paths if "/" in n else bases
            ok = any(fnmatch.fnmatchcase(p, n) for p in pool)
        else:
            ok = n in paths if "/" in n else n in bases
        if not ok:
            print(f"{DOC} names {n}, which does not exist")
            bad = 1
    for s in sorted(sources):
        if s not in names and os.path.basename(s) not in names:
            print(f"{DOC} leaves out {s}, a source file of the build")
            bad = 1
        folder = os.path.dirname(s) + "/"
        if f"`{folder}`" not in doc:
            print(f"{DOC} does not name the folder `{folder}` of {s}")
            bad = 1
    if not bad:
        print(f"architecture: {len(names)} names exist, {len(sources)} build sources named")
    return bad


if __name__ == "__main__":
    sys.exit(main())
