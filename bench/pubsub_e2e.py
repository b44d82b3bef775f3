#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""Pub/Sub end to end: the Pub/Sub simulator at its maximum rate, through `sf2loki run`, into
the Loki simulator, for --minutes M (default 10).

usage: pubsub_e2e.py [--minutes M] [--topics N] [--bin build/sf2loki] [--sample-seconds S]
                     [--sim-only-seconds S] [--burst N] [--workdir DIR] [--keep]

Starts tests/sim/salesforce_sim.py (JWT auth), tests/sim/pubsub_sim.py and
tests/sim/loki_sim.py (with --journal), then the daemon with N topics from EARLIEST. A publisher
thread keeps a backlog of events waiting in the Pub/Sub simulator for every topic, so the
simulator always has events to send; its Avro encoding (python3-avro, under the simulator's
lock, in the same process as its gRPC sending) then limits the rate, which is why the simulator
is first measured alone
(same publisher, a trivial python3-grpcio consumer that only counts) for --sim-only-seconds.

Every S seconds it samples the daemon's VmRSS (/proc/PID/status), its CPU time and every
simulator's (/proc/PID/stat), and the entries the Loki simulator accepted (read from its
journal, which it writes before answering 204; the simulator's in-memory copy is cleared after
each sample so its memory stays bounded). At the end publishing stops, the backlog drains and
every published event must be in Loki (the event's EventIdentifier carries topic and sequence;
duplicates are counted and shown, not failed: delivery is at least once). Then --burst N events
are preloaded while the daemon is stopped (SIGSTOP) and timed from SIGCONT until all are in
Loki: the daemon's rate when the simulator only has to send. Prints the report on stdout; exit
0 when nothing was lost, 1 otherwise, 77 when a simulator's module is missing.

The work directory (a temporary one unless --workdir) holds the logs and the Loki journal, about
1.1 KB per event (2.3 GB for 10 minutes at 3 k events/s); it is removed at the end unless
--keep or --workdir is given.

