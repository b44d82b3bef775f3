#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""The simulator broker: a test wrapper that starts the Python simulators for a Windows test.

usage: sim_broker.py COMMAND [ARG...]   (MESON_EXE_WRAPPER, when set, goes in front)
       sim_broker.py --boot COMMAND [ARG...]   (runs it with /dev/null stdio: see main())

A Windows test under wine cannot manage Linux processes: CreateProcess of /usr/bin/python3
starts it, but detached, with no process handle, no pid and stdout on /dev/null (probed on
wine 8.0, docs/deployment/windows.md "Tests"). So the Windows build runs each suite on the
simulators as `sim_broker.py TEST.exe ARGS`, with the cross file's exe_wrapper (wine-run) in
MESON_EXE_WRAPPER, set by meson. The broker listens on 127.0.0.1 (an ephemeral port), runs
the command with SFL_TEST_SIM_BROKER=http://127.0.0.1:PORT in its environment, starts
simulators when the test asks (tests/common/sfl-test-sim.c chooses this backend at run
time when the variable is set), and when the command ends kills every simulator still running
and exits with the command's status.

The API (HTTP/1.0, JSON bodies, one request per connection):

POST /spawn  {"script": "loki_sim.py", "args": [...], "wineprefix": "..."}
             starts /usr/bin/python3 tests/sim/SCRIPT ARGS with stdout piped and waits (30 s at
             most) for its first stdout line: {"id": N, "line": "PORT 1234"}, or, when stdout
             ended first, {"id": N, "line": null, "exit": STATUS} (77: a dependency missing).
             Arguments that are Windows paths (C:\\..., Z:\\...) become the Linux paths of the
             same files (through WINEPREFIX/dosdevices): the one place paths are converted.
POST /signal {"id": N, "signal": "STOP" | "CONT" | "TERM" | "KILL"} -> {"ok": true}
POST /wait   {"id": N, "timeout": SECONDS} -> {"exited": bool, "status": S}: S is the exit
             code, or minus the signal that ended it.
