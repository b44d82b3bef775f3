#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""deploy/grafana/*.json are importable Grafana dashboards:

- each file is JSON with a unique uid and title, unique panel ids, panels inside the 24-column
  grid;
- datasources are template variables (a `datasource` variable for Prometheus, `loki` for Loki)
  and every panel, target and query variable names one of them, never a fixed uid, so the
  dashboard imports into any Grafana;
- every Prometheus expression parses: they are written, with Grafana's interval variables
  replaced, as recording rules to a scratch file for `promtool check rules` (skipped with a
  note when promtool is missing). The metric names they read are checked against a running
  daemon by check_metric_names.py, the LogQL by check_loki_queries.py.

usage: check_dashboards.py SOURCE_ROOT       exit 0 ok, 1 on a problem
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import querycheck  # noqa: E402

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
failures = []
prom_exprs = []
uids = {}
EXPECTED = {"sf2loki-connector-health.json", "sf2loki-overview.json",
            "sf2loki-security-access.json", "sf2loki-api-integration.json",
            "sf2loki-apex-performance.json"}


def fail(where, message):
    failures.append(f"{where}: {message}")


def panels(items):
    for p in items:
        yield p
        yield from panels(p.get("panels", []))


paths = sorted(glob.glob(os.path.join(root, "deploy", "grafana", "*.json")))
missing = EXPECTED - {os.path.basename(p) for p in paths}
if missing:
    fail("deploy/grafana", f"missing {sorted(missing)}")
for path in paths:
    base = os.path.basename(path)
    try:
        with open(path, encoding="utf-8") as f:
            dash = json.load(f)
    except (OSError, ValueError) as e:
        fail(base, f"does not load: {e}")
        continue
    for key in ("uid", "title", "panels", "templating", "schemaVersion"):
        if key not in dash:
            fail(base, f"no {key}")
    if dash.get("uid") in uids:
        fail(base, f"uid {dash['uid']} also in {uids[dash['uid']]}")
    uids[dash.get("uid")] = base
    if "id" in dash and dash["id"] is not None:
        fail(base, "an exported id makes Grafana overwrite another dashboard on import")
    variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
    ds_vars = {name: v["query"] for name, v in variables.items() if v.get("type") == "datasource"}

    def check_ds(where, ds):
        if not isinstance(ds, dict):
            fail(where, f"datasource {ds!r} is not a {{type, uid}} reference")
            return None
        m = re.fullmatch(r"\$\{(\w+)\}", ds.get("uid", ""))
        if not m or m.group(1) not in ds_vars:
            fail(where, f"datasource uid {ds.get('uid')!r} is not a datasource variable")
            return None
        if ds_vars[m.group(1)] != ds.get("type"):
            fail(where, f"datasource type {ds.get('type')} but variable {m.group(1)} is "
                        f"{ds_vars[m.group(1)]}")
        return ds.get("type")

    if not ds_vars:
        fail(base, "no datasource template variable")
    for name, v in variables.items():
        if v.get("type") == "query":
            kind = check_ds(f"{base} variable {name}", v.get("datasource"))
            q = v.get("query")
            q = q.get("query", "") if isinstance(q, dict) else q
            if kind == "prometheus":
                m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", q)
                if not m:
                    fail(f"{base} variable {name}", f"unexpected query {q!r}")
                else:
                    prom_exprs.append((f"{base} variable {name}", m.group(1)))
    ids = set()
    for p in panels(dash.get("panels", [])):
        where = f"{base} panel {p.get('title')!r}"
        if p.get("id") in ids:
            fail(where, f"duplicate panel id {p.get('id')}")
        ids.add(p.get("id"))
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in ("x", "y", "w", "h")) or \
                g["x"] < 0 or g["x"] + g["w"] > 24:
            fail(where, f"gridPos {g} is outside the 24-column grid")
        if p.get("type") == "row":
            continue
        if not p.get("targets"):
            fail(where, "no query")
        check_ds(where, p.get("datasource"))
        for t in p.get("targets", []):
            kind = check_ds(f"{where} {t.get('refId')}", t.get("datasource", p.get("datasource")))
            if not t.get("expr"):
                fail(f"{where} {t.get('refId')}", "empty expr")
            elif kind == "prometheus":
                prom_exprs.append((f"{where} {t.get('refId')}", t["expr"]))

# every Prometheus expression through promtool's parser
promtool = shutil.which("promtool")
if not promtool:
    print("note: promtool missing, Prometheus expressions not parsed (scripts/install-deps.sh "
          "installs it)")
elif prom_exprs:
    with tempfile.TemporaryDirectory(prefix="sf2loki-dash-") as tmp:
        rules = os.path.join(tmp, "dash.yaml")
        with open(rules, "w", encoding="utf-8") as f:
            f.write("groups:\n")
            for i, (where, expr) in enumerate(prom_exprs):
                f.write(f"  - name: q{i}\n    rules:\n      - record: q{i}\n        expr: "
                        f"{json.dumps(querycheck.grafana_expand(expr))}\n")
        r = subprocess.run([promtool, "check", "rules", rules], capture_output=True, text=True)
        if r.returncode != 0:
            for m in re.finditer(r'group "q(\d+)".*?: (.*)', r.stdout + r.stderr):
                fail(prom_exprs[int(m.group(1))][0], f"promtool: {m.group(2)}")
            if not failures:
                fail("promtool", r.stdout + r.stderr)

for line in failures:
    print(f"FAIL: {line}", file=sys.stderr)
if failures:
    sys.exit(1)
print(f"ok: {len(paths)} dashboards load; {len(prom_exprs)} Prometheus expressions parse; "
      "every datasource is a template variable")
