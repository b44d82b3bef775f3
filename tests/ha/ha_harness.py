#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""HA fault-injection harness: three `sf2loki run` replicas sharing a lease and a checkpoint
store, real faults, invariant checkers over the recorded history (see tests/ha/README.md).

usage: ha_harness.py --bin PATH [--coordinator file_lease|k8s_lease|s3_lease|gcs_lease]
                     [--seed N] [--duration SECONDS] [--report FILE]
                     [--command TEXT] [--workdir DIR] [--keep] [--wine]
                     [--sharded] [--replicas N]

--wine (implied by a --bin ending in .exe) runs sf2loki.exe under wine, file_lease only.
--sharded runs coordinate.sharding: N replicas (default 3) on 13 work units, a fourth replica
joining and leaving mid-run, the invariants checked per unit (tests/ha/README.md).

Exit 0 when every invariant holds, 1 when one is violated (or nothing was injected), 77 when a
simulator cannot start for a missing Debian module, or (--sharded) the binary cannot shard with
the coordinator.
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
import urllib.parse
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

# --sharded: coordinate.sharding over the same lease, every replica active on its share of the
# work units (docs/deployment/scale-out.md); a member is gone after members_ttl unchanged, and
# its record is rewritten every members_ttl / 3
MEMBERS_TTL = TTL
# no type shares an overlap category with a polled object (LoginEvent is "login")
SHARD_TYPES = ["API", "URI", "Logout", "Report", "RestApi", "ApexExecution"]
SHARD_OBJECTS = ["LoginEvent", "ApiAnomalyEventStore", "ReportAnomalyEventStore"]
SHARD_TOPICS = [f"/event/HaDrill{n}__e" for n in range(1, 5)]
# the faults of a sharded run: today's, applied per replica or per unit lease, plus a fourth
# replica joining mid-run and leaving (SIGTERM) later
SHARD_FAULTS = None  # FAULTS + ["join", "leave"], set below

FAULTS = ["kill_leader", "stop_leader", "term_restart", "lease_delete", "lease_garbage",
          "lease_unreadable", "loki_5xx", "loki_429", "sf_503", "sf_limit", "loki_restart",
          "pubsub_break"]
# faults that may move leadership; the others must not
LEADER_FAULTS = {"kill_leader", "stop_leader", "term_restart", "lease_delete",
                 "lease_garbage", "lease_unreadable"}
SHARD_FAULTS = FAULTS + ["join", "leave"]
REPLICA_FAULTS = {"kill_leader", "stop_leader", "term_restart", "join", "leave"}
UNIT_LEASE_FAULTS = {"lease_delete", "lease_garbage", "lease_unreadable"}


def unit_file_name(unit):
    """A unit's lease file under <file_lease.path>.units/: g_uri_escape_string(unit, NULL)."""
    return urllib.parse.quote(unit, safe="-._~") + ".lease"


def unit_object_suffix(unit):
    """A unit's lease object under <lease key>.units/ (s3_lease, gcs_lease): every byte but
    [A-Za-z0-9._-] as %XX (src/coordinate/sfl-unit-lease.c)."""
    return "".join(chr(b) if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "._-")
                   else "%%%02X" % b for b in unit.encode())


def shard_score(member, unit):
    """sfl_shard_score (src/coordinate/sfl-shard.c): FNV-1a over member, a separator, unit,
    then a 64-bit finalizer."""
    m = (1 << 64) - 1
    h = 0xcbf29ce484222325
    prime = 0x100000001b3
    for b in member.encode():
        h = ((h ^ b) * prime) & m
    h = (h * prime) & m
    for b in unit.encode():
        h = ((h ^ b) * prime) & m
    h ^= h >> 33
    h = (h * 0xff51afd7ed558ccd) & m
    h ^= h >> 33
    h = (h * 0xc4ceb9fe1a85ec53) & m
    h ^= h >> 33
    return h