"""

import json
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SIM_DIR = os.path.dirname(os.path.abspath(__file__))
FIRST_LINE_TIMEOUT = 30
SIGNALS = {"STOP": signal.SIGSTOP, "CONT": signal.SIGCONT, "TERM": signal.SIGTERM,
           "KILL": signal.SIGKILL}
WINDOWS_PATH = re.compile(r"^([A-Za-z]):[\\/](.*)$", re.S)

LOCK = threading.Lock()
PROCS = {}
NEXT_ID = [1]


def die_with_broker():
    # a broker killed by meson's timeout must not leave simulators holding the test's pipes
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


SPAWN_QUEUE = queue.Queue()


def spawner():
    # PR_SET_PDEATHSIG fires when the *thread* that forked ends: every simulator is forked
    # from this one thread, which lives as long as the broker, never from a request's thread
    while True:
        argv, done = SPAWN_QUEUE.get()
        try:
            done["proc"] = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                            stdin=subprocess.DEVNULL, preexec_fn=die_with_broker)
        except OSError as exc:
            done["error"] = exc
        done["event"].set()


def popen(argv):
    done = {"event": threading.Event()}
    SPAWN_QUEUE.put((argv, done))
    done["event"].wait()
    if "error" in done:
        raise done["error"]
    return done["proc"]


def linux_path(arg, wineprefix):
    """A Windows path as the Linux path of the same file; anything else as it is."""
    m = WINDOWS_PATH.match(arg)
    if m is None:
        return arg
    drive = os.path.join(wineprefix, "dosdevices", m.group(1).lower() + ":")
    return os.path.normpath(os.path.join(os.path.realpath(drive), m.group(2).replace("\\", "/")))


def first_line(proc):
    """The first stdout line, or None when stdout ended (or stayed silent) first."""
    got = {}

    def read():
        got["line"] = proc.stdout.readline()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(FIRST_LINE_TIMEOUT)
    line = got.get("line")
    if not line:
        return None
    # the rest of stdout is drained so a talkative simulator never blocks on a full pipe
    threading.Thread(target=lambda: proc.stdout.read(), daemon=True).start()
    return line.decode("utf-8", "replace").rstrip("\r\n")


def status_of(proc):
    return proc.returncode  # negative: minus the signal, as the C side expects


def spawn(req):
    script = os.path.basename(str(req["script"]))
    if not os.path.isfile(os.path.join(SIM_DIR, script)):
        raise ValueError(f"no simulator {script!r} in {SIM_DIR}")
    wineprefix = req.get("wineprefix") or os.path.expanduser("~/.wine")
    argv = ["/usr/bin/python3", os.path.join(SIM_DIR, script)]
    argv += [linux_path(str(a), wineprefix) for a in req.get("args", [])]
    proc = popen(argv)
    with LOCK:
        pid = NEXT_ID[0]
        NEXT_ID[0] += 1
        PROCS[pid] = proc
    line = first_line(proc)
    if line is None:
        try:
            proc.wait(FIRST_LINE_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        return {"id": pid, "line": None, "exit": status_of(proc)}
    return {"id": pid, "line": line}


def lookup(req):
    with LOCK:
        proc = PROCS.get(int(req["id"]))
    if proc is None:
        raise ValueError(f"no simulator with id {req['id']!r}")
    return proc


def send_signal(req):
    proc = lookup(req)
    name = str(req["signal"])
    if name not in SIGNALS:
        raise ValueError(f"unknown signal {name!r}: one of {sorted(SIGNALS)}")
    if proc.poll() is None:
        proc.send_signal(SIGNALS[name])
    return {"ok": True}


def wait(req):
    proc = lookup(req)
    try:
        proc.wait(float(req.get("timeout", FIRST_LINE_TIMEOUT)))
    except subprocess.TimeoutExpired:
        return {"exited": False}
    return {"exited": True, "status": status_of(proc)}


ROUTES = {"/spawn": spawn, "/signal": send_signal, "/wait": wait}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        route = ROUTES.get(self.path)
        try:
            if route is None:
                raise LookupError(f"no route {self.path}")
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            answer, status = route(json.loads(body or b"{}")), 200
        except LookupError as exc:
            answer, status = {"error": str(exc)}, 404
        except (ValueError, KeyError, TypeError, OSError) as exc:
            answer, status = {"error": f"{type(exc).__name__}: {exc}"}, 400
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def kill_all():
    with LOCK:
        procs = list(PROCS.values())
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)  # a frozen simulator dies too
            proc.kill()
    for proc in procs:
        proc.wait()


def boot(wrapper, argv):
    """Runs ARGV under the wrapper with every stdio on /dev/null, its status."""
    if not wrapper:
        print("sim_broker.py --boot: no MESON_EXE_WRAPPER", file=sys.stderr)
        return 2
    return subprocess.run(wrapper + argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, check=False).returncode


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    wrapper = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))
    if sys.argv[1] == "--boot":
        # the first process of a wine prefix starts wine's services, which keep the stdio
        # they inherit for as long as any wine process runs: a test whose pipes they hold
        # would end but its log never would (meson waits for EOF). The Windows build runs
        # this first, alone: the services start here, with /dev/null
        return boot(wrapper, sys.argv[2:])
    threading.Thread(target=spawner, daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # meson hands a test of cross-built programs the cross file's exe_wrapper (wine-run here)
    command = wrapper + sys.argv[1:]
    env = dict(os.environ)
    env["SFL_TEST_SIM_BROKER"] = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        child = subprocess.Popen(command, env=env)
    except OSError as exc:
        print(f"sim_broker.py: cannot run {command[0]}: {exc}", file=sys.stderr)
        return 127
    try:
        status = child.wait()
    except KeyboardInterrupt:
        child.send_signal(signal.SIGINT)
        status = child.wait()
    server.shutdown()
    kill_all()
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
