#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""EventLogFile throughput of the Windows binary under wine next to the native one.

usage: win-elf-throughput.py [--bin build/sf2loki] [--exe build-win/dist/sf2loki.exe]
                             [--rows N] [--rounds R] [--legs native,wine] [--deadline S]
                             [--workdir DIR] [--keep]

One API EventLogFile of N rows (1,000,000 unless told: the simulator's own generator, written
to disk once, so the simulator only reads a file) goes from tests/sim/salesforce_sim.py through
`sf2loki run` into tests/sim/loki_sim.py, R times per leg (2 unless told), the legs alternated
(native, wine, native, wine, ...) so both see the same machine load. Each run gets a fresh Loki
simulator and a fresh state file; it is timed from the spawn of the process to the commit of
the file's checkpoint (`eventlogfile:API` holds the file's Id in the state file, which the
daemon writes only after Loki accepted every row before it), and from the first entry Loki
accepted to that commit (the streaming rate, without wine's start-up). Before the legs, each
round measures the floor, the two simulators alone: the same file downloaded by curl into
/dev/null, and 1,000-entry protobuf+snappy bodies posted one after another to a fresh Loki
simulator, as many entries as the file has rows.

CPU time comes from /proc: the daemon (for wine, sf2loki.exe, the wineserver and wine's other
processes, told apart by the private WINEPREFIX this script creates, so no other wine user is
counted) and each simulator.

Exit 0 when every run delivered every row; 1 on a stall or a loss (a run not committed by
--deadline, fewer distinct REQUEST_IDs in Loki than rows, a curl timeout or a failed push in
the daemon's log, or an unclean stop); 77 when a simulator's Python module is missing. Timing
never fails the run. Prints the report on stdout; logs stay in the work directory with --keep
or --workdir.
"""

import argparse
import datetime as dt
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIM = os.path.join(ROOT, "tests", "sim")
PY = "/usr/bin/python3"
SKIP = 77
CLK_TCK = os.sysconf("SC_CLK_TCK")
FILE_ID = "0ATWINBENCH000001"
BATCH = 1000
# distinct bodies the Loki floor cycles through: decoding costs the same for a repeated body
FLOOR_BODIES = 100

sys.path.insert(0, SIM)


def get_json(url, timeout=150):
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.load(resp)


def load_avg():
    with open("/proc/loadavg", encoding="ascii") as fh:
        return float(fh.read().split()[0])


def proc_cpu(pid):
    """(user, system) CPU seconds of one process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            # the command name may hold spaces: fields count from the closing parenthesis
            fields = fh.read().rsplit(")", 1)[1].split()
        return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def wine_processes(wineprefix):
    """{pid: group} for every process of this wine prefix: sf2loki, wineserver or wine."""
    found = {}
    want = b"WINEPREFIX=" + wineprefix.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                env = fh.read().split(b"\0")
            with open(f"/proc/{name}/comm", encoding="utf-8", errors="replace") as fh:
                comm = fh.read().strip()
        except OSError:
            continue
        if want not in env:
            continue
        if comm.startswith("wineserver"):
            found[int(name)] = "wineserver"
        elif comm.startswith("sf2loki"):
            found[int(name)] = "sf2loki.exe"
        else:
            found[int(name)] = "wine other"
    return found


class CpuMeter:
    """CPU seconds of groups of processes between start() and stop()."""

    def __init__(self, groups):
        self.groups = groups  # callable -> {pid: group}
        self.base = {}

    def snapshot(self):
        out = {}
        for pid, group in self.groups().items():
            cpu = proc_cpu(pid)
            if cpu is not None:
                out[pid] = (group, cpu)
        return out

    def start(self):
        self.base = self.snapshot()

    def stop(self):
        totals = {}
        for pid, (group, (user, system)) in self.snapshot().items():
            u0, s0 = self.base.get(pid, (group, (0.0, 0.0)))[1]
            t = totals.setdefault(group, [0.0, 0.0])
            t[0] += user - u0
            t[1] += system - s0
        return {g: (round(u, 2), round(s, 2)) for g, (u, s) in totals.items()}


class Sim:
    """A simulator child that prints "PORT <n>" first."""

    def __init__(self, script, args, log_path):
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen([PY, os.path.join(SIM, script)] + args,
                                     stdout=subprocess.PIPE, stderr=self.log)
        line = self.proc.stdout.readline().decode().strip()
        if not line.startswith("PORT "):
            code = self.proc.wait(30)
            if code == SKIP:
                print(f"{script}: a Python module is missing (see {log_path})", file=sys.stderr)
                sys.exit(SKIP)
            raise RuntimeError(f"{script} did not start (exit {code}, see {log_path})")
        self.port = int(line.split()[1])
        self.base = f"http://127.0.0.1:{self.port}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def write_csv(path, rows, log_hour):
    """The simulator's generated API file, rendered once: serving it from disk keeps the
    simulator's Python CSV generator out of what is measured."""
    import salesforce_sim  # tests/sim: the generator the integration tests use

    gen = salesforce_sim.Generated(FILE_ID, "API", rows, 7, log_hour, "Hourly",
                                   "00DSIM0000000001AA", False)
    size = 0
    with open(path, "wb") as fh:
        for chunk in gen.chunks():
            fh.write(chunk)
            size += len(chunk)
    return size


def floor_bodies(csv_path, rows, workdir):
    """Up to FLOOR_BODIES Loki push bodies of BATCH entries each, lines rendered from the file's rows
    as sorted-key JSON like the daemon's, encoded with the Loki simulator's own classes."""
    import csv

    import loki_decode
    import snappy

    pb2 = loki_decode.load_push_pb2(workdir)
    bodies = []
    with open(csv_path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        now_ns = time.time_ns()
        for b in range(min(FLOOR_BODIES, rows // BATCH)):
            req = pb2.PushRequest()
            stream = req.streams.add()
            stream.labels = '{event_type="API", source="eventlogfile"}'
            for i in range(BATCH):
                row = next(reader)
                e = stream.entries.add()
                ts = now_ns + b * BATCH + i
                e.timestamp.seconds = ts // 1_000_000_000
                e.timestamp.nanos = ts % 1_000_000_000
                e.line = json.dumps(row, sort_keys=True)
            bodies.append(snappy.compress(req.SerializeToString()))
    return bodies


def floor_download(sf, csv_size):
    """Seconds for curl to fetch the LogFile from the simulator into /dev/null."""
    token = json.loads(subprocess.run(
        ["curl", "-sS", "-d", "grant_type=client_credentials", "-d", "client_id=sim-client-id",
         "-d", "client_secret=sim-secret", sf.base + "/services/oauth2/token"],
        check=True, capture_output=True).stdout)["access_token"]
    t0 = time.monotonic()
    out = subprocess.run(
        ["curl", "-sS", "-o", "/dev/null", "-w", "%{size_download}", "-H",
         "Authorization: Bearer " + token,
         f"{sf.base}/services/data/v64.0/sobjects/EventLogFile/{FILE_ID}/LogFile"],
        check=True, capture_output=True, text=True)
    secs = time.monotonic() - t0
    if int(float(out.stdout)) != csv_size:
        raise RuntimeError(f"floor download got {out.stdout} bytes of {csv_size}")
    return secs


def floor_push(bodies, rows, workdir, round_no):
    """Seconds for a fresh Loki simulator to accept `rows` entries posted body after body on
    one kept-alive connection (what the daemon's sink does), and that simulator's CPU."""
    import http.client

    loki = Sim("loki_sim.py", [], os.path.join(workdir, f"loki-floor-{round_no}.log"))
    try:
        meter = CpuMeter(lambda: {loki.proc.pid: "loki sim"})
        conn = http.client.HTTPConnection("127.0.0.1", loki.port, timeout=120)
        sent = 0
        meter.start()
        t0 = time.monotonic()
        while sent < rows:
            body = bodies[(sent // BATCH) % len(bodies)]
            conn.request("POST", "/loki/api/v1/push", body,
                         {"Content-Type": "application/x-protobuf",
                          "Content-Encoding": "snappy"})
            resp = conn.getresponse()
            resp.read()
            if resp.status != 204:
                raise RuntimeError(f"floor push answered {resp.status}")
            sent += BATCH
        secs = time.monotonic() - t0
        cpu = meter.stop().get("loki sim", (0.0, 0.0))
        conn.close()
        return secs, cpu
    finally:
        loki.stop()


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
    interval: Hourly
    event_types: [API]
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
  progress_interval: 10s
""")


def committed(state_path):
    """True once the state file's eventlogfile:API checkpoint names the file."""
    try:
        with open(state_path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return False  # not written yet, or caught between write and rename
    value = doc.get("eventlogfile:API")
    if not value:
        return False
    return any(pair[0] == FILE_ID for pair in json.loads(value).get("ids", []))


def run_leg(leg, run_no, opts, env, sf, key, workdir, wineprefix):
    """One delivery of the file by one binary; returns its measurements."""
    tag = f"{leg}-{run_no}"
    loki = Sim("loki_sim.py", [], os.path.join(workdir, f"loki-{tag}.log"))
    state_path = os.path.join(workdir, f"state-{tag}.json")
    config = os.path.join(workdir, f"config-{tag}.yaml")
    write_config(config, sf.port, key, loki.port, state_path)
    log_path = os.path.join(workdir, f"sf2loki-{tag}.log")
    if leg == "native":
        argv = [opts.bin, "run", "--config", config]
    else:
        argv = [opts.wine_run, opts.exe, "run", "--config", config]
    res = {"leg": leg, "run": run_no, "load_start": load_avg()}
    first = {}

    def watch_first():
        # a long poll on the simulator: it answers once one entry arrived (cheap: the summary
        # of a single push), renewed until the leg ends
        while "t" not in first and not first.get("stop"):
            try:
                if get_json(loki.base + "/control/summary?wait_entries=1&timeout=5")["entries"]:
                    first["t"] = time.monotonic()
            except OSError:
                return

    out = open(log_path, "wb")
    try:
        if leg == "native":
            meter = None
        else:
            meter = CpuMeter(lambda: wine_processes(wineprefix))
            meter.start()
        sims = CpuMeter(lambda: {sf.proc.pid: "salesforce sim", loki.proc.pid: "loki sim"})
        sims.start()
        t0 = time.monotonic()
        # into a file, never a pipe: wine's processes would hold a pipe open after the exe
        daemon = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, env=env)
        if meter is None:
            meter = CpuMeter(lambda: {daemon.pid: "sf2loki"})
            meter.start()
        watcher = threading.Thread(target=watch_first, daemon=True)
        watcher.start()
        deadline = t0 + opts.deadline
        done = False
        # the checkpoint is only visible in the state file: polling it at 10 Hz costs
        # nothing next to the run and bounds the timing error to 0.1 s
        while time.monotonic() < deadline:
            if committed(state_path):
                done = True
                break
            try:
                daemon.wait(timeout=0.1)
                break  # it exited before committing
            except subprocess.TimeoutExpired:
                pass
        t_done = time.monotonic()
        res["cpu"] = meter.stop()
        res["sim_cpu"] = sims.stop()
        res["load_end"] = load_avg()
        first["stop"] = True
        res["committed"] = done
        res["wall"] = t_done - t0
        res["stream"] = t_done - first["t"] if "t" in first else None
        res["startup"] = first["t"] - t0 if "t" in first else None
        stop_t0 = time.monotonic()
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGINT)
        try:
            res["rc"] = daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
            res["rc"] = "killed after 60 s"
        res["stop_s"] = time.monotonic() - stop_t0
        watcher.join(10)
        summary = get_json(loki.base + "/control/summary?timeout=0")
        res["entries"] = summary["entries"]
        res["distinct"] = summary["distinct"]
    finally:
        out.close()
        loki.stop()
    with open(log_path, encoding="utf-8", errors="replace") as fh:
        log = fh.read()
    res["push_failed"] = log.count("push failed")
    res["timeouts"] = log.count("Timeout was reached") + log.count("timed out after")
    res["ok"] = (res["committed"] and res["distinct"] == opts.rows and res["push_failed"] == 0
                 and res["timeouts"] == 0 and res["rc"] == 0)
    res["log"] = log_path
    return res


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt_rate(rows, secs):
    return f"{rows / secs:,.0f}" if secs else "-"


def report(opts, csv_size, gen_s, floors, results, wine_start):
    rows = opts.rows
    print(f"\n## win-elf-throughput: {rows:,} rows, {csv_size / 2**20:.0f} MiB CSV "
          f"(written in {gen_s:.1f} s), {opts.rounds} rounds, legs alternated")
    print(f"machine: {os.cpu_count()} cores; 1-min load average per run below")
    if wine_start is not None:
        print(f"wine start-up alone (`sf2loki.exe version`, warm wineserver): {wine_start:.2f} s")
    if floors:
        dl = median([f[0] for f in floors])
        push = median([f[1] for f in floors])
        print(f"floor (simulators alone, median of {len(floors)}): download {dl:.2f} s "
              f"({fmt_rate(rows, dl)} rows/s), Loki simulator accepting {rows:,} entries "
              f"{push:.2f} s ({fmt_rate(rows, push)} rows/s, "
              f"CPU {median([sum(f[2]) for f in floors]):.1f} s)")
    print("\n| run | leg | load | wall s | rows/s (wall) | start-up s | rows/s (streaming) | "
          "daemon CPU s (user+sys) | sim CPU s (sf / loki) | Loki entries / distinct | ok |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        cpu = ", ".join(f"{g} {u:.1f}+{s:.1f}" for g, (u, s) in sorted(r["cpu"].items()))
        sim = r["sim_cpu"]
        print(f"| {r['run']} | {r['leg']} | {r['load_start']:.1f}–{r['load_end']:.1f} | "
              f"{r['wall']:.1f} | {fmt_rate(rows, r['wall'])} | "
              f"{r['startup'] if r['startup'] is None else round(r['startup'], 1)} | "
              f"{fmt_rate(rows, r['stream']) if r['stream'] else '-'} | {cpu} | "
              f"{sum(sim.get('salesforce sim', (0, 0))):.1f} / "
              f"{sum(sim.get('loki sim', (0, 0))):.1f} | "
              f"{r['entries']:,} / {r['distinct']:,} | {'yes' if r['ok'] else 'NO'} |")
    med = {}
    for leg in ("native", "wine"):
        legs = [r for r in results if r["leg"] == leg and r["committed"]]
        if legs:
            med[leg] = (median([r["wall"] for r in legs]), median([r["stream"] for r in legs]))
    print("\n| median | wall s | rows/s (wall) | rows/s (streaming) |")
    print("|---|---|---|---|")
    for leg, (wall, stream) in med.items():
        print(f"| {leg} | {wall:.1f} | {fmt_rate(rows, wall)} | {fmt_rate(rows, stream)} |")
    if "native" in med and "wine" in med:
        print(f"\nwine / native throughput, medians: {med['native'][0] / med['wine'][0]:.2f} "
              f"(wall), {med['native'][1] / med['wine'][1]:.2f} (streaming)")
        # the load moves between rounds: each round's pair saw about the same machine
        pairs = []
        for rnd in range(1, opts.rounds + 1):
            legs = {r["leg"]: r for r in results if r["run"] == rnd and r["committed"]}
            if "native" in legs and "wine" in legs and legs["wine"]["stream"]:
                pairs.append(legs["native"]["stream"] / legs["wine"]["stream"])
        if pairs:
            print("wine / native streaming throughput per round: " +
                  ", ".join(f"{p:.2f}" for p in pairs) + f"; median {median(pairs):.2f}")
    for leg in ("native", "wine"):
        legs = [r for r in results if r["leg"] == leg and r["committed"]]
        if legs:
            per_m = [sum(u + s for u, s in r["cpu"].values()) * 1e6 / rows for r in legs]
            server = [sum(r["cpu"].get("wineserver", (0, 0))) * 1e6 / rows for r in legs]
            print(f"{leg} CPU per million rows (all of its processes): median "
                  f"{median(per_m):.1f} s" +
                  (f", of which the wineserver {median(server):.1f} s" if leg == "wine" else ""))
    for r in results:
        if not r["ok"]:
            print(f"FAIL {r['leg']} run {r['run']}: committed {r['committed']}, distinct "
                  f"{r['distinct']} of {rows}, push failures {r['push_failed']}, timeouts "
                  f"{r['timeouts']}, exit {r['rc']} (log {r['log']})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sf2loki"))
    ap.add_argument("--exe", default=os.path.join(ROOT, "build-win", "dist", "sf2loki.exe"))
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--legs", default="native,wine")
    ap.add_argument("--deadline", type=float, default=1200.0,
                    help="seconds one run may take before it counts as a stall")
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-floor", action="store_true")
    opts = ap.parse_args()
    legs = [leg for leg in opts.legs.split(",") if leg]
    if opts.rows < BATCH or opts.rounds < 1 or any(l not in ("native", "wine") for l in legs):
        ap.error("--rows must be >= 1000, --rounds >= 1, --legs native and/or wine")
    for leg, path in (("native", opts.bin), ("wine", opts.exe)):
        if leg in legs and not os.access(path, os.R_OK):
            ap.error(f"{path} not found (make build / make win-build)")
    opts.wine_run = os.path.join(os.environ.get("SF2LOKI_WIN_DEPS", "/var/cache/sf2loki-win"),
                                 "wine-run")
    workdir = opts.workdir or tempfile.mkdtemp(prefix="sfl-win-elf-bench.")
    os.makedirs(workdir, exist_ok=True)
    keep = opts.keep or opts.workdir is not None
    # a wine prefix of our own: its wineserver serves nobody else, so its CPU is ours
    wineprefix = os.path.join(workdir, "wineprefix")
    env = dict(os.environ, WINEPREFIX=wineprefix, WINEDEBUG="-all")
    sims = []
    wineserver = None
    ok = False
    try:
        key = os.path.join(workdir, "private-key.pem")
        pub = os.path.join(workdir, "public-key.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                        "rsa_keygen_bits:2048", "-out", key], check=True, capture_output=True)
        subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", pub], check=True,
                       capture_output=True)
        hour = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=2)).replace(
            minute=0, second=0, microsecond=0)
        csv_path = os.path.join(workdir, "api.csv")
        t0 = time.monotonic()
        csv_size = write_csv(csv_path, opts.rows, hour)
        gen_s = time.monotonic() - t0
        iso = "%Y-%m-%dT%H:%M:%S.000+0000"
        dataset = {"eventlogfiles": [{
            "Id": FILE_ID, "EventType": "API", "Interval": "Hourly",
            "LogDate": hour.strftime(iso),
            "CreatedDate": (hour + dt.timedelta(hours=1, minutes=5)).strftime(iso),
            "Sequence": 0, "path": csv_path}]}
        with open(os.path.join(workdir, "dataset.json"), "w", encoding="utf-8") as fh:
            json.dump(dataset, fh)
        sf = Sim("salesforce_sim.py", ["--dataset", os.path.join(workdir, "dataset.json"),
                                       "--public-key", pub], os.path.join(workdir, "sf.log"))
        sims.append(sf)
        bodies = None if opts.no_floor else floor_bodies(csv_path, opts.rows, workdir)

        wine_start = None
        if "wine" in legs:
            # the prefix is created and the wineserver kept up for the whole run, outside the
            # timing: what is measured is the exe, not wineboot
            with open(os.path.join(workdir, "wineboot.log"), "wb") as log:
                subprocess.run([opts.wine_run, opts.exe, "version"], env=env, stdout=log,
                               stderr=subprocess.STDOUT, check=True, timeout=600)
                wineserver = subprocess.Popen(["wineserver", "-f", "-p"], env=env, stdout=log,
                                              stderr=subprocess.STDOUT)
                t0 = time.monotonic()
                subprocess.run([opts.wine_run, opts.exe, "version"], env=env, stdout=log,
                               stderr=subprocess.STDOUT, check=True, timeout=120)
                wine_start = time.monotonic() - t0

        floors = []
        results = []
        for rnd in range(1, opts.rounds + 1):
            if bodies is not None:
                dl = floor_download(sf, csv_size)
                push, cpu = floor_push(bodies, opts.rows, workdir, rnd)
                floors.append((dl, push, cpu))
                print(f"round {rnd} floor: download {dl:.2f} s, Loki accepting {push:.2f} s",
                      flush=True)
            for leg in legs:
                r = run_leg(leg, rnd, opts, env, sf, key, workdir, wineprefix)
                results.append(r)
                print(f"round {rnd} {leg}: {r['wall']:.1f} s wall, "
                      f"{fmt_rate(opts.rows, r['wall'])} rows/s, {r['distinct']:,} distinct, "
                      f"{'ok' if r['ok'] else 'FAILED'}", flush=True)
        report(opts, csv_size, gen_s, floors, results, wine_start)
        with open(os.path.join(workdir, "results.json"), "w", encoding="utf-8") as fh:
            json.dump({"rows": opts.rows, "csv_bytes": csv_size, "wine_start": wine_start,
                       "floors": floors, "results": results}, fh, indent=1)
        ok = all(r["ok"] for r in results)
        print(f"\nwin-elf-throughput: {'PASS' if ok else 'FAIL'} (logs in {workdir}"
              f"{'' if keep or not ok else ', removed'})")
        return 0 if ok else 1
    finally:
        for s in sims:
            s.stop()
        if wineserver is not None:
            subprocess.run(["wineserver", "-k"], env=env, check=False)
            try:
                wineserver.wait(30)
            except subprocess.TimeoutExpired:
                wineserver.kill()
        if ok and not keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
