#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""Every preset under examples/presets/ passes `sf2loki check` once merged into a base
configuration (the way docs/operations/presets.md tells operators to use them):

- the base has a single-org `salesforce:` section, a Loki sink and a file store under a scratch
  directory; a preset with `orgs:` replaces the base's `salesforce:` and `sources:`;
- mappings merge key by key, anything else is replaced by the preset's value;
- every `private_key_file` points at a scratch RSA key, and the `${VAR}`s the presets use are
  set, since check reads secrets and expands variables as `run` does;
- then the same merge with an unknown key planted in the preset's first section must fail
  with exit 2, which shows the preset's own keys are what check read.

usage: check-presets.py SOURCE_ROOT SF2LOKI_BIN     exit 0 ok, 1 failure, 77 without yaml
"""

import copy
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from config_check import make_key, merge, repoint_keys, run_check  # noqa: E402

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml missing")
    sys.exit(77)

root, binary = sys.argv[1], sys.argv[2]
EXPECTED = {"multi-org.yaml", "custom-object-polling.yaml", "custom-platform-events.yaml",
            "event-log-objects.yaml", "login-history.yaml", "setup-audit-trail.yaml"}


def check(config, tmp, name):
    return run_check(binary, os.path.join(tmp, name), yaml.safe_dump(config, sort_keys=False),
                     dict(PROD_SF_CLIENT_ID="prod-consumer-key",
                          UAT_SF_CLIENT_ID="uat-consumer-key"))


failures = []
paths = sorted(glob.glob(os.path.join(root, "examples", "presets", "*.yaml")))
missing = EXPECTED - {os.path.basename(p) for p in paths}
if missing:
    failures.append(f"missing presets {sorted(missing)}")
with tempfile.TemporaryDirectory(prefix="sf2loki-presets-") as tmp:
    key = make_key(tmp)
    base = {
        "salesforce": {"client_id": "consumer-key", "username": "integration@example.com",
                       "private_key_file": key},
        "sink": {"loki": {"url": "https://loki.example.net/loki/api/v1/push"}},
        "state": {"file": {"path": os.path.join(tmp, "state.json")}},
    }
    for path in paths:
        name = os.path.basename(path)
        with open(path, encoding="utf-8") as f:
            preset = yaml.safe_load(f)
        start = {k: v for k, v in base.items()
                 if not ("orgs" in preset and k in ("salesforce", "sources"))}
        config = merge(start, preset)
        repoint_keys(config, key)
        r = check(config, tmp, name)
        if r.returncode != 0 or "config check OK" not in r.stdout + r.stderr:
            failures.append(f"{name}: sf2loki check exited {r.returncode}:\n{r.stdout}{r.stderr}")
            continue
        # the preset's first mapping section, one level down (sources.eventlog_objects, ...)
        broken = copy.deepcopy(config)
        top = next(iter(preset))
        section = broken[top] if isinstance(broken[top], dict) else broken[top][0]
        inner = next((v for v in section.values() if isinstance(v, dict)), section)
        inner["not_a_key"] = 1
        r2 = check(broken, tmp, "broken-" + name)
        if r2.returncode != 2 or "not_a_key" not in r2.stdout + r2.stderr:
            failures.append(f"{name}: an unknown key in it did not fail check "
                            f"(exit {r2.returncode}): {r2.stdout}{r2.stderr}")
            continue
        print(f"ok: {name} passes sf2loki check (and fails with an unknown key planted)")

for f in failures:
    print(f"FAIL: {f}", file=sys.stderr)
sys.exit(1 if failures else 0)
