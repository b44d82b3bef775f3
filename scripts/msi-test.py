#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""The MSI's life cycle under wine, in a fresh wine prefix (what `make msi-test` runs).

usage: msi-test.py --msi build-win/sf2loki-0.1.0-x64.msi --next-build-dir build-win-msi-next
                   --query build-win/tests/win32/sfl-svc-query.exe [--keep]

--next-build-dir is a second Windows build of the same sources configured with a higher
-Dpackage_version; this script packages it (packaging/msi/build-msi.py) signed with a
throwaway self-signed certificate, so the upgrade is also the signing test. Every step is
asserted; the first failure names what was wrong and the run exits 1 (77 when a simulator's
Debian module is missing):

  signing     the upgrade MSI and its sf2loki.exe carry an Authenticode signature that
              `osslsigncode verify` accepts against the throwaway root; the unsigned MSI has none
  install     `msiexec /i /qn` with no configuration: every file of dist/ in Program Files,
              the service registered (auto start, LocalService, ImagePath quoted in the SCM and
              the registry), the Event Log source registered, config.example.yaml copied to
              %ProgramData%\\sf2loki\\config.yaml, and the service, started by the install with
              no source enabled, stopped by itself with exit code 0
  run         an operator's config.yaml (the simulators), `net start`: RUNNING, /readyz 200, every
              row of three EventLogFiles in Loki once, the checkpoint committed to the default
              %ProgramData%\\sf2loki\\state.json; preshutdown timeout and Event Log lines
  reload      config.yaml edited, SERVICE_CONTROL_PARAMCHANGE: applied in the same process (a new
              config hash in /statusz), a fourth file shipped once; `sf2loki.exe reload` of a
              restart-only change (state.file.path) reported in pending_restart, then reverted
  stop        `net stop` drains: STOPPED, Win32 exit code 0, service-specific code 0
  upgrade     with the service running, `msiexec /i` of the higher version: one product left,
              the service running the new version (/statusz, `sf2loki.exe version`, its signed
              binary) as a new process, config.yaml and the checkpoint unchanged by the upgrade;
              then three more files: every row of all seven in Loki exactly once, the checkpoint
              holding all seven (no regression)
  downgrade   `msiexec /i` of the older MSI is refused and leaves the new version running
  uninstall   `msiexec /x /qn` with the service running: the service, Program Files\\sf2loki, the
              Event Log source and the product entry gone; %ProgramData%\\sf2loki kept as it was

