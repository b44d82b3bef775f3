#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""Every metric that deploy/grafana's Prometheus queries and deploy/prometheus's rules read is
one a running sf2loki exports on GET /metrics.

Starts the bundled simulators (tests/sim: the Salesforce demo org, Pub/Sub with one topic, Loki)
and `sf2loki run` with every source on, the limits poller, a sampled type, a promoted label over
its cardinality limit, a drop_row rule, records without their time field, and one throttled
query and one failed download from the simulator, so that the families registered at their
first event exist too. Then:

1. at the first scrape, before any push: the gauges the alerts need when nothing happens
   (sf2loki_leader, sf2loki_build_info, sf2loki_queue_depth) have a sample (SFL-0006);
2. waits (deadline 120 s) until every metric named by a dashboard expression, a template
   variable or a rule (recording-rule outputs aside) is in the exposition: as a sample, or as a
   family whose HELP/TYPE lines are there because its component is running but nothing has
   been counted yet (a counter of failures that did not happen);
3. waits until the daemon is idle (the push counter and the queue stay the same across scrapes)
   and checks that the alerts' gauges (last push, leader, org limits) still have samples: a
   gauge that went silent when idle could never fire SF2LokiNoRecentPush (SFL-0006).

usage: check_metric_names.py SOURCE_ROOT SF2LOKI_BIN
exit 0 ok, 1 on a problem, 77 when a simulator's Python module or python3-yaml is missing
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import querycheck  # noqa: E402

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml missing")
    sys.exit(77)

SKIP = 77
PY = "/usr/bin/python3"
TOPIC = "/event/LoginEventStream"
# metrics Prometheus itself adds, not /metrics
PROMETHEUS_OWN = {"up", "scrape_duration_seconds", "scrape_samples_scraped"}
ALERT_GAUGES = ("sf2loki_leader", "sf2loki_last_push_success_timestamp_seconds",
                "sf2loki_salesforce_limit_remaining", "sf2loki_salesforce_limit_max")
IDLE_GAUGES = ("sf2loki_leader", "sf2loki_build_info", "sf2loki_queue_depth")
# exported only by a replica of a sharded group (coordinate.sharding), which this daemon is not:
# tests/integration/test-shard-leases.c finds both on a sharded replica's /metrics
SHARDED_ONLY = {"sf2loki_units_total", "sf2loki_units_owned"}

root, binary = sys.argv[1], sys.argv[2]
sim_dir = os.path.join(root, "tests", "sim")


