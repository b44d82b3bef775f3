#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""End-to-end scenarios of sf2loki.exe under wine, against the simulators in tests/sim/.

usage: win-e2e.py --exe build-win/dist/sf2loki.exe --native build/sf2loki
                  [--only NAME[,NAME...]] [--list] [--keep]

Scenarios (all of them unless --only; each prints its numbers and PASS or FAIL):
  parity       `version` and `check` of the exe give the native binary's exit codes, stdout and
               stderr (a good config, an unknown key, a bad value, a missing file, no source,
               a usage error); only path spelling and CRLF line ends are normalised
  elf-hostile  an EventLogFile with hostile CSV quoting (BOM, doubled quotes, commas, CR/LF
               inside quoted fields, multibyte UTF-8, empty fields, blank lines, control
               characters): every row arrives with the line Python's csv + json.dumps give,
               and with the entries (labels, timestamp, metadata) the native binary produces
  loki-faults  six EventLogFiles through Loki 503/429/500/502 answers and a forced kill and
               restart of the exe: nothing lost, duplicates only from the file the kill
               interrupted, no checkpoint ever ahead of what Loki accepted
  pubsub       a Pub/Sub stream published while the exe runs, small fetch credit, three forced
               stream breaks (rst, unavailable, end): every event once with the original's
               line, credit never overdrawn, the replay-id checkpoint advances to the last one
  elf-stall    one EventLogFile of 100,000 generated rows, the check that caught the stall of
               the first Windows build (curl sockets watched as POSIX fds)
