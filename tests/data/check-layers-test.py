#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""Proves check-layers.py fails on each kind of wrong include, naming the file, line and rule.

Each case copies src/, platform/ and proto/ of the checkout into a temporary tree, breaks one
include there and runs the checker on the copy. TAP output.

Usage: check-layers-test.py SOURCE_ROOT
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check-layers.py")


def copy_tree(root, dest):
    for top in ("src", "platform", "proto"):
        shutil.copytree(os.path.join(root, top), os.path.join(dest, top),
                        ignore=shutil.ignore_patterns("*.md", "meson.build"))


def add_include(tree, rel, header):
    """Appends an include to a copied file; returns its line number."""
    path = os.path.join(tree, rel)
    with open(path, encoding="utf-8") as f:
        n_lines = sum(1 for _ in f)
    with open(path, "a", encoding="utf-8") as f:
        f.write(f'#include "{header}"\n')
    return n_lines + 1


def drop_include(tree, rel, header):
    path = os.path.join(tree, rel)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = re.sub(r'^\s*#\s*include\s+"' + re.escape(header) + r'"\n', "", text, flags=re.M)
    if new == text:
        raise RuntimeError(f"{rel} does not include {header}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)


def run_checker(tree, checker=CHECKER):
    proc = subprocess.run([sys.executable, checker, "--root", tree], capture_output=True,
                          text=True, timeout=60)
    return proc.returncode, proc.stdout + proc.stderr


# (name, the file that gets one more include, the header, why the checker refuses it): the
# checker must print "<file>:<line>: includes "<header>": <why>"
INCLUDE_CASES = [
    ("wrong_layer", "src/core/sfl-entry.c", "sfl-pipeline.h",
     "src/core/ (layer core) includes src/pipeline/ (layer flow): a layer may include only the "
     "layers above it"),
    ("sibling", "src/sink/sfl-sink.h", "sfl-checkpoint-store.h",
     "src/sink/ and src/state/ are both in layer services"),
    # a source writes into a lane handle; the pipeline itself is a sibling it cannot see
    ("source_pipeline", "src/sources/sfl-source.c", "sfl-pipeline.h",
     "src/sources/ and src/pipeline/ are both in layer flow"),
    ("concrete", "src/pipeline/sfl-egress.c", "sfl-file-store.h",
     "sfl-file-store.h is a concrete checkpoint store: only src/app/ names concrete types"),
    ("private", "src/obs/sfl-otlp.c", "sfl-http-private.h",
     "sfl-http-private.h is private to src/net/"),
    ("platform_up", "platform/sfl-platform-common.c", "sfl-log.h",
     "platform/ (layer platform) includes src/core/ (layer core)"),
    ("unknown", "src/net/sfl-http.c", "sfl-no-such-header.h",
     "sfl-no-such-header.h is in no folder of the layer table"),
]


def include_case(rel, header, why):
    """A case that adds one include: returns how to break the copy and what to expect."""
    def case(tree):
        line = add_include(tree, rel, header)
        return f'{rel}:{line}: includes "{header}": {why}', CHECKER
    return case


def stale_allowance(tree):
    """The real allowlist is empty: a copy of the checker excuses an include nobody makes."""
    with open(CHECKER, encoding="utf-8") as f:
        text = f.read()
    patched = text.replace("ALLOWLIST = {\n",
                           'ALLOWLIST = {\n    ("src/sources/sfl-source.h", "sfl-pipeline.h"): '
                           '"a debt paid long ago",\n', 1)
    if patched == text:
        raise RuntimeError("the checker has no ALLOWLIST to patch")
    checker = os.path.join(os.path.dirname(tree), "check-layers.py")
    with open(checker, "w", encoding="utf-8") as f:
        f.write(patched)
    return 'src/sources/sfl-source.h: the allowlist entry for "sfl-pipeline.h"', checker


def run_case(root, number, name, breaks):
    """Copies the tree, lets @breaks change it, runs the checker; prints the TAP line.

    @breaks returns the text the checker's output must hold and the checker to run, or None
    for the untouched tree, which must pass. Returns whether the case passed."""
    with tempfile.TemporaryDirectory(prefix="check-layers-") as tmp:
        tree = os.path.join(tmp, name)
        copy_tree(root, tree)
        expected, checker = breaks(tree) if breaks is not None else (None, CHECKER)
        rc, out = run_checker(tree, checker)
    if expected is None:
        ok = rc == 0 and "follows the layer table" in out
        title = "the checkout as it is passes"
        detail = f"exit {rc}"
    else:
        ok = rc == 1 and expected in out
        title = f"{name}: exit 1 naming the include"
        detail = f"exit {rc}, expected 1 and: {expected}"
    print(f"ok {number} - {title}" if ok else f"not ok {number} - {title} ({detail})")
    if not ok:
        for line in out.splitlines():
            print(f"# {line}")
    return ok


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(HERE))
    cases = [("clean", None)]
    cases += [(name, include_case(rel, header, why)) for name, rel, header, why in INCLUDE_CASES]
    cases.append(("stale_allowance", stale_allowance))
    print(f"1..{len(cases)}")
    results = [run_case(root, i, name, breaks) for i, (name, breaks) in enumerate(cases, 1)]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
