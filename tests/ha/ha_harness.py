#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""HA fault-injection harness: three `sf2loki run` replicas sharing a lease and a checkpoint
store, real faults, invariant checkers over the recorded history (see tests/ha/README.md).

usage: ha_harness.py --bin PATH [--coordinator file_lease|k8s_lease|s3_lease|gcs_lease]
                     [--seed N] [--duration SECONDS] [--report FILE]
                     [--command TEXT] [--workdir DIR] [--keep] [--wine]

--wine (implied by a --bin ending in .exe) runs sf2loki.exe under wine, file_lease only.

Exit 0 when every invariant holds, 1 when one is violated (or nothing was injected), 77 when a
simulator cannot start for a missing Debian module.
"""

import argparse
import base64
import ctypes
import datetime as dt
import json
import os
import random
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SIM = os.path.join(ROOT, "tests", "sim")
PY = "/usr/bin/python3"
SKIP = 77

TTL = 3.0
RENEW = 1.0
# the coordinator's verify pause: min(1 s, max(50 ms, renew / 10))
VERIFY = min(1.0, max(0.05, RENEW / 10))
# what a real process on a shared 2-core machine adds to a protocol bound: scheduling, a
# lease read and write, the log line; it widens no window by more than this
SLACK = 0.5
# the duplicates one change may cause for a source whose cursor moves per record: a push in
# flight on each lane (streaming, bulk), sink.loki.batch.max_entries (default) entries each
LANES = 2
MAX_ENTRIES = 1000
IN_FLIGHT_BOUND = LANES * MAX_ENTRIES
# an EventLogFile's cursor marks how far into the file it got every 100 rows
# (src/sources/sfl-elf-source.c, SFL_ELF_RESUME_EVERY): up to 99 more rows than in flight
ELF_MARK_ROWS = 100
PER_RECORD_SOURCES = ("eventlog_objects", "pubsub", "eventlogfile")


def in_flight_bound(source):
    return IN_FLIGHT_BOUND + (ELF_MARK_ROWS if source == "eventlogfile" else 0)
REPLICAS = 3
STATE = "state.json"
LEASE = "leader.lease"
# a custom platform event: no category, so it overlaps none of the REST sources
TOPIC = "/event/HaDrill__e"

FAULTS = ["kill_leader", "stop_leader", "term_restart", "lease_delete", "lease_garbage",
          "lease_unreadable", "loki_5xx", "loki_429", "sf_503", "sf_limit", "loki_restart",
          "pubsub_break"]
# faults that may move leadership; the others must not
LEADER_FAULTS = {"kill_leader", "stop_leader", "term_restart", "lease_delete",
                 "lease_garbage", "lease_unreadable"}


# the cells of the EventLogFile rows the harness writes itself, which the CSV parser must carry
# into the line unchanged: quotes and commas, CRLF and LF inside a quoted field, multi-byte and
# astral UTF-8, a cell of nothing but quotes, separators only, blanks and tabs
HOSTILE_CELLS = ['SELECT Id FROM Account WHERE Name = \'Acme, "Inc"\' LIMIT 5',
                 'first line\r\nsecond, "quoted" line\r\n',
                 'LF\ninside, twice\n',
                 'Z\u00fcrich \u2013 \u6771\u4eac \u2013 \U0001F680 \u201ccurly\u201d',
                 '""',
                 ',,,',
                 '',
                 '  spaced\tand tabbed  ']
HOSTILE_COLUMNS = ["EVENT_TYPE", "TIMESTAMP", "REQUEST_ID", "USER_ID", "RUN_TIME", "CLIENT_NAME",
                   "QUERY", "TIMESTAMP_DERIVED"]


class Skip(Exception):
    pass


def now():
    return time.time()


def iso_z(t):
    d = dt.datetime.fromtimestamp(t, dt.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (d.microsecond // 1000)


def parse_ts(text):
    """The daemon's log "timestamp" and the checkpoints' timestamps, as unix seconds."""
    text = text.replace("Z", "+00:00")
    if len(text) >= 5 and text[-5] in "+-" and text[-3] != ":":
        text = text[:-2] + ":" + text[-2:]
    return dt.datetime.fromisoformat(text).timestamp()


def http(method, url, doc=None, timeout=2.0):
    data = json.dumps(doc).encode() if doc is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        body = resp.read()
    return json.loads(body) if body else None


class History:
    """Everything observed, with one condition that every observer notifies."""

    def __init__(self):
        self.cond = threading.Condition()
        self.faults = []        # {"type", "t", "healed", "target", ...}
        self.leadership = []    # (t, holder, "acquired"/"lost", epoch)
        self.statusz = []       # (t, [(holder, leader, epoch)])
        self.files = []         # (t, name, kind, content): lease/state reads, in read order
        self.file_writes = 0    # inotify events for the two files
        self.exits = []         # (t, holder, rc, expected)
        self.suspended = []     # (holder, t_stop, t_cont)
        self.loki_restarts = []  # t
        self.notes = []

    def notify(self):
        with self.cond:
            self.cond.notify_all()

    def wait_for(self, cond, timeout, what):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                value = cond()
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
                self.cond.wait(min(left, 0.2))


class Sim:
    def __init__(self, name, argv, log):
        self.name = name
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=open(log, "ab"),
                                     start_new_session=True)
        line = self._first_line(30)
        if not line.startswith(b"PORT "):
            rc = self.proc.wait(10)
            if rc == SKIP:
                raise Skip(f"{name} simulator skipped (a Debian module is missing; see {log})")
            raise RuntimeError(f"{name} simulator did not start (exit {rc}); see {log}")
        self.port = int(line.split()[1])
        self.base = f"http://127.0.0.1:{self.port}"

    def _first_line(self, timeout):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return self.proc.stdout.readline() if ready else b""

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        self.proc.wait(30)


class Replica:
    def __init__(self, harness, slot, gen):
        self.h = harness
        self.slot = slot
        self.gen = gen
        self.holder = f"r{slot}-g{gen}"
        self.log_path = os.path.join(harness.dir, f"{self.holder}.log")
        self.health_port = None
        self.leading = False
        self.stopped = False
        self.expected_exit = False
        self.exited = False
        env = {"LC_ALL": "C.UTF-8", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "SF2LOKI_SERVICE__HEALTH_ADDR": "127.0.0.1:0",
               harness.backend.holder_var: self.holder}
        env.update(harness.backend.env())
        for k in ("ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"):
            if k in os.environ:
                env[k] = os.environ[k]
        argv = [harness.bin, "run", "--config", harness.config]
        self.win_pid = None
        if harness.wine is not None:
            env.update(harness.wine.env)
            argv = harness.wine.argv(harness.bin, ["run", "--config",
                                                   harness.wine.path(harness.config)])
        self.proc = subprocess.Popen(argv,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=env, start_new_session=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        hist = self.h.hist
        with open(self.log_path, "ab") as log:
            for raw in self.proc.stderr:
                log.write(raw)
                log.flush()
                try:
                    doc = json.loads(raw)
                except ValueError:
                    continue
                msg = doc.get("event", "")
                if "health server listening on" in msg and "(port " in msg:
                    self.health_port = int(msg.split("(port ", 1)[1].split(")", 1)[0])
                    hist.notify()
                elif msg in ("leadership acquired", "leadership lost; standing by"):
                    kind = "acquired" if msg == "leadership acquired" else "lost"
                    with hist.cond:
                        self.leading = kind == "acquired"
                        hist.leadership.append((parse_ts(doc["timestamp"]), self.holder, kind,
                                                int(doc.get("epoch", "0"))))
                        hist.cond.notify_all()
        rc = self.proc.wait()
        with hist.cond:
            self.exited = True
            self.leading = False
            hist.exits.append((now(), self.holder, rc, self.expected_exit))
            hist.cond.notify_all()

    def signal(self, sig):
        if self.proc.poll() is not None:
            return
        wine = self.h.wine
        if wine is not None and sig == signal.SIGKILL and self.win_pid is not None:
            # a real TerminateProcess, as an operator's `taskkill /F` or a crashing host does
            self.h.terminated.add(self.holder)
            wine.terminate(self.win_pid)
        elif wine is not None and sig == signal.SIGTERM:
            # wine turns SIGINT into CTRL_C_EVENT, the console stop sf2loki.exe handles; its
            # SIGTERM ends the process without running any handler
            self.proc.send_signal(signal.SIGINT)
        else:
            # SIGSTOP/SIGCONT freeze the wine process as a whole: the nearest thing to a
            # suspended VM; Windows itself has no signal for it
            self.proc.send_signal(sig)


class Wine:
    """Runs sf2loki.exe under wine (--wine, or a --bin ending in .exe) in a prefix of its own:
    a clone of $SF2LOKI_WIN_DEPS/wine whose binaries are hard links and whose registry and
    other writable files are copies, so ending this run's wineserver touches no other wine
    user of the machine, and nothing this run writes reaches the shared prefix."""

    # what wine never rewrites once the prefix is up to date: hard links are safe for these
    LINKED = (".dll", ".exe", ".sys", ".drv", ".nls", ".ocx", ".cpl", ".acm", ".tlb", ".ttf",
              ".fon", ".mui")

    def __init__(self, exe, workdir):
        deps = os.environ.get("SF2LOKI_WIN_DEPS", "/var/cache/sf2loki-win")
        self.wine_run = os.path.join(deps, "wine-run")
        self.image = os.path.basename(exe).lower()
        self.prefix = os.path.join(workdir, "wineprefix")
        self.log_path = os.path.join(workdir, "wine.log")
        self.env = {"WINEPREFIX": self.prefix, "WINEDEBUG": "-all",
                    "HOME": os.environ.get("HOME", "/root")}
        source = os.path.join(deps, "wine")
        if not os.path.isfile(self.wine_run) or not os.path.isdir(source):
            raise Skip(f"no wine set-up under {deps} (make win-deps writes it)")
        self._clone(source, self.prefix)
        # Z: is the Unix root in every prefix wine creates; a path is handed over as Z:\...
        if os.readlink(os.path.join(self.prefix, "dosdevices", "z:")) != "/":
            raise RuntimeError(f"{source}: drive Z: is not the Unix root")

    @classmethod
    def _clone(cls, source, dest):
        for top, dirs, files in os.walk(source):
            rel = os.path.relpath(top, source)
            out = os.path.normpath(os.path.join(dest, rel))
            os.makedirs(out, exist_ok=True)
            for name in dirs + files:
                src = os.path.join(top, name)
                dst = os.path.join(out, name)
                if os.path.islink(src):
                    os.symlink(os.readlink(src), dst)
                elif name in files:
                    if name.lower().endswith(cls.LINKED):
                        os.link(src, dst)
                    else:
                        shutil.copy2(src, dst)

    def _run(self, argv, timeout=60):
        # output into a file, never a pipe: a wine process may hand the pipe on to the
        # prefix's own processes (services.exe), which outlive it
        with open(self.log_path, "ab") as log:
            return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                  env=dict(os.environ, **self.env), timeout=timeout).returncode

    def start(self):
        """A persistent wineserver and the prefix's services start here, before any replica:
        started by a replica's process they would hold its stderr pipe open after it died."""
        self._run(["wineserver", "-p"])
        if self._run([self.wine_run, "cmd", "/c", "exit"], timeout=120) != 0:
            raise RuntimeError(f"wine does not start in {self.prefix}; see {self.log_path}")

    def argv(self, exe, args):
        return [self.wine_run, exe] + args

    @staticmethod
    def path(unix_path):
        return "Z:" + os.path.abspath(unix_path).replace("/", "\\")

    def pids(self):
        """The Windows process ids of every running copy of the image (wmic: wine 8.0's
        tasklist prints nothing)."""
        out = os.path.join(self.prefix, "wmic.out")
        with open(out, "wb") as fh:
            subprocess.run([self.wine_run, "wmic", "process", "get", "Name,ProcessId"],
                           stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.DEVNULL,
                           env=dict(os.environ, **self.env), timeout=60)
        with open(out, "rb") as fh:
            text = fh.read().decode("utf-16", errors="replace")
        pids = set()
        for line in text.splitlines():
            cells = line.split()
            if len(cells) == 2 and cells[0].lower() == self.image and cells[1].isdigit():
                pids.add(int(cells[1]))
        return pids

    def terminate(self, win_pid):
        rc = self._run([self.wine_run, "taskkill", "/F", "/PID", str(win_pid)])
        if rc != 0:
            raise RuntimeError(f"taskkill /F /PID {win_pid} failed (exit {rc}); see "
                               f"{self.log_path}")

    def stop(self):
        self._run(["wineserver", "-k"])
        shutil.rmtree(self.prefix, ignore_errors=True)


