#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""Peak memory of `sf2loki backfill` (issue 24, item 2: under 64 MiB for a 1 GiB file and for
50 files).

usage: backfill_rss.py [--bin build/sf2loki] [--gib 1.0] [--files 50] [--file-rows 60000]
                       [--concurrency 2] [--workdir DIR] [--keep]

Two cases, each one `sf2loki backfill` process (defaults for every batch and queue size) from
tests/sim/salesforce_sim.py, which serves the files from disk (the simulator's own API
generator, rendered once), into tests/sim/loki_sim.py --discard:

  1 file    one Daily API file of at least --gib GiB of CSV
  N files   --files Daily files of --file-rows rows each over five event types, read
            --concurrency types at a time

Peak RSS is the process's own high-water mark as the kernel reports it when the process is
reaped (wait4's ru_maxrss), so nothing between two samples is missed. Exit 0 when both runs
exited 0 and Loki counted every row, 1 otherwise, 77 when a simulator's module is missing. The
memory goal is reported, never enforced.
"""

import argparse
import datetime as dt
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# the simulator plumbing (Sim, the generator) is the Windows bench's
_spec = importlib.util.spec_from_file_location("win_elf", os.path.join(HERE, "win-elf-throughput.py"))
welf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(welf)

ISO = "%Y-%m-%dT%H:%M:%S.000+0000"
TYPES = ["API", "URI", "Login", "Logout", "RestApi"]
GOAL_MIB = 64
# bytes per generated API row, to size the 1 GiB file without rendering it twice
ROW_BYTES = 330


def write_config(path, sf_port, key, loki_port, state_path):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"""salesforce:
  login_url: http://127.0.0.1:{sf_port}
  client_id: sim-client-id
  username: sim@example.com
  private_key_file: {key}
sources:
  eventlogfile:
    enabled: true
    event_types: [API]
sink:
  loki:
    url: http://127.0.0.1:{loki_port}/loki/api/v1/push
state:
  file:
    path: {state_path}
service:
  log_format: logfmt
""")


def run_case(opts, pub, key, workdir, files, rows, tag, since, until, types):
    ds_path = os.path.join(workdir, f"dataset-{tag}.json")
    with open(ds_path, "w", encoding="utf-8") as fh:
        json.dump({"eventlogfiles": files}, fh)
    sf = welf.Sim("salesforce_sim.py", ["--dataset", ds_path, "--public-key", pub],
                  os.path.join(workdir, f"sf-{tag}.log"))
    loki = welf.Sim("loki_sim.py", ["--discard"], os.path.join(workdir, f"loki-{tag}.log"))
    res = {"tag": tag, "rows": rows, "files": len(files)}
    try:
        state_path = os.path.join(workdir, f"state-{tag}.json")
        config = os.path.join(workdir, f"config-{tag}.yaml")
        write_config(config, sf.port, key, loki.port, state_path)
        with open(os.path.join(workdir, f"sf2loki-{tag}.log"), "wb") as err, \
                open(os.path.join(workdir, f"summary-{tag}.txt"), "wb") as out:
            t0 = time.monotonic()
            proc = subprocess.Popen(
                [opts.bin, "backfill", "--config", config, "--since", since, "--until", until,
                 "--event-types", ",".join(types), "--concurrency", str(opts.concurrency)],
                stdout=out, stderr=err, stdin=subprocess.DEVNULL)
            _pid, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            res["wall"] = time.monotonic() - t0
        res["rc"] = proc.returncode
        res["rss_mib"] = usage.ru_maxrss / 1024  # KiB on Linux
        res["cpu"] = usage.ru_utime + usage.ru_stime
        with open(os.path.join(workdir, f"summary-{tag}.txt"), encoding="utf-8") as fh:
            res["summary"] = fh.read().strip()
        res["entries"] = welf.get_json(loki.base + "/control/summary?timeout=0")["entries"]
    finally:
        loki.stop()
        sf.stop()
    res["ok"] = res["rc"] == 0 and res["entries"] >= rows
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sf2loki"))
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--file-rows", type=int, default=60000)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true")
    opts = ap.parse_args()
    if not os.access(opts.bin, os.X_OK):
        ap.error(f"{opts.bin} not found (make build)")
    workdir = opts.workdir or tempfile.mkdtemp(prefix="sfl-backfill-rss.")
    os.makedirs(workdir, exist_ok=True)
    keep = opts.keep or opts.workdir is not None
    ok = False
    try:
        key = os.path.join(workdir, "private-key.pem")
        pub = os.path.join(workdir, "public-key.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                        "rsa_keygen_bits:2048", "-out", key], check=True, capture_output=True)
        subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", pub], check=True,
                       capture_output=True)
        day = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        big_rows = int(opts.gib * 2**30 / ROW_BYTES) + 1
        big = os.path.join(workdir, "big.csv")
        print(f"writing {big_rows:,} rows", flush=True)
        big_bytes = welf.write_csv(big, big_rows, day)
        small = os.path.join(workdir, "small.csv")
        print(f"writing {opts.file_rows:,} rows", flush=True)
        small_bytes = welf.write_csv(small, opts.file_rows, day)

        one = [{"Id": "0ATBF0000000001", "EventType": "API", "Interval": "Daily",
                "LogDate": day.strftime(ISO),
                "CreatedDate": (day + dt.timedelta(hours=3)).strftime(ISO),
                "Sequence": 0, "path": big}]
        many = []
        for i in range(opts.files):
            created = day + dt.timedelta(days=i // len(TYPES), hours=3, minutes=i % len(TYPES))
            many.append({"Id": "0ATBF%010d" % (100 + i), "EventType": TYPES[i % len(TYPES)],
                         "Interval": "Daily", "LogDate": created.strftime(ISO),
                         "CreatedDate": created.strftime(ISO), "Sequence": 0, "path": small})
        span = opts.files // len(TYPES) + 2
        until = (day + dt.timedelta(days=span)).strftime("%Y-%m-%d")
        cases = [
            (f"1 file, {big_bytes / 2**30:.2f} GiB ({big_rows:,} rows)", one, big_rows, ["API"],
             big_bytes),
            (f"{opts.files} files x {small_bytes / 2**20:.1f} MiB ({opts.file_rows:,} rows), "
             f"{len(TYPES)} types, concurrency {opts.concurrency}", many,
             opts.file_rows * opts.files, TYPES, small_bytes * opts.files),
        ]
        results = []
        for n, (label, files, rows, types, nbytes) in enumerate(cases):
            r = run_case(opts, pub, key, workdir, files, rows, str(n), "2026-01-01", until,
                         types)
            r["label"] = label
            r["bytes"] = nbytes
            results.append(r)
            print(f"{label}: peak RSS {r['rss_mib']:.1f} MiB, {r['wall']:.1f} s wall, "
                  f"{r['cpu']:.1f} CPU-s, {r['entries']:,} entries, "
                  f"{'ok' if r['ok'] else 'FAILED'}\n  {r['summary']}", flush=True)
        print(f"\n## backfill_rss: `{opts.bin}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
        print(f"| case | CSV MiB | wall s | rows/s | CPU-s | peak RSS MiB | goal < {GOAL_MIB} MiB |")
        print("|---|---|---|---|---|---|---|")
        for r in results:
            print(f"| {r['label']} | {r['bytes'] / 2**20:,.0f} | {r['wall']:.1f} | "
                  f"{r['rows'] / r['wall']:,.0f} | {r['cpu']:.1f} | {r['rss_mib']:.1f} | "
                  f"{'PASS' if r['rss_mib'] < GOAL_MIB else 'FAIL'} |")
        ok = all(r["ok"] for r in results)
        with open(os.path.join(workdir, "results.json"), "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1)
        print(f"\nbackfill_rss: {'PASS' if ok else 'FAIL'} (logs in {workdir}"
              f"{'' if keep or not ok else ', removed'})")
        return 0 if ok else 1
    finally:
        if ok and not keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