Wine quirks handled here (docs/deployment/windows.md, "Tested under wine only"): the wineserver
is restarted once after `wineboot -i` (else the first install fails at StartServices with 1060);
one persistent wineserver holds the services for the whole run (they die with it); no wine
output is ever read through a pipe (services.exe inherits it and never closes it), only files.
"""

import argparse
import hashlib
import importlib.util
import filecmp
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"
SKIP = 77
SERVICE = "sf2loki"
ROWS = 2000  # per file
STATE_KEY = "eventlogfile:API"
SHUTDOWN_GRACE_S = 30


def load_e2e():
    """scripts/win-e2e.py's helpers (simulators, Loki queries, EventLogFile records)."""
    spec = importlib.util.spec_from_file_location("win_e2e", os.path.join(ROOT, "scripts",
                                                                           "win-e2e.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


E2E = load_e2e()
Fail, Skip, check = E2E.Fail, E2E.Skip, E2E.check


class Step:
    """Prints each step with its wall time; the run's summary lists them."""

    def __init__(self, log):
        self.log = log
        self.t0 = time.monotonic()
        self.last = self.t0

    def done(self, name, detail):
        now = time.monotonic()
        self.log.append((name, now - self.last))
        print("msi-test: %-9s PASS in %5.1f s: %s" % (name, now - self.last, detail), flush=True)
        self.last = now


class Wine:
    """A fresh wine prefix of this run's own, with one persistent wineserver."""

    def __init__(self, work):
        self.prefix = os.path.join(work, "wineprefix")
        self.work = work
        self.log_path = os.path.join(work, "wine.log")
        # services.exe and the services it starts inherit this environment from the first
        # process of the session: wine's ReportEventW writes each Event Log line as an
        # eventlog trace, so the session log holds what the Event Log would
        self.env = dict(os.environ, WINEPREFIX=self.prefix, WINEDEBUG="-all,+eventlog",
                        HOME=os.environ.get("HOME", "/root"))
        # no WINEPATH: the installed sf2loki.exe must find every DLL beside itself
        self.env.pop("WINEPATH", None)
        self.drive_c = os.path.join(self.prefix, "drive_c")
        self.session_log = os.path.join(work, "session.log")
        self.n = 0

    def _run(self, argv, timeout=120, log=None):
        with open(log or self.log_path, "ab") as out:
            return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                  env=self.env, timeout=timeout).returncode

    def create(self):
        os.makedirs(self.prefix)
        rc = self._run(["wineboot", "-i"], timeout=300)
        check(rc == 0, "wineboot -i exited %d (see %s)" % (rc, self.log_path))
        # the first install in a prefix wineboot has just made fails at StartServices with
        # error 1060 unless the wineserver is started afresh
        self._run(["wineserver", "-k"])
        self._run(["wineserver", "-w"])
        self._run(["wineserver", "-p"])
        rc = self._run(["wine", "cmd", "/c", "exit"], log=self.session_log)
        check(rc == 0, "wine does not start in %s (see %s)" % (self.prefix, self.session_log))

    def run(self, args, name, timeout=180):
        """A Windows program; its exit code and its output (from a file, never a pipe)."""
        self.n += 1
        out_path = os.path.join(self.work, "%02d-%s.out" % (self.n, name))
        rc = self._run(["wine"] + args, timeout=timeout, log=out_path)
        with open(out_path, "rb") as f:
            raw = f.read()
        text = raw.decode("utf-16") if raw[:2] == b"\xff\xfe" else raw.decode(errors="replace")
        return rc, text, out_path

    def unix(self, win_path):
        """C:\\x\\y as the file under the prefix."""
        check(win_path[:3].upper() == "C:\\", "not a C: path: %s" % win_path)
        return os.path.join(self.drive_c, *win_path[3:].split("\\"))

    def stop(self):
        self._run(["wineserver", "-k"])


class Run:
    def __init__(self, opts, work):
        self.opts = opts
        self.work = work
        self.wine = Wine(work)
        self.steps = []
        self.step = Step(self.steps)
        self.e2e = E2E.Env(argparse.Namespace())
        self.e2e.work = work
        self.files = []  # (id, hour) of every EventLogFile served
        self.query_exe = "C:\\sfl-svc-query.exe"
        self.program_files = "C:\\Program Files\\sf2loki"
        self.data_dir = "C:\\ProgramData\\sf2loki"
        self.exe = self.program_files + "\\sf2loki.exe"
        self.want_image_path = '"%s" run --config "%s\\config.yaml"' % (self.exe, self.data_dir)

    # --- helpers --------------------------------------------------------------------------

    def query(self):
        rc, text, path = self.wine.run([self.query_exe, SERVICE], "query", timeout=60)
        check(rc == 0, "sfl-svc-query exited %d: %s" % (rc, text.strip()))
        try:
            return json.loads(text.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise Fail("sfl-svc-query printed no JSON (see %s)" % path)

    def wait_state(self, want, deadline, what):
        end = time.monotonic() + deadline
        while True:
            q = self.query()
            check(q["exists"], "%s: the service does not exist" % what)
            if q["status"]["state"] == want:
                return q
            check(time.monotonic() < end, "%s: state %d after %.0f s, expected %d (see %s)"
                  % (what, q["status"]["state"], deadline, want, self.wine.session_log))
            time.sleep(0.5)  # polling the SCM for a state, under the deadline above

    def msiexec(self, args, name):
        log = "C:\\%s.log" % name
        t0 = time.monotonic()
        rc, text, _ = self.wine.run(["msiexec"] + args + ["/qn", "/l*v", log], name,
                                    timeout=300)
        check(rc == 0, "msiexec %s exited %d; installer log %s" % (" ".join(args), rc,
                                                                     self.wine.unix(log)))
        return time.monotonic() - t0

    def reg_query(self, key, name):
        rc, text, _ = self.wine.run(["reg", "query", key], "reg")
        if rc != 0:
            return None
        values = {}
        for line in text.splitlines():
            m = re.match(r"\s+(\S+)\s+(REG_\w+)\s+(.*)$", line)
            if m:
                values[m.group(1)] = (m.group(2), m.group(3).strip())
        return values.get(name) if name else values

    def products(self):
        """DisplayVersion of every sf2loki product in the Uninstall key."""
        rc, text, _ = self.wine.run(["reg", "query",
                                     "HKLM\\Software\\Microsoft\\Windows\\CurrentVersion\\"
                                     "Uninstall", "/s"], "products")
        found, name, version = [], None, None
        for line in text.splitlines() + ["HKEY_END"]:
            if line.startswith("HKEY"):
                if name == SERVICE:
                    found.append(version)
                name = version = None
            m = re.match(r"\s+(DisplayName|DisplayVersion)\s+REG_\w+\s+(.*)$", line)
            if m and m.group(1) == "DisplayName":
                name = m.group(2).strip()
            elif m:
                version = m.group(2).strip()
        return found

    def health(self, path):
        url = "http://127.0.0.1:%d%s" % (self.health_port, path)
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")

    def wait_ready(self, deadline):
        end = time.monotonic() + deadline
        while True:
            try:
                status, _ = self.health("/readyz")
                if status == 200:
                    return
            except OSError:
                pass
            check(time.monotonic() < end, "/readyz did not answer 200 within %.0f s" % deadline)
            time.sleep(0.5)  # polling the health server, under the deadline above

    def state(self):
        return E2E.state_doc(self.wine.unix(self.data_dir + "\\state.json"))

    def committed(self):
        value = self.state().get(STATE_KEY)
        if not value:
            return []
        return [i[0] if isinstance(i, list) else i for i in json.loads(value).get("ids", [])]

    def wait_committed(self, ids, deadline):
        end = time.monotonic() + deadline
        while sorted(self.committed()) != sorted(ids):
            q = self.query()
            check(q["exists"] and q["status"]["state"] == 4, "the service left RUNNING "
                  "(state %s) before committing %s" % (q.get("status"), ids))
            check(time.monotonic() < end, "checkpoint %s after %.0f s, expected %s"
                  % (self.committed(), deadline, ids))
            time.sleep(0.5)  # polling the state file, under the deadline above

    def add_files(self, first, count, hours_ago):
        recs = []
        for i in range(first, first + count):
            fid = "0ATMSI00000000%02d" % i
            hour = E2E.base_hour(hours_ago - (i - first))
            recs.append(E2E.log_file(fid, hour, 0, generate={"rows": ROWS, "kind": "API",
                                                             "seed": 100 + i}))
            self.files.append(fid)
        E2E.http("POST", "http://127.0.0.1:%d/control/add" % self.sf_port,
                 {"eventlogfiles": recs})

    def wait_rows(self, deadline):
        want = ROWS * len(self.files)
        end = time.monotonic() + deadline
        s = E2E.summary(self.loki_port)
        while s["distinct"] < want:
            left = end - time.monotonic()
            check(left > 0, "%d of %d rows in Loki after %.0f s (by file %s)"
                  % (s["distinct"], want, deadline, s["by_prefix"]))
            s = E2E.summary(self.loki_port, wait_entries=s["entries"] + 1,
                            timeout=min(5.0, max(left, 0.5)))
        return s

    def check_exactly_once(self, s, what):
        want = ROWS * len(self.files)
        check(s["distinct"] == want and s["entries"] == want,
              "%s: %d entries, %d distinct rows in Loki, expected %d once each"
              % (what, s["entries"], s["distinct"], want))
        for fid in self.files:
            check(s["by_prefix"].get(fid) == ROWS, "%s: file %s has %s rows in Loki, not %d"
                  % (what, fid, s["by_prefix"].get(fid), ROWS))

    def eventlog_lines(self):
        with open(self.wine.session_log, errors="replace") as f:
            return [line for line in f if ":eventlog:" in line]

    def eventlog(self, kind, text):
        """Whether the service reported @text as an Event Log line of @kind: wine's
        ReportEventW traces information lines, warns warnings and errs errors."""
        return any(":%s:eventlog:ReportEventW" % kind in line and text in line
                   for line in self.eventlog_lines())

    # --- the steps ------------------------------------------------------------------------

    def signing(self):
        cert = os.path.join(self.work, "sign-cert.pem")
        key = os.path.join(self.work, "sign-key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-subj", "/CN=sf2loki msi-test throwaway", "-keyout", key, "-out", cert,
                        "-addext", "extendedKeyUsage=codeSigning"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.next_msi = os.path.join(self.work, "sf2loki-next-x64.msi")
        subprocess.run([PY, os.path.join(ROOT, "packaging", "msi", "build-msi.py"),
                        "--build-dir", self.opts.next_build_dir, "--out", self.next_msi,
                        "--sign-cert", cert, "--sign-key", key], check=True,
                       stdout=subprocess.DEVNULL)
        self.cert = cert
        self.verify_signature(self.next_msi, "the upgrade MSI")
        staged = os.path.join(self.work, "extract")
        os.makedirs(staged)
        subprocess.run(["msiextract", "-C", staged, self.next_msi], check=True,
                       stdout=subprocess.DEVNULL)
        exes = [os.path.join(top, f) for top, _, files in os.walk(staged) for f in files
                if f == "sf2loki.exe"]
        check(len(exes) == 1, "the upgrade MSI holds %d sf2loki.exe" % len(exes))
        self.verify_signature(exes[0], "sf2loki.exe in the upgrade MSI")
        rc = subprocess.run(["osslsigncode", "verify", "-in", self.opts.msi], stdout=open(
            os.path.join(self.work, "verify-unsigned.out"), "wb"), stderr=subprocess.STDOUT
        ).returncode
        check(rc != 0, "osslsigncode verify accepted the unsigned MSI %s" % self.opts.msi)
        options = json.loads(subprocess.run(
            ["meson", "introspect", self.opts.next_build_dir, "--buildoptions"], check=True,
            capture_output=True, text=True).stdout)
        self.next_version = [o["value"] for o in options if o["name"] == "package_version"][0]
        m = re.search(r"sf2loki-(\d+\.\d+\.\d+)-x64\.msi$", self.opts.msi)
        check(m is not None, "cannot tell the version of %s from its name" % self.opts.msi)
        self.version = m.group(1)
        check(self.next_version, "%s has no -Dpackage_version" % self.opts.next_build_dir)
        self.step.done("signing", "upgrade MSI %s and its sf2loki.exe signed and verified "
                       "against the throwaway root; the unsigned MSI has no signature"
                       % self.next_version)

    def verify_signature(self, path, what):
        out_path = os.path.join(self.work, "verify-%s.out" % os.path.basename(path))
        with open(out_path, "wb") as out:
            rc = subprocess.run(["osslsigncode", "verify", "-in", path, "-CAfile", self.cert],
                                stdout=out, stderr=subprocess.STDOUT).returncode
        with open(out_path, errors="replace") as f:
            text = f.read()
        check(rc == 0 and "Signature verification: ok" in text,
              "%s: osslsigncode verify exited %d (see %s)" % (what, rc, out_path))
        # "Current message digest" (PE) or "Current DigitalSignature" (MSI) is what the file
        # carries, "Calculated ..." what osslsigncode computed over it now
        current = dict(re.findall(r"Current (message digest|DigitalSignature)\s*: (\w+)", text))
        calculated = dict(re.findall(r"Calculated (message digest|DigitalSignature)\s*: (\w+)",
                                     text))
        check(current and current == {k: calculated.get(k) for k in current},
              "%s: the signed digest does not match the file's (see %s)" % (what, out_path))

    def install(self):
        self.wine.create()
        shutil.copy2(self.opts.query, self.wine.unix(self.query_exe))
        took = self.msiexec(["/i", "Z:" + os.path.abspath(self.opts.msi).replace("/", "\\")],
                            "install")
        # make msi writes the MSI beside the dist/ it packaged
        dist = os.path.join(os.path.dirname(os.path.abspath(self.opts.msi)), "dist")
        installed = os.listdir(self.wine.unix(self.program_files))
        want_files = sorted(os.listdir(dist) + ["config.example.yaml", "sfl-msi-action.exe"])
        check(sorted(installed) == want_files, "Program Files\\sf2loki holds %s, expected %s"
              % (sorted(installed), want_files))
        # the GSettings schema where GLib's default source looks beside the exe
        for name in ("gschemas.compiled", "org.sf2loki.gschema.xml"):
            rel = os.path.join("share", "glib-2.0", "schemas", name)
            got = self.wine.unix(self.program_files + "\\" + rel.replace("/", "\\"))
            check(os.path.isfile(got) and filecmp.cmp(got, os.path.join(dist, rel), shallow=False),
                  "Program Files\\sf2loki\\%s is missing or differs from dist/" % rel)
        q = self.query()
        check(q["exists"], "the service is not registered after the install")
        cfg = q["config"]
        check(cfg["start_type"] == 2, "start type %d, expected 2 (auto)" % cfg["start_type"])
        check(cfg["binary_path"] == self.want_image_path, "the SCM's binary path is %r, "
              "expected %r" % (cfg["binary_path"], self.want_image_path))
        check(cfg["account"] == "NT AUTHORITY\\LocalService", "account %r" % cfg["account"])
        image = self.reg_query("HKLM\\System\\CurrentControlSet\\Services\\" + SERVICE,
                               "ImagePath")
        check(image is not None and image[1] == self.want_image_path,
              "registry ImagePath %r, expected %r" % (image, self.want_image_path))
        start = self.reg_query("HKLM\\System\\CurrentControlSet\\Services\\" + SERVICE, "Start")
        check(start is not None and int(start[1], 0) == 2, "registry Start %r" % (start,))
        source = self.reg_query("HKLM\\SYSTEM\\CurrentControlSet\\Services\\EventLog\\"
                                "Application\\" + SERVICE, None)
        check(source is not None and source.get("EventMessageFile") == ("REG_EXPAND_SZ", self.exe)
              and int(source.get("TypesSupported", (None, "0"))[1], 0) == 7,
              "Event Log source key: %r" % source)
        config = self.wine.unix(self.data_dir + "\\config.yaml")
        example = self.wine.unix(self.program_files + "\\config.example.yaml")
        check(os.path.isfile(config) and open(config, "rb").read() == open(example, "rb").read(),
              "%s is not a copy of config.example.yaml" % config)
        q = self.wait_state(1, 120, "first start without a source")
        st = q["status"]
        check(st["win32_exit_code"] == 0 and st["service_exit_code"] == 0,
              "the first start (no source enabled) stopped with Win32 %d, service-specific %d"
              % (st["win32_exit_code"], st["service_exit_code"]))
        check(self.eventlog("warn", "no source is enabled"), "no Event Log warning saying "
              "that no source is enabled (see %s)" % self.wine.session_log)
        self.step.done("install", "msiexec /i in %.1f s; %d files; auto start, LocalService, "
                       "ImagePath %s; Event Log source; example config copied; the first "
                       "start stopped with exit 0 (no source)" % (took, len(installed),
                                                                   image[1]))

    def start_run(self):
        _, self.loki_port = self.e2e.sim("loki_sim.py", [], "loki")
        _, self.sf_port = self.e2e.sim("salesforce_sim.py", ["--public-key", self.e2e.pub],
                                       "salesforce")
        self.add_files(0, 3, 8)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.health_port = s.getsockname()[1]
        secrets = self.wine.unix(self.data_dir + "\\secrets")
        os.makedirs(secrets, exist_ok=True)
        shutil.copy2(self.e2e.key, os.path.join(secrets, "private-key.pem"))
        E2E.write(self.wine.unix(self.data_dir + "\\config.yaml"), """salesforce:
  login_url: http://127.0.0.1:%d
  client_id: sim-client-id
  username: sim@example.com
  private_key_file: '%s\\secrets\\private-key.pem'
sources:
  eventlogfile:
    enabled: true
    interval: Hourly
    event_types: [API]
    poll_interval: 2s
    lookback: 12h
sink:
  loki:
    url: http://127.0.0.1:%d/loki/api/v1/push
    batch:
      max_entries: 500
      flush_interval: 200ms
service:
  health_addr: 127.0.0.1:%d
  log_format: logfmt
  shutdown_grace: %ds
""" % (self.sf_port, self.data_dir, self.loki_port, self.health_port, SHUTDOWN_GRACE_S))
        rc, text, _ = self.wine.run(["net", "start", SERVICE], "net-start")
        check(rc == 0, "net start exited %d: %s" % (rc, text.strip()))
        q = self.wait_state(4, 120, "net start")
        self.wait_ready(60)
        s = self.wait_rows(180)
        self.check_exactly_once(s, "run")
        self.wait_committed(self.files, 60)
        pre = self.query().get("preshutdown_timeout_ms")
        want_pre = (SHUTDOWN_GRACE_S + 10) * 1000
        check(pre == want_pre, "preshutdown timeout %r ms, expected %d (service.shutdown_grace "
              "+ 10 s, set by the service)" % (pre, want_pre))
        q = self.query()
        check(q["status"]["controls_accepted"] == 0x10D, "controls accepted while RUNNING: %#x, "
              "expected STOP|SHUTDOWN|PARAMCHANGE|PRESHUTDOWN (0x10d)"
              % q["status"]["controls_accepted"])
        # wine 8.0 refuses the failure-action levels (ERROR_INVALID_LEVEL, which the query
        # tool prints as null); where the SCM answers, they must be the service's own
        fa, flag = q["failure_actions"], q["failure_actions_on_non_crash"]
        check(fa is None or (fa["reset_period"] == 86400 and [
            (a["type"], a["delay_ms"]) for a in fa["actions"]] == [(1, 5000), (1, 10000),
                                                                   (1, 60000)]),
              "recovery actions %r, expected restart after 5 s, 10 s, 60 s, reset 1 day" % fa)
        check(flag is None or flag is True, "failure actions on non-crash failures: %r" % flag)
        events = self.eventlog_lines()
        check(self.eventlog("trace", "event=\\\"sf2loki %s starting\\\"" % self.version),
              "no Event Log line with the start-up banner of %s in %s"
              % (self.version, self.wine.session_log))
        self.pid = q["status"]["pid"]
        self.step.done("run", "net start: RUNNING (pid %d), /readyz 200, %d rows of %d files "
                       "in Loki once, checkpoint committed to %s\\state.json; preshutdown %d ms; "
                       "%d Event Log lines" % (self.pid, s["distinct"], len(self.files),
                                               self.data_dir, pre, len(events)))

    def wait_reload(self, old_hash, want_outcome, deadline):
        end = time.monotonic() + deadline
        while True:
            cfg = json.loads(self.health("/statusz")[1]).get("config", {})
            if cfg.get("hash") != old_hash and cfg.get("last_reload") == want_outcome:
                return cfg
            check(time.monotonic() < end, "/statusz config %r %.0f s after the reload request, "
                  "expected last_reload %r and a hash other than %r"
                  % (cfg, deadline, want_outcome, old_hash))
            time.sleep(0.5)  # polling the health server, under the deadline above

    def reload(self):
        """SERVICE_CONTROL_PARAMCHANGE and `sf2loki reload` reload the configuration in the
        running service (docs/configuration.md, "Live reload"): the same process, a new hash,
        what arrives afterwards shipped once; a restart-only change is reported, not applied."""
        t0 = time.monotonic()
        config = self.wine.unix(self.data_dir + "\\config.yaml")
        with open(config) as f:
            original = f.read()
        before = json.loads(self.health("/statusz")[1])["config"]
        edited = original.replace("      max_entries: 500\n", "      max_entries: 400\n")
        check(edited != original, "the run's config.yaml has no max_entries: 500 to change")
        E2E.write(config, edited)
        # wine's sc.exe has no `control`; sfl-svc-query sends what `sc control … paramchange` does
        rc, text, _ = self.wine.run([self.query_exe, SERVICE, "paramchange"], "paramchange",
                                    timeout=60)
        check(rc == 0, "PARAMCHANGE: sfl-svc-query exited %d: %s" % (rc, text.strip()))
        applied = self.wait_reload(before["hash"], "applied", 60)
        check(applied.get("pending_restart") == [], "pending_restart after an absorbable "
              "change: %r" % applied.get("pending_restart"))
        q = self.query()
        check(q["status"]["state"] == 4 and q["status"]["pid"] == self.pid, "the service is %r "
              "after PARAMCHANGE, expected RUNNING in process %d" % (q["status"], self.pid))
        # the term the reload started ships what arrives now, from the drained term's checkpoint
        self.add_files(len(self.files), 1, 5)
        s = self.wait_rows(180)
        self.check_exactly_once(s, "after the reload")
        self.wait_committed(self.files, 60)
        # a restart-only change through `sf2loki reload` (the loopback control path)
        E2E.write(config, edited + "state:\n  file:\n    path: '%s\\moved.json'\n"
                  % self.data_dir)
        rc, text, _ = self.wine.run([self.exe, "reload", "--config",
                                     self.data_dir + "\\config.yaml"], "reload-restart-only")
        check(rc == 0, "sf2loki reload of a restart-only change exited %d: %s"
              % (rc, text.strip()))
        cfg = json.loads(self.health("/statusz")[1])["config"]
        check("state.file.path" in cfg.get("pending_restart", []), "/statusz pending_restart "
              "%r after a state.file.path change" % cfg.get("pending_restart"))
        E2E.write(config, edited)
        rc, text, _ = self.wine.run([self.exe, "reload", "--config",
                                     self.data_dir + "\\config.yaml"], "reload-back")
        check(rc == 0, "sf2loki reload back exited %d: %s" % (rc, text.strip()))
        cfg = json.loads(self.health("/statusz")[1])["config"]
        check(cfg.get("pending_restart") == [], "pending_restart %r once the file matches the "
              "running configuration again" % cfg.get("pending_restart"))
        check(self.query()["status"]["pid"] == self.pid, "the service restarted during the "
              "reloads")
        self.step.done("reload", "PARAMCHANGE applied in %.1f s in process %d (hash %s -> %s), "
                       "then %d rows of %d files in Loki once; `sf2loki reload`: a restart-only "
                       "change reported in pending_restart, cleared when reverted"
                       % (time.monotonic() - t0, self.pid, before["hash"], applied["hash"],
                          s["distinct"], len(self.files)))

    def stop(self):
        t0 = time.monotonic()
        rc, text, _ = self.wine.run(["net", "stop", SERVICE], "net-stop")
        check(rc == 0, "net stop exited %d: %s" % (rc, text.strip()))
        q = self.wait_state(1, SHUTDOWN_GRACE_S + 30, "net stop")
        st = q["status"]
        check(st["win32_exit_code"] == 0 and st["service_exit_code"] == 0,
              "net stop: STOPPED with Win32 exit code %d, service-specific %d, expected 0 and 0"
              % (st["win32_exit_code"], st["service_exit_code"]))
        check(sorted(self.committed()) == sorted(self.files), "after the stop the checkpoint "
              "holds %s" % self.committed())
        self.step.done("stop", "net stop: STOPPED in %.1f s, exit codes 0/0, checkpoint kept"
                       % (time.monotonic() - t0))

    def upgrade(self):
        rc, text, _ = self.wine.run(["net", "start", SERVICE], "net-start-2")
        check(rc == 0, "net start (before the upgrade) exited %d: %s" % (rc, text.strip()))
        old = self.wait_state(4, 120, "net start before the upgrade")
        self.wait_ready(60)
        old_version = json.loads(self.health("/statusz")[1]).get("version")
        config = self.wine.unix(self.data_dir + "\\config.yaml")
        config_before = hashlib.sha256(open(config, "rb").read()).hexdigest()
        state_before = self.state().get(STATE_KEY)
        took = self.msiexec(["/i", "Z:" + self.next_msi.replace("/", "\\")], "upgrade")
        check(self.products() == [self.next_version], "installed products after the upgrade: "
              "%s, expected only %s" % (self.products(), self.next_version))
        q = self.wait_state(4, 120, "after the upgrade")
        check(q["status"]["pid"] != old["status"]["pid"], "the service kept process %d over "
              "the upgrade" % old["status"]["pid"])
        check(q["config"]["binary_path"] == self.want_image_path, "binary path after the "
              "upgrade %r" % q["config"]["binary_path"])
        self.wait_ready(60)
        version = json.loads(self.health("/statusz")[1]).get("version")
        check(version == self.next_version and old_version != version,
              "/statusz version %r after the upgrade (before %r), expected %r"
              % (version, old_version, self.next_version))
        check(self.eventlog("trace", "event=\\\"sf2loki %s starting\\\"" % self.next_version),
              "no Event Log line with the start-up banner of %s" % self.next_version)
        rc, text, _ = self.wine.run([self.exe, "version"], "version")
        check(rc == 0 and text.strip() == "sf2loki " + self.next_version,
              "installed sf2loki.exe version says %r" % text.strip())
        self.verify_signature(self.wine.unix(self.exe), "the installed sf2loki.exe")
        check(hashlib.sha256(open(config, "rb").read()).hexdigest() == config_before,
              "config.yaml changed over the upgrade")
        check(self.state().get(STATE_KEY) == state_before, "the checkpoint changed over the "
              "upgrade: %r, before %r" % (self.state().get(STATE_KEY), state_before))
        detail = ("msiexec /i %s in %.1f s over the running %s: one product, new process %d "
                  "running %s (signed), config and checkpoint unchanged"
                  % (self.next_version, took, old_version, q["status"]["pid"], version))
        # what arrives from now on is read by the new version from the old one's checkpoint
        self.add_files(len(self.files), 3, 4)
        s = self.wait_rows(180)
        self.check_exactly_once(s, "after the upgrade")
        self.wait_committed(self.files, 60)
        self.step.done("upgrade", detail + "; then %d rows of %d files in Loki exactly once, "
                       "all %d committed" % (s["distinct"], len(self.files), len(self.files)))

    def downgrade(self):
        before = self.query()
        log = "C:\\downgrade.log"
        rc, _, _ = self.wine.run(["msiexec", "/i", "Z:" + os.path.abspath(self.opts.msi).replace(
            "/", "\\"), "/qn", "/l*v", log], "downgrade", timeout=300)
        check(rc != 0, "msiexec /i of the older %s over %s exited 0" % (self.version,
                                                                      self.next_version))
        check(self.products() == [self.next_version], "products after the refused downgrade: "
              "%s" % self.products())
        q = self.query()
        check(q["status"]["state"] == 4 and q["status"]["pid"] == before["status"]["pid"],
              "the refused downgrade disturbed the service: %s" % q["status"])
        self.step.done("downgrade", "msiexec /i %s refused (exit %d), %s still installed and "
                       "running in the same process" % (self.version, rc, self.next_version))

    def uninstall(self):
        config = self.wine.unix(self.data_dir + "\\config.yaml")
        config_before = open(config, "rb").read()
        state_before = self.state()
        took = self.msiexec(["/x", "Z:" + self.next_msi.replace("/", "\\")], "uninstall")
        q = self.query()
        check(not q["exists"], "the service is still registered after the uninstall: %s" % q)
        check(not os.path.exists(self.wine.unix(self.program_files)),
              "%s is still there" % self.program_files)
        check(self.reg_query("HKLM\\SYSTEM\\CurrentControlSet\\Services\\EventLog\\Application"
                             "\\" + SERVICE, None) is None, "the Event Log source key is left")
        check(self.products() == [], "products after the uninstall: %s" % self.products())
        check(open(config, "rb").read() == config_before, "config.yaml changed by the uninstall")
        check(self.state() == state_before and self.state().get(STATE_KEY),
              "state.json changed or vanished with the uninstall")
        self.step.done("uninstall", "msiexec /x in %.1f s with the service running: service, "
                       "program files, Event Log source and product gone; %s kept"
                       % (took, self.data_dir))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--msi", required=True, help="the MSI of the build (make msi)")
    ap.add_argument("--next-build-dir", required=True,
                    help="a Windows build configured with a higher -Dpackage_version")
    ap.add_argument("--query", required=True, help="sfl-svc-query.exe of the Windows build")
    ap.add_argument("--keep", action="store_true", help="keep the work directory on success")
    opts = ap.parse_args()
    for path in (opts.msi, opts.query, os.path.join(opts.next_build_dir, "dist",
                                                    "sf2loki.exe")):
        if not os.path.isfile(path):
            ap.error("%s: no such file (make msi-test builds it)" % path)
    work = tempfile.mkdtemp(prefix="sfl-msi-test.", dir="/tmp")
    run = Run(opts, work)
    verdict = "FAIL"
    try:
        for step in (run.signing, run.install, run.start_run, run.reload, run.stop, run.upgrade,
                     run.downgrade, run.uninstall):
            step()
        verdict = "PASS"
    except Skip as exc:
        verdict = "SKIP"
        print("msi-test: SKIP: %s" % exc)
    except Fail as exc:
        print("msi-test: FAIL: %s" % exc)
    finally:
        run.e2e.cleanup()
        run.wine.stop()
    total = time.monotonic() - run.step.t0
    print("msi-test: %s in %.1f s (%s); work files in %s" % (
        verdict, total, ", ".join("%s %.0f s" % s for s in run.steps), work))
    if verdict == "PASS" and not opts.keep:
        shutil.rmtree(work, ignore_errors=True)
    return {"PASS": 0, "SKIP": SKIP}.get(verdict, 1)


if __name__ == "__main__":
    sys.exit(main())