class Inotify:
    """The store's and the lease's history of writes: each rename onto either file is read at
    once (IN_MOVED_TO), through ctypes on libc, so no module beyond Debian's python3 is needed."""

    IN_CLOSE_WRITE = 0x8
    IN_MOVED_TO = 0x80
    IN_CREATE = 0x100

    def __init__(self, harness):
        self.h = harness
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        mask = self.IN_CLOSE_WRITE | self.IN_MOVED_TO | self.IN_CREATE
        if libc.inotify_add_watch(self.fd, harness.dir.encode(), mask) < 0:
            raise OSError(ctypes.get_errno(), "inotify_add_watch")
        self.stop_r, self.stop_w = os.pipe()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            ready, _, _ = select.select([self.fd, self.stop_r], [], [])
            if self.stop_r in ready:
                return
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                continue
            off = 0
            names = set()
            while off + 16 <= len(data):
                _wd, _mask, _cookie, length = struct.unpack_from("iIII", data, off)
                name = data[off + 16:off + 16 + length].rstrip(b"\0").decode()
                off += 16 + length
                if name == STATE or (name == LEASE and self.h.backend.watch_lease_file):
                    names.add(name)
            for name in sorted(names):
                with self.h.hist.cond:
                    self.h.hist.file_writes += 1
                self.h.sample_file(name, "write")

    def close(self):
        os.write(self.stop_w, b"x")
        self.thread.join(5)
        os.close(self.fd)


class FileBackend:
    """file_lease + the file store, both in the run's directory (the reference topology)."""

    name = "file_lease"
    store = "file"
    # a standby takes over a ttl after the last renewal, looks every renew_interval, and
    # confirms its claim after the verify pause
    bound = TTL + RENEW + VERIFY + SLACK
    bound_text = "ttl + renew + verify"
    holder_var = "SF2LOKI_COORDINATE__FILE_LEASE__HOLDER_ID"
    watch_lease_file = True

    def __init__(self, h):
        self.h = h

    def start(self):
        d = self.h.dir
        return f"""state:
  file: {{path: {self.h.path(os.path.join(d, STATE))}}}
coordinate:
  type: file_lease
  file_lease: {{path: {self.h.path(os.path.join(d, LEASE))}, ttl: {int(TTL * 1000)}ms, renew_interval: {int(RENEW * 1000)}ms}}
"""

    def env(self):
        return {}

    def describe(self):
        return (f"`file_lease` (ttl {TTL:g} s, renew_interval {RENEW:g} s) and the file store "
                "in one directory")

    def sample(self):
        self.h.sample_file(LEASE, "sample")
        self.h.sample_file(STATE, "sample")

    def write_lease(self, content):
        tmp = os.path.join(self.h.dir, ".harness-lease.tmp")
        with open(tmp, "wb") as fh:
            fh.write(content)
        os.replace(tmp, os.path.join(self.h.dir, LEASE))

    def lease_fault(self, ftype, pause, rng):
        h = self.h
        path = os.path.join(h.dir, LEASE)
        e = h.fault(ftype)
        if ftype == "lease_delete":
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        elif ftype == "lease_garbage":
            self.write_lease(b"\x00garbage{not a lease" + bytes(rng.randrange(256)
                                                               for _ in range(16)))
        else:
            # a directory in its place: every read fails, and so does every rename onto it
            tmpdir = os.path.join(h.dir, ".harness-lease-dir")
            os.makedirs(tmpdir, exist_ok=True)
            try:
                os.unlink(path)
            except (FileNotFoundError, IsADirectoryError):
                pass
            try:
                os.rename(tmpdir, path)
            except OSError:
                os.rmdir(tmpdir)
            pause(TTL * rng.uniform(0.3, 1.6))
            if os.path.isdir(path):
                os.rmdir(path)
        h.healed(e)

    def stop(self):
        pass


