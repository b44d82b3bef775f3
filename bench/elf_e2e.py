#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""EventLogFile end to end through the real binary: throughput, CPU and memory by file size
and by the number of event types read at once (issue 25, items 1 and 5).

usage: elf_e2e.py [--bin build/sf2loki] [--rows 10000,100000,1000000,2720000]
                  [--types 1,4,16] [--type-rows 100000] [--rounds 3] [--workdir DIR] [--keep]

Each case is one `sf2loki run` process (defaults for every batch and queue size) reading
API-shaped EventLogFiles from tests/sim/salesforce_sim.py, which serves them from disk (the
simulator's own generator, rendered once), into tests/sim/loki_sim.py --discard (it decodes each
protobuf push and counts its entries, nothing more). A size case is one file of N rows; a types
case is T files of --type-rows rows, one per event type, with `concurrency: T`. A run is timed
from the spawn of the process to the commit of every file's checkpoint (the state file names
every file's Id, written only after Loki accepted every row before it); CPU is the daemon's
(user + system, all threads, /proc), peak RSS its VmHWM read right at that commit.

The floor, measured in the same round: the same file(s) downloaded by curl into /dev/null from
the same simulator, one after another. The report gives each case's medians and its ratio to
that floor. Exit 0 when every run delivered every row, 1 otherwise, 77 when a simulator's Python
module is missing. Timing never fails the run.
"""

import argparse
import datetime as dt
import importlib.util
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# the simulator plumbing (Sim, CpuMeter, the generator) is the Windows bench's
_spec = importlib.util.spec_from_file_location("win_elf", os.path.join(HERE, "win-elf-throughput.py"))
welf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(welf)

TYPES = ["API", "URI", "Login", "Logout", "RestApi", "Report", "VisualforceRequest",
         "ApexExecution", "ApexCallout", "LightningPageView", "LightningInteraction",
         "ContentTransfer", "BulkApi", "Sites", "TimeBasedWorkflow", "QueuedExecution"]
ISO = "%Y-%m-%dT%H:%M:%S.000+0000"


def file_id(n):
    return "0ATE2E%011d" % n


def write_config(path, sf_port, key, loki_port, state_path, types):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"""salesforce:
  login_url: http://127.0.0.1:{sf_port}
  client_id: sim-client-id
  username: sim@example.com
  private_key_file: {key}
sources:
  eventlogfile:
    enabled: true
    interval: Hourly
    event_types: [{", ".join(types)}]
    concurrency: {len(types)}
    poll_interval: 1h
    lookback: 6h
sink:
  loki:
    url: http://127.0.0.1:{loki_port}/loki/api/v1/push
state:
  file:
    path: {state_path}
service:
  health_addr: 127.0.0.1:0
  log_format: logfmt