def unit_k8s_name(lease_name, unit):
    """A unit's Lease name under k8s_lease: <lease name>-u-<16 hex> (sfl_unit_lease_k8s_name)."""
    suffix = "-u-%016x" % shard_score("", unit)
    lower = lease_name.lower()[:63 - len(suffix)]
    while lower and not lower[-1].isalnum():
        lower = lower[:-1]
    return (lower or "unit") + suffix


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
        # --sharded
        self.unit_events = []   # (t, holder, unit, "acquired"/"lost"/"handover"/"draining"/
        #                          "stopped"/"fenced", epoch)
        self.shard_status = []  # (t, [(holder, {unit: epoch}, member, n_members)])
        self.killed = {}        # holder -> t of its SIGKILL

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
        self.terminating = False  # SIGTERM sent: every unit drains, then the process ends
        # --sharded: the units this replica holds, from its log: unit -> epoch
        self.units = {}
        self.handover = set()  # units released at "handing over": a drain line may follow
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
                elif (msg.startswith("unit ") or msg.startswith("shards: handing ")) and \
                        "repeated" not in doc:
                    # a "repeated" line is the log's late summary of folded warnings
                    self._unit_line(parse_ts(doc["timestamp"]), msg)
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
            self.units.clear()
            hist.exits.append((now(), self.holder, rc, self.expected_exit))
            hist.cond.notify_all()

    def _unit_line(self, t, msg):
        """The unit tenures of sfl-sharding.c: "unit X: acquired (epoch N)" opens one; a loss
        ("lease lost") ends it at once; a handover ("shards: handing X over") ends it then,
        unless its drain follows ("unit X: assigned to another member; draining ..."), which
        ends at "unit X: pipeline run stopped"; so does every drain of a SIGTERM."""
        hist = self.h.hist
        if msg.startswith("shards: handing "):
            unit, kind, epoch = msg[len("shards: handing "):-len(" over")], "handover", None
        else:
            unit, _sep, rest = msg[len("unit "):].partition(": ")
            epoch = None
            if rest.startswith("acquired (epoch "):
                kind = "acquired"
                epoch = int(rest[len("acquired (epoch "):].split(")", 1)[0])
            elif rest.startswith("lease lost"):
                kind = "lost"
            elif rest.startswith("assigned to another member; draining"):
                kind = "draining"
            elif rest.startswith("pipeline run stopped"):
                kind = "stopped"
            elif rest.endswith("handing it back"):
                kind = "fenced"
            else:
                return
        with hist.cond:
            hist.unit_events.append((t, self.holder, unit, kind, epoch))
            if kind == "acquired":
                self.units[unit] = epoch
                self.handover.discard(unit)
            elif kind == "handover":
                self.handover.add(unit)
                self.units.pop(unit, None)
            elif kind in ("lost", "stopped"):
                self.units.pop(unit, None)
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
        self.libc = libc = ctypes.CDLL("libc.so.6", use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.units_wd = None  # --sharded: <lease>.units/, watched once the daemon made it
        self.dir_wd = self.add_watch(harness.dir)
        self.stop_r, self.stop_w = os.pipe()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def add_watch(self, path):
        mask = self.IN_CLOSE_WRITE | self.IN_MOVED_TO | self.IN_CREATE
        wd = self.libc.inotify_add_watch(self.fd, path.encode(), mask)
        if wd < 0:
            raise OSError(ctypes.get_errno(), "inotify_add_watch")
        return wd

    def watch_units(self, path):
        """Watches the unit leases' directory; every lease there is read at once, so a write
        made before the watch is not missed either."""
        if self.units_wd is not None or not os.path.isdir(path):
            return
        self.units_wd = self.add_watch(path)
        for name in sorted(os.listdir(path)):
            if name.endswith(".lease") and not name.startswith("."):
                self.h.sample_unit_file(name, "sample")

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
            unit_names = set()
            while off + 16 <= len(data):
                wd, _mask, _cookie, length = struct.unpack_from("iIII", data, off)
                name = data[off + 16:off + 16 + length].rstrip(b"\0").decode()
                off += 16 + length
                if wd == self.units_wd and wd is not None:
                    if name.endswith(".lease") and not name.startswith("."):
                        unit_names.add(name)
                elif name == STATE or (name == LEASE and self.h.backend.watch_lease_file):
                    names.add(name)
            for name in sorted(unit_names):
                with self.h.hist.cond:
                    self.h.hist.file_writes += 1
                self.h.sample_unit_file(name, "write")
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
    # staleness by the writer's wall clock (expires_at), not by what an observer saw
    observer_clock = False

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
        h = self.h
        if h.sharded:
            # every unit's lease, each a file of its own beside where the single lease would be
            units_dir = os.path.join(h.dir, LEASE + ".units")
            h.inotify.watch_units(units_dir)
            for unit in h.units:
                h.sample_unit_file(unit_file_name(unit), "sample")
        else:
            h.sample_file(LEASE, "sample")
        h.sample_file(STATE, "sample")

    def lease_path(self, unit=None):
        """The single lease file, or @unit's lease under <path>.units/ (--sharded)."""
        if unit is None:
            return os.path.join(self.h.dir, LEASE)
        return os.path.join(self.h.dir, LEASE + ".units", unit_file_name(unit))

    def write_lease(self, content, unit=None):
        path = self.lease_path(unit)
        tmp = os.path.join(os.path.dirname(path), ".harness-lease.tmp")
        with open(tmp, "wb") as fh:
            fh.write(content)
        os.replace(tmp, path)

    def lease_fault(self, ftype, pause, rng, unit=None):
        """One fault on the single lease, or on @unit's lease alone (--sharded)."""
        h = self.h
        path = self.lease_path(unit)
        e = h.fault(ftype, **({} if unit is None else {"unit": unit}))
        if ftype == "lease_delete":
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        elif ftype == "lease_garbage":
            self.write_lease(b"\x00garbage{not a lease" + bytes(rng.randrange(256)
                                                               for _ in range(16)), unit)
        else:
            # a directory in its place: every read fails, and so does every rename onto it
            tmpdir = os.path.join(os.path.dirname(path), ".harness-lease-dir")
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
    observer_clock = True
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

    def lease_names(self):
        """Lease name -> the history's name for it: the single Lease, or one per unit."""
        if not self.h.sharded:
            return {self.LEASE_NAME: LEASE}
        return {unit_k8s_name(self.LEASE_NAME, u): "unit:" + u for u in self.h.units}

    def sample(self):
        h = self.h
        try:
            st = http("GET", f"{self.sim.base}/control/state?since={self.since}", timeout=2)
        except (OSError, ValueError):
            return
        t = now()
        names = self.lease_names()
        with h.hist.cond:
            for w in st["writes"]:
                if w.get("status") in (200, 201) and not w.get("dryRun") and \
                        w.get("name") in names:
                    h.hist.file_writes += 1
                    h.hist.files.append((t, names[w["name"]], "write",
                                         self.lease_doc(w.get("holder"), w.get("transitions"))))
            self.since = st["writes_total"]
            for lname, name in names.items():
                lease = st["leases"].get(f"{self.NS}/{lname}")
                spec = (lease or {}).get("spec") or {}
                h.hist.files.append((t, name, "sample", None if lease is None else
                                     self.lease_doc(spec.get("holderIdentity"),
                                                    spec.get("leaseTransitions"))))
        h.sample_file(STATE, "sample")

    def lease_fault(self, ftype, pause, rng, unit=None):
        h = self.h
        e = h.fault(ftype, **({} if unit is None else {"unit": unit}))
        name = self.LEASE_NAME if unit is None else unit_k8s_name(self.LEASE_NAME, unit)
        if ftype == "lease_delete":
            http("POST", self.sim.base + "/control/delete", {"name": name})
        elif ftype == "lease_garbage":
            # another writer leaves a Lease with no holder, times or transitions
            http("POST", self.sim.base + "/control/put",
                 {"namespace": self.NS, "name": name,
                  "spec": {"leaseDurationSeconds": 1 + rng.randrange(60)}})
        else:
            # the API refuses every read of the Lease for a while (RBAC trouble, an overloaded
            # server); sharded, of that one unit's Lease, as the other backends' fault does
            fault = {"status": rng.choice([403, 500, 503]), "count": 1000000, "methods": ["GET"]}
            if unit is not None:
                fault["name"] = name
            http("POST", self.sim.base + "/control/fault", fault)
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
    observer_clock = True
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
        names = {f"{self.BUCKET}/{self.STATE_KEY}": STATE}
        if h.sharded:
            names.update({f"{self.BUCKET}/{self.lease_key(u)}": "unit:" + u for u in h.units})
        else:
            names[f"{self.BUCKET}/{self.LEASE_KEY}"] = LEASE
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

    def lease_key(self, unit=None):
        """The single lease object, or @unit's under <lease key>.units/ (--sharded)."""
        if unit is None:
            return self.LEASE_KEY
        return f"{self.LEASE_KEY}.units/{unit_object_suffix(unit)}"

    def lease_fault(self, ftype, pause, rng, unit=None):
        h = self.h
        e = h.fault(ftype, **({} if unit is None else {"unit": unit}))
        key = self.lease_key(unit)
        doc = {"bucket": self.BUCKET, "key" if self.kind == "s3" else "name": key}
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
                  "keys": [f"{self.BUCKET}/{key}"]})
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
        # --sharded: the work units (their ids are the checkpoint keys they write), the unit
        # of every expected id, and the unit leases' file names
        self.sharded = opts.sharded
        self.n_replicas = opts.replicas
        self.units = []
        if self.sharded:
            self.units = ([f"eventlogfile:{t}" for t in SHARD_TYPES] +
                          [f"eventlog_objects:{o}" for o in SHARD_OBJECTS] +
                          [f"pubsub:{t}" for t in SHARD_TOPICS])
        self.unit_by_file = {unit_file_name(u): u for u in self.units}
        self.unit_of = {}
        self.balance = None  # (ok, detail) of the steady-state check at the end
        self.shutdown_at = {}  # holder -> t of the final SIGTERM
        self.recover_times = []
        self.handoff_times = []
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
        if self.sharded:
            for topic in SHARD_TOPICS:
                self.publish(100, topic)
        else:
            self.publish(300)
        store_yaml = self.backend.start()
        if self.sharded:
            # the backends' YAML ends with the coordinate: block
            store_yaml += (f"  sharding: {{enabled: true, members_ttl: "
                           f"{int(MEMBERS_TTL * 1000)}ms}}\n")
        with open(self.config, "w", encoding="utf-8") as fh:
            fh.write(f"""# generated by tests/ha/ha_harness.py
salesforce:
  login_url: {self.sf.base}
  client_id: sim-client-id
  username: sim@example.com
  private_key_file: {self.path(key)}
sources:
{self.sources_yaml()}sink:
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
        for slot in range(self.n_replicas):
            self.spawn(slot)
        if self.sharded:
            self.wait_start_sharded()
        else:
            self.hist.wait_for(self.current_leader, 60, "a first leader")

    def sources_yaml(self):
        if self.sharded:
            objects = "".join(f"""      - name: {o}
        poll_interval: {1 if o == "LoginEvent" else 2}s
        lookback: 2h
        settle_window: 1s
""" for o in SHARD_OBJECTS)
            topics = ", ".join(f'"{t}"' for t in SHARD_TOPICS)
            return f"""  eventlogfile:
    enabled: true
    interval: Hourly
    event_types: [{", ".join(SHARD_TYPES)}]
    poll_interval: 2s
    lookback: 6h
    settle_window: 0s
  eventlog_objects:
    enabled: true
    objects:
{objects}  pubsub:
    endpoint: {self.pubsub_grpc}
    topics: [{topics}]
    replay_preset: EARLIEST
"""
        return f"""  eventlogfile:
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
"""

    def wait_start_sharded(self):
        """Every unit owned, or the binary's refusal to shard with this coordinator (SKIP)."""
        def ready():
            for r in self.all_replicas:
                if r.exited:
                    with open(r.log_path, encoding="utf-8", errors="replace") as fh:
                        if "cannot shard in this build" in fh.read():
                            return "refused"
                    return "exited"
            return "owned" if self.unowned() == [] else None

        state = self.hist.wait_for(ready, 90, "every unit owned after the start")
        if state == "refused":
            raise Skip(f"{self.backend.name} cannot shard in this build (the binary refused "
                       "coordinate.sharding at start)")
        if state == "exited":
            raise RuntimeError("a replica exited at start; see its log in " + self.dir)

    def start_loki(self, port):
        return Sim("loki", [PY, os.path.join(SIM, "loki_sim.py"), "--port", str(port),
                            "--journal", self.journal],
                   os.path.join(self.dir, "loki-sim.log"))

    def elf_file(self, t, rows, kind, event_type=None):
        """An EventLogFile the simulator generates (@kind's rows) under @event_type (--sharded:
        any of SHARD_TYPES; the generator writes API or URI rows under every type)."""
        self.elf_seq += 1
        fid = "0ATHA%011d" % self.elf_seq
        hour = int(t // 3600) * 3600 - 2 * 3600
        event_type = event_type or kind
        for i in range(rows):
            self.expected.add(f"{fid}-{i}")
            self.unit_of[f"{fid}-{i}"] = f"eventlogfile:{event_type}"
        return {"Id": fid, "EventType": event_type, "Interval": "Hourly", "LogDate": iso_z(hour),
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
            self.unit_of[row["REQUEST_ID"]] = "eventlogfile:API"
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
        self.unit_of[rid] = "eventlog_objects:LoginEvent"
        return {"Id": rid, "EventDate": iso_z(t), "Username": f"user{self.obj_seq % 7}@ex.com",
                "SourceIp": "10.0.%d.%d" % (self.obj_seq % 11, self.obj_seq % 250),
                "Status": "Success"}

    def anomaly(self, name, t, i):
        """A record of the polled object @name (--sharded: the other two objects)."""
        rid = ("0ApHA%012d" if name == "ApiAnomalyEventStore" else "0RpHA%012d") % i
        self.expected.add(rid)
        self.unit_of[rid] = f"eventlog_objects:{name}"
        return {"Id": rid, "EventDate": iso_z(t), "Username": f"user{i % 7}@ex.com",
                "Score": 0.5, "Summary": f"rows \"{i}\", unusual"}

    def publish(self, count, topic=TOPIC):
        """Publishes @count login events on a Pub/Sub topic; their EventIdentifier is
        <topic's last segment>-<sequence>, the simulator's numbering."""
        doc = http("POST", self.pubsub.base + "/control/publish",
                   {"topic": topic, "count": count, "kind": "login"}, timeout=10)
        tail = topic.rsplit("/", 1)[-1]
        for seq in range(doc["first"], doc["last"] + 1):
            self.expected.add(f"{tail}-{seq:08d}")
            self.unit_of[f"{tail}-{seq:08d}"] = f"pubsub:{topic}"

    def initial_dataset_sharded(self):
        """One file per EventLogFile type, the three polled objects with history."""
        t = now()
        files = [self.elf_file(t - 3600 + 300 * k, 800 + 200 * k, "API" if k % 2 else "URI",
                               SHARD_TYPES[k]) for k in range(len(SHARD_TYPES))]
        files.append(self.hostile_file(t - 1500, 400, crlf=True))
        logins = [self.login_event(t - 3000 + 10 * i) for i in range(200)]
        objects = {"LoginEvent": {"big_object": False, "timestamp_field": "EventDate",
                                  "records": logins}}
        for name in SHARD_OBJECTS[1:]:
            objects[name] = {"big_object": False, "timestamp_field": "EventDate",
                             "records": [self.anomaly(name, t - 3600 + 30 * i, i + 1)
                                         for i in range(100)]}
        self.anomaly_seq = 100
        return {"eventlogfiles": files, "objects": objects}

    def initial_dataset(self):
        if self.sharded:
            return self.initial_dataset_sharded()
        t = now()
        files = [self.elf_file(t - 3600 + 300 * k, 1500 + 500 * k, "API" if k % 2 else "URI")
                 for k in range(6)]
        files.append(self.hostile_file(t - 1500, 800, crlf=True))
        logins = [self.login_event(t - 3000 + 10 * i) for i in range(300)]
        anomalies = []
        for i in range(100):
            rid = "0ApHA%012d" % (i + 1)
            self.expected.add(rid)
            self.unit_of[rid] = "eventlog_objects:ApiAnomalyEventStore"
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

    def owners(self, unit):
        """The running, unfrozen replicas that hold @unit now, from their logs."""
        return [r for r in self.replicas.values()
                if unit in r.units and not r.exited and not r.stopped]

    def unowned(self, units=None):
        return [u for u in (self.units if units is None else units) if not self.owners(u)]

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

    def sample_unit_file(self, fname, kind):
        """One unit lease file (--sharded, file_lease), into the history as "unit:<unit>"."""
        unit = self.unit_by_file.get(fname)
        if unit is None:
            return
        path = os.path.join(self.dir, LEASE + ".units", fname)
        with self.file_lock:
            try:
                with open(path, "rb") as fh:
                    content = fh.read()
            except FileNotFoundError:
                content = None
            except (IsADirectoryError, PermissionError):
                content = b"<unreadable>"
            with self.hist.cond:
                self.hist.files.append((now(), "unit:" + unit, kind, content))

    def record_loop(self):
        tick = threading.Event()
        while not self.stop.is_set():
            round_ = []
            with self.hist.cond:
                targets = [r for r in self.replicas.values()
                           if not r.exited and not r.stopped and r.health_port]
            shard_round = []
            for r in targets:
                try:
                    doc = http("GET", f"http://127.0.0.1:{r.health_port}/statusz", timeout=0.5)
                    lead = doc.get("leadership") or {}
                    round_.append((r.holder, bool(lead.get("leader")), lead.get("epoch")))
                    sh = doc.get("sharding")
                    if sh is not None:
                        shard_round.append((r.holder, {u["unit"]: u.get("epoch")
                                                       for u in sh.get("units", [])},
                                            bool(sh.get("member")),
                                            len(sh.get("members", []))))
                except (OSError, ValueError):
                    pass
            with self.hist.cond:
                if self.sharded:
                    self.hist.shard_status.append((now(), shard_round))
                else:
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
                if self.sharded:
                    # the types in turn, so every EventLogFile unit gets new files
                    rows //= 2
                    etype = SHARD_TYPES[k % len(SHARD_TYPES)]
                    doc["eventlogfiles"] = [
                        self.hostile_file(t, rows // 2, crlf=k % 4 == 1) if k % 5 == 1 else
                        self.elf_file(t, rows, "API" if n % 2 else "URI", etype)]
                else:
                    doc["eventlogfiles"] = [
                        self.hostile_file(t, rows // 2, crlf=k % 4 == 1) if k % 2 else
                        self.elf_file(t, rows, "API" if n % 2 else "URI")]
            if self.sharded and n % 2 == 0:
                for name in SHARD_OBJECTS[1:]:
                    self.anomaly_seq += 1
                    doc["objects"][name] = {"records": [self.anomaly(name, t,
                                                                     self.anomaly_seq)]}
            try:
                http("POST", self.sf.base + "/control/add", doc, timeout=10)
            except OSError as exc:
                self.hist.notes.append(f"workload add failed: {exc}")
            try:
                if self.sharded:
                    for topic in SHARD_TOPICS:
                        self.publish(1 + self.rng.randrange(3), topic)
                else:
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

    def pick_owner(self, ftype):
        """A running replica that holds units (--sharded): the target of a replica fault."""
        def some():
            c = [r for r in self.replicas.values()
                 if r.units and not r.exited and not r.stopped]
            return sorted(c, key=lambda r: r.slot) or None

        return self.rng.choice(self.hist.wait_for(some, 60, f"a unit owner before {ftype}"))

    def inject_sharded(self, ftype, pause):
        """Today's faults per replica or per unit lease, plus a fourth replica's join/leave."""
        rng = self.rng
        if ftype in ("kill_leader", "stop_leader", "term_restart"):
            r = self.pick_owner(ftype)
            units = sorted(r.units)
            if ftype == "kill_leader":
                r.expected_exit = True
                e = self.fault(ftype, target=r.holder, units=units)
                with self.hist.cond:
                    self.hist.killed[r.holder] = now()
                r.signal(signal.SIGKILL)
                self.hist.wait_for(lambda: r.exited, 30, "the killed replica to exit")
                self.hist.wait_for(lambda: not self.unowned(units), 60,
                                   f"new owners of {r.holder}'s units after SIGKILL")
                self.healed(e)
                self.spawn(r.slot)
            elif ftype == "stop_leader":
                e = self.fault(ftype, target=r.holder, units=units)
                with self.hist.cond:
                    r.stopped = True
                r.signal(signal.SIGSTOP)
                t_stop = now()
                pause(TTL * rng.uniform(1.3, 2.2))
                r.signal(signal.SIGCONT)
                with self.hist.cond:
                    r.stopped = False
                    self.hist.suspended.append((r.holder, t_stop, now()))
                self.healed(e)
            else:
                r.expected_exit = True
                r.terminating = True
                e = self.fault(ftype, target=r.holder, units=units)
                r.signal(signal.SIGTERM)
                self.hist.wait_for(lambda: r.exited, 30, "the stopped replica to exit")
                self.healed(e)
                self.spawn(r.slot)
        elif ftype in UNIT_LEASE_FAULTS:
            # one unit's lease alone, a unit that has an owner now
            owned = sorted(u for u in self.units if self.owners(u)) or self.units
            self.backend.lease_fault(ftype, pause, rng, unit=rng.choice(owned))
        elif ftype == "join":
            slot = self.n_replicas
            r = self.spawn(slot)
            e = self.fault(ftype, target=r.holder)
            self.hist.wait_for(lambda: r.units or r.exited, 60,
                               f"{r.holder} to take its first unit after joining")
            self.healed(e)
        elif ftype == "leave":
            r = self.replicas.get(self.n_replicas)
            if r is None or r.exited:
                self.hist.notes.append("leave: no joined replica running; nothing to stop")
                return
            r.expected_exit = True
            r.terminating = True
            e = self.fault(ftype, target=r.holder, units=sorted(r.units))
            r.signal(signal.SIGTERM)
            self.hist.wait_for(lambda: r.exited, 30, "the leaving replica to exit")
            with self.hist.cond:
                del self.replicas[self.n_replicas]
            self.healed(e)
        else:
            self.inject(ftype, pause)

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
            order = list(SHARD_FAULTS if self.sharded else FAULTS)
            self.rng.shuffle(order)
            if self.sharded and order.index("leave") < order.index("join"):
                # the fourth replica leaves after it joined, within the round
                i, j = order.index("leave"), order.index("join")
                order[i], order[j] = order[j], order[i]
            first = not self.hist.faults
            for ftype in order:
                if time.monotonic() >= end and not first:
                    # a joined replica still leaves: the run ends on N replicas
                    if ftype == "leave" and self.n_replicas in self.replicas:
                        self.inject_sharded(ftype, pause)
                    continue
                if self.sharded:
                    self.inject_sharded(ftype, pause)
                else:
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

    def balanced(self):
        """The last /statusz rounds, over two seconds, all show every unit run exactly once
        and each of the N running replicas with floor(U/N) or ceil(U/N) of them."""
        rounds = [x for x in self.hist.shard_status if x[0] >= now() - 2.0]
        if len(rounds) < 5:
            return None
        n = len([r for r in self.replicas.values() if not r.exited])
        lo, hi = len(self.units) // n, -(-len(self.units) // n)
        counts = None
        for _t, round_ in rounds:
            if len(round_) != n:
                return None
            runs = [u for _h, units, _m, _n in round_ for u in units]
            if sorted(runs) != sorted(self.units):
                return None
            if any(not (lo <= len(units) <= hi) or not member or members != n
                   for _h, units, member, members in round_):
                return None
            counts = {hh: len(units) for hh, units, _m, _n in round_}
        return counts

    def wait_balance(self, timeout):
        t0 = now()
        n = len([r for r in self.replicas.values() if not r.exited])
        lo, hi = len(self.units) // n, -(-len(self.units) // n)
        try:
            counts = self.hist.wait_for(self.balanced, timeout,
                                        "a balanced assignment at steady state")
            self.balance = (True, f"{len(self.units)} units on {n} replicas: " + ", ".join(
                f"{hh} {c}" for hh, c in sorted(counts.items())) +
                f" (each {lo}..{hi}), every unit run once, in every /statusz round for 2 s; "
                f"reached {now() - t0:.1f} s after the end of the faults")
        except TimeoutError:
            last = self.hist.shard_status[-1][1] if self.hist.shard_status else []
            self.balance = (False, f"no balanced assignment within {timeout:.0f} s; last "
                            "/statusz round: " + "; ".join(
                                f"{hh} {sorted(units)}" for hh, units, _m, _n in last))
        print(f"ha: balance: {self.balance[1]}", flush=True)

    def shutdown(self):
        self.stop.set()
        for r in list(self.replicas.values()):
            r.expected_exit = True
            r.terminating = True
            self.shutdown_at[r.holder] = now()
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
    if key == "__fence_epoch__" or key.startswith("__fence_epoch__:"):
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
    if key == "__fence_epoch__" or key.startswith("__fence_epoch__:"):
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


def check_data(h, result):
    """The checks of what arrived and what was committed, the same sharded or not: no loss,
    hostile CSV intact, no regression; returns the state versions read."""
    hist = h.hist
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
    return states


def check(h, t_end, liveness):
    hist = h.hist
    results = []
    evidence = {}

    def result(name, ok, detail, ev=None):
        results.append((name, ok, detail))
        if not ok and ev:
            evidence[name] = ev

    states = check_data(h, result)

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


def shard_bound(backend):
    """How soon a unit is owned again after its owner failed. The others see the member gone
    after members_ttl unchanged, listed every members_ttl / 3. The unit's lease is stale a ttl
    after its last renewal, looked at every renew_interval: file_lease by the writer's clock
    (expires_at); the compare-and-swap leases on the observer's monotonic clock, timed by the
    unit's successor, which watches the leases it would take over before the owner fails
    (coordinate/sfl-shards.c). Whichever is later, plus the backend's own slack, and one SLACK
    more: a takeover is two protocol steps one after the other (the member listing that drops
    the owner, then the claim's read, epoch floor and write), each paying a real process's
    scheduling on a shared machine."""
    detect = MEMBERS_TTL + MEMBERS_TTL / 3
    return max(TTL + RENEW, detect) + (backend.bound - TTL - RENEW) + SLACK


def shard_bound_text(backend):
    extra = "verify + 2 x slack" if not backend.observer_clock else "2 x slack"
    return f"max(ttl + renew, members_ttl + members_ttl/3) + {extra}"


def unit_intervals(h, t_end):
    """Per unit, [(holder, start, end, epoch)]: the tenures of every replica from its log
    (see Replica._unit_line), cut at its SIGKILL or exit, minus the time it was frozen."""
    hist = h.hist
    exits = {x[1]: x[0] for x in hist.exits}
    raw = []
    open_ = {}
    for t, holder, unit, kind, epoch in hist.unit_events:
        key = (holder, unit)
        cur = open_.get(key)
        if kind == "acquired":
            if cur is not None:
                raw.append((holder, unit, cur["start"], cur["cand"] or t, cur["epoch"]))
            open_[key] = {"start": t, "epoch": epoch, "cand": None, "drain": False}
        elif cur is None:
            continue
        elif kind == "handover":
            cur["cand"] = t
        elif kind == "draining":
            cur["cand"] = None
            cur["drain"] = True
        elif kind == "lost":
            raw.append((holder, unit, cur["start"], t, cur["epoch"]))
            del open_[key]
        elif kind == "stopped":
            # after a drain, a SIGTERM's drain or a loss: the "lease lost" warning of a unit's
            # second loss within the log's repeat window (src/core/sfl-log.c) is folded into a
            # later "repeated" line, so the info line of the pipeline's end closes it too
            raw.append((holder, unit, cur["start"], cur["cand"] or t, cur["epoch"]))
            del open_[key]
    for (holder, unit), cur in open_.items():
        raw.append((holder, unit, cur["start"], cur["cand"] or exits.get(holder, t_end),
                    cur["epoch"]))
    out = {u: [] for u in h.units}
    for holder, unit, a, b, ep in raw:
        if holder in hist.killed:
            b = min(b, hist.killed[holder])
        pieces = [(a, b)] if b > a else []
        for hh, s0, c in hist.suspended:
            if hh != holder:
                continue
            nxt = []
            for x, y in pieces:
                if c <= x or s0 >= y:
                    nxt.append((x, y))
                    continue
                if x < s0:
                    nxt.append((x, s0))
                if c < y:
                    nxt.append((c, y))
            pieces = nxt
        out.setdefault(unit, []).extend((holder, x, y, ep) for x, y in pieces)
    for unit in out:
        out[unit].sort(key=lambda x: x[1])
    return out


def unit_gaps(intervals, t_end):
    """The times no running, unfrozen replica held the unit, after its first tenure."""
    gaps = []
    reach = None
    for _hh, a, b, _e in sorted(intervals, key=lambda x: x[1]):
        if reach is not None and a > reach:
            gaps.append((reach, a))
        reach = b if reach is None else max(reach, b)
    if reach is not None and reach < t_end:
        gaps.append((reach, t_end))
    return gaps


def unit_windows(hist, unit):
    """[start, end + ttl] of every fault that may leave two writers of @unit: a replica
    killed, frozen or stopped (any unit may move), or a fault on this unit's own lease; and one
    ttl after each frozen replica resumed. A join or a leave is a handover and has none."""
    out = []
    for f in hist.faults:
        if f["type"] in ("kill_leader", "stop_leader", "term_restart") or \
                (f["type"] in UNIT_LEASE_FAULTS and f.get("unit") == unit):
            out.append((f["t"], (f["healed"] or f["t"]) + TTL))
    for _holder, _t_stop, t_cont in hist.suspended:
        out.append((t_cont, t_cont + TTL))
    return out


def check_sharded(h, t_end, liveness):
    hist = h.hist
    results = []
    evidence = {}

    def result(name, ok, detail, ev=None):
        results.append((name, ok, detail))
        if not ok and ev:
            evidence[name] = ev

    states = check_data(h, result)
    missing = h.missing()
    if missing:
        by_unit = {}
        for eid in missing:
            u = h.unit_of.get(eid, "unknown")
            by_unit[u] = by_unit.get(u, 0) + 1
        hist.notes.append("missing by unit: " + ", ".join(
            f"{u} {n}" for u, n in sorted(by_unit.items())))

    # epochs: each acquisition of a unit above every earlier one of it; its lease and its
    # __fence_epoch__:<unit> in the store never going back
    fence = []
    acq = {u: [] for u in h.units}
    for t, holder, unit, kind, epoch in sorted(hist.unit_events):
        if kind == "acquired":
            acq.setdefault(unit, []).append((t, holder, epoch))
    n_acq = 0
    for unit, lst in acq.items():
        top = 0
        for t, holder, ep in lst:
            n_acq += 1
            if ep <= top:
                fence.append(f"{iso_z(t)} {holder} acquired {unit} at epoch {ep}, not above "
                             f"{top}")
            top = max(top, ep)
    lease_top = {}
    lease_reads = 0
    for t, name, kind, content in hist.files:
        if not name.startswith("unit:") or content is None or content == b"<unreadable>":
            continue
        try:
            ep = int(json.loads(content)["epoch"])
        except (ValueError, KeyError, TypeError):
            continue  # the harness's garbage, or a lease being replaced
        lease_reads += 1
        unit = name[len("unit:"):]
        if ep < lease_top.get(unit, 0):
            fence.append(f"{iso_z(t)} {unit}: lease epoch {ep} after {lease_top[unit]} "
                         f"({kind})")
        lease_top[unit] = max(lease_top.get(unit, 0), ep)
    store_top = {}
    for t, kind, content in states:
        try:
            doc = json.loads(content)
        except (ValueError, TypeError):
            continue
        for key, value in doc.items():
            if not key.startswith("__fence_epoch__:"):
                continue
            unit = key[len("__fence_epoch__:"):]
            ep = int(value)
            if ep < store_top.get(unit, 0):
                fence.append(f"{iso_z(t)} {key} {ep} after {store_top[unit]} ({kind})")
            store_top[unit] = max(store_top.get(unit, 0), ep)
    no_store = [u for u in h.units if u not in store_top]
    if no_store:
        fence.append("no __fence_epoch__:<unit> in the store for " + ", ".join(no_store))
    for r in h.all_replicas:
        with open(r.log_path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if "handing it back" in line:
                    hist.notes.append(f"{r.holder} (fence working): {line.strip()[:220]}")
    result("epochs per unit", not fence,
           f"{n_acq} unit acquisitions, each above the unit's earlier ones; {lease_reads} "
           f"unit lease reads and the store's __fence_epoch__:<unit> of {len(store_top)} "
           "units never going back", fence[:20])

    # at most one writer per unit outside a window of one ttl: the tenures from the logs,
    # and the units each /statusz round lists (a double must last two rounds: one round is
    # not atomic across replicas, and a handover may fall between two of its requests)
    ivs = unit_intervals(h, t_end)
    overlaps = []
    n_ivs = 0
    for unit, lst in ivs.items():
        windows = unit_windows(hist, unit)
        n_ivs += len(lst)
        for i, (h1, a1, b1, e1) in enumerate(lst):
            for h2, a2, b2, e2 in lst[i + 1:]:
                if a2 >= b1:
                    break
                if h1 == h2:
                    continue
                lo, hi = max(a1, a2), min(b1, b2)
                cuts = sorted({lo, hi} | {x for w in windows for x in w if lo < x < hi})
                for x, y in zip(cuts, cuts[1:]):
                    if not in_window((x + y) / 2, windows):
                        overlaps.append(f"{unit}: {h1} (epoch {e1}) and {h2} (epoch {e2}) "
                                        f"both held it {iso_z(x)}..{iso_z(y)}")
                        break
    doubles = []
    prev = set()
    for t, round_ in hist.shard_status:
        seen = {}
        for holder, units, _m, _n in round_:
            for u in units:
                seen.setdefault(u, []).append(holder)
        cur = {(u, tuple(sorted(hs))) for u, hs in seen.items() if len(hs) > 1}
        for u, hs in cur & prev:
            if not in_window(t, unit_windows(hist, u)):
                doubles.append(f"{iso_z(t)} /statusz: {u} run by {', '.join(hs)}")
        prev = cur
    result("one writer per unit", not overlaps and not doubles,
           f"{n_ivs} unit tenures over {len(h.units)} units, {len(hist.shard_status)} "
           "/statusz rounds; two holders of a unit only inside the windows of a replica "
           "fault or a fault on its lease (one ttl past the repair)",
           (overlaps + doubles)[:20])

    # duplicates: an extra copy needs a change of its unit's owner (or a Loki restart)
    # between one ttl before its first copy and itself
    changes = {u: sorted([t for t, _h, _e in lst[1:]] + list(hist.loki_restarts))
               for u, lst in acq.items()}
    per_change = {}
    per_source = {}
    unexplained = []
    dup_total = 0
    for eid, times in h.copies.items():
        if len(times) < 2:
            continue
        unit = h.unit_of.get(eid)
        times = sorted(times)
        for tk in times[1:]:
            dup_total += 1
            cause = [c for c in changes.get(unit, hist.loki_restarts)
                     if times[0] - TTL <= c <= tk + 0.001]
            if not cause:
                unexplained.append(f"{eid} ({unit}) at {iso_z(times[0])} and {iso_z(tk)}")
                continue
            per_change[(unit, cause[-1])] = per_change.get((unit, cause[-1]), 0) + 1
            key = (h.source_of.get(eid, "unknown"), unit, cause[-1])
            per_source[key] = per_source.get(key, 0) + 1
    changes_total = sum(max(0, len(lst) - 1) for lst in acq.values())
    result("bounded duplicates", not unexplained,
           f"{dup_total} duplicate entries over {changes_total} owner changes of units and "
           f"{len(hist.loki_restarts)} Loki restarts; max per change "
           f"{max(per_change.values(), default=0)}; every duplicate within one ttl of a change "
           "of its own unit's owner", unexplained[:20])
    worst = {}
    for (source, _u, _t), n in per_source.items():
        worst[source] = max(worst.get(source, 0), n)
    over = [f"{src}: {n} duplicates at one change > {in_flight_bound(src)}"
            for src, n in sorted(worst.items())
            if src in PER_RECORD_SOURCES and n > in_flight_bound(src)]
    result("duplicates within the entries in flight", not over,
           "max per unit change by source: " + (", ".join(
               f"{src} {n}" for src, n in sorted(worst.items())) or "none") +
           f"; bound {IN_FLIGHT_BOUND}, eventlogfile + {ELF_MARK_ROWS}", over)
    h.dup_by_source = worst

    # every unit owned again within the bound after a failure: from the SIGKILL or SIGSTOP
    # for the units the replica held, from the repair for a fault on one unit's lease
    bound = shard_bound(h.backend)
    live_bad = list(liveness)
    recover = []  # (fault type, seconds)
    handoffs = []  # (fault type, seconds) of the clean stops, joins and leaves: reported
    for f in hist.faults:
        if f["type"] in ("kill_leader", "stop_leader"):
            units, t_ref, bounded = f.get("units", []), f["t"], True
        elif f["type"] in UNIT_LEASE_FAULTS:
            units, t_ref, bounded = [f["unit"]], f["healed"] or f["t"], True
        elif f["type"] in ("term_restart", "leave"):
            units, t_ref, bounded = f.get("units", []), f["t"], False
        else:
            continue
        worst_t = 0.0
        for unit in units:
            # each gap in the unit's ownership that the fault opened (starting between the
            # fault and one ttl + renew past its repair, a lease given up after the repair
            # included) must close within the bound of max(its start, the reference)
            lim = min((f["healed"] or f["t"]) + TTL + RENEW,
                      min((g["t"] for g in hist.faults if g["t"] > f["t"]), default=t_end))
            for g0, g1 in unit_gaps(ivs.get(unit, []), t_end):
                if g1 <= f["t"] or g0 > lim:
                    continue
                dt_ = g1 - max(g0, t_ref)
                worst_t = max(worst_t, dt_)
                if bounded and dt_ > bound:
                    live_bad.append(f"{unit}: owned again {dt_:.2f} s after {f['type']} "
                                    f"({'repair' if f['type'] in UNIT_LEASE_FAULTS else 'fault'}"
                                    f" at {iso_z(t_ref)}; unowned {iso_z(g0)}..{iso_z(g1)})"
                                    f" > {bound:.2f} s")
        (recover if bounded else handoffs).append((f["type"], worst_t))
    for f in hist.faults:
        if f["type"] == "join":
            got = [a for u in h.units for hh, a, _b, _e in ivs.get(u, [])
                   if hh == f["target"]]
            handoffs.append(("join", (min(got) - f["t"]) if got else float("nan")))
    for t, holder, rc, expected in hist.exits:
        if not expected:
            live_bad.append(f"{holder} exited with {rc} at {iso_z(t)} without being stopped")
        elif rc not in (0, -signal.SIGKILL):
            live_bad.append(f"{holder} exited with {rc} at {iso_z(t)} after a stop request")
    h.recover_times = recover
    h.handoff_times = handoffs
    result("liveness", not live_bad,
           f"every unit of a killed or frozen replica, and a unit whose lease was hit, owned "
           f"again within {bound:.1f} s; max {max((x for _f, x in recover), default=0):.2f} s;"
           " the set completed; no unexpected exit", live_bad[:20])

    ok, detail = h.balance or (False, "not checked")
    result("balance", ok, detail, None if ok else [detail])
    return results, evidence, [x for _f, x in recover], \
        {iso_z(t) + " " + u: n for (u, t), n in per_change.items()}, changes_total, dup_total


def report(h, results, evidence, failover_times, per_change, failovers, dup_total, opts,
           elapsed):
    if h.sharded:
        return report_sharded(h, results, evidence, per_change, failovers, dup_total, opts,
                              elapsed)
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
        f"Setup: {h.n_replicas} `sf2loki run` replicas, {h.backend.describe()}; the Salesforce "
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


def report_sharded(h, results, evidence, per_change, changes, dup_total, opts, elapsed):
    counts = {f: 0 for f in SHARD_FAULTS}
    for f in h.hist.faults:
        counts[f["type"]] += 1
    total = sum(counts.values())
    ok = all(r[1] for r in results) and total > 0 and all(counts.values())
    rec = [x for _f, x in h.recover_times]
    by_type = {}
    for ftype, x in h.recover_times + h.handoff_times:
        by_type.setdefault(ftype, []).append(x)
    bound = shard_bound(h.backend)
    lines = [
        "# Reliability report: sharded HA under injected faults",
        "",
        f"Produced by `{opts.command}` (tests/ha/ha_harness.py --sharded, seed {opts.seed}), "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"run length {elapsed / 60:.1f} min, binary `{opts.bin}`.",
        "",
        f"Setup: {h.n_replicas} `sf2loki run` replicas (a fourth joins and leaves during each "
        f"round of faults) with `coordinate.sharding` (members_ttl {MEMBERS_TTL:g} s), "
        f"{h.backend.describe()}; {len(h.units)} work units: EventLogFile "
        f"{', '.join(SHARD_TYPES)}, polled objects {', '.join(SHARD_OBJECTS)}, Pub/Sub topics "
        f"{', '.join(SHARD_TOPICS)}; new files, records and events for every unit every "
        "second; the Loki simulator journals every accepted push.",
        "",
        f"**Result: {'PASS' if ok else 'FAIL'}**",
        "",
        "| measure | value |",
        "|---|---|",
        f"| events in the set | {len(h.expected)} |",
        f"| entries received by Loki | {sum(len(v) for v in h.copies.values())} |",
        f"| faults injected | {total} |",
        f"| unit owner changes (acquisitions after each unit's first) | {changes} |",
        f"| max time to owner again after a SIGKILL/SIGSTOP or a unit lease fault | "
        f"{max(rec, default=0):.2f} s (bound {shard_bound_text(h.backend)}, slack {SLACK:g} s: "
        f"{bound:.2f} s) |",
        f"| median of those | {sorted(rec)[len(rec) // 2] if rec else 0:.2f} s |",
    ]
    for ftype in ("kill_leader", "stop_leader", "lease_delete", "lease_garbage",
                  "lease_unreadable", "term_restart", "join", "leave"):
        xs = [x for x in by_type.get(ftype, []) if x == x]
        if xs:
            what = {"term_restart": "a SIGTERM to the owner's units owned again (handover)",
                    "leave": "the fourth replica's SIGTERM to its units owned again",
                    "join": "a join to the new replica's first unit"}.get(
                        ftype, f"{ftype} to its units owned again")
            lines.append(f"| {what}, max / median | {max(xs):.2f} s / "
                         f"{sorted(xs)[len(xs) // 2]:.2f} s |")
    lines += [
        f"| duplicate entries | {dup_total} |",
        f"| max duplicates per unit owner change | {max(per_change.values(), default=0)} |",
        "| max duplicates per change, by source | " + (", ".join(
            f"{src} {n}" for src, n in sorted(h.dup_by_source.items())) or "none") + " |",
        f"| lease/state writes seen (inotify or the simulator's record) | "
        f"{h.hist.file_writes} |",
        "",
        "## Faults by type",
        "",
        "| fault | count |",
        "|---|---|",
    ]
    lines += [f"| {f} | {counts[f]} |" for f in SHARD_FAULTS]
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
    ap.add_argument("--sharded", action="store_true",
                    help="coordinate.sharding: every replica runs its share of the work units")
    ap.add_argument("--replicas", type=int, default=REPLICAS,
                    help="replicas at the start (--sharded adds one more mid-run)")
    opts = ap.parse_args()
    if opts.replicas < 2:
        ap.error("--replicas must be at least 2")
    if opts.sharded and opts.wine:
        ap.error("--sharded runs natively only (sharding is tested on Linux)")
    opts.wine = opts.wine or opts.bin.lower().endswith(".exe")
    if opts.wine and opts.coordinator != "file_lease":
        # the other topologies hand the binary CA and key files of the simulators by Unix
        # path; file_lease is what the Windows port's HA story rests on (LockFileEx)
        ap.error("--wine runs the file_lease topology only")

    h = Harness(opts)
    print(f"ha: {opts.coordinator}{' under wine' if opts.wine else ''}"
          f"{f', sharded, {opts.replicas} replicas' if opts.sharded else ''}, seed {opts.seed}, "
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
        if h.sharded:
            try:
                h.hist.wait_for(lambda: not h.unowned(), shard_bound(h.backend) + 30,
                                "every unit owned after the last fault")
            except TimeoutError as exc:
                liveness.append(f"{exc}: {', '.join(h.unowned())}")
            try:
                h.hist.wait_for(lambda: not h.missing(), opts.complete_timeout,
                                "every event of the set in Loki")
            except TimeoutError as exc:
                liveness.append(str(exc))
            h.wait_balance(30)
        else:
            _single_end(h, last_fault, liveness, opts)
    finally:
        t_end = now()
        h.shutdown()
    elapsed = time.monotonic() - started
    if h.sharded:
        results, evidence, ft, per_change, failovers, dups = check_sharded(h, t_end, liveness)
    else:
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


def _single_end(h, last_fault, liveness, opts):
    """After the schedule (unsharded): a leader, then the set complete."""
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


if __name__ == "__main__":
    sys.exit(main())