class K8sBackend(FileBackend):
    """k8s_lease against tests/sim/k8s_sim.py (HTTPS, resourceVersion compare-and-swap) and the
    file store. The Lease's history comes from the simulator's record of every write; its
    leaseTransitions is the epoch."""

    name = "k8s_lease"
    # staleness is judged on the observer's monotonic clock: a standby that saw the last
    # renewal looks again exactly when it turns stale; no verify pause (the CAS decides)
    bound = TTL + RENEW + SLACK
    bound_text = "lease_duration + renew"
    holder_var = "SF2LOKI_COORDINATE__K8S_LEASE__IDENTITY"
    watch_lease_file = False
    NS = "sf2loki"
    LEASE_NAME = "sf2loki-ha"

    def start(self):
        h = self.h
        simdir = os.path.join(h.dir, "k8s")
        os.makedirs(simdir, exist_ok=True)
        self.since = 0
        self.sim = Sim("k8s", [PY, os.path.join(SIM, "k8s_sim.py"), "--dir", simdir,
                               "--namespace", self.NS], os.path.join(h.dir, "k8s-sim.log"))
        kubeconfig = os.path.join(simdir, "kubeconfig")
        return f"""state:
  file: {{path: {os.path.join(h.dir, STATE)}}}
coordinate:
  type: k8s_lease
  k8s_lease: {{kubeconfig: '{kubeconfig}', namespace: {self.NS}, name: {self.LEASE_NAME}, lease_duration: {int(TTL * 1000)}ms, renew_interval: {int(RENEW * 1000)}ms}}
"""

    def describe(self):
        return (f"`k8s_lease` against the Kubernetes API simulator (lease_duration {TTL:g} s, "
                f"renew_interval {RENEW:g} s) and the file store")

    @staticmethod
    def lease_doc(holder, transitions):
        # the checkers read {"holder", "epoch"}; a Lease without leaseTransitions has no epoch
        if transitions is None:
            return b"<no leaseTransitions>"
        return json.dumps({"holder": holder, "epoch": transitions}).encode()

    def sample(self):
        h = self.h
        try:
            st = http("GET", f"{self.sim.base}/control/state?since={self.since}", timeout=2)
        except (OSError, ValueError):
            return
        t = now()
        with h.hist.cond:
            for w in st["writes"]:
                if w.get("status") in (200, 201) and not w.get("dryRun") and \
                        w.get("name") == self.LEASE_NAME:
                    h.hist.file_writes += 1
                    h.hist.files.append((t, LEASE, "write",
                                         self.lease_doc(w.get("holder"), w.get("transitions"))))
            self.since = st["writes_total"]
            lease = st["leases"].get(f"{self.NS}/{self.LEASE_NAME}")
            spec = (lease or {}).get("spec") or {}
            h.hist.files.append((t, LEASE, "sample", None if lease is None else self.lease_doc(
                spec.get("holderIdentity"), spec.get("leaseTransitions"))))
        h.sample_file(STATE, "sample")

    def lease_fault(self, ftype, pause, rng):
        h = self.h
        e = h.fault(ftype)
        if ftype == "lease_delete":
            http("POST", self.sim.base + "/control/delete", {"name": self.LEASE_NAME})
        elif ftype == "lease_garbage":
            # another writer leaves a Lease with no holder, times or transitions
            http("POST", self.sim.base + "/control/put",
                 {"namespace": self.NS, "name": self.LEASE_NAME,
                  "spec": {"leaseDurationSeconds": 1 + rng.randrange(60)}})
        else:
            # the API refuses every read for a while (RBAC trouble, an overloaded server)
            http("POST", self.sim.base + "/control/fault",
                 {"status": rng.choice([403, 500, 503]), "count": 1000000, "methods": ["GET"]})
            pause(TTL * rng.uniform(0.3, 1.6))
            http("POST", self.sim.base + "/control/clear", {})
        h.healed(e)

    def stop(self):
        self.sim.stop()


class ObjectBackend(FileBackend):
    """s3_lease + the s3 store against tests/sim/s3_sim.py (SigV4 checked by botocore), or
    gcs_lease + the gcs store against tests/sim/gcs_sim.py (service-account JWTs checked by
    python3-jwt). Both objects' histories come from the simulator's record of every write."""

    # a standby judges staleness on its own monotonic clock and claims with a conditional
    # write: no verify pause
    bound = TTL + RENEW + SLACK
    bound_text = "ttl + renew"
    watch_lease_file = False
    BUCKET = "sf2loki-ha"
    STATE_KEY = "ha/state.json"
    LEASE_KEY = "ha/leader.json"

    def __init__(self, h, kind):
        super().__init__(h)
        self.kind = kind
        self.name = f"{kind}_lease"
        self.store = kind
        self.holder_var = f"SF2LOKI_COORDINATE__{kind.upper()}_LEASE__HOLDER_ID"

    def start(self):
        h = self.h
        self.since = 0
        ttl = f"ttl: {int(TTL * 1000)}ms, renew_interval: {int(RENEW * 1000)}ms"
        if self.kind == "s3":
            self.sim = Sim("s3", [PY, os.path.join(SIM, "s3_sim.py")],
                           os.path.join(h.dir, "s3-sim.log"))
            where = f"endpoint_url: '{self.sim.base}', region: us-east-1"
            return f"""state:
  store: s3
  s3: {{bucket: {self.BUCKET}, key: {self.STATE_KEY}, {where}}}
coordinate:
  type: s3_lease
  s3_lease: {{bucket: {self.BUCKET}, key: {self.LEASE_KEY}, {where}, {ttl}}}
"""
        key = os.path.join(h.dir, "sa-key.pem")
        pub = os.path.join(h.dir, "sa-pub.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                        "rsa_keygen_bits:2048", "-out", key], check=True,
                       stderr=subprocess.DEVNULL)
        subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", pub], check=True)
        self.sim = Sim("gcs", [PY, os.path.join(SIM, "gcs_sim.py"), "--public-key", pub],
                       os.path.join(h.dir, "gcs-sim.log"))
        sa = os.path.join(h.dir, "service-account.json")
        with open(key, encoding="ascii") as fh:
            pem = fh.read()
        with open(sa, "w", encoding="utf-8") as fh:
            json.dump({"type": "service_account", "project_id": "sim-project",
                       "private_key_id": "sim-key-1", "private_key": pem,
                       "client_email": "sf2loki@sim-project.iam.gserviceaccount.com",
                       "token_uri": self.sim.base + "/token"}, fh)
        return f"""state:
  store: gcs
  gcs: {{bucket: {self.BUCKET}, object_name: {self.STATE_KEY}, service_file: '{sa}'}}
coordinate:
  type: gcs_lease
  gcs_lease: {{bucket: {self.BUCKET}, object_name: {self.LEASE_KEY}, service_file: '{sa}', {ttl}}}
"""

    def env(self):
        if self.kind == "s3":
            # the first link of the credential chain; nothing of the host's may leak in
            return {"AWS_ACCESS_KEY_ID": "AKIDSIMULATOR",
                    "AWS_SECRET_ACCESS_KEY": "sim/secret+key",
                    "AWS_EC2_METADATA_DISABLED": "true", "HOME": self.h.dir}
        return {"STORAGE_EMULATOR_HOST": self.sim.base, "HOME": self.h.dir}

    def describe(self):
        sim = "S3 simulator (SigV4 checked by botocore)" if self.kind == "s3" else \
            "Cloud Storage simulator (JWT grants checked by python3-jwt)"
        return (f"`{self.name}` (ttl {TTL:g} s, renew_interval {RENEW:g} s) and the "
                f"`{self.kind}` store in one bucket of the {sim}")

    def sample(self):
        h = self.h
        try:
            st = http("GET", f"{self.sim.base}/control/state?since={self.since}", timeout=2)
        except (OSError, ValueError):
            return
        t = now()
        names = {f"{self.BUCKET}/{self.STATE_KEY}": STATE,
                 f"{self.BUCKET}/{self.LEASE_KEY}": LEASE}
        with h.hist.cond:
            for w in st["writes"]:
                name = names.get(w.get("key") or w.get("name"))
                if name and w.get("status") == 200 and w.get("method") in ("PUT", "POST") \
                        and w.get("body") is not None:
                    h.hist.file_writes += 1
                    h.hist.files.append((t, name, "write", w["body"].encode()))
            self.since = st["writes_total"]
            for key, name in names.items():
                obj = st["objects"].get(key)
                h.hist.files.append((t, name, "sample",
                                     None if obj is None else obj["body"].encode()))

    def lease_fault(self, ftype, pause, rng):
        h = self.h
        e = h.fault(ftype)
        doc = {"bucket": self.BUCKET, "key" if self.kind == "s3" else "name": self.LEASE_KEY}
        if ftype == "lease_delete":
            http("POST", self.sim.base + "/control/object", dict(doc, body=None))
        elif ftype == "lease_garbage":
            http("POST", self.sim.base + "/control/object",
                 dict(doc, body="garbage{not a lease %08x" % rng.randrange(1 << 32)))
        else:
            # every read of the lease object is refused for a while
            http("POST", self.sim.base + "/control/fault",
                 {"action": "status", "status": rng.choice([403, 500, 503]),
                  "count": 1000000, "methods": ["GET", "HEAD"],
                  "keys": [f"{self.BUCKET}/{self.LEASE_KEY}"]})
            pause(TTL * rng.uniform(0.3, 1.6))
            http("POST", self.sim.base + "/control/clear", {})
        h.healed(e)

    def stop(self):
        self.sim.stop()


