#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""Checks every `#include "..."` under src/ and platform/ against the layer table.

The table is src/README.md's: platform, core, net, services, flow, daemon and commands, each a
layer that may include only the layers above it. Three more rules:

- folders of one layer do not include each other, except the pairs in SIBLINGS;
- a header that declares a concrete implementation of a seam (CONCRETE) is included only by
  its own folder and by src/app/, the composition root;
- a `*-private.h` header is included only by its own folder (tests may use it).

The meson build enforces the same layers (one static library per folder, each seeing only
the include directories of the libraries it is declared against); this script names the
file, the line and the rule, and catches what the build cannot (siblings that share a
dependency, concrete types, private headers).

Usage: check-layers.py [--root DIR]   (DIR defaults to the checkout holding this script)
Exit status 0 when clean, 1 with one line per violation on stderr.
"""

import argparse
import os
import re
import sys

# folder -> (layer rank, layer name); a folder may include folders of a smaller rank
FOLDERS = {
    "platform": (0, "platform"),
    "src/core": (1, "core"),
    "src/net": (2, "net"),
    "src/net/cloud": (2, "net"),
    "src/salesforce": (3, "services"),
    "src/state": (3, "services"),
    "src/coordinate": (3, "services"),
    "src/sink": (3, "services"),
    "src/sources": (4, "flow"),
    "src/pipeline": (4, "flow"),
    "src/obs": (4, "flow"),
    "src/app": (5, "daemon and commands"),
    "src/cli": (5, "daemon and commands"),
}

# platform's OS halves are part of the platform folder
SUBFOLDERS = {"platform/posix": "platform", "platform/win32": "platform"}

# the daemon's entry points: compiled into the executable itself (not into sfl-platform),
# so they sit below everything and call the command line
ENTRY_POINTS = re.compile(r"^platform/(posix|win32)/sfl-main-[a-z0-9]+\.c$")
ENTRY_RANK = 6

# same-layer pairs that are part of the design, not debts
SIBLINGS = {
    # the cloud clients are built on the transports; the transports know nothing of them
    ("src/net/cloud", "src/net"),
    # the commands run the daemon the composition root builds
    ("src/cli", "src/app"),
}

# headers of concrete seam implementations: only their own folder and src/app/ name them
CONCRETE = {
    "sfl-loki-sink.h": "sink",
    "sfl-file-store.h": "checkpoint store",
    "sfl-memory-store.h": "checkpoint store",
    "sfl-object-store.h": "checkpoint store",
    "sfl-noop-coordinator.h": "coordinator",
    "sfl-file-lease-coordinator.h": "coordinator",
    "sfl-k8s-lease-coordinator.h": "coordinator",
    "sfl-k8s-lease-doctor.h": "coordinator",
    "sfl-object-lease-coordinator.h": "coordinator",
    "sfl-elf-source.h": "source",
    "sfl-objects-source.h": "source",
    "sfl-pubsub-source.h": "source",
    "sfl-s3-client.h": "object client",
    "sfl-gcs-client.h": "object client",
}

# Violations that exist today, each removed by a later item of issue 22. Keys are
# (including file, included header); an entry that no longer matches a violation fails the
# check, so the list only shrinks.
ALLOWLIST = {
}


def folder_of(rel_dir):
    """The table's folder for a directory relative to the root, or None."""
    rel_dir = SUBFOLDERS.get(rel_dir, rel_dir)
    return rel_dir if rel_dir in FOLDERS else None


def scan(root):
    """Yields (relative path, line number, included name) for every quoted include."""
    pattern = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for top in ("src", "platform"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = pattern.match(line)
                        if m:
                            yield rel, lineno, m.group(1)


def generated_headers(root):
    """config.h (meson's configure_file) and the protoc-c headers of proto/*.proto."""
    names = {"config.h"}
    proto = os.path.join(root, "proto")
    if os.path.isdir(proto):
        for name in os.listdir(proto):
            if name.endswith(".proto"):
                names.add(name[: -len(".proto")] + ".pb-c.h")
    return names


def resolve(root, includer, name):
    """The folder holding the included header, None for a generated one, or raises KeyError."""
    here = os.path.dirname(includer)
    if os.path.isfile(os.path.join(root, here, name)):
        return folder_of(os.path.dirname(os.path.normpath(os.path.join(here, name))))
    hits = []
    for folder in list(FOLDERS) + list(SUBFOLDERS):
        if os.path.isfile(os.path.join(root, folder, name)):
            hits.append(folder_of(folder))
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise KeyError(f"{name} exists in more than one folder ({', '.join(hits)})")
    raise KeyError(f"{name} is in no folder of the layer table")


def check(root):
    generated = generated_headers(root)
    problems = []
    used_allowances = set()
    for rel, lineno, name in scan(root):
        where = f"{rel}:{lineno}"
        src_folder = folder_of(os.path.dirname(rel))
        if src_folder is None:
            problems.append(f"{where}: {os.path.dirname(rel)}/ is not in the layer table (src/README.md)")
            continue
        base = os.path.basename(name)
        if name in generated:
            continue
        try:
            dst_folder = resolve(root, rel, name)
        except KeyError as e:
            problems.append(f"{where}: includes \"{name}\": {e.args[0]}")
            continue
        if dst_folder is None:
            problems.append(f"{where}: includes \"{name}\" from outside the layer table")
            continue
        src_rank, src_layer = FOLDERS[src_folder]
        if ENTRY_POINTS.match(rel):
            src_rank, src_layer = ENTRY_RANK, "entry point"
        dst_rank, dst_layer = FOLDERS[dst_folder]

        broken = None
        if dst_folder == src_folder:
            continue
        if dst_rank > src_rank:
            broken = (f"{src_folder}/ (layer {src_layer}) includes {dst_folder}/ (layer {dst_layer}): "
                      f"a layer may include only the layers above it")
        elif dst_rank == src_rank and (src_folder, dst_folder) not in SIBLINGS:
            broken = (f"{src_folder}/ and {dst_folder}/ are both in layer {src_layer}: folders of "
                      f"one layer do not include each other")
        elif base.endswith("-private.h"):
            broken = f"{base} is private to {dst_folder}/"
        elif base in CONCRETE and src_folder != "src/app" and src_rank != ENTRY_RANK:
            broken = f"{base} is a concrete {CONCRETE[base]}: only src/app/ names concrete types"
        if broken is None:
            continue
        key = (rel, base)
        if key in ALLOWLIST:
            used_allowances.add(key)
            continue
        problems.append(f"{where}: includes \"{name}\": {broken}")

    for key in sorted(set(ALLOWLIST) - used_allowances):
        problems.append(f"{key[0]}: the allowlist entry for \"{key[1]}\" ({ALLOWLIST[key]}) matches "
                        f"no violation any more: remove it from check-layers.py")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--root", default=default_root, help="the checkout to check")
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.root, "src")):
        print(f"check-layers: {args.root} has no src/ folder", file=sys.stderr)
        return 2
    problems = check(args.root)
    for line in problems:
        print(line, file=sys.stderr)
    if problems:
        print(f"check-layers: {len(problems)} include(s) break the layer table (src/README.md)",
              file=sys.stderr)
        return 1
    print(f"check-layers: every include under src/ and platform/ follows the layer table "
          f"({len(ALLOWLIST)} allowlisted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
