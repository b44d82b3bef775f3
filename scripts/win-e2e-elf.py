#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""The Windows stall check: sf2loki.exe under wine delivers one EventLogFile of N rows (100,000
unless told) from tests/sim/salesforce_sim.py to tests/sim/loki_sim.py, then stops on Ctrl-C
(SIGINT, which wine turns into CTRL_C_EVENT). Prints the numbers docs/deployment/windows.md
quotes; exits 1 when not every row arrived in time, a push failed, or the stop was not clean.

usage: win-e2e-elf.py --exe build-win/dist/sf2loki.exe [--rows N] [--deadline S]
"""

import argparse
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"


def start_sim(script, args, workdir, name):
    log = open(os.path.join(workdir, name + ".log"), "wb")
    proc = subprocess.Popen([PY, os.path.join(ROOT, "tests", "sim", script)] + args,
                            stdout=subprocess.PIPE, stderr=log)
    line = proc.stdout.readline().decode().strip()
    if not line.startswith("PORT "):
        sys.exit("%s did not start: see %s" % (script, log.name))
    return proc, int(line.split()[1])


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--deadline", type=float, default=900.0)
    opts = ap.parse_args()
    wine_run = os.path.join(os.environ.get("SF2LOKI_WIN_DEPS", "/var/cache/sf2loki-win"),
                            "wine-run")
    work = tempfile.mkdtemp(prefix="sfl-win-e2e.")
    key = os.path.join(work, "private-key.pem")
    pub = os.path.join(work, "public-key.pem")
    subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                    "rsa_keygen_bits:2048", "-out", key], check=True, capture_output=True)
    subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", pub], check=True,
                   capture_output=True)
    hour = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=2)).replace(
        minute=0, second=0, microsecond=0)
    iso = "%Y-%m-%dT%H:%M:%S.000+0000"
    dataset = {"eventlogfiles": [{
        "Id": "0ATWIN0000000001", "EventType": "API", "Interval": "Hourly",
        "LogDate": hour.strftime(iso),
        "CreatedDate": (hour + dt.timedelta(hours=1, minutes=5)).strftime(iso),
        "Sequence": 0, "generate": {"rows": opts.rows, "kind": "API", "seed": 7}}]}
    with open(os.path.join(work, "dataset.json"), "w") as f:
        json.dump(dataset, f)

    procs = []
    try:
        sf, sf_port = start_sim("salesforce_sim.py", [
            "--dataset", os.path.join(work, "dataset.json"), "--public-key", pub], work, "sf")
        procs.append(sf)
        loki, loki_port = start_sim("loki_sim.py", [], work, "loki")
        procs.append(loki)
        config = os.path.join(work, "config.yaml")
        with open(config, "w") as f:
            f.write("""salesforce:
  login_url: http://127.0.0.1:%d
  client_id: sim-client-id
  username: sim@example.com
  private_key_file: %s
sources:
  eventlogfile:
    enabled: true
    interval: Hourly
    event_types: [API]
    poll_interval: 30s
    lookback: 6h
sink:
  loki:
    url: http://127.0.0.1:%d/loki/api/v1/push
state:
  file:
    path: %s
service:
  health_addr: 127.0.0.1:0
  log_format: logfmt
  progress_interval: 10s
""" % (sf_port, key, loki_port, os.path.join(work, "state.json")))

        out = open(os.path.join(work, "sf2loki.log"), "wb")
        started = time.monotonic()
        # into a file, never a pipe: the wineserver would hold a pipe open after we are done
        exe = subprocess.Popen([wine_run, opts.exe, "run", "--config", config], stdout=out,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        procs.append(exe)
        entries = 0
        summary_url = "http://127.0.0.1:%d/control/summary" % loki_port
        # a long poll on the simulator (it answers as soon as every row arrived), renewed in
        # short turns so a crashed sf2loki.exe ends the wait early
        while time.monotonic() - started < opts.deadline and exe.poll() is None:
            entries = get_json("%s?wait_entries=%d&timeout=5" % (summary_url, opts.rows))["entries"]
            if entries >= opts.rows:
                break
        delivered_s = time.monotonic() - started
        stop_started = time.monotonic()
        if exe.poll() is None:
            exe.send_signal(signal.SIGINT)
        try:
            rc = exe.wait(timeout=60)
        except subprocess.TimeoutExpired:
            exe.kill()
            rc = "killed after 60 s"
        stop_s = time.monotonic() - stop_started
        out.close()
        log = open(os.path.join(work, "sf2loki.log"), errors="replace").read()
        summary = get_json(summary_url)
        failures = log.count("push failed")
        timeouts = log.count("Timeout was reached")
        print("win-e2e-elf: %d rows, %d entries in Loki (%d distinct REQUEST_ID) in %.1f s "
              "(%.0f rows/s, wine start-up included)" % (
                  opts.rows, summary["entries"], summary["distinct"], delivered_s,
                  summary["entries"] / delivered_s if delivered_s > 0 else 0))
        print("win-e2e-elf: push failures %d, curl timeouts %d; Ctrl-C stop in %.1f s, "
              "exit code %s" % (failures, timeouts, stop_s, rc))
        print("win-e2e-elf: logs in %s" % work)
        ok = (summary["distinct"] == opts.rows and failures == 0 and timeouts == 0 and rc == 0)
        print("win-e2e-elf: %s" % ("PASS" if ok else "FAIL"))
        return 0 if ok else 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()


if __name__ == "__main__":
    sys.exit(main())
