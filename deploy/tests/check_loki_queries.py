#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""Every LogQL query of deploy/loki/sf2loki-rules.yaml and of the Loki panels and variables of
deploy/grafana/*.json parses (querycheck.logql) and reads only what sf2loki ships:

- stream selectors use the labels the sources set (docs/sources/README.md: source, event_type
  and the deployment labels), with source values of real sources;
- a field a json stage extracts, a label filter reads, unwrap takes, or an aggregation groups
  by is a stream label, structured metadata (`level`), or a column/field of every event type
  the selector names (salesforce-fields.json), so the selector must name its event types;
  `TIME` and not `RUN_TIME` is the ApexCallout duration (SFL-0024), and ELF Login has no
  geography (SFL-0023);
- a line filter written as `"KEY": ...` names such a field too;
- a rule over EventLogFile rows looks back at least 12 h, because those rows are stamped hours
  before they are published and a window of minutes never holds one (SFL-0022); a rule over
  real-time sources looks back at most 1 h;
- every Loki rule has the labels and annotations alert routing needs.

The simulator's EventLogFile columns (tests/sim/salesforce_sim.py) must be in the catalogue,
which keeps the catalogue honest about the columns it can be checked against.

usage: check_loki_queries.py SOURCE_ROOT     exit 0 ok, 1 on a problem, 77 without python3-yaml
"""

import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import querycheck  # noqa: E402

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml missing")
    sys.exit(77)

ELF_MIN_WINDOW = 12 * 3600
REALTIME_MAX_WINDOW = 3600

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
with open(os.path.join(root, "deploy", "tests", "salesforce-fields.json"), encoding="utf-8") as f:
    catalog = json.load(f)
LABELS = set(catalog["labels"])
SOURCES = set(catalog["sources"])
METADATA = set(catalog["structured_metadata"])
FIELDS = {"eventlogfile": {k: set(v) for k, v in catalog["eventlogfile"].items()},
          "eventlog_objects": {k: set(v) for k, v in catalog["objects"].items()},
          "pubsub": {k: set(v) for k, v in catalog["objects"].items()}}

failures = []
checked = 0


def fail(where, message):
    failures.append(f"{where}: {message}")


def alternatives(matchers, label):
    """The values a selector allows for label: None when it does not pin them down."""
    for name, op, value in matchers:
        if name == label and op == "=":
            return [value]
        if name == label and op == "=~" and re.fullmatch(r"[A-Za-z0-9_|]+", value):
            return value.split("|")
    return None


def check_query(where, expr, kind):
    """kind: 'elf-rule', 'realtime-rule' or 'panel'."""
    global checked
    try:
        ranges, grouped = querycheck.logql(querycheck.grafana_expand(expr))
    except querycheck.QueryError as e:
        fail(where, f"does not parse: {e}\n    {expr}")
        return
    checked += 1
    extracted_all = set()
    for r in ranges:
        for name, _, _ in r.matchers:
            if name not in LABELS:
                fail(where, f"selects on {name!r}, which no source sets as a stream label")
        sources = alternatives(r.matchers, "source")
        if sources is None:
            fail(where, "the selector does not name its source(s)")
            continue
        for s in sources:
            if s not in SOURCES:
                fail(where, f"source {s!r} is not a source sf2loki has")
        types = alternatives(r.matchers, "event_type")
        known = set()
        if types is not None:
            fields_per_type = []
            for t in types:
                sets = [FIELDS[s][t] for s in sources if t in FIELDS.get(s, {})]
                if not sets:
                    fail(where, f"event_type {t!r} is not in salesforce-fields.json for "
                                f"{'/'.join(sources)}")
                    continue
                fields_per_type.append(set.union(*sets))
            if fields_per_type:
                known = set.intersection(*fields_per_type)
        if r.bare_json:
            fail(where, "bare `| json` extracts every key; name the fields it needs")
        for label, key in r.extracted.items():
            if key not in known:
                fail(where, f"extracts {key!r}, which is not a field of every event type "
                            f"the selector names ({types})")
            extracted_all.add(label)
        readable = LABELS | METADATA | set(r.extracted)
        for name in r.filtered:
            if name not in readable:
                fail(where, f"filters on {name!r}, neither a stream label, metadata nor "
                            "an extracted field")
        if r.unwrap is not None and r.unwrap not in r.extracted:
            fail(where, f"unwraps {r.unwrap!r}, which no json stage extracted")
        for _, value in r.line_filters:
            m = re.match(r'^"([^"]+)": ', value)
            if m and m.group(1) not in known:
                fail(where, f"line filter names {m.group(1)!r}, not a field of {types}")
        if types and "ApexCallout" in types and r.unwrap == "RUN_TIME":
            fail(where, "ApexCallout's duration is TIME, not RUN_TIME (SFL-0024)")
        if kind == "elf-rule" or (kind != "panel" and "eventlogfile" in sources):
            if "eventlogfile" not in sources or len(sources) != 1:
                fail(where, "a rule of the EventLogFile group must select source=eventlogfile")
            if r.range is None or r.range < ELF_MIN_WINDOW:
                fail(where, f"EventLogFile window {r.range} s is under {ELF_MIN_WINDOW} s: rows "
                            "stamped hours before they arrive never fall in it (SFL-0022)")
        elif kind == "realtime-rule":
            if r.range is None or r.range > REALTIME_MAX_WINDOW:
                fail(where, f"real-time window {r.range} s is over {REALTIME_MAX_WINDOW} s")
    for label in grouped:
        if label not in LABELS | METADATA | extracted_all:
            fail(where, f"groups by {label!r}, which the query never extracts")


# --- the catalogue against the simulator's columns -----------------------------------------
sim = open(os.path.join(root, "tests", "sim", "salesforce_sim.py"), encoding="utf-8").read()
kinds = re.search(r"^_KINDS = \{(.*?)^\}", sim, re.S | re.M)
if not kinds:
    fail("tests/sim/salesforce_sim.py", "no _KINDS table found")
else:
    for etype, cols in re.findall(r'"(\w+)": \[([^\]]*)\]', kinds.group(1)):
        missing = set(re.findall(r'"(\w+)"', cols)) - FIELDS["eventlogfile"].get(etype, set())
        if missing:
            fail("salesforce-fields.json", f"{etype} lacks the simulator's {sorted(missing)}")
for geo in ("COUNTRY_CODE", "COUNTRY", "CITY"):
    if geo in FIELDS["eventlogfile"]["Login"]:
        fail("salesforce-fields.json", f"ELF Login has no {geo} column (SFL-0023)")

# --- Loki rules ----------------------------------------------------------------------------
rules_path = os.path.join(root, "deploy", "loki", "sf2loki-rules.yaml")
with open(rules_path, encoding="utf-8") as f:
    doc = yaml.safe_load(f)
names = set()
for group in doc.get("groups", []):
    kind = "elf-rule" if "eventlogfile" in group["name"] else "realtime-rule"
    if not isinstance(group.get("interval"), str):
        fail(group["name"], "a group needs an evaluation interval")
    for rule in group["rules"]:
        name = rule.get("record") or rule.get("alert")
        where = f"deploy/loki {group['name']}/{name}"
        if name in names:
            fail(where, "duplicate rule name")
        names.add(name)
        if "record" in rule and not re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*", rule["record"]):
            fail(where, "not a valid metric name")
        if "alert" in rule:
            labels = rule.get("labels", {})
            if labels.get("severity") not in ("warning", "critical") or \
                    labels.get("service") != "sf2loki":
                fail(where, "an alert needs severity warning|critical and service: sf2loki")
            anchor = re.search(r"alerts\.md#(\w+)", rule.get("annotations", {}).get(
                "description", ""))
            if not anchor or anchor.group(1) != name.lower():
                fail(where, f"description should link docs/operations/alerts.md#{name.lower()}")
        check_query(where, rule["expr"], kind)
if not names:
    fail(rules_path, "no rules")

# --- Loki queries of the dashboards --------------------------------------------------------
for path in sorted(glob.glob(os.path.join(root, "deploy", "grafana", "*.json"))):
    with open(path, encoding="utf-8") as f:
        dash = json.load(f)
    base = os.path.basename(path)
    loki_vars = {v["name"] for v in dash.get("templating", {}).get("list", [])
                 if v.get("type") == "datasource" and v.get("query") == "loki"}

    def is_loki(ds):
        return isinstance(ds, dict) and (ds.get("type") == "loki" or
                                         ds.get("uid", "").strip("${}") in loki_vars)

    for var in dash.get("templating", {}).get("list", []):
        if var.get("type") == "query" and is_loki(var.get("datasource")):
            q = var.get("query")
            q = q.get("query", "") if isinstance(q, dict) else q
            m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", q.strip())
            if not m or m.group(2) not in LABELS:
                fail(f"{base} variable {var['name']}", f"should be label_values(selector, "
                                                        f"stream label): {q}")
                continue
            check_query(f"{base} variable {var['name']}", m.group(1), "panel")

    def panels(items):
        for p in items:
            yield p
            yield from panels(p.get("panels", []))

    for p in panels(dash.get("panels", [])):
        for t in p.get("targets", []):
            ds = t.get("datasource", p.get("datasource"))
            if is_loki(ds):
                check_query(f"{base} panel {p.get('title')!r} {t.get('refId')}", t["expr"],
                            "panel")

for line in failures:
    print(f"FAIL: {line}", file=sys.stderr)
if failures:
    sys.exit(1)
print(f"ok: {checked} LogQL queries read only labels and fields sf2loki ships; "
      f"{len(names)} Loki rules")