def make_backend(h, coordinator):
    if coordinator == "file_lease":
        return FileBackend(h)
    if coordinator == "k8s_lease":
        return K8sBackend(h)
    if coordinator in ("s3_lease", "gcs_lease"):
        return ObjectBackend(h, coordinator.split("_", 1)[0])
    raise ValueError(f"unknown coordinator {coordinator}")


class Harness:
    def __init__(self, opts):
        self.opts = opts
        self.bin = os.path.abspath(opts.bin)
        self.rng = random.Random(opts.seed)
        self.hist = History()
        self.dir = opts.workdir or tempfile.mkdtemp(prefix="sf2loki-ha-")
        os.makedirs(self.dir, exist_ok=True)
        self.config = os.path.join(self.dir, "config.yaml")
        self.journal = os.path.join(self.dir, "loki-journal.jsonl")
        self.replicas = {}
        self.all_replicas = []  # every process ever started
        self.generation = 0
        self.expected = set()
        self.elf_seq = 0
        self.obj_seq = 0
        self.stop = threading.Event()
        self.workload_stop = threading.Event()
        self.file_lock = threading.Lock()
        self.sf = None
        self.loki = None
        self.pubsub = None
        self.pubsub_grpc = None
        self.loki_lock = threading.Lock()
        self.journal_pos = 0
        self.copies = {}  # event id -> [arrival times]
        self.source_of = {}  # event id -> the `source` label of its stream
        self.dup_by_source = {}  # source -> the most duplicates one change caused
        self.hostile = {}  # REQUEST_ID of a hostile-quoting row -> the row as written
        self.hostile_bad = []  # copies whose line is not that row
        self.hostile_seen = 0
        self.remaining = None  # expected ids not seen yet, once the set is final
        self.backend = make_backend(self, opts.coordinator)
        self.wine = None
        self.terminated = set()  # holders ended by TerminateProcess: their exit code is taskkill's

    def path(self, unix_path):
        """A path as the configuration hands it to the binary: as it is natively; under wine a
        single-quoted Z:\\... (libyaml would read a bare ':' inside a flow mapping)."""
        if self.wine is None:
            return unix_path
        return "'" + self.wine.path(unix_path) + "'"

    # --- set-up ---------------------------------------------------------------------------

    def start(self):
        if self.opts.wine:
            self.wine = Wine(self.bin, self.dir)
        key = os.path.join(self.dir, "key.pem")
        pub = os.path.join(self.dir, "pub.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                        "rsa_keygen_bits:2048", "-out", key], check=True,
                       stderr=subprocess.DEVNULL)
        subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", pub], check=True)
        dataset = os.path.join(self.dir, "dataset.json")
        with open(dataset, "w", encoding="utf-8") as fh:
            json.dump(self.initial_dataset(), fh)
        self.sf = Sim("salesforce", [PY, os.path.join(SIM, "salesforce_sim.py"), "--dataset",
                                     dataset, "--public-key", pub],
                      os.path.join(self.dir, "salesforce-sim.log"))
        self.loki = self.start_loki(0)
        # the keepalive only paces empty responses on an idle stream
        self.pubsub = Sim("pubsub", [PY, os.path.join(SIM, "pubsub_sim.py"), "--keepalive-ms",
                                     "5000"], os.path.join(self.dir, "pubsub-sim.log"))
        info = http("GET", self.pubsub.base + "/control/info")
        self.pubsub_grpc = f"http://127.0.0.1:{info['grpc_port']}"
        self.publish(300)
        store_yaml = self.backend.start()
        with open(self.config, "w", encoding="utf-8") as fh:
            fh.write(f"""# generated by tests/ha/ha_harness.py
salesforce:
  login_url: {self.sf.base}
  client_id: sim-client-id
  username: sim@example.com
  private_key_file: {self.path(key)}
sources:
  eventlogfile:
    enabled: true
    interval: Hourly
    event_types: [API, URI]
    poll_interval: 2s
    lookback: 6h
    settle_window: 0s
  eventlog_objects:
    enabled: true
    objects:
      - name: LoginEvent
        poll_interval: 1s
        lookback: 2h
        settle_window: 1s
      - name: ApiAnomalyEventStore
        poll_interval: 2s
        lookback: 2h
        settle_window: 1s
  pubsub:
    endpoint: {self.pubsub_grpc}
    topics: ["{TOPIC}"]
    replay_preset: EARLIEST
sink:
  loki:
    url: {self.loki.base}/loki/api/v1/push
    batch: {{flush_interval: 200ms}}
{store_yaml}service:
  log_format: json
  shutdown_grace: 5s
""")
        self.inotify = Inotify(self)
        self.recorder = threading.Thread(target=self.record_loop, daemon=True)
        self.recorder.start()
        if self.wine is not None:
            self.wine.start()
        for slot in range(REPLICAS):
            self.spawn(slot)
        self.hist.wait_for(self.current_leader, 60, "a first leader")

    def start_loki(self, port):
        return Sim("loki", [PY, os.path.join(SIM, "loki_sim.py"), "--port", str(port),
                            "--journal", self.journal],
                   os.path.join(self.dir, "loki-sim.log"))

    def elf_file(self, t, rows, kind):
        self.elf_seq += 1
        fid = "0ATHA%011d" % self.elf_seq
        hour = int(t // 3600) * 3600 - 2 * 3600
        for i in range(rows):
            self.expected.add(f"{fid}-{i}")
        return {"Id": fid, "EventType": kind, "Interval": "Hourly", "LogDate": iso_z(hour),
                "CreatedDate": iso_z(t), "Sequence": self.elf_seq,
                "generate": {"rows": rows, "kind": kind, "seed": self.elf_seq}}

    def hostile_file(self, t, rows, crlf):
        """An EventLogFile CSV written here rather than generated by the simulator, each row
        carrying HOSTILE_CELLS; every row is remembered, so each copy Loki receives can be
        compared with it field by field. Every cell is quoted, as Salesforce writes them,
        except RUN_TIME: a bare cell must parse too."""
        self.elf_seq += 1
        fid = "0ATHA%011d" % self.elf_seq
        hour = int(t // 3600) * 3600 - 2 * 3600
        nl = "\r\n" if crlf else "\n"
        lines = [",".join('"%s"' % c for c in HOSTILE_COLUMNS)]
        n = len(HOSTILE_CELLS)
        for i in range(rows):
            at = dt.datetime.fromtimestamp(hour + (i * 3600.0) / rows, dt.timezone.utc)
            ms = at.microsecond // 1000
            row = {"EVENT_TYPE": "API",
                   "TIMESTAMP": at.strftime("%Y%m%d%H%M%S.") + "%03d" % ms,
                   "REQUEST_ID": f"{fid}-{i}", "USER_ID": "005HA%010d" % (i % 7),
                   "RUN_TIME": str(i % 997), "CLIENT_NAME": HOSTILE_CELLS[(i + 3) % n],
                   "QUERY": HOSTILE_CELLS[i % n],
                   "TIMESTAMP_DERIVED": at.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % ms}
            self.expected.add(row["REQUEST_ID"])
            self.hostile[row["REQUEST_ID"]] = row
            lines.append(",".join(row[c] if c == "RUN_TIME" else
                                  '"' + row[c].replace('"', '""') + '"'
                                  for c in HOSTILE_COLUMNS))
        return {"Id": fid, "EventType": "API", "Interval": "Hourly", "LogDate": iso_z(hour),
                "CreatedDate": iso_z(t), "Sequence": self.elf_seq,
                "csv": nl.join(lines) + nl}

    def login_event(self, t):
        self.obj_seq += 1
        rid = "0LdHA%012d" % self.obj_seq
        self.expected.add(rid)
        return {"Id": rid, "EventDate": iso_z(t), "Username": f"user{self.obj_seq % 7}@ex.com",
                "SourceIp": "10.0.%d.%d" % (self.obj_seq % 11, self.obj_seq % 250),
                "Status": "Success"}

    def publish(self, count):
        """Publishes @count login events on the Pub/Sub topic; their EventIdentifier is
        <topic's last segment>-<sequence>, the simulator's numbering."""
        doc = http("POST", self.pubsub.base + "/control/publish",
                   {"topic": TOPIC, "count": count, "kind": "login"}, timeout=10)
        tail = TOPIC.rsplit("/", 1)[-1]
        for seq in range(doc["first"], doc["last"] + 1):
            self.expected.add(f"{tail}-{seq:08d}")

    def initial_dataset(self):
        t = now()
        files = [self.elf_file(t - 3600 + 300 * k, 1500 + 500 * k, "API" if k % 2 else "URI")
                 for k in range(6)]
        files.append(self.hostile_file(t - 1500, 800, crlf=True))
        logins = [self.login_event(t - 3000 + 10 * i) for i in range(300)]
        anomalies = []
        for i in range(100):
            rid = "0ApHA%012d" % (i + 1)
            self.expected.add(rid)
            anomalies.append({"Id": rid, "EventDate": iso_z(t - 3600 + 30 * i),
                              "Username": f"user{i % 7}@ex.com", "Score": 0.5,
                              "Summary": f"rows \"{i}\", unusual"})
        return {"eventlogfiles": files,
                "objects": {"LoginEvent": {"big_object": False, "timestamp_field": "EventDate",
                                           "records": logins},
                            "ApiAnomalyEventStore": {"big_object": False,
                                                     "timestamp_field": "EventDate",
                                                     "records": anomalies}}}

    # --- replicas -------------------------------------------------------------------------

    def spawn(self, slot):
        self.generation += 1
        before = self.wine.pids() if self.wine is not None else None
        r = Replica(self, slot, self.generation)
        with self.hist.cond:
            self.replicas[slot] = r
            self.all_replicas.append(r)
        if self.wine is not None:
            self.resolve_win_pid(r, before)
        return r

    def resolve_win_pid(self, r, before):
        """The Windows process id of a replica just started: the one copy of the image that
        is new since @before and is no other replica's. Spawns are serial, and a replica that
        logged its health port is running, so exactly one such pid exists then."""
        self.hist.wait_for(lambda: r.health_port or r.exited, 60,
                           f"{r.holder} to start under wine")
        if r.exited:
            return
        known = {x.win_pid for x in self.all_replicas if x is not r and not x.exited}
        fresh = self.wine.pids() - before - known
        if len(fresh) != 1:
            raise RuntimeError(f"{r.holder}: cannot tell its Windows pid from {sorted(fresh)}")
        r.win_pid = fresh.pop()
        print(f"ha: {r.holder} is Windows pid {r.win_pid}", flush=True)

    def current_leader(self):
        leaders = [r for r in self.replicas.values()
                   if r.leading and not r.exited and not r.stopped]
        return leaders[0] if len(leaders) == 1 else None

    def live(self):
        return [r for r in self.replicas.values() if not r.exited]

    # --- recorder -------------------------------------------------------------------------

    def sample_file(self, name, kind):
        path = os.path.join(self.dir, name)
        with self.file_lock:
            try:
                with open(path, "rb") as fh:
                    content = fh.read()
            except FileNotFoundError:
                content = None
            except (IsADirectoryError, PermissionError):
                content = b"<unreadable>"
            with self.hist.cond:
                self.hist.files.append((now(), name, kind, content))

    def record_loop(self):
        tick = threading.Event()
        while not self.stop.is_set():
            round_ = []
            with self.hist.cond:
                targets = [r for r in self.replicas.values()
                           if not r.exited and not r.stopped and r.health_port]
            for r in targets:
                try:
                    doc = http("GET", f"http://127.0.0.1:{r.health_port}/statusz", timeout=0.5)
                    lead = doc.get("leadership") or {}
                    round_.append((r.holder, bool(lead.get("leader")), lead.get("epoch")))
                except (OSError, ValueError):
                    pass
            with self.hist.cond:
                self.hist.statusz.append((now(), round_))
            self.backend.sample()
            self.hist.notify()
            # the recorder's sampling clock, not a wait for an outcome
            tick.wait(0.2)

    # --- workload -------------------------------------------------------------------------

    def workload_loop(self):
        """New events keep arriving while faults land: logins every second, a file every few
        seconds. The set stays finite: it stops with the fault schedule."""
        clock = threading.Event()
        n = 0
        while not self.workload_stop.is_set():
            n += 1
            t = now()
            doc = {"objects": {"LoginEvent": {"records": [self.login_event(t)
                                                          for _ in range(1 + n % 3)]}}}
            if n % self.opts.file_every == 0:
                rows = 1000 + self.rng.randrange(2000)
                # every other new file is a hostile one, its line ends alternating
                k = n // self.opts.file_every
                doc["eventlogfiles"] = [
                    self.hostile_file(t, rows // 2, crlf=k % 4 == 1) if k % 2 else
                    self.elf_file(t, rows, "API" if n % 2 else "URI")]
            try:
                http("POST", self.sf.base + "/control/add", doc, timeout=10)
            except OSError as exc:
                self.hist.notes.append(f"workload add failed: {exc}")
            try:
                self.publish(1 + self.rng.randrange(5))
            except OSError as exc:
                self.hist.notes.append(f"workload publish failed: {exc}")
            clock.wait(1.0)

    # --- faults ---------------------------------------------------------------------------

    def fault(self, ftype, **info):
        entry = {"type": ftype, "t": now(), "healed": None}
        entry.update(info)
        with self.hist.cond:
            self.hist.faults.append(entry)
        print(f"ha: {time.strftime('%H:%M:%S')} fault {ftype} {info}", flush=True)
        return entry

    def healed(self, entry):
        entry["healed"] = now()

    def wait_leader(self, what, timeout=60):
        return self.hist.wait_for(self.current_leader, timeout, what)

    def inject(self, ftype, pause):
        ttl = TTL
        rng = self.rng
        if ftype in ("kill_leader", "stop_leader", "term_restart"):
            leader = self.wait_leader(f"a leader before {ftype}")
            if ftype == "kill_leader":
                leader.expected_exit = True
                e = self.fault(ftype, target=leader.holder)
                leader.signal(signal.SIGKILL)
                self.hist.wait_for(lambda: leader.exited, 30, "the killed leader to exit")
                self.wait_leader("a new leader after SIGKILL")
                self.healed(e)
                self.spawn(leader.slot)
            elif ftype == "stop_leader":
                e = self.fault(ftype, target=leader.holder)
                with self.hist.cond:
                    leader.stopped = True
                leader.signal(signal.SIGSTOP)
                t_stop = now()
                pause(ttl * rng.uniform(1.3, 2.2))
                leader.signal(signal.SIGCONT)
                with self.hist.cond:
                    leader.stopped = False
                    self.hist.suspended.append((leader.holder, t_stop, now()))
                self.healed(e)
            else:
                leader.expected_exit = True
                e = self.fault(ftype, target=leader.holder)
                leader.signal(signal.SIGTERM)
                self.hist.wait_for(lambda: leader.exited, 30, "the stopped leader to exit")
                self.healed(e)
                self.spawn(leader.slot)
        elif ftype in ("lease_delete", "lease_garbage", "lease_unreadable"):
            self.backend.lease_fault(ftype, pause, rng)
        elif ftype in ("loki_5xx", "loki_429"):
            count = rng.randrange(2, self.opts.burst_max + 1)
            status = rng.choice([500, 502, 503]) if ftype == "loki_5xx" else 429
            e = self.fault(ftype, count=count, status=status)
            doc = {"count": count, "status": status}
            if status == 429:
                doc["retry_after"] = "1"
            with self.loki_lock:
                http("POST", self.loki.base + "/control/fault", doc)
            self.healed(e)
        elif ftype in ("sf_503", "sf_limit"):
            count = rng.randrange(2, self.opts.burst_max + 1)
            match = rng.choice(["query", "logfile"]) if ftype == "sf_503" else "query"
            e = self.fault(ftype, count=count, match=match)
            doc = {"match": match, "count": count}
            if ftype == "sf_503":
                doc.update({"status": 503, "error_code": "SERVER_UNAVAILABLE",
                            "message": "injected: service unavailable"})
            else:
                doc.update({"status": 403, "error_code": "REQUEST_LIMIT_EXCEEDED",
                            "message": "TotalRequests Limit exceeded."})
            http("POST", self.sf.base + "/control/fault", doc)
            self.healed(e)
        elif ftype == "pubsub_break":
            # the leader's open stream ends under it: a reset, UNAVAILABLE, or a clean end
            kind = rng.choice(["rst", "unavailable", "end"])
            e = self.fault(ftype, kind=kind)
            http("POST", self.pubsub.base + "/control/fault", {"kind": kind, "scope": "open"})
            self.healed(e)
        elif ftype == "loki_restart":
            e = self.fault(ftype)
            with self.loki_lock:
                port = self.loki.port
                self.loki.stop(signal.SIGKILL)
                with self.hist.cond:
                    self.hist.loki_restarts.append(now())
                self.loki = self.start_loki(port)
            self.healed(e)
        else:
            raise ValueError(ftype)

    def schedule(self, duration):
        """Rounds of every fault type in a seeded order, a seeded gap between faults; each
        fault's own repair happens before the next one starts, so every effect is attributable.
        The first round always completes, so even a short run injects every type.
        """
        pacer = threading.Event()

        def pause(seconds):
            # scheduling on a clock, not a wait for an outcome
            pacer.wait(seconds)

        end = time.monotonic() + duration
        pause(2.0)
        while time.monotonic() < end:
            order = list(FAULTS)
            self.rng.shuffle(order)
            first = not self.hist.faults
            for ftype in order:
                if time.monotonic() >= end and not first:
                    break
                self.inject(ftype, pause)
                pause(self.rng.uniform(self.opts.gap_min, self.opts.gap_max))

    # --- end of run -----------------------------------------------------------------------

    def read_journal(self):
        """New journal lines since the last call: every event id with its arrival times."""
        with open(self.journal, "rb") as fh:
            fh.seek(self.journal_pos)
            data = fh.read()
        cut = data.rfind(b"\n") + 1
        self.journal_pos += cut
        for raw in data[:cut].splitlines():
            doc = json.loads(raw)
            t = doc["t"]
            for s in doc["streams"]:
                source = s.get("labels", {}).get("source", "unknown")
                for e in s["entries"]:
                    try:
                        line = json.loads(e["line"])
                    except ValueError:
                        continue
                    eid = (line.get("REQUEST_ID") or line.get("Id")
                           or line.get("EventIdentifier"))
                    if eid is not None:
                        self.copies.setdefault(eid, []).append(t)
                        self.source_of[eid] = source
                        want = self.hostile.get(eid)
                        if want is not None:
                            self.hostile_seen += 1
                            if line != want:
                                self.hostile_bad.append(
                                    f"{eid}: " + ", ".join(
                                        f"{c} {want.get(c)!r} arrived as {line.get(c)!r}"
                                        for c in sorted(set(want) | set(line))
                                        if want.get(c) != line.get(c)))
                        if self.remaining is not None:
                            self.remaining.discard(eid)

    def missing(self):
        """Expected ids not in Loki yet; only called once the workload stopped."""
        self.read_journal()
        if self.remaining is None:
            self.remaining = {e for e in self.expected if e not in self.copies}
        return self.remaining

    def shutdown(self):
        self.stop.set()
        for r in list(self.replicas.values()):
            r.expected_exit = True
            r.signal(signal.SIGCONT)
            r.signal(signal.SIGTERM)
        for r in list(self.replicas.values()):
            try:
                r.proc.wait(30)
            except subprocess.TimeoutExpired:
                r.signal(signal.SIGKILL)
                r.proc.wait(10)
            r.reader.join(10)
        # a start that failed early (a skip) has no recorder or watch yet
        if getattr(self, "recorder", None) is not None:
            self.recorder.join(10)
        if getattr(self, "inotify", None) is not None:
            self.inotify.close()
        for s in (self.sf, self.loki, self.pubsub):
            if s is not None:
                s.stop()
        self.backend.stop()
        if self.wine is not None:
            self.wine.stop()


# --- checkers ------------------------------------------------------------------------------

def fault_windows(hist):
    """[start, end + ttl] of every fault: the only instants two leaders may overlap."""
    out = []
    for f in hist.faults:
        out.append((f["t"], (f["healed"] or f["t"]) + TTL))
    for holder, t_stop, t_cont in hist.suspended:
        out.append((t_cont, t_cont + TTL))
    return out


def in_window(t, windows):
    return any(a <= t <= b for a, b in windows)


def leader_intervals(hist, t_end):
    """Per holder, the intervals in which it claimed leadership (log lines), minus the time
    it was frozen by SIGSTOP, cut at its exit."""
    exits = {h: t for t, h, _rc, _e in hist.exits}
    intervals = []
    open_ = {}
    for t, holder, kind, epoch in sorted(hist.leadership):
        if kind == "acquired":
            open_[holder] = (t, epoch)
        elif holder in open_:
            start, ep = open_.pop(holder)
            intervals.append((holder, start, t, ep))
    for holder, (start, ep) in open_.items():
        intervals.append((holder, start, exits.get(holder, t_end), ep))
    out = []
    for holder, a, b, ep in intervals:
        pieces = [(a, b)]
        for h, s, c in hist.suspended:
            if h != holder:
                continue
            nxt = []
            for x, y in pieces:
                if c <= x or s >= y:
                    nxt.append((x, y))
                    continue
                if x < s:
                    nxt.append((x, s))
                if c < y:
                    nxt.append((c, y))
            pieces = nxt
        out.extend((holder, x, y, ep) for x, y in pieces)
    return out


def checkpoint_order(key, value):
    """A comparable position for a checkpoint value, or None for a shape we do not know."""
    if key == "__fence_epoch__":
        return int(value)
    if key.startswith("pubsub:"):
        # the simulator's replay ids are 8 bytes, big-endian, growing (real ones are opaque)
        raw = base64.b64decode(value)
        return int.from_bytes(raw, "big") if len(raw) == 8 else None
    try:
        doc = json.loads(value)
    except ValueError:
        return None
    for field in ("last_ts", "last_created"):
        if isinstance(doc, dict) and doc.get(field):
            return parse_ts(doc[field])
    return None


def position_text(key, value):
    """The part of a checkpoint value the order is taken from, for a readable report."""
    if key == "__fence_epoch__":
        return value
    if key.startswith("pubsub:"):
        return f"replay id {checkpoint_order(key, value)}"
    try:
        doc = json.loads(value)
        for field in ("last_ts", "last_created"):
            if doc.get(field):
                return f"{field} {doc[field]}"
    except (ValueError, AttributeError):
        pass
    return value[:80]


def check(h, t_end, liveness):
    hist = h.hist
    results = []
    evidence = {}

    def result(name, ok, detail, ev=None):
        results.append((name, ok, detail))
        if not ok and ev:
            evidence[name] = ev

    # no loss
    missing = h.missing()
    result("no loss", not missing,
           f"{len(h.expected)} events expected, {len(h.expected) - len(missing)} in Loki",
           sorted(missing)[:20])

    # the hostile-quoting rows arrive as written
    result("hostile CSV intact", not h.hostile_bad and h.hostile_seen > 0,
           f"{h.hostile_seen} copies of {len(h.hostile)} hostile-quoting rows (quotes, commas, "
           "CR/LF in quoted fields, UTF-8) equal to the row written, field by field",
           h.hostile_bad[:20])

    # no regression, sampled and from the history of writes
    last = {}
    regress = []
    states = [(t, kind, c) for t, name, kind, c in hist.files if name == STATE]
    parsed = 0
    for t, kind, content in states:
        if content is None or content == b"<unreadable>":
            continue
        try:
            doc = json.loads(content)
        except ValueError:
            regress.append(f"{iso_z(t)} state file is not JSON ({kind})")
            continue
        parsed += 1
        for key, value in doc.items():
            pos = checkpoint_order(key, value)
            if pos is None:
                continue
            prev = last.get(key)
            if prev is not None and pos < prev[0]:
                regress.append(f"{iso_z(t)} {key} moved back from {position_text(key, prev[1])}"
                               f" to {position_text(key, value)} ({kind})")
            if prev is None or pos >= prev[0]:
                last[key] = (pos, value)
    writes = sum(1 for _t, k, _c in states if k == "write")
    result("no regression", not regress,
           f"{parsed} state versions read ({writes} at a write, the rest sampled), "
           f"{len(last)} keys", regress[:20])

    # fencing
    fence = []
    lease_epoch = 0
    lease_reads = 0
    for t, name, kind, content in hist.files:
        if name != LEASE or content is None or content == b"<unreadable>":
            continue
        try:
            ep = int(json.loads(content)["epoch"])
        except (ValueError, KeyError, TypeError):
            continue  # the harness's garbage, or a lease being replaced
        lease_reads += 1
        if ep < lease_epoch:
            fence.append(f"{iso_z(t)} lease epoch {ep} after {lease_epoch} ({kind})")
        lease_epoch = max(lease_epoch, ep)
    store_epoch = 0
    for t, kind, content in states:
        try:
            ep = int(json.loads(content).get("__fence_epoch__", "0"))
        except (ValueError, TypeError, AttributeError):
            continue
        if ep < store_epoch:
            fence.append(f"{iso_z(t)} store epoch {ep} after {store_epoch} ({kind})")
        store_epoch = max(store_epoch, ep)
    acq_epoch = 0
    acquisitions = [x for x in sorted(hist.leadership) if x[2] == "acquired"]
    for t, holder, _k, ep in acquisitions:
        if ep <= acq_epoch:
            fence.append(f"{iso_z(t)} {holder} acquired epoch {ep}, not above {acq_epoch}")
        acq_epoch = max(acq_epoch, ep)
    for r in h.all_replicas:
        with open(r.log_path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if "fenced" in line or "stale leader" in line:
                    hist.notes.append(f"{r.holder} (fence working): {line.strip()[:200]}")
    result("fencing", not fence,
           f"{lease_reads} lease reads, {len(acquisitions)} acquisitions with strictly "
           f"increasing epochs (last {acq_epoch}), store epoch never decreasing "
           f"(last {store_epoch})", fence[:20])

    # single leader, from the logs and from /statusz rounds
    windows = fault_windows(hist)
    ivs = leader_intervals(hist, t_end)
    overlaps = []
    ivs.sort(key=lambda x: x[1])
    for i, (h1, a1, b1, e1) in enumerate(ivs):
        for h2, a2, b2, e2 in ivs[i + 1:]:
            if a2 >= b1:
                break
            if h1 == h2:
                continue
            lo, hi = max(a1, a2), min(b1, b2)
            # any instant of the overlap outside every fault window is a violation
            cuts = sorted({lo, hi} | {x for w in windows for x in w if lo < x < hi})
            for x, y in zip(cuts, cuts[1:]):
                if not in_window((x + y) / 2, windows):
                    overlaps.append(f"{h1} (epoch {e1}) and {h2} (epoch {e2}) both led "
                                    f"{iso_z(x)}..{iso_z(y)}")
                    break
    poll_doubles = []
    for t, round_ in hist.statusz:
        leaders = [x for x in round_ if x[1]]
        if len(leaders) > 1 and not in_window(t, windows):
            poll_doubles.append(f"{iso_z(t)} /statusz: {leaders}")
    result("single leader", not overlaps and not poll_doubles,
           f"{len(ivs)} leadership intervals, {len(hist.statusz)} /statusz rounds; two "
           f"leaders only inside {len(windows)} fault windows of one ttl",
           (overlaps + poll_doubles)[:20])

    # duplicates, per failover
    acq_times = [t for t, _h, _k, _e in acquisitions]
    changes = sorted(acq_times[1:] + list(hist.loki_restarts))
    per_change = {}
    per_source = {}  # (source, change) -> duplicates
    unexplained = []
    dup_total = 0
    for eid, times in h.copies.items():
        if len(times) < 2:
            continue
        times = sorted(times)
        for tk in times[1:]:
            dup_total += 1
            # two leaders may overlap for one ttl around a change: the stale one's copy may come
            # after the new one's, both after the change
            cause = [c for c in changes if times[0] - TTL <= c <= tk + 0.001]
            if not cause:
                unexplained.append(f"{eid} at {iso_z(times[0])} and {iso_z(tk)}")
                continue
            per_change[cause[-1]] = per_change.get(cause[-1], 0) + 1
            key = (h.source_of.get(eid, "unknown"), cause[-1])
            per_source[key] = per_source.get(key, 0) + 1
    failovers = max(0, len(acquisitions) - 1)
    result("bounded duplicates", not unexplained,
           f"{dup_total} duplicate entries over {failovers} failovers and "
           f"{len(hist.loki_restarts)} Loki restarts; max per failover "
           f"{max(per_change.values(), default=0)}; every duplicate within one ttl of one",
           unexplained[:20])
    # A source whose cursor moves per record re-sends at one change at most what was pushed
    # and not yet committed: one push in flight per lane, max_entries each (docs/reliability.md)
    worst = {}
    for (source, _t), n in per_source.items():
        worst[source] = max(worst.get(source, 0), n)
    over = [f"{src}: {n} duplicates at one change > {in_flight_bound(src)}"
            for src, n in sorted(worst.items())
            if src in PER_RECORD_SOURCES and n > in_flight_bound(src)]
    result("duplicates within the entries in flight", not over,
           "max per change by source: " + (", ".join(
               f"{src} {n}" for src, n in sorted(worst.items())) or "none") +
           f"; bound {IN_FLIGHT_BOUND} ({LANES} lanes x max_entries {MAX_ENTRIES}), "
           f"eventlogfile + {ELF_MARK_ROWS} (its mark interval)", over)
    h.dup_by_source = worst

    # liveness
    live_bad = list(liveness)
    bound = h.backend.bound
    failover_times = []
    for f in hist.faults:
        if f["type"] not in ("kill_leader", "stop_leader"):
            continue
        nxt = [t for t, holder, _k, _e in acquisitions if t > f["t"] and holder != f["target"]]
        if not nxt:
            live_bad.append(f"no leader after {f['type']} at {iso_z(f['t'])}")
            continue
        ft = nxt[0] - f["t"]
        failover_times.append(ft)
        if ft > bound:
            live_bad.append(f"{f['type']} at {iso_z(f['t'])}: failover took {ft:.2f} s "
                            f"> {bound:.2f} s")
    for t, holder, rc, expected in hist.exits:
        if not expected:
            live_bad.append(f"{holder} exited with {rc} at {iso_z(t)} without being stopped")
        elif rc not in (0, -signal.SIGKILL) and holder not in h.terminated:
            live_bad.append(f"{holder} exited with {rc} at {iso_z(t)} after a stop request")
    result("liveness", not live_bad,
           f"leader within {bound:.1f} s of each SIGKILL/SIGSTOP and after the last fault; "
           f"max failover {max(failover_times, default=0):.2f} s; the set completed; "
           "no unexpected exit", live_bad[:20])
    return results, evidence, failover_times, per_change, failovers, dup_total


def report(h, results, evidence, failover_times, per_change, failovers, dup_total, opts,
           elapsed):
    counts = {f: 0 for f in FAULTS}
    for f in h.hist.faults:
        counts[f["type"]] += 1
    total = sum(counts.values())
    ok = all(r[1] for r in results) and total > 0 and all(counts.values())
    lines = [
        "# Reliability report: HA under injected faults",
        "",
        f"Produced by `{opts.command}` (tests/ha/ha_harness.py, seed {opts.seed}), "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"run length {elapsed / 60:.1f} min, binary `{opts.bin}`"
        f"{' under wine (forced kills: TerminateProcess through `taskkill /F`)' if opts.wine else ''}.",
        "",
        f"Setup: {REPLICAS} `sf2loki run` replicas, {h.backend.describe()}; the Salesforce "
        "simulator (EventLogFile API/URI files and polled LoginEvent/ApiAnomalyEventStore "
        "records, new ones added every second during the run), the Pub/Sub simulator (a "
        f"platform-event topic, `{TOPIC}`, published to every second) and the Loki simulator "
        "(journal of every accepted push).",
        "",
        f"**Result: {'PASS' if ok else 'FAIL'}**",
        "",
        "| measure | value |",
        "|---|---|",
        f"| events in the set | {len(h.expected)} |",
        f"| entries received by Loki | {sum(len(v) for v in h.copies.values())} |",
        f"| faults injected | {total} |",
        f"| failovers (leadership acquisitions after the first) | {failovers} |",
        f"| max failover time after SIGKILL/SIGSTOP | "
        f"{max(failover_times, default=0):.2f} s (bound {h.backend.bound_text} + "
        f"{SLACK:g} s slack = {h.backend.bound:.2f} s) |",
        f"| median failover time | "
        f"{sorted(failover_times)[len(failover_times) // 2] if failover_times else 0:.2f} s |",
        f"| duplicate entries | {dup_total} |",
        f"| max duplicates per failover | {max(per_change.values(), default=0)} |",
        f"| max duplicates per failover, by source | " + (", ".join(
            f"{src} {n}" for src, n in sorted(h.dup_by_source.items())) or "none") + " |",
        f"| lease/state writes seen (inotify or the simulator's record) | "
        f"{h.hist.file_writes} |",
        "",
        "## Faults by type",
        "",
        "| fault | count |",
        "|---|---|",
    ]
    lines += [f"| {f} | {counts[f]} |" for f in FAULTS]
    lines += ["", "## Invariants", "", "| invariant | result | detail |", "|---|---|---|"]
    lines += [f"| {n} | {'pass' if good else 'FAIL'} | {d} |" for n, good, d in results]
    if total == 0 or not all(counts.values()):
        lines += ["", "FAIL: not every fault type was injected."]
    if evidence:
        lines += ["", "## Violations", ""]
        for name, ev in evidence.items():
            lines.append(f"### {name}")
            lines.append("")
            lines += [f"- {x}" for x in ev]
            lines.append("")
    if per_change:
        lines += ["", "## Duplicates per failover", "",
                  "| leadership change or Loki restart at | duplicates |", "|---|---|"]
        for t in sorted(per_change):
            lines.append(f"| {iso_z(t)} | {per_change[t]} |")
    if h.hist.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in h.hist.notes[:30]]
    return ok, "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--coordinator", default="file_lease",
                    choices=["file_lease", "k8s_lease", "s3_lease", "gcs_lease"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", type=float, default=90)
    ap.add_argument("--gap-min", type=float, default=1.0)
    ap.add_argument("--gap-max", type=float, default=4.0)
    ap.add_argument("--file-every", type=int, default=6)
    ap.add_argument("--burst-max", type=int, default=4,
                    help="largest Loki/Salesforce error burst (the sink's backoff grows with it)")
    ap.add_argument("--complete-timeout", type=float, default=180)
    ap.add_argument("--report")
    ap.add_argument("--command", default="tests/ha/ha_harness.py")
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--wine", action="store_true",
                    help="run --bin (sf2loki.exe) under wine; implied by a name ending in .exe")
    opts = ap.parse_args()
    opts.wine = opts.wine or opts.bin.lower().endswith(".exe")
    if opts.wine and opts.coordinator != "file_lease":
        # the other topologies hand the binary CA and key files of the simulators by Unix
        # path; file_lease is what the Windows port's HA story rests on (LockFileEx)
        ap.error("--wine runs the file_lease topology only")

    h = Harness(opts)
    print(f"ha: {opts.coordinator}{' under wine' if opts.wine else ''}, seed {opts.seed}, "
          f"{opts.duration:.0f} s of faults, work dir {h.dir}", flush=True)
    started = time.monotonic()
    liveness = []
    workload = None
    try:
        try:
            h.start()
        except Skip as exc:
            print(f"ha: SKIP: {exc}", flush=True)
            return SKIP
        workload = threading.Thread(target=h.workload_loop, daemon=True)
        workload.start()
        try:
            h.schedule(opts.duration)
        except TimeoutError as exc:
            liveness.append(f"during the schedule: {exc}")
        h.workload_stop.set()
        workload.join(30)
        last_fault = max((f["healed"] or f["t"] for f in h.hist.faults), default=now())
        try:
            h.hist.wait_for(h.current_leader, h.backend.bound,
                            "a leader after the last fault")
            lead_at = min((t for t, _h, k, _e in h.hist.leadership if k == "acquired"
                           and t >= last_fault), default=None)
            print(f"ha: leader after the last fault"
                  f"{'' if lead_at is None else f' ({lead_at - last_fault:.2f} s)'}",
                  flush=True)
        except TimeoutError as exc:
            liveness.append(str(exc))
        try:
            h.hist.wait_for(lambda: not h.missing(), opts.complete_timeout,
                            "every event of the set in Loki")
        except TimeoutError as exc:
            liveness.append(str(exc))
    finally:
        t_end = now()
        h.shutdown()
    elapsed = time.monotonic() - started
    results, evidence, ft, per_change, failovers, dups = check(h, t_end, liveness)
    ok, text = report(h, results, evidence, ft, per_change, failovers, dups, opts, elapsed)
    print(text, flush=True)
    if opts.report:
        with open(opts.report, "w", encoding="utf-8") as fh:
            fh.write(text)
    if ok and not opts.keep and not opts.workdir:
        shutil.rmtree(h.dir, ignore_errors=True)
    else:
        print(f"ha: logs and records kept in {h.dir}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