Every scenario that runs the daemon stops it with Ctrl-C (SIGINT, which wine turns into
CTRL_C_EVENT) and wants exit code 0. Waits are on conditions with deadlines (the Loki
simulator's long-polled /control/summary), never fixed sleeps. Exit 0 when every scenario
passed, 1 otherwise (each failure names what was missing); 77 when a simulator's Debian module
is missing.
"""

import argparse
import base64
import collections
import csv
import datetime as dt
import io
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"
SKIP = 77
ISO = "%Y-%m-%dT%H:%M:%S.000+0000"
TOPIC = "/event/LoginEventStream"
REPLAY_BASE = 0x10DB00  # tests/sim/pubsub_sim.py: replay id = REPLAY_BASE + sequence


class Fail(Exception):
    """A scenario's assertion: the message names what was missing."""


class Skip(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Fail(message)


def http(method, url, doc=None, timeout=30):
    data = json.dumps(doc).encode() if doc is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        body = r.read()
    return json.loads(body) if body else None


def http_text(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


class Daemon:
    """One `sf2loki run`, the exe under wine or the native binary, its output in a file (never
    a pipe: the wineserver would hold a pipe open after the process ended)."""

    def __init__(self, env, binary, config, name):
        self.log_path = os.path.join(env.work, name + ".log")
        self.out = open(self.log_path, "ab")
        cmd = env.command(binary) + ["run", "--config", config]
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        self.started = time.monotonic()
        env.procs.append(self.proc)

    def alive(self):
        return self.proc.poll() is None

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def health_port(self, deadline=60.0):
        """The health server's port, from its start-up line (health_addr is 127.0.0.1:0)."""
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            m = re.search(r"health server listening on \S+ \(port (\d+)\)", self.log())
            if m:
                return int(m.group(1))
            check(self.alive(), "the daemon exited before its health server listened: "
                  + self.log_path)
            time.sleep(0.1)  # polling a log file for a line, under the deadline above
        raise Fail("no health server line in %s within %.0f s" % (self.log_path, deadline))

    def metric(self, name_and_labels):
        port = self.health_port()
        text = http_text("http://127.0.0.1:%d/metrics" % port)
        total = 0.0
        for line in text.splitlines():
            if line.startswith(name_and_labels):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def stop(self, timeout=60.0):
        """Ctrl-C, then the exit code (a string when it had to be killed)."""
        t0 = time.monotonic()
        if self.alive():
            self.proc.send_signal(signal.SIGINT)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = "killed after %.0f s" % timeout
        self.out.close()
        return rc, time.monotonic() - t0

    def kill(self):
        self.proc.kill()
        self.proc.wait()
        self.out.close()


class Env:
    def __init__(self, opts):
        self.opts = opts
        self.wine_run = os.path.join(os.environ.get("SF2LOKI_WIN_DEPS", "/var/cache/sf2loki-win"),
                                     "wine-run")
        self.work = tempfile.mkdtemp(prefix="sfl-win-e2e.")
        self.procs = []
        self.key = os.path.join(self.work, "private-key.pem")
        self.pub = os.path.join(self.work, "public-key.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                        "rsa_keygen_bits:2048", "-out", self.key], check=True, capture_output=True)
        subprocess.run(["openssl", "pkey", "-in", self.key, "-pubout", "-out", self.pub],
                       check=True, capture_output=True)

    def command(self, binary):
        return [self.wine_run, binary] if binary.lower().endswith(".exe") else [binary]

    def scenario_dir(self, name):
        d = os.path.join(self.work, name)
        os.makedirs(d, exist_ok=True)
        return d

    def sim(self, script, args, name):
        log = open(os.path.join(self.work, name + ".log"), "wb")
        proc = subprocess.Popen([PY, os.path.join(ROOT, "tests", "sim", script)] + args,
                                stdout=subprocess.PIPE, stderr=log)
        self.procs.append(proc)
        line = proc.stdout.readline().decode().strip()
        if not line.startswith("PORT "):
            if proc.wait() == SKIP:
                raise Skip("%s: a Debian module is missing (see %s)" % (script, log.name))
            raise Fail("%s did not start: see %s" % (script, log.name))
        return proc, int(line.split()[1])

    def daemon(self, binary, config, name):
        return Daemon(self, binary, config, name)

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()


def elf_config(env, sf_port, loki_port, state, extra_elf="", extra_loki="", extra=""):
    return """salesforce:
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
    lookback: 12h
%ssink:
  loki:
    url: http://127.0.0.1:%d/loki/api/v1/push
%sstate:
  file:
    path: %s
service:
  health_addr: 127.0.0.1:0
  log_format: logfmt
  progress_interval: 10s
  shutdown_grace: 30s
%s""" % (sf_port, env.key, extra_elf, loki_port, extra_loki, state, extra)


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def log_file(fid, hour, seq, **content):
    d = {"Id": fid, "EventType": "API", "Interval": "Hourly", "LogDate": hour.strftime(ISO),
         "CreatedDate": (hour + dt.timedelta(hours=1, minutes=5)).strftime(ISO),
         "Sequence": seq}
    d.update(content)
    return d


def base_hour(hours_ago):
    return (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=hours_ago)).replace(
        minute=0, second=0, microsecond=0)


def summary(port, wait_entries=0, timeout=5, field="REQUEST_ID"):
    return http("GET", "http://127.0.0.1:%d/control/summary?field=%s&wait_entries=%d&timeout=%s"
                % (port, field, wait_entries, timeout), timeout=timeout + 30)


def wait_entries(port, daemon, want, deadline, field="REQUEST_ID", what="entries"):
    """Long-polls the Loki simulator in short turns until @want entries arrived, so a daemon
    that died ends the wait early."""
    end = time.monotonic() + deadline
    s = summary(port, field=field)
    while s["entries"] < want:
        check(daemon.alive(), "%s: the daemon exited (see %s) with %d of %d %s in Loki"
              % (what, daemon.log_path, s["entries"], want, what))
        left = end - time.monotonic()
        check(left > 0, "%s: only %d of %d in Loki after %.0f s (see %s)"
              % (what, s["entries"], want, deadline, daemon.log_path))
        s = summary(port, wait_entries=want, timeout=min(5.0, max(left, 0.5)), field=field)
    return s


def received(port):
    return http("GET", "http://127.0.0.1:%d/control/received" % port, timeout=120)


def state_doc(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


# --- parity ------------------------------------------------------------------------------------

def norm(text):
    """What may differ between the two: path spelling (Z:\\tmp\\x, /tmp/x) and line ends."""
    text = text.replace("\r\n", "\n")
    text = re.sub(r"[A-Za-z]:\\", "/", text)
    return text.replace("\\", "/").replace("//", "/")


def run_cli(env, binary, args, name):
    out_path = os.path.join(env.work, "parity", name + ".out")
    err_path = os.path.join(env.work, "parity", name + ".err")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        rc = subprocess.run(env.command(binary) + args, stdout=out, stderr=err,
                            stdin=subprocess.DEVNULL, timeout=120).returncode
    with open(out_path, errors="replace") as f:
        stdout = f.read()
    with open(err_path, errors="replace") as f:
        stderr = f.read()
    return rc, norm(stdout), norm(stderr)


def scenario_parity(env):
    d = env.scenario_dir("parity")
    good = elf_config(env, 9, 9, os.path.join(d, "state.json"))
    configs = {
        "good": good,
        "bad-key": good.replace("    poll_interval: 30s\n", "    poll_interval: 30s\n"
                                "    pol_interval: 1m\n"),
        "bad-value": good.replace("interval: Hourly", "interval: Weekly").replace(
            "lookback: 12h", "lookback: soon"),
        "no-source": good.replace("enabled: true", "enabled: false"),
    }
    cases = [("version", ["version"], 0), ("--version", ["--version"], 0),
             ("usage", ["frobnicate"], 2)]
    for name, text in configs.items():
        path = write(os.path.join(d, name + ".yaml"), text)
        cases.append(("check " + name, ["check", "--config", path],
                      0 if name in ("good", "no-source") else 2))
    cases.append(("check missing-file", ["check", "--config", os.path.join(d, "absent.yaml")], 2))
    problems = []
    for name, args, want_rc in cases:
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        n_rc, n_out, n_err = run_cli(env, env.opts.native, args, slug + ".native")
        w_rc, w_out, w_err = run_cli(env, env.opts.exe, args, slug + ".exe")
        first = (n_out + n_err).strip().splitlines()
        print("parity: %-20s native %d, exe %d: %s" % (name, n_rc, w_rc,
                                                        first[0] if first else "(no output)"))
        if n_rc != want_rc:
            problems.append("%s: the native binary exited %d, expected %d" % (name, n_rc, want_rc))
        if w_rc != n_rc:
            problems.append("%s: exit code %d under wine, %d natively" % (name, w_rc, n_rc))
        if w_out != n_out:
            problems.append("%s: stdout differs: native %r, exe %r" % (name, n_out, w_out))
        if w_err != n_err:
            problems.append("%s: stderr differs: native %r, exe %r" % (name, n_err, w_err))
    check(not problems, "; ".join(problems))
    print("parity: %d cases, exit codes and messages equal" % len(cases))


# --- elf-hostile -------------------------------------------------------------------------------

HOSTILE_HEADER = ["\ufeffEVENT_TYPE", "TIMESTAMP", "REQUEST_ID", "USER_ID", "URI", "QUERY",
                  "NOTE", "EMPTY", "STATUS_CODE", "TIMESTAMP_DERIVED"]
HOSTILE_VALUES = [
    'say ""hi""', '"', '""', 'a,b,,c', ',', 'line1\r\nline2', 'lf\nonly', 'cr\ronly',
    '\r\n', 'trailing newline\n', 'caf\u00e9 \u20ac \u65e5\u672c \U0001F600 \u00df',
    '{"json": [1, "two"]}', 'back\\slash \\" \\n', 'tab\there', 'ctl\x01\x1f', '  spaced  ',
    '', "'single'", 'SELECT Id, Name FROM Account WHERE Name = \'O\'\'Brien, "Bob"\'',
    '\u200b\u00a0nbsp', 'x' * 300, '/services/data/v64.0/query?q=SELECT+Id',
]


def csv_field(value, force):
    if force or any(c in value for c in '",\r\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def hostile_corpus(rows, hour):
    """The CSV text: minimal and full quoting mixed, CRLF and LF record ends, blank lines, no
    newline at the end (the BOM header name unquoted: a quote after a BOM is literal to
    Python's csv module, while sf2loki reads it as an opening quote)."""
    out = [",".join(csv_field(h, False) for h in HOSTILE_HEADER), "\r\n"]
    v = HOSTILE_VALUES
    for i in range(rows):
        ts = hour + dt.timedelta(seconds=i % 3600, milliseconds=i % 1000)
        row = ["API", ts.strftime("%Y%m%d%H%M%S.") + "%03d" % (ts.microsecond // 1000),
               "0ATHOST000000001-%d" % i, "005" + v[i % len(v)][:5],
               v[(i * 7) % len(v)], v[(i * 3 + 1) % len(v)], v[(i * 5 + 2) % len(v)],
               "" if i % 4 else v[i % len(v)], str((200, 404, 500, 302)[i % 4]),
               ts.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ts.microsecond // 1000)]
        out.append(",".join(csv_field(f, i % 3 == 0) for f in row))
        out.append("\n" if i % 2 else "\r\n")
        if i % 50 == 49:
            out.append("\r\n" if i % 100 == 99 else "\n")
    # the last field is a timestamp, never quoted: stripping leaves no record end
    return "".join(out).rstrip("\r\n")


def expected_lines(data):
    """The oracle: Python's csv module, not sf2loki's parser; json.dumps(row, sort_keys=True)."""
    reader = csv.reader(io.StringIO(data.decode("utf-8"), newline=""))
    header = next(reader)
    return [json.dumps(dict(zip(header, row)), sort_keys=True) for row in reader if row]


def entries_of(port):
    out = []
    for s in received(port)["streams"]:
        labels = json.dumps(s["labels"], sort_keys=True)
        for e in s["entries"]:
            out.append((labels, e["ts"], e["line"],
                        json.dumps(e.get("metadata", {}), sort_keys=True)))
    return out


def first_difference(a, b):
    ca, cb = collections.Counter(a), collections.Counter(b)
    missing = list((ca - cb).elements())
    extra = list((cb - ca).elements())
    return missing, extra


def run_elf(env, binary, sf_port, name, rows, deadline):
    """One daemon on its own Loki simulator until @rows entries arrived; then Ctrl-C."""
    d = env.scenario_dir(name)
    _, loki_port = env.sim("loki_sim.py", [], name + "-loki")
    config = write(os.path.join(d, "config.yaml"), elf_config(
        env, sf_port, loki_port, os.path.join(d, "state.json"),
        extra_loki="    structured_metadata_fields: [USER_ID, EMPTY]\n"))
    daemon = env.daemon(binary, config, name)
    wait_entries(loki_port, daemon, rows, deadline, what="rows")
    took = time.monotonic() - daemon.started
    rc, stop_s = daemon.stop()
    check(rc == 0, "%s: Ctrl-C exit code %s, expected 0 (see %s)" % (name, rc, daemon.log_path))
    return loki_port, took, stop_s


def scenario_elf_hostile(env):
    d = env.scenario_dir("elf-hostile")
    rows = env.opts.hostile_rows
    hour = base_hour(3)
    data = hostile_corpus(rows, hour).encode("utf-8")
    corpus = os.path.join(d, "hostile.csv")
    with open(corpus, "wb") as f:
        f.write(data)
    want = expected_lines(data)
    check(len(want) == rows, "the oracle read %d rows of %d" % (len(want), rows))
    dataset = write(os.path.join(d, "dataset.json"), json.dumps({"eventlogfiles": [
        log_file("0ATHOST000000001", hour, 0, path=corpus)]}))
    _, sf_port = env.sim("salesforce_sim.py", ["--dataset", dataset, "--public-key", env.pub],
                         "elf-hostile-sf")
    native_port, native_s, _ = run_elf(env, env.opts.native, sf_port, "elf-hostile-native",
                                       rows, 120)
    exe_port, exe_s, stop_s = run_elf(env, env.opts.exe, sf_port, "elf-hostile-exe", rows, 240)
    exe_entries = entries_of(exe_port)
    native_entries = entries_of(native_port)
    missing, extra = first_difference(want, [e[2] for e in exe_entries])
    print("elf-hostile: %d rows (%d bytes) in %.1f s under wine, %.1f s natively; "
          "Ctrl-C stop in %.1f s" % (rows, len(data), exe_s, native_s, stop_s))
    check(not missing and not extra,
          "%d rows missing or different in Loki, %d unexpected lines; first missing %r, "
          "first unexpected %r" % (len(missing), len(extra), missing[:1], extra[:1]))
    missing, extra = first_difference(native_entries, exe_entries)
    check(not missing and not extra,
          "%d entries of the native binary (labels, timestamp, line, metadata) not sent by "
          "the exe, %d sent only by the exe; first %r / %r"
          % (len(missing), len(extra), missing[:1], extra[:1]))
    print("elf-hostile: %d lines equal to Python's csv + json.dumps, %d entries equal to the "
          "native binary's (labels, timestamp, metadata)" % (len(want), len(exe_entries)))


# --- loki-faults -------------------------------------------------------------------------------

def fault_lines(loki_log):
    """Push answers per status, from the simulator's request log."""
    counts = collections.Counter()
    with open(loki_log, errors="replace") as f:
        for line in f:
            m = re.search(r'"POST /loki/api/v1/push HTTP/1.1" (\d{3})', line)
            if m:
                counts[int(m.group(1))] += 1
    return counts


def committed_ids(state_path):
    value = state_doc(state_path).get("eventlogfile:API")
    if not value:
        return []
    return [i[0] if isinstance(i, list) else i for i in json.loads(value).get("ids", [])]


def scenario_loki_faults(env):
    d = env.scenario_dir("loki-faults")
    files, per_file = 6, env.opts.fault_rows
    total = files * per_file
    hour = base_hour(9)
    ids = ["0ATFAULT00000%03d" % i for i in range(files)]
    dataset = write(os.path.join(d, "dataset.json"), json.dumps({"eventlogfiles": [
        log_file(fid, hour + dt.timedelta(hours=i), 0,
                 generate={"rows": per_file, "kind": "API", "seed": 11 + i})
        for i, fid in enumerate(ids)]}))
    _, sf_port = env.sim("salesforce_sim.py", ["--dataset", dataset, "--public-key", env.pub],
                         "loki-faults-sf")
    _, loki_port = env.sim("loki_sim.py", [], "loki-faults-loki")
    state = os.path.join(d, "state.json")
    config = write(os.path.join(d, "config.yaml"), elf_config(
        env, sf_port, loki_port, state,
        extra_loki="    batch:\n      max_entries: 500\n      flush_interval: 200ms\n"))
    fault_url = "http://127.0.0.1:%d/control/fault" % loki_port
    # (at this many entries in Loki, the fault): each lands while pushes are flowing
    plan = [(1, {"count": 2, "status": 503}),
            (total // 6, {"count": 2, "status": 429, "retry_after": "1"}),
            (total // 3, {"count": 1, "status": 500}),
            (total * 2 // 3, {"count": 2, "status": 502}),
            (total * 5 // 6, {"count": 2, "status": 429})]
    kill_at = total // 2
    injected = collections.Counter()
    samples = 0

    def sample_commits():
        # the checkpoint first, then Loki: what was committed must be there already
        nonlocal samples
        done = committed_ids(state)
        s = summary(loki_port)
        for fid in done:
            check(s["by_prefix"].get(fid, 0) == per_file,
                  "checkpoint ahead of Loki: %s committed with %d of its %d rows accepted"
                  % (fid, s["by_prefix"].get(fid, 0), per_file))
        samples += 1
        return s

    daemon = env.daemon(env.opts.exe, config, "loki-faults-exe-1")
    http("POST", fault_url, plan[0][1])
    injected[plan[0][1]["status"]] += plan[0][1]["count"]
    step = 1
    killed = False
    uncommitted_rows = 0
    end = time.monotonic() + env.opts.deadline
    s = sample_commits()
    while s["distinct"] < total:
        check(time.monotonic() < end, "loki-faults: %d of %d rows in Loki after %.0f s"
              % (s["distinct"], total, env.opts.deadline))
        check(daemon.alive(), "loki-faults: the daemon exited (see %s)" % daemon.log_path)
        if step < len(plan) and s["entries"] >= plan[step][0]:
            http("POST", fault_url, plan[step][1])
            injected[plan[step][1]["status"]] += plan[step][1]["count"]
            step += 1
        if not killed and s["entries"] >= kill_at:
            daemon.kill()  # SIGKILL: to the Windows side an abrupt end, no drain, no commit
            done = committed_ids(state)
            at_kill = summary(loki_port)
            # what the restart may send again: the rows in Loki of files not committed
            uncommitted_rows = sum(n for f, n in at_kill["by_prefix"].items() if f not in done)
            print("loki-faults: killed at %d entries, %d of %d files committed, %d rows of "
                  "uncommitted files in Loki" % (at_kill["entries"], len(done), files,
                                                 uncommitted_rows))
            daemon = env.daemon(env.opts.exe, config, "loki-faults-exe-2")
            killed = True
        summary(loki_port, wait_entries=s["entries"] + 1, timeout=2)
        s = sample_commits()
    retried = daemon.metric('sf2loki_loki_push_total{outcome="retried"}')
    rc, stop_s = daemon.stop()
    check(rc == 0, "loki-faults: Ctrl-C exit code %s, expected 0" % rc)
    s = sample_commits()
    served = fault_lines(os.path.join(env.work, "loki-faults-loki.log"))
    dupes = s["entries"] - s["distinct"]
    print("loki-faults: %d rows in %d files: %d entries, %d distinct, %d duplicates (at most %d: "
          "the rows of uncommitted files in Loki at the kill)" % (
              total, files, s["entries"], s["distinct"], dupes, uncommitted_rows))
    print("loki-faults: faults injected %s, answered %s; the restarted exe counted %d retried "
          "pushes; %d checkpoint samples; Ctrl-C stop in %.1f s" % (
              dict(injected), {k: v for k, v in served.items() if k != 204}, retried, samples,
              stop_s))
    check(s["distinct"] == total, "loki-faults: %d rows missing" % (total - s["distinct"]))
    check(all(s["by_prefix"].get(f) == per_file for f in ids),
          "loki-faults: a file incomplete: %s" % s["by_prefix"])
    check(dupes <= uncommitted_rows, "loki-faults: %d duplicates, more than the %d rows of "
          "uncommitted files Loki held at the kill" % (dupes, uncommitted_rows))
    for status, n in injected.items():
        check(served.get(status, 0) == n, "loki-faults: %d pushes answered %d, %d injected "
              "(a fault not consumed)" % (served.get(status, 0), status, n))
    done = committed_ids(state)
    check(sorted(done) == sorted(ids), "loki-faults: after the stop the checkpoint holds %s, "
          "not every file" % done)


# --- pubsub ------------------------------------------------------------------------------------

def replay_seq(b64):
    raw = base64.b64decode(b64)
    check(len(raw) == 8, "a replay id of %d bytes in the checkpoint" % len(raw))
    return struct.unpack(">Q", raw)[0] - REPLAY_BASE


def scenario_pubsub(env):
    d = env.scenario_dir("pubsub")
    total, chunk, credit = env.opts.events, env.opts.events // 10, 20
    _, sf_port = env.sim("salesforce_sim.py", ["--public-key", env.pub], "pubsub-sf")
    _, ps_port = env.sim("pubsub_sim.py", ["--keepalive-ms", "1000"], "pubsub-ps")
    _, loki_port = env.sim("loki_sim.py", [], "pubsub-loki")
    ctl = "http://127.0.0.1:%d/control/" % ps_port
    grpc_port = http("GET", ctl + "info")["grpc_port"]
    state = os.path.join(d, "state.json")
    config = write(os.path.join(d, "config.yaml"), """salesforce:
  login_url: http://127.0.0.1:%d
  client_id: sim-client-id
  username: sim@example.com
  private_key_file: %s
sources:
  pubsub:
    enabled: true
    endpoint: http://127.0.0.1:%d
    topics: ["%s"]
    replay_preset: EARLIEST
    default_num_requested: %d
sink:
  loki:
    url: http://127.0.0.1:%d/loki/api/v1/push
    batch:
      flush_interval: 100ms
      max_entries: 250
state:
  file:
    path: %s
service:
  health_addr: 127.0.0.1:0
  log_format: logfmt
  shutdown_grace: 30s
""" % (sf_port, env.key, grpc_port, TOPIC, credit, loki_port, state))
    lines = []

    def publish(n):
        lines.extend(http("POST", ctl + "publish", {"topic": TOPIC, "count": n,
                                                    "lines": True})["lines"])

    publish(chunk)  # before the start: EARLIEST replays them
    daemon = env.daemon(env.opts.exe, config, "pubsub-exe")
    breaks = {3: "rst", 5: "unavailable", 7: "end"}
    mid_checkpoint = None
    broken = 0
    for i in range(1, total // chunk):
        wait_entries(loki_port, daemon, len(lines), env.opts.deadline, field="EventIdentifier",
                     what="events")
        if i in breaks:
            n = http("POST", ctl + "fault", {"kind": breaks[i], "scope": "open"})["applied"]
            check(n >= 1, "pubsub: no open stream to break with %s" % breaks[i])
            broken += 1
        if i == 5:
            mid_checkpoint = state_doc(state).get("pubsub:" + TOPIC)
        publish(chunk)
    s = wait_entries(loki_port, daemon, total, env.opts.deadline, field="EventIdentifier",
                     what="events")
    reconnects = daemon.metric("sf2loki_pubsub_reconnects_total")
    rc, stop_s = daemon.stop()
    check(rc == 0, "pubsub: Ctrl-C exit code %s, expected 0 (see %s)" % (rc, daemon.log_path))
    st = http("GET", ctl + "stats")["topics"][TOPIC]
    s = summary(loki_port, field="EventIdentifier")
    final = state_doc(state).get("pubsub:" + TOPIC)
    got = [e[2] for e in entries_of(loki_port)]
    missing, extra = first_difference(lines, got)
    took = time.monotonic() - daemon.started
    print("pubsub: %d events published in %d rounds while running, %d entries, %d distinct, "
          "in %.1f s; Ctrl-C stop in %.1f s" % (total, total // chunk, s["entries"],
                                                s["distinct"], took, stop_s))
    print("pubsub: credit %d: %d fetch requests, max outstanding %d, overdrawn %d; %d stream "
          "breaks, %d subscribes, %d reconnects counted" % (
              credit, st["fetch_requests"], st["max_outstanding"], st["overdrawn"], broken,
              st["subscribes"], reconnects))
    print("pubsub: checkpoint at sequence %s mid-run, %s after the stop" % (
        replay_seq(mid_checkpoint) if mid_checkpoint else None,
        replay_seq(final) if final else None))
    check(len(lines) == total, "pubsub: published %d, meant %d" % (len(lines), total))
    check(not missing, "pubsub: %d events missing or with another line, first %r"
          % (len(missing), missing[:1]))
    check(not extra, "pubsub: %d entries not published once (duplicates or other lines), "
          "first %r" % (len(extra), extra[:1]))
    check(st["overdrawn"] == 0 and st["max_outstanding"] <= credit + credit // 2,
          "pubsub: flow control: max outstanding %d for a credit of %d, overdrawn %d"
          % (st["max_outstanding"], credit, st["overdrawn"]))
    check(st["fetch_requests"] >= total // credit, "pubsub: %d fetch requests for %d events "
          "at %d a time" % (st["fetch_requests"], total, credit))
    check(reconnects >= broken, "pubsub: %d reconnects counted for %d breaks"
          % (reconnects, broken))
    check(mid_checkpoint is not None and final is not None,
          "pubsub: no checkpoint (mid-run %r, final %r)" % (mid_checkpoint, final))
    check(0 < replay_seq(mid_checkpoint) < replay_seq(final) == total,
          "pubsub: the checkpoint went from %d to %d, not to %d" % (
              replay_seq(mid_checkpoint), replay_seq(final), total))


# --- elf-stall ---------------------------------------------------------------------------------

def scenario_elf_stall(env):
    d = env.scenario_dir("elf-stall")
    rows = env.opts.rows
    dataset = write(os.path.join(d, "dataset.json"), json.dumps({"eventlogfiles": [
        log_file("0ATWIN0000000001", base_hour(2), 0,
                 generate={"rows": rows, "kind": "API", "seed": 7})]}))
    _, sf_port = env.sim("salesforce_sim.py", ["--dataset", dataset, "--public-key", env.pub],
                         "elf-stall-sf")
    loki_port, took, stop_s = run_elf(env, env.opts.exe, sf_port, "elf-stall-exe", rows,
                                      env.opts.deadline)
    log = open(os.path.join(env.work, "elf-stall-exe.log"), errors="replace").read()
    s = summary(loki_port)
    failures, timeouts = log.count("push failed"), log.count("Timeout was reached")
    print("elf-stall: %d rows, %d entries (%d distinct REQUEST_ID) in %.1f s (%.0f rows/s, "
          "wine start-up included); push failures %d, curl timeouts %d; Ctrl-C stop in %.1f s"
          % (rows, s["entries"], s["distinct"], took, s["entries"] / took, failures, timeouts,
             stop_s))
    check(s["distinct"] == rows, "elf-stall: %d rows missing" % (rows - s["distinct"]))
    check(failures == 0 and timeouts == 0, "elf-stall: %d push failures, %d curl timeouts"
          % (failures, timeouts))


# --- gsettings ---------------------------------------------------------------------------------

def run_dump(env, binary, config, name, schema_dir):
    """`config dump --origin`; the exe must find the schema it ships (dist/share/glib-2.0/
    schemas, where the MSI installs it), so GSETTINGS_SCHEMA_DIR is only given natively."""
    child_env = dict(os.environ)
    child_env.pop("GSETTINGS_SCHEMA_DIR", None)
    if schema_dir:
        child_env["GSETTINGS_SCHEMA_DIR"] = schema_dir
    res = subprocess.run(env.command(binary) + ["config", "dump", "--origin", "--config", config],
                         capture_output=True, stdin=subprocess.DEVNULL, timeout=120,
                         env=child_env)
    # not norm(): it folds the "//" of the URLs checked here
    text = (res.stdout.decode(errors="replace") + res.stderr.decode(errors="replace")).replace(
        "\r\n", "\n")
    write(os.path.join(env.scenario_dir("gsettings"), name + ".out"), text)
    return res.returncode, text


def scenario_gsettings(env):
    """The GSettings keyfile layer (docs/configuration.md) on both builds: a keyfile value wins
    over the YAML one and names its schema and key; a bad value is exit 2 naming both."""
    d = env.scenario_dir("gsettings")
    keyfile = write(os.path.join(d, "sf2loki.ini"),
                    "[sink/loki]\nurl='http://from-gsettings:3100'\n"
                    "[service]\nprogress-interval='5m'\n")
    bad_keyfile = write(os.path.join(d, "bad.ini"), "[service]\nlog-level='loud'\n")
    base = elf_config(env, 9, 9, os.path.join(d, "state.json"))
    good = write(os.path.join(d, "good.yaml"),
                 base + "\nservice:\n  gsettings_keyfile: %s\n" % keyfile
                 if "\nservice:" not in base else
                 base.replace("\nservice:\n", "\nservice:\n  gsettings_keyfile: %s\n" % keyfile))
    bad = write(os.path.join(d, "bad.yaml"), open(good).read().replace(keyfile, bad_keyfile))
    schema_dir = os.path.join(os.path.dirname(os.path.abspath(env.opts.native)), "data")
    want = ['sink.loki.url: "http://from-gsettings:3100"  # gsettings:org.sf2loki.sink.loki url',
            "service.progress_interval: 5m  # gsettings:org.sf2loki.service progress-interval"]
    for label, binary, sdir in (("native", env.opts.native, schema_dir),
                                ("exe", env.opts.exe, None)):
        rc, text = run_dump(env, binary, good, "good." + label, sdir)
        check(rc == 0, "gsettings: config dump exited %d on the %s build: %s" % (rc, label, text))
        for line in want:
            check(line in text.splitlines(),
                  "gsettings: %r missing from the %s build's dump" % (line, label))
        rc, text = run_dump(env, binary, bad, "bad." + label, sdir)
        check(rc == 2, "gsettings: a bad value exited %d on the %s build" % (rc, label))
        check("org.sf2loki.service" in text and "log-level" in text,
              "gsettings: the %s build's error does not name the schema and key: %s"
              % (label, text))
        print("gsettings: %s build: keyfile values applied with their origin, a bad value "
              "refused naming org.sf2loki.service log-level" % label)


SCENARIOS = [("parity", scenario_parity), ("elf-hostile", scenario_elf_hostile),
             ("loki-faults", scenario_loki_faults), ("pubsub", scenario_pubsub),
             ("elf-stall", scenario_elf_stall), ("gsettings", scenario_gsettings)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", default=os.path.join("build-win", "dist", "sf2loki.exe"))
    ap.add_argument("--native", default=os.path.join("build", "sf2loki"))
    ap.add_argument("--only", help="comma-separated scenario names")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the work directory on success")
    ap.add_argument("--rows", type=int, default=100000, help="elf-stall rows")
    ap.add_argument("--hostile-rows", type=int, default=3000)
    ap.add_argument("--fault-rows", type=int, default=4000, help="loki-faults rows per file")
    ap.add_argument("--events", type=int, default=2000, help="pubsub events")
    ap.add_argument("--deadline", type=float, default=300.0, help="per wait, seconds")
    opts = ap.parse_args()
    names = [n for n, _ in SCENARIOS]
    if opts.list:
        print("\n".join(names))
        return 0
    chosen = opts.only.split(",") if opts.only else names
    unknown = [n for n in chosen if n not in names]
    if unknown:
        ap.error("unknown scenario %s (known: %s)" % (", ".join(unknown), ", ".join(names)))
    for path, what in ((opts.exe, "--exe"), (opts.native, "--native")):
        if not os.path.isfile(path):
            ap.error("%s %s: no such file (make win-build / make build)" % (what, path))
    results = []
    skipped = False
    t_all = time.monotonic()
    env = Env(opts)
    try:
        for name, fn in SCENARIOS:
            if name not in chosen:
                continue
            t0 = time.monotonic()
            try:
                fn(env)
                verdict = "PASS"
            except Skip as exc:
                verdict, skipped = "SKIP", True
                print("%s: %s" % (name, exc))
            except Fail as exc:
                verdict = "FAIL"
                print("%s: FAIL: %s" % (name, exc))
            finally:
                env.cleanup()
                env.procs = []
            results.append((name, verdict, time.monotonic() - t0))
            print("%s: %s in %.1f s" % (name, verdict, results[-1][2]))
    finally:
        env.cleanup()
    failed = [r for r in results if r[1] == "FAIL"]
    print("win-e2e: %s in %.1f s (%s); work files in %s" % (
        "FAIL" if failed else "PASS", time.monotonic() - t_all,
        ", ".join("%s %s %.0f s" % r for r in results), env.work))
    if not failed and not opts.keep:
        shutil.rmtree(env.work, ignore_errors=True)
    if failed:
        return 1
    return SKIP if skipped and all(r[1] == "SKIP" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