def wanted_names():
    """metric name -> where it is used; recording-rule outputs are left out."""
    used = {}
    recorded = set()
    for path in sorted(glob.glob(os.path.join(root, "deploy", "prometheus", "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            for group in yaml.safe_load(f)["groups"]:
                for rule in group["rules"]:
                    if "record" in rule:
                        recorded.add(rule["record"])
                    name = rule.get("record") or rule.get("alert")
                    for m in querycheck.promql_metric_names(rule["expr"]):
                        used.setdefault(m, f"{os.path.basename(path)} {name}")
    for path in sorted(glob.glob(os.path.join(root, "deploy", "grafana", "*.json"))):
        with open(path, encoding="utf-8") as f:
            dash = json.load(f)
        base = os.path.basename(path)
        prom_vars = {v["name"] for v in dash["templating"]["list"]
                     if v.get("type") == "datasource" and v.get("query") == "prometheus"}

        def is_prom(ds):
            return isinstance(ds, dict) and ds.get("uid", "").strip("${}") in prom_vars

        exprs = []
        for v in dash["templating"]["list"]:
            if v.get("type") == "query" and is_prom(v.get("datasource")):
                q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
                m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", q)
                exprs.append((f"{base} variable {v['name']}", m.group(1) if m else q))

        def panels(items):
            for p in items:
                yield p
                yield from panels(p.get("panels", []))

        for p in panels(dash["panels"]):
            for t in p.get("targets", []):
                if is_prom(t.get("datasource", p.get("datasource"))):
                    exprs.append((f"{base} {p['title']!r}", t["expr"]))
        for where, expr in exprs:
            for m in querycheck.promql_metric_names(querycheck.grafana_expand(expr)):
                used.setdefault(m, where)
    return {m: w for m, w in used.items()
            if m not in recorded and m not in PROMETHEUS_OWN and m not in SHARDED_ONLY}


def family_of(name, families):
    if name in families:
        return name
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and families.get(name[: -len(suffix)]) == "histogram":
            return name[: -len(suffix)]
    return None


def parse(text):
    """(families {name: type}, samples {family: [line]})"""
    families, samples = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            families[name] = kind
            samples.setdefault(name, [])
        elif line and not line.startswith("#"):
            name = re.match(r"[A-Za-z_:][A-Za-z0-9_:]*", line).group()
            fam = family_of(name, families) or name
            samples.setdefault(fam, []).append(line)
    return families, samples


def value(samples, family, match=""):
    for line in samples.get(family, []):
        if match in line:
            return float(line.rsplit(" ", 1)[1])
    return None


class Sim:
    """A simulator: prints "PORT <n>" once it listens (or exits 77 when a module is missing)."""

    def __init__(self, name, argv, work):
        self.log = os.path.join(work, name + ".log")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                     stderr=open(self.log, "w"), text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            code = self.proc.wait(30)
            if code == SKIP:
                print(f"SKIP: {name} lacks a Python module (see scripts/install-deps.sh)")
                sys.exit(SKIP)
            raise RuntimeError(f"{name} did not start (exit {code}): {open(self.log).read()}")
        self.base = f"http://127.0.0.1:{int(line.split()[1])}"

    def post(self, path, doc):
        req = urllib.request.Request(self.base + path, data=json.dumps(doc).encode(),
                                     method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            body = r.read()
        return json.loads(body) if body else None

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=30) as r:
            return json.loads(r.read())


def wait_for(what, deadline, check, interval=0.25):
    """check() until it returns something true, or fail with what it last said."""
    last = None
    while time.monotonic() < deadline:
        ok, last = check()
        if ok:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}: {last}")


def main():
    used = wanted_names()
    if not used:
        print("FAIL: no metric names found in deploy/", file=sys.stderr)
        return 1
    if not shutil.which("openssl"):
        print("SKIP: openssl missing")
        return SKIP
    procs = []
    work = tempfile.mkdtemp(prefix="sf2loki-metric-names-")
    keep = True
    try:
        key, pub = os.path.join(work, "key.pem"), os.path.join(work, "pub.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                        "rsa_keygen_bits:2048", "-out", key], check=True,
                       stderr=subprocess.DEVNULL)
        subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", pub], check=True)
        sf = Sim("salesforce-sim", [PY, os.path.join(sim_dir, "salesforce_sim.py"), "--demo",
                                    "--public-key", pub], work)
        procs.append(sf.proc)
        ps = Sim("pubsub-sim", [PY, os.path.join(sim_dir, "pubsub_sim.py"), "--keepalive-ms",
                                "2000"], work)
        procs.append(ps.proc)
        loki = Sim("loki-sim", [PY, os.path.join(sim_dir, "loki_sim.py")], work)
        procs.append(loki.proc)
        ps.post("/control/topic", {"topic": TOPIC})
        ps.post("/control/publish", {"topic": TOPIC, "count": 5, "kind": "login"})
        grpc_port = ps.get("/control/info")["grpc_port"]
        # one refused query and one failed download: the families that only appear with
        # their first event
        sf.post("/control/fault", {"match": "query", "count": 1, "status": 403,
                                   "error_code": "REQUEST_LIMIT_EXCEEDED",
                                   "message": "TotalRequests Limit exceeded."})
        sf.post("/control/fault", {"match": "logfile", "count": 1, "status": 500})
        config = os.path.join(work, "config.yaml")
        with open(config, "w", encoding="utf-8") as f:
            f.write(f"""salesforce:
  login_url: {sf.base}
  client_id: sim-client-id
  username: sim@example.com
  private_key_file: {key}
  limits: {{enabled: true, poll_interval: 1s}}
sources:
  # the same logins from three sources, on purpose: every source's metrics at once
  allow_overlap: true
  eventlogfile:
    enabled: true
    interval: Hourly
    event_types:
      - {{name: Login, labels: [LOGIN_TYPE]}}
      - {{name: API, sample: 0.5}}
      - URI
    transforms:
      - {{action: drop_row, match: {{EVENT_TYPE: URI, REQUEST_ID: "*1"}}, name: uri-sample}}
    poll_interval: 30s
    lookback: 6h
  eventlog_objects:
    enabled: true
    objects:
      - {{name: LoginEvent, poll_interval: 30s, lookback: 2h, settle_window: 1s}}
    # without its time field every record takes the fallback time
    transforms:
      - {{action: drop_field, fields: [EventDate]}}
  pubsub:
    enabled: true
    endpoint: http://127.0.0.1:{grpc_port}
    replay_preset: EARLIEST
    topics: ["{TOPIC}"]
sink:
  loki:
    url: {loki.base}/loki/api/v1/push
    # four login types over a limit of two: the guard folds some
    label_cardinality: {{max_values: 2}}
state:
  file: {{path: {os.path.join(work, "state.json")}}}
service:
  health_addr: 127.0.0.1:0
  log_format: logfmt
""")
        log_path = os.path.join(work, "sf2loki.log")
        # the throttled listing is logged at GLib's critical level (level=error in the log),
        # which the test environment's G_DEBUG=fatal-criticals would turn into an abort
        env = {k: v for k, v in os.environ.items() if k != "G_DEBUG"}
        daemon = subprocess.Popen([binary, "run", "--config", config], env=env,
                                  stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
        procs.append(daemon)
        deadline = time.monotonic() + 120

        def health_port():
            if daemon.poll() is not None:
                raise AssertionError(f"sf2loki exited {daemon.returncode}: "
                                     f"{open(log_path).read()}")
            m = re.search(r"health server listening on .*\(port (\d+)\)", open(log_path).read())
            return bool(m), m and int(m.group(1))

        port = wait_for("the health server", deadline, health_port, interval=0.05)

        def scrape():
            if daemon.poll() is not None:
                raise AssertionError(f"sf2loki exited {daemon.returncode}; see {log_path}")
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
                return parse(r.read().decode())

        problems = []
        families, samples = scrape()
        if value(samples, "sf2loki_loki_push_total", 'outcome="success"'):
            print("note: the first scrape came after a push; step 1 judged it anyway")
        for g in IDLE_GAUGES:
            if not samples.get(g):
                problems.append(f"first scrape: {g} has no sample (SFL-0006)")

        def all_present():
            fams, smp = scrape()
            absent = sorted(m for m in used if family_of(m, fams) is None)
            return not absent, (fams, smp, absent)

        try:
            families, samples, _ = wait_for("every metric deploy/ reads", deadline, all_present,
                                            interval=0.5)
        except AssertionError:
            for m in all_present()[1][2]:
                problems.append(f"{m} (used by {used[m]}) is not exported")

        def idle():
            _, smp = scrape()
            state = (value(smp, "sf2loki_loki_push_total", 'outcome="success"'),
                     value(smp, "sf2loki_queue_depth"))
            ok = state[0] and state[1] == 0 and state == idle.last
            idle.last = state
            return ok, smp

        idle.last = None
        samples = wait_for("the daemon to go idle", time.monotonic() + 120, idle, interval=1.0)
        for g in ALERT_GAUGES:
            if not samples.get(g):
                problems.append(f"idle scrape: {g} has no sample, so its alert cannot fire "
                                "(SFL-0006)")
        last = value(samples, "sf2loki_last_push_success_timestamp_seconds")
        if not last or abs(time.time() - last) > 3600:
            problems.append(f"sf2loki_last_push_success_timestamp_seconds = {last} after pushes")
        for p in problems:
            print(f"FAIL: {p}", file=sys.stderr)
        if problems:
            print(f"(logs in {work})", file=sys.stderr)
            return 1
        keep = False
        family_only = sorted(m for m in used if not samples.get(family_of(m, families)))
        print(f"ok: all {len(used)} metrics deploy/ reads are exported by a running sf2loki; "
              f"{len(used) - len(family_only)} with samples, {len(family_only)} as families "
              f"with nothing counted yet ({', '.join(family_only)})")
        return 0
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
