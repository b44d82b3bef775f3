#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""`make image-test`: the image `make image` built, against the Helm chart and the simulators
(docs/deployment/container.md).

1. inspection, which needs no container runtime: the image's name and tag are the chart's
   default image, its user the chart's runAsUser/runAsGroup, its entrypoint takes the chart's
   args, it exposes the chart's port; the root filesystem (rootfs.tar) has the binary, the CA
   bundle, the chart's state directory owned by that user, the secrets directory, and no apt
   lists;
2. `podman run IMAGE version`;
3. `podman run IMAGE` (the image's own command) on the host network against the Salesforce and
   Loki simulators, hardened as the chart runs it (read-only root, no capabilities, the
   config and secrets mounted read-only, the state directory a volume): entries reach Loki,
   /readyz answers, and a SIGTERM stops it with exit 0 and its checkpoints on the volume.

On a machine with v1 and v2 cgroup hierarchies mounted at once (crun refuses that "hybrid"
mode) podman runs in a private mount namespace without the v2 one and with --cgroups=disabled;
limits are pinned to this shell's (nproc at most pid_max), since podman's defaults are higher
and raising a limit needs CAP_SYS_RESOURCE.

usage: image_test.py SOURCE_ROOT IMAGE_DIR     exit 0 ok, 1 failure
"""

import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import urllib.request

import yaml

root, image_dir = sys.argv[1], sys.argv[2]
failures = []
env = dict(os.environ, STORAGE_DRIVER=os.environ.get("STORAGE_DRIVER", "vfs"))


def check(cond, message):
    if not cond:
        failures.append(message)
    return cond


def chart_image():
    with open(os.path.join(root, "deploy", "helm", "values.yaml"), encoding="utf-8") as f:
        values = yaml.safe_load(f)
    with open(os.path.join(root, "deploy", "helm", "Chart.yaml"), encoding="utf-8") as f:
        chart = yaml.safe_load(f)
    tag = values["image"]["tag"] or chart["appVersion"]
    return values, f"{values['image']['repository']}:{tag}"


def inspect(values, image):
    r = subprocess.run(["buildah", "inspect", "--type", "image", image], capture_output=True,
                       text=True, env=env)
    if not check(r.returncode == 0, f"{image} is not in buildah's storage (make image): "
                                    f"{r.stderr.strip()}"):
        return
    config = json.loads(r.stdout)["OCIv1"]["config"]
    sc = values["securityContext"]
    check(config.get("User") == f"{sc['runAsUser']}:{sc['runAsGroup']}",
          f"image user {config.get('User')} is not the chart's runAsUser:runAsGroup")
    check(config.get("Entrypoint") == ["/usr/bin/sf2loki"],
          f"entrypoint {config.get('Entrypoint')}: the chart passes only args")
    check(config.get("Cmd") == ["run", "--config", "/etc/sf2loki/config.yaml"],
          f"cmd {config.get('Cmd')}")
    check(f"{values['service']['port']}/tcp" in config.get("ExposedPorts", {}),
          f"port {values['service']['port']} not exposed")
    check(values["stateDir"] in config.get("Volumes", {}), "the state directory is no volume")
    print(f"ok: {image}: user {config.get('User')}, entrypoint, port and volume match the chart")

    with tarfile.open(os.path.join(image_dir, "rootfs.tar")) as tar:
        members = {m.name.lstrip("./").rstrip("/"): m for m in tar.getmembers()}
        passwd = tar.extractfile(members["etc/passwd"]).read().decode()
    state = members.get(values["stateDir"].lstrip("/"))
    check(state is not None and state.isdir() and state.uid == sc["runAsUser"]
          and state.gid == sc["runAsGroup"] and state.mode & 0o777 == 0o750,
          f"{values['stateDir']} is not a 0750 directory of the chart's user")
    for path in ("usr/bin/sf2loki", "etc/ssl/certs/ca-certificates.crt", "etc/sf2loki/secrets",
                 "etc/sf2loki/config.yaml"):
        check(path in members, f"/{path} missing from the root filesystem")
    check(re.search(rf"^sf2loki:x:{sc['runAsUser']}:{sc['runAsGroup']}:", passwd, re.M),
          "no sf2loki user with the chart's uid in /etc/passwd")
    check(not any(n.startswith("var/lib/apt/lists/") and members[n].size > 0 for n in members),
          "apt lists left in the image")
    check(not any(n.startswith("etc/apt/sources.list.d/") and members[n].isfile()
                  for n in members), "the build's apt sources left in the image")
    print(f"ok: rootfs.tar: {len(members)} entries, binary, CA bundle, state and secrets "
          f"directories, user {sc['runAsUser']}")


def podman_cmd(args):
    """podman ARGS, in a private mount namespace without the v2 hierarchy on hybrid hosts."""
    with open("/proc/sys/kernel/pid_max", encoding="ascii") as f:
        pid_max = int(f.read())
    limits = []
    for name, which in (("nofile", resource.RLIMIT_NOFILE), ("nproc", resource.RLIMIT_NPROC)):
        soft, hard = resource.getrlimit(which)
        if name == "nproc":
            # conmon runs with nproc at pid_max, and crun sets the limit from there
            soft, hard = min(soft, pid_max), min(hard, pid_max)
        if resource.RLIM_INFINITY not in (soft, hard):
            limits += ["--ulimit", f"{name}={soft}:{hard}"]
    run_args = list(args)
    if run_args[0] == "run":
        run_args[1:1] = limits
    hybrid = os.path.ismount("/sys/fs/cgroup/unified")
    if hybrid and run_args[0] == "run":
        run_args[1:1] = ["--cgroups=disabled"]
        return ["unshare", "-m", "sh", "-c", 'umount /sys/fs/cgroup/unified && exec "$@"',
                "podman", "podman"] + run_args
    return ["podman"] + run_args


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sim_port(proc, log):
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        raise RuntimeError(f"a simulator did not start; see {log}")
    return int(line.split()[1])


def http_status(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


def run_against_sims(image, values, tmp):
    key = os.path.join(tmp, "private-key.pem")
    pub = os.path.join(tmp, "public-key.pem")
    subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                    "rsa_keygen_bits:2048", "-out", key], check=True, stderr=subprocess.DEVNULL)
    subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", pub], check=True)
    uid, gid = values["securityContext"]["runAsUser"], values["securityContext"]["runAsGroup"]
    secrets = os.path.join(tmp, "secrets")
    os.mkdir(secrets)
    shutil.copy(key, os.path.join(secrets, "private_key.pem"))
    os.chown(os.path.join(secrets, "private_key.pem"), uid, gid)
    os.chmod(os.path.join(secrets, "private_key.pem"), 0o400)
    state = os.path.join(tmp, "state")
    os.mkdir(state)
    os.chown(state, uid, gid)

    sims = []
    try:
        sf_log = open(os.path.join(tmp, "salesforce-sim.log"), "w")
        loki_log = open(os.path.join(tmp, "loki-sim.log"), "w")
        sims.append(subprocess.Popen(
            ["/usr/bin/python3", os.path.join(root, "tests", "sim", "salesforce_sim.py"),
             "--demo", "--public-key", pub], stdout=subprocess.PIPE, stderr=sf_log, text=True))
        sims.append(subprocess.Popen(
            ["/usr/bin/python3", os.path.join(root, "tests", "sim", "loki_sim.py")],
            stdout=subprocess.PIPE, stderr=loki_log, text=True))
        sf_port, loki_port = sim_port(sims[0], sf_log.name), sim_port(sims[1], loki_log.name)
        health = free_port()
        config = {
            "salesforce": {"login_url": f"http://127.0.0.1:{sf_port}",
                           "client_id": "sim-client-id", "username": "sim@example.com",
                           "private_key_file": "/etc/sf2loki/secrets/private_key.pem"},
            "sources": {"pubsub": {"enabled": False},
                        "eventlog_objects": {"enabled": True, "objects": [
                            {"name": "LoginEvent", "poll_interval": "5s", "lookback": "2h",
                             "settle_window": "2s"}]}},
            "sink": {"loki": {"url": f"http://127.0.0.1:{loki_port}/loki/api/v1/push"}},
            "state": {"file": {"path": f"{values['stateDir']}/state.json"}},
            "service": {"health_addr": f"127.0.0.1:{health}", "log_format": "json"},
        }
        config_path = os.path.join(tmp, "config.yaml")
        with open(config_path, "w", encoding="utf-8") as f:
            yaml.safe_dump(config, f)
        os.chmod(config_path, 0o644)
        name = f"sf2loki-image-test-{os.getpid()}"
        cmd = podman_cmd(["run", "--rm", "--name", name, "--network", "host", "--read-only",
                          "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
                          "--tmpfs", "/tmp", "-v", f"{config_path}:/etc/sf2loki/config.yaml:ro",
                          "-v", f"{secrets}:/etc/sf2loki/secrets:ro",
                          "-v", f"{state}:{values['stateDir']}", image])
        log = open(os.path.join(tmp, "sf2loki.log"), "w")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            # a long poll on the Loki simulator: it answers once an entry arrived (or at 90 s)
            with urllib.request.urlopen(f"http://127.0.0.1:{loki_port}/control/summary?"
                                        "wait_entries=1&timeout=90", timeout=100) as r:
                summary = json.loads(r.read())
            check(summary["entries"] > 0,
                  f"no entries reached Loki from the container: {json.dumps(summary)[:300]}")
            check(http_status(f"http://127.0.0.1:{health}/readyz") == 200,
                  "/readyz of the container is not 200")
            print(f"ok: the container pushed {summary['entries']} entries to the Loki simulator "
                  "and /readyz is 200")
        finally:
            subprocess.run(podman_cmd(["stop", "-t", "30", name]), env=env,
                           capture_output=True)
            rc = proc.wait(timeout=60)
        log.close()
        check(rc == 0, f"the container exited {rc} after SIGTERM; see {log.name}")
        check(os.path.getsize(os.path.join(state, "state.json")) > 0
              if os.path.exists(os.path.join(state, "state.json")) else False,
              "no checkpoints in the state volume")
        if rc == 0:
            print("ok: SIGTERM stopped it with exit 0 and its checkpoints on the volume")
    finally:
        for p in sims:
            p.terminate()
            p.wait(timeout=10)


def main():
    values, image = chart_image()
    inspect(values, image)
    if failures:
        return report()
    r = subprocess.run(podman_cmd(["run", "--rm", image, "version"]), capture_output=True,
                       text=True, env=env)
    if not check(r.returncode == 0 and r.stdout.startswith("sf2loki "),
                 f"podman run {image} version exited {r.returncode}: "
                 f"{r.stdout.strip()} {r.stderr.strip()}"):
        return report()
    print(f"ok: podman run {image} version: {r.stdout.strip()}")
    tmp = tempfile.mkdtemp(prefix="sf2loki-image-test-")
    os.chmod(tmp, 0o755)
    try:
        run_against_sims(image, values, tmp)
    finally:
        if failures:
            print(f"logs kept in {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return report()


def report():
    for message in failures:
        print(f"FAIL: {message}", file=sys.stderr)
    if not failures:
        print("image-test passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
