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


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(HERE))

    # (name, how to break the copy, the line the checker must print)
    def wrong_layer(tree):
        line = add_include(tree, "src/core/sfl-entry.c", "sfl-pipeline.h")
        return (f'src/core/sfl-entry.c:{line}: includes "sfl-pipeline.h": src/core/ (layer core) '
                f'includes src/pipeline/ (layer flow): a layer may include only the layers above it')

    def sibling(tree):
        line = add_include(tree, "src/sink/sfl-sink.h", "sfl-checkpoint-store.h")
        return (f'src/sink/sfl-sink.h:{line}: includes "sfl-checkpoint-store.h": src/sink/ and '
                f'src/state/ are both in layer services')

    def source_pipeline(tree):
        # a source writes into a lane handle; the pipeline itself is a sibling it cannot see
        line = add_include(tree, "src/sources/sfl-source.c", "sfl-pipeline.h")
        return (f'src/sources/sfl-source.c:{line}: includes "sfl-pipeline.h": src/sources/ and '
                f'src/pipeline/ are both in layer flow')

    def concrete(tree):
        line = add_include(tree, "src/pipeline/sfl-egress.c", "sfl-file-store.h")
        return (f'src/pipeline/sfl-egress.c:{line}: includes "sfl-file-store.h": sfl-file-store.h '
                f'is a concrete checkpoint store: only src/app/ names concrete types')

    def private(tree):
        line = add_include(tree, "src/obs/sfl-otlp.c", "sfl-http-private.h")
        return (f'src/obs/sfl-otlp.c:{line}: includes "sfl-http-private.h": sfl-http-private.h '
                f'is private to src/net/')

    def platform_up(tree):
        line = add_include(tree, "platform/sfl-platform-common.c", "sfl-log.h")
        return (f'platform/sfl-platform-common.c:{line}: includes "sfl-log.h": platform/ '
                f'(layer platform) includes src/core/ (layer core)')

    def unknown(tree):
        line = add_include(tree, "src/net/sfl-http.c", "sfl-no-such-header.h")
        return (f'src/net/sfl-http.c:{line}: includes "sfl-no-such-header.h": '
                f'sfl-no-such-header.h is in no folder of the layer table')

    def stale_allowance(tree):
        # the real allowlist is empty: a copy of the checker excuses an include nobody makes
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

    cases = [wrong_layer, sibling, source_pipeline, concrete, private, platform_up, unknown, stale_allowance]
    print(f"1..{len(cases) + 1}")
    failed = 0

    with tempfile.TemporaryDirectory(prefix="check-layers-") as tmp:
        tree = os.path.join(tmp, "clean")
        copy_tree(root, tree)
        rc, out = run_checker(tree)
        if rc == 0 and "follows the layer table" in out:
            print("ok 1 - the checkout as it is passes")
        else:
            failed += 1
            print(f"not ok 1 - the checkout as it is passes (exit {rc})")
            for line in out.splitlines():
                print(f"# {line}")

    for i, case in enumerate(cases, 2):
        with tempfile.TemporaryDirectory(prefix="check-layers-") as tmp:
            tree = os.path.join(tmp, case.__name__)
            copy_tree(root, tree)
            expected = case(tree)
            checker = CHECKER
            if isinstance(expected, tuple):
                expected, checker = expected
            rc, out = run_checker(tree, checker)
            if rc == 1 and expected in out:
                print(f"ok {i} - {case.__name__}: exit 1 naming the include")
            else:
                failed += 1
                print(f"not ok {i} - {case.__name__}: exit {rc}, expected 1 and: {expected}")
                for line in out.splitlines():
                    print(f"# {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