""")


def committed(state_path, files):
    try:
        with open(state_path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return False
    for f in files:
        value = doc.get(f"eventlogfile:{f['EventType']}")
        if not value or not any(p[0] == f["Id"] for p in json.loads(value).get("ids", [])):
            return False
    return True


def vm_hwm_mib(pid):
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return None


def token(sf):
    return json.loads(subprocess.run(
        ["curl", "-sS", "-d", "grant_type=client_credentials", "-d", "client_id=sim-client-id",
         "-d", "client_secret=sim-secret", sf.base + "/services/oauth2/token"],
        check=True, capture_output=True).stdout)["access_token"]


def floor_download(sf, files):
    """Seconds for curl to fetch every file of the case into /dev/null, one after another."""
    bearer = "Authorization: Bearer " + token(sf)
    t0 = time.monotonic()
    for f in files:
        subprocess.run(["curl", "-sS", "-o", "/dev/null", "-H", bearer,
                        f"{sf.base}/services/data/v64.0/sobjects/EventLogFile/{f['Id']}/LogFile"],
                       check=True)
    return time.monotonic() - t0


def run_case(opts, sf, key, workdir, files, rows, tag):
    loki = welf.Sim("loki_sim.py", ["--discard"], os.path.join(workdir, f"loki-{tag}.log"))
    state_path = os.path.join(workdir, f"state-{tag}.json")
    config = os.path.join(workdir, f"config-{tag}.yaml")
    types = [f["EventType"] for f in files]
    write_config(config, sf.port, key, loki.port, state_path, types)
    log_path = os.path.join(workdir, f"sf2loki-{tag}.log")
    res = {"tag": tag, "load": welf.load_avg()}
    with open(log_path, "wb") as out:
        try:
            t0 = time.monotonic()
            daemon = subprocess.Popen([opts.bin, "run", "--config", config], stdout=out,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            meter = welf.CpuMeter(lambda: {daemon.pid: "sf2loki"})
            meter.start()
            done = False
            while time.monotonic() < t0 + opts.deadline:
                if committed(state_path, files):
                    done = True
                    break
                try:
                    daemon.wait(timeout=0.05)
                    break
                except subprocess.TimeoutExpired:
                    pass
            res["wall"] = time.monotonic() - t0
            res["rss"] = vm_hwm_mib(daemon.pid) if daemon.poll() is None else None
            user, system = meter.stop().get("sf2loki", (0.0, 0.0))
            res["cpu"] = user + system
            res["cpu_sys"] = system
            if daemon.poll() is None:
                daemon.send_signal(signal.SIGINT)
            try:
                res["rc"] = daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
                res["rc"] = "killed"
            res["entries"] = welf.get_json(loki.base + "/control/summary?timeout=0")["entries"]
        finally:
            loki.stop()
    res["ok"] = done and res["rc"] == 0 and res["entries"] >= rows
    return res


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sf2loki"))
    ap.add_argument("--rows", default="10000,100000,1000000,2720000")
    ap.add_argument("--types", default="1,4,16")
    ap.add_argument("--type-rows", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--deadline", type=float, default=900.0)
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true")
    opts = ap.parse_args()
    sizes = [int(x) for x in opts.rows.split(",") if x]
    type_counts = [int(x) for x in opts.types.split(",") if x]
    if any(n < 1 for n in sizes) or any(not 1 <= t <= len(TYPES) for t in type_counts):
        ap.error(f"--rows must be positive, --types between 1 and {len(TYPES)}")
    if not os.access(opts.bin, os.X_OK):
        ap.error(f"{opts.bin} not found (make build)")
    workdir = opts.workdir or tempfile.mkdtemp(prefix="sfl-elf-e2e.")
    os.makedirs(workdir, exist_ok=True)
    keep = opts.keep or opts.workdir is not None
    ok = False
    sf = None
    try:
        key = os.path.join(workdir, "private-key.pem")
        pub = os.path.join(workdir, "public-key.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                        "rsa_keygen_bits:2048", "-out", key], check=True, capture_output=True)
        subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", pub], check=True,
                       capture_output=True)
        hour = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=2)).replace(
            minute=0, second=0, microsecond=0)
        # cases: (label, rows in all, CSV bytes in all, rows per file, event types)
        cases = []
        csv_bytes = {}
        seq = 0
        for n in sizes + [opts.type_rows]:
            path = os.path.join(workdir, f"api-{n}.csv")
            if n not in csv_bytes:
                print(f"writing {n:,} rows", flush=True)
                csv_bytes[n] = welf.write_csv(path, n, hour)
        created = hour + dt.timedelta(hours=1, minutes=5)

        def add_files(n, types):
            nonlocal seq
            files = []
            for t in types:
                seq += 1
                f = {"Id": file_id(seq), "EventType": t, "Interval": "Hourly",
                     "LogDate": hour.strftime(ISO), "CreatedDate": created.strftime(ISO),
                     "Sequence": seq, "path": os.path.join(workdir, f"api-{n}.csv")}
                files.append(f)
            return files

        for n in sizes:
            cases.append((f"{n:,} rows, 1 type", n, csv_bytes[n], n, ["API"]))
        for t in type_counts:
            cases.append((f"{t} types x {opts.type_rows:,} rows", opts.type_rows * t,
                          csv_bytes[opts.type_rows] * t, opts.type_rows, TYPES[:t]))
        results = {}
        for rnd in range(1, opts.rounds + 1):
            for label, rows, nbytes, n, types in cases:
                files = add_files(n, types)
                ds_path = os.path.join(workdir, "dataset.json")
                with open(ds_path, "w", encoding="utf-8") as fh:
                    json.dump({"eventlogfiles": files}, fh)
                # a fresh simulator per run: it serves exactly this run's files
                if sf is not None:
                    sf.stop()
                sf = welf.Sim("salesforce_sim.py", ["--dataset", ds_path, "--public-key", pub],
                              os.path.join(workdir, "sf.log"))
                floor = floor_download(sf, files)
                r = run_case(opts, sf, key, workdir, files, rows, f"{rnd}-{len(results)}")
                r["floor"] = floor
                results.setdefault(label, []).append(r)
                print(f"round {rnd} {label}: {r['wall']:.2f} s wall "
                      f"({rows / r['wall']:,.0f} rows/s), cpu {r['cpu']:.2f} s (sys {r['cpu_sys']:.2f}), rss "
                      f"{r['rss'] or 0:.1f} MiB, floor {floor:.2f} s, load {r['load']:.1f}, "
                      f"{'ok' if r['ok'] else 'FAILED'}", flush=True)
        print(f"\n## elf_e2e: medians of {opts.rounds} rounds, `{opts.bin}`, "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
        print("| case | CSV MiB | wall s | rows/s | CPU-s per M rows (of it system) | "
              "peak RSS MiB | download floor s | wall / floor |")
        print("|---|---|---|---|---|---|---|---|")
        for label, rows, nbytes, _n, _types in cases:
            rs = results[label]
            wall = median([r["wall"] for r in rs])
            cpu = median([r["cpu"] for r in rs])
            sys_cpu = median([r["cpu_sys"] for r in rs])
            rss = median([r["rss"] for r in rs])
            floor = median([r["floor"] for r in rs])
            print(f"| {label} | {nbytes / 2**20:,.1f} | {wall:.2f} | {rows / wall:,.0f} | "
                  f"{cpu / rows * 1e6:.2f} ({sys_cpu / rows * 1e6:.2f}) | {rss or 0:.1f} | {floor:.2f} | "
                  f"{wall / floor:.1f} |")
        ok = all(r["ok"] for rs in results.values() for r in rs)
        with open(os.path.join(workdir, "results.json"), "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1)
        print(f"\nelf_e2e: {'PASS' if ok else 'FAIL'} (logs in {workdir}"
              f"{'' if keep or not ok else ', removed'})")
        return 0 if ok else 1
    finally:
        if sf is not None:
            sf.stop()
        if ok and not keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