Needs only Debian's python3 (grpcio, protobuf, avro, snappy, jwt, cryptography come from
scripts/install-deps.sh for the simulators) and openssl for the JWT key.
"""

import argparse
import json
import os
import queue
import re
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
# a backlog this deep per topic keeps the simulator's streams busy between two publish rounds
BACKLOG_LOW = 20000
CHUNK = 1000
ID_RE = re.compile(r'"EventIdentifier":\s*"([A-Za-z0-9_]+)-(\d+)"')


def http(method, url, doc=None, timeout=60):
    data = None if doc is None else json.dumps(doc).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        body = resp.read()
    return json.loads(body) if body else None


class Proc:
    """A child process; a simulator prints "PORT <n>" first."""

    def __init__(self, name, argv, log, env=None, port_line=True):
        self.name = name
        self.log = open(log, "w", encoding="utf-8")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE if port_line else self.log,
                                     stderr=self.log, env=env, text=True)
        self.port = None
        if port_line:
            line = self.proc.stdout.readline()
            if not line.startswith("PORT "):
                code = self.proc.wait(30)
                if code == SKIP:
                    print(f"{name}: a module is missing (see {log})", file=sys.stderr)
                    sys.exit(SKIP)
                raise RuntimeError(f"{name} did not start (exit {code}, see {log})")
            self.port = int(line.split()[1])

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def cpu_seconds(self):
        try:
            with open(f"/proc/{self.proc.pid}/stat", encoding="ascii") as fh:
                # the command name may hold spaces: fields count from the closing parenthesis
                fields = fh.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / CLK_TCK
        except (OSError, IndexError):
            return None

    def rss_kib(self, field="VmRSS"):
        """VmRSS, or its parts: RssAnon (heap, stacks) and RssFile (mapped files: the
        libraries' pages, which grow as code paths are first run)."""
        try:
            with open(f"/proc/{self.proc.pid}/status", encoding="ascii") as fh:
                for line in fh:
                    if line.startswith(field + ":"):
                        return int(line.split()[1])
        except OSError:
            pass
        return None

    def stop(self, sig=signal.SIGTERM, grace=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Publisher(threading.Thread):
    """Keeps at least BACKLOG_LOW unsent events per topic in the Pub/Sub simulator."""

    def __init__(self, ctl, topics):
        super().__init__(daemon=True)
        self.ctl = ctl
        self.topics = topics
        self.stop_event = threading.Event()
        self.lock = threading.Lock()
        self.published = {t: 0 for t in topics}
        self.busy = 0.0  # seconds spent in publish calls (the simulator encoding Avro)
        self.error = None

    def total(self):
        with self.lock:
            return sum(self.published.values())

    def run(self):
        try:
            while not self.stop_event.is_set():
                stats = http("GET", self.ctl + "/control/stats")["topics"]
                did = False
                for t in self.topics:
                    st = stats.get(t, {"latest": 0, "sent": 0})
                    if st["latest"] - st["sent"] >= BACKLOG_LOW:
                        continue
                    t0 = time.monotonic()
                    ans = http("POST", self.ctl + "/control/publish",
                               {"topic": t, "count": CHUNK, "kind": "login"})
                    with self.lock:
                        self.busy += time.monotonic() - t0
                        self.published[t] = ans["last"]
                    did = True
                    if self.stop_event.is_set():
                        break
                if not did:
                    self.stop_event.wait(0.05)
        except Exception as exc:  # reported by the main thread
            self.error = exc


class Journal:
    """Reads the Loki simulator's journal as it grows: entries and (topic, sequence) seen."""

    def __init__(self, path):
        self.path = path
        self.fh = None
        self.rest = ""
        self.entries = 0
        self.pushes = 0
        self.seen = {}  # topic -> bytearray, one count per sequence (saturating at 255)
        self.unparsed = 0

    def poll(self):
        if self.fh is None:
            if not os.path.exists(self.path):
                return self.entries
            self.fh = open(self.path, encoding="utf-8")
        data = self.rest + self.fh.read()
        lines = data.split("\n")
        self.rest = lines.pop()
        for line in lines:
            if not line:
                continue
            self.pushes += 1
            for s in json.loads(line)["streams"]:
                for e in s["entries"]:
                    self.entries += 1
                    m = ID_RE.search(e["line"])
                    if m is None:
                        self.unparsed += 1
                        continue
                    seq = int(m.group(2))
                    b = self.seen.setdefault(m.group(1), bytearray())
                    if len(b) <= seq:
                        b.extend(bytes(max(seq + 1 - len(b), len(b))))
                    if b[seq] < 255:
                        b[seq] += 1
        return self.entries


def load_pb2(workdir):
    out = os.path.join(workdir, "pb")
    os.makedirs(out, exist_ok=True)
    subprocess.run(["protoc", f"-I{os.path.join(ROOT, 'proto')}", f"--python_out={out}",
                    "pubsub_api.proto"], check=True)
    sys.path.insert(0, out)
    import pubsub_api_pb2  # noqa: E402 (generated just above)
    return pubsub_api_pb2


def sim_only(ps, grpc_port, workdir, seconds, n_topics):
    """The simulator's own rate: the same publisher, a consumer that only counts."""
    import grpc
    pb = load_pb2(workdir)
    topics = [f"/event/SimOnly{i}EventStream" for i in range(n_topics)]
    channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
    call = channel.stream_stream("/eventbus.v1.PubSub/Subscribe",
                                 request_serializer=pb.FetchRequest.SerializeToString,
                                 response_deserializer=pb.FetchResponse.FromString)
    received = [0] * n_topics
    done = threading.Event()
    md = (("accesstoken", "bench"), ("instanceurl", "http://bench"), ("tenantid", "00Dbench"))

    def consume(i):
        q = queue.Queue()
        q.put(pb.FetchRequest(topic_name=topics[i], replay_preset=pb.EARLIEST,
                              num_requested=100))

        def requests():
            while True:
                r = q.get()
                if r is None:
                    return
                yield r

        stream = call(requests(), metadata=md)
        try:
            for resp in stream:
                received[i] += len(resp.events)
                if resp.pending_num_requested <= 50:
                    q.put(pb.FetchRequest(num_requested=100 - resp.pending_num_requested))
                if done.is_set():
                    break
        except grpc.RpcError:
            pass  # the channel closed at the end of the measurement
        finally:
            q.put(None)
            stream.cancel()

    pub = Publisher(ps.base, topics)
    pub.start()
    threads = [threading.Thread(target=consume, args=(i,), daemon=True) for i in range(n_topics)]
    for t in threads:
        t.start()
    # counted once the backlog is built, so the window is the steady state: the simulator
    # encoding new events as fast as it sends them
    deadline = time.monotonic() + seconds
    while pub.total() - sum(received) < BACKLOG_LOW * n_topics and time.monotonic() < deadline:
        done.wait(0.2)
    r0, c0, m0 = sum(received), ps.cpu_seconds(), time.monotonic()
    done.wait(seconds / 2)
    r1, c1, m1 = sum(received), ps.cpu_seconds(), time.monotonic()
    pub.stop_event.set()
    pub.join(60)
    with pub.lock:
        enc_rate = sum(pub.published.values()) / pub.busy if pub.busy > 0 else 0.0
    # then sending only: the backlog drains with nothing being encoded
    published = pub.total()
    r2, m2 = sum(received), time.monotonic()
    end = m2 + seconds / 2
    while sum(received) < published and time.monotonic() < end:
        done.wait(0.1)
    r3, m3 = sum(received), time.monotonic()
    done.set()
    for t in threads:
        t.join(10)
    channel.close()
    return {"rate": (r1 - r0) / (m1 - m0), "sim_cpu": (c1 - c0) / (m1 - m0),
            "encode_rate": enc_rate, "seconds": m1 - m0,
            "send_rate": (r3 - r2) / (m3 - m2) if m3 > m2 else 0.0, "send_events": r3 - r2}


def run_burst(opts, daemon, ps, pub, journal, loki):
    """Preloads --burst events while the daemon is stopped, then times how fast they reach
    Loki: the daemon's end-to-end rate when the simulator has nothing to encode."""
    per_topic = opts.burst // len(opts.topic_names)
    print(f"burst: preloading {per_topic * len(opts.topic_names):,} events ...", file=sys.stderr)
    start = journal.poll()
    daemon.proc.send_signal(signal.SIGSTOP)
    try:
        for t in opts.topic_names:
            left = per_topic
            while left > 0:
                n = min(CHUNK, left)
                ans = http("POST", ps.base + "/control/publish",
                           {"topic": t, "count": n, "kind": "login"})
                with pub.lock:
                    pub.published[t] = ans["last"]
                left -= n
    finally:
        cpu0 = daemon.cpu_seconds()
        t0 = time.monotonic()
        daemon.proc.send_signal(signal.SIGCONT)
    want = start + per_topic * len(opts.topic_names)
    rss_max = 0
    wait = threading.Event()
    while journal.poll() < want and time.monotonic() - t0 < opts.drain_seconds:
        rss_max = max(rss_max, daemon.rss_kib() or 0)
        http("POST", loki.base + "/control/clear", {})
        wait.wait(0.05)
    secs = time.monotonic() - t0
    n = journal.entries - start
    return {"events": n, "seconds": secs, "rate": n / secs,
            "cpu_per_m": (daemon.cpu_seconds() - cpu0) / n * 1e6 if n else 0.0,
            "rss_max": rss_max}


def write_config(path, sf, grpc_port, loki, key, state, topics):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"""# generated by bench/pubsub_e2e.py
salesforce:
  login_url: {sf.base}
  client_id: sim-client-id
  username: sim@example.com
  private_key_file: {key}
sources:
  pubsub:
    enabled: true
    endpoint: http://127.0.0.1:{grpc_port}
    replay_preset: EARLIEST
    topics: [{", ".join(topics)}]
sink:
  loki:
    url: {loki.base}/loki/api/v1/push
state:
  store: file
  file: {{path: {state}}}
service:
  log_format: json
  log_level: info
""")


def at(samples, t):
    """The sample taken closest to time t (seconds since the start)."""
    return min(samples, key=lambda s: abs(s["t"] - t))


def rss_slope(samples):
    """Least-squares slope of RSS in KiB per minute."""
    ts = [s["t"] / 60 for s in samples]
    ys = [s["rss"] for s in samples]
    mt, my = statistics.mean(ts), statistics.mean(ys)
    return sum((x - mt) * (y - my) for x, y in zip(ts, ys)) / sum((x - mt) ** 2 for x in ts)


def mib(kib):
    return f"{kib / 1024:.1f} MiB"


def report(opts, samples, pub, journal, only, drain_s, sustained, burst, load_before,
           load_after):
    end = samples[-1]
    dur = end["t"]
    print("# Pub/Sub end to end (bench/pubsub_e2e.py)")
    print()
    cpu = "?"
    with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
        for line in fh:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    print(f"machine: {os.cpu_count()} cores ({cpu}); load average before {load_before}, "
          f"after {load_after}")
    print(f"run: {len(opts.topic_names)} topics, {dur / 60:.1f} min measured, samples every "
          f"{opts.sample_seconds:g} s, daemon {opts.bin}")
    print()
    if only is not None:
        print(f"simulator alone ({only['seconds']:.0f} s, python3-grpcio counting consumer): "
              f"{only['rate']:,.0f} events/s delivered, simulator CPU "
              f"{only['sim_cpu'] * 100:.0f}% of a core; its publish calls (Avro encoding) "
              f"{only['encode_rate']:,.0f} events/s; sending a {only['send_events']:,}-event "
              f"backlog with nothing to encode {only['send_rate']:,.0f} events/s")
    received = end["received"]
    rate = received / dur if dur > 0 else 0.0
    print(f"end to end: {received:,} events in {dur:.0f} s = {rate:,.0f} events/s sustained")
    # from the daemon's start: start-up (auth, subscriptions) is part of the cost
    d_cpu = end["cpu"]
    if received:
        print(f"daemon CPU: {d_cpu:.1f} s = {d_cpu / received * 1e6:.1f} CPU-s per million "
              f"events ({d_cpu / dur * 100:.0f}% of a core)")
    for name in ("pubsub_sim", "loki_sim", "salesforce_sim"):
        c = end["sims"][name] - samples[0]["sims"][name]
        print(f"{name} CPU: {c:.1f} s ({c / dur * 100:.0f}% of a core)")
    published, busy, drained = sustained
    print(f"publisher: {published:,} events published, {busy:.0f} s of it inside the "
          f"simulator's publish call ({published / busy if busy else 0:,.0f} events/s "
          f"of Avro encoding)")
    print()
    print("| minute | events/s | daemon CPU % | RSS avg | RSS max |")
    print("|---|---|---|---|---|")
    minutes = int(dur // 60)
    minute_avg = []
    for m in range(minutes):
        a, b = at(samples, m * 60), at(samples, (m + 1) * 60)
        span = b["t"] - a["t"]
        in_min = [s["rss"] for s in samples if m * 60 <= s["t"] <= (m + 1) * 60]
        minute_avg.append(statistics.mean(in_min))
        print(f"| {m + 1} | {(b['received'] - a['received']) / span:,.0f} | "
              f"{(b['cpu'] - a['cpu']) / span * 100:.0f} | {mib(minute_avg[-1])} | "
              f"{mib(max(in_min))} |")
    print()
    rss = [s["rss"] for s in samples]
    warm = at(samples, 60)["rss"]
    print(f"RSS: start {mib(samples[0]['rss'])}, after warm-up (60 s) {mib(warm)}, "
          f"max {mib(max(rss))}, end {mib(rss[-1])}")
    after = [s for s in samples if s["t"] >= 60]
    if len(after) >= 2:
        print(f"RSS slope after warm-up (least squares): {rss_slope(after):+.1f} KiB/min")
    # a one-time step (a heap high-water mark) and a steady climb (a leak) both fail the
    # minute comparison; the second half tells them apart
    half = [s for s in samples if s["t"] >= dur / 2]
    if len(half) >= 2:
        print(f"RSS over the second half: {mib(min(s['rss'] for s in half))} – "
              f"{mib(max(s['rss'] for s in half))}, slope {rss_slope(half):+.1f} KiB/min")
    flat = None
    if minutes >= 3:
        second, last = minute_avg[1], minute_avg[-1]
        change = (last - second) / second * 100
        flat = abs(change) <= 5.0
        print(f"flat: last-minute average {mib(last)} vs second-minute {mib(second)} "
              f"({change:+.1f}%): {'PASS' if flat else 'FAIL'} (within 5%)")
        # the same comparison per part: a leak shows in the anonymous pages, while mapped
        # library pages only grow as code paths run for the first time
        for part in ("anon", "file"):
            avg = [statistics.mean([s[part] or 0 for s in samples
                                    if m * 60 <= s["t"] <= (m + 1) * 60])
                   for m in (1, minutes - 1)]
            print(f"  {'RssAnon' if part == 'anon' else 'RssFile'}: second minute "
                  f"{mib(avg[0])}, last minute {mib(avg[1])} "
                  f"({(avg[1] - avg[0]) / max(avg[0], 1) * 100:+.1f}%)")
    print()
    missing = dup = 0
    for t in opts.topic_names:
        short = t.rsplit("/", 1)[-1]
        want = pub.published[t]
        b = journal.seen.get(short, bytearray())
        got = sum(1 for i in range(1, want + 1) if i < len(b) and b[i] >= 1)
        extra = sum(b[i] - 1 for i in range(1, min(want + 1, len(b))) if b[i] > 1)
        missing += want - got
        dup += extra
        print(f"{t}: published {want:,}, in Loki {got:,}, duplicates {extra:,}")
    if drain_s > 0:
        print(f"after publishing stopped the {drained:,}-event backlog reached Loki at "
              f"{drained / drain_s:,.0f} events/s (the simulator only sending)")
    if burst is not None:
        print(f"burst: {burst['events']:,} events preloaded while the daemon was stopped "
              f"(SIGSTOP), then in Loki after {burst['seconds']:.1f} s = "
              f"{burst['rate']:,.0f} events/s, daemon CPU {burst['cpu_per_m']:.1f} s per million, "
              f"RSS max {mib(burst['rss_max'])} (the rate the daemon reaches when the "
              f"simulator only sends; includes up to one 1 s flush interval)")
    lost = missing != 0 or journal.unparsed != 0
    print(f"loss check (drained in {drain_s:.1f} s after publishing stopped): "
          f"{'FAIL' if lost else 'PASS'}: {missing} missing, {dup} duplicated, "
          f"{journal.unparsed} unparsed lines, {journal.pushes:,} pushes")
    return not lost


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--topics", type=int, default=2)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sf2loki"))
    ap.add_argument("--sample-seconds", type=float, default=5.0)
    ap.add_argument("--sim-only-seconds", type=float, default=60.0,
                    help="measure the simulator alone first; 0 skips")
    ap.add_argument("--burst", type=int, default=200000,
                    help="events preloaded with the daemon stopped, then timed; 0 skips")
    ap.add_argument("--drain-seconds", type=float, default=300.0)
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true", help="keep the work directory and logs")
    opts = ap.parse_args()
    if not os.access(opts.bin, os.X_OK):
        print(f"{opts.bin} not built (make build)", file=sys.stderr)
        return 2
    opts.topic_names = ["/event/LoginEventStream"] + \
        [f"/event/Bench{i}EventStream" for i in range(1, opts.topics)]
    workdir = opts.workdir or tempfile.mkdtemp(prefix="sf2loki-pubsub-bench-")
    os.makedirs(workdir, exist_ok=True)
    procs = []
    load_before = open("/proc/loadavg", encoding="ascii").read().split()[:3]
    try:
        key = os.path.join(workdir, "key.pem")
        pub_key = os.path.join(workdir, "pub.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                        "rsa_keygen_bits:2048", "-out", key], check=True,
                       stderr=subprocess.DEVNULL)
        subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", pub_key], check=True)
        sf = Proc("salesforce_sim", [PY, os.path.join(SIM, "salesforce_sim.py"),
                                     "--public-key", pub_key],
                  os.path.join(workdir, "salesforce-sim.log"))
        procs.append(sf)
        ps = Proc("pubsub_sim", [PY, os.path.join(SIM, "pubsub_sim.py")],
                  os.path.join(workdir, "pubsub-sim.log"))
        procs.append(ps)
        journal_path = os.path.join(workdir, "loki-journal.jsonl")
        loki = Proc("loki_sim", [PY, os.path.join(SIM, "loki_sim.py"), "--journal",
                                 journal_path], os.path.join(workdir, "loki-sim.log"))
        procs.append(loki)
        grpc_port = http("GET", ps.base + "/control/info")["grpc_port"]

        only = None
        if opts.sim_only_seconds > 0:
            print(f"measuring the Pub/Sub simulator alone for {opts.sim_only_seconds:g} s ...",
                  file=sys.stderr)
            only = sim_only(ps, grpc_port, workdir, opts.sim_only_seconds, opts.topics)

        config = os.path.join(workdir, "config.yaml")
        write_config(config, sf, grpc_port, loki, key, os.path.join(workdir, "state.json"),
                     opts.topic_names)
        pub = Publisher(ps.base, opts.topic_names)
        pub.start()
        # a backlog before the daemon starts, so its first minute is not spent waiting
        while pub.total() < CHUNK * len(opts.topic_names) and pub.error is None:
            pub.stop_event.wait(0.1)
        env = dict(os.environ, SF2LOKI_SERVICE__HEALTH_ADDR="127.0.0.1:0")
        daemon = Proc("sf2loki", [opts.bin, "run", "--config", config],
                      os.path.join(workdir, "sf2loki.log"), env=env, port_line=False)
        procs.append(daemon)
        journal = Journal(journal_path)
        samples = []
        t0 = time.monotonic()
        stop = threading.Event()
        total = opts.minutes * 60
        next_t = 1.0
        print(f"running {opts.minutes:g} min ...", file=sys.stderr)
        while True:
            now = time.monotonic() - t0
            if next_t > now:
                stop.wait(next_t - now)
            if daemon.proc.poll() is not None:
                raise RuntimeError(f"sf2loki exited with {daemon.proc.returncode} "
                                   f"(see {daemon.log.name})")
            if pub.error is not None:
                raise RuntimeError(f"publisher failed: {pub.error}")
            received = journal.poll()
            st = http("GET", ps.base + "/control/stats")["topics"]
            sent = sum(st.get(t, {}).get("sent", 0) for t in opts.topic_names)
            samples.append({"t": time.monotonic() - t0, "rss": daemon.rss_kib(),
                            "anon": daemon.rss_kib("RssAnon"),
                            "file": daemon.rss_kib("RssFile"),
                            "cpu": daemon.cpu_seconds(), "received": received,
                            "sent": sent,
                            "sims": {p.name: p.cpu_seconds() for p in (sf, ps, loki)}})
            # the journal keeps everything; the simulator's in-memory copy is not needed
            http("POST", loki.base + "/control/clear", {})
            s = samples[-1]
            print(f"  {s['t']:6.0f} s  in Loki {received:>10,}  sent {sent:>10,}  "
                  f"published {pub.total():>10,}"
                  f"  rss {mib(s['rss'])} (anon {mib(s['anon'] or 0)}, file "
                  f"{mib(s['file'] or 0)})  cpu {s['cpu']:.1f} s", file=sys.stderr)
            if s["t"] >= total:
                break
            next_t += opts.sample_seconds

        pub.stop_event.set()
        pub.join(120)
        published = pub.total()
        pub_busy = pub.busy
        before_drain = journal.poll()
        drain0 = time.monotonic()
        while journal.poll() < published and time.monotonic() - drain0 < opts.drain_seconds:
            stop.wait(0.1)
        drain_s = time.monotonic() - drain0
        drained = journal.entries - before_drain
        burst = None
        if opts.burst > 0:
            burst = run_burst(opts, daemon, ps, pub, journal, loki)
        daemon.stop()
        load_after = open("/proc/loadavg", encoding="ascii").read().split()[:3]
        ok = report(opts, samples, pub, journal, only, drain_s, (published, pub_busy, drained),
                    burst, " ".join(load_before), " ".join(load_after))
        return 0 if ok else 1
    finally:
        for p in reversed(procs):
            # SIGINT lets a simulator run its clean-up (pubsub_sim removes its protoc output)
            p.stop(signal.SIGTERM if p.name == "sf2loki" else signal.SIGINT)
        if opts.keep or opts.workdir:
            print(f"work directory kept: {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
