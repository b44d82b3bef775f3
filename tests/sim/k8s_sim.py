#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for the Kubernetes API server's coordination.k8s.io/v1 Lease endpoints.

usage: k8s_sim.py --dir DIR [--token T] [--namespace NS]

Two listeners on 127.0.0.1, both on ephemeral ports:
  * the API (HTTPS, a certificate from a CA generated at start): GET/POST/PUT/DELETE of Leases
    with resourceVersion compare-and-swap (DELETE: DeleteOptions.preconditions.resourceVersion),
    a LeaseList of the namespace filtered by ?labelSelector=k=v[,k=v] (equality only), and the
    API server's Status errors;
  * control (plain HTTP, printed as "PORT <n>" on stdout once both listen).

At start DIR receives what a pod or an operator would have:
  DIR/ca.crt, DIR/token, DIR/namespace   the service account files (in-cluster config)
  DIR/kubeconfig                         current-context "sim": server, CA file, tokenFile
  DIR/kubeconfig-inline                  the same with certificate-authority-data and token
  DIR/api_port                           the API port (for KUBERNETES_SERVICE_PORT)

Control (JSON bodies):
  GET  /control/state[?since=N]
                         {"leases": {"ns/name": Lease}, "writes": [{method, name, holder,
                          transitions, resourceVersion, status, dryRun}], "requests": n,
                          "lists": n (collection reads)}
  POST /control/fault    {"status": 500, "count": 1, "methods": ["PUT"], "raw": "text",
                          "name": "lease"}: the next matching requests (of that one Lease
                         when "name" is given) answer that status (a Status body, or "raw" as
                         a text/html body, like a proxy in front of the API) without touching
                         the Lease
  POST /control/hold     {"count": 1, "methods": ["GET"]}: the next matching requests are held
                         without an answer until /control/release (client timeouts)
  POST /control/release  answers every held request with 504
  POST /control/race     {"holder": "intruder"}: right before the next PUT, another writer
                         replaces the Lease, so that PUT meets a real resourceVersion conflict
  POST /control/delete   {"name": "..."} (all Leases when absent): delete under the holder
  POST /control/put      {"namespace", "name", "spec"}: another writer stores this spec (a new
                         resourceVersion, not listed in writes)
  POST /control/token    {"token": "..."}: rotate the accepted token and DIR/token

Exit 77 when python3-cryptography is missing.
"""

import argparse
import datetime
import ipaddress
import json
import os
import re
import ssl
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SKIP = 77
PREFIX = "/apis/coordination.k8s.io/v1/namespaces/"
# MicroTime is parsed with Go's layout 2006-01-02T15:04:05.000000Z07:00 (k8s.io/apimachinery
# pkg/apis/meta/v1/micro_time.go): exactly six fractional digits
# (docs/internals/wire-notes.md, "The Lease body")
MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)$")
REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
           409: "Conflict", 422: "Invalid", 500: "InternalError", 503: "ServiceUnavailable",
           504: "Timeout"}


def status_body(code, message, reason=None):
    # errors are a v1 Status object (docs/internals/wire-notes.md, "Requests and errors")
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason or REASONS.get(code, "Unknown"),
            "details": {}, "code": code}


class State:
    def __init__(self, token, directory):
        self.lock = threading.Condition()
        self.token = token
        self.dir = directory
        self.leases = {}  # (ns, name) -> Lease object
        self.next_rv = 1000
        self.writes = []
        self.requests = 0
        self.lists = 0
        self.faults = []  # [status, count, methods, raw, name]
        self.holds = []  # [count, methods]
        self.held = 0
        self.release_gen = 0
        self.race = None
        self.stopping = False

    def bump(self):
        # resourceVersion is opaque; clients may only compare it for equality
        # (docs/internals/wire-notes.md, "The Lease body")
        self.next_rv += 7
        return str(self.next_rv)


def make_tls(directory):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "k8s-sim-ca")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(days=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, key_cert_sign=True, crl_sign=True,
                                       encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes")]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"),
                x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256()))
    ca_pem = ca.public_bytes(serialization.Encoding.PEM)
    with open(os.path.join(directory, "ca.crt"), "wb") as f:
        f.write(ca_pem)
    server_pem = os.path.join(directory, ".server.pem")
    with open(server_pem, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
        f.write(key.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(server_pem)
    return ctx, ca_pem


class ApiHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def fail(self, code, message, reason=None):
        self.reply(code, status_body(code, message, reason))

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            obj = json.loads(raw)
        except ValueError:
            return None
        return obj if isinstance(obj, dict) else None

    def take_scripted(self, st, method, name):
        """a fault status, "hold", or None; under st.lock"""
        for fault in st.faults:
            if fault[1] > 0 and (not fault[2] or method in fault[2]) and \
                    (fault[4] is None or fault[4] == name):
                fault[1] -= 1
                return (fault[0], fault[3])
        for hold in st.holds:
            if hold[0] > 0 and (not hold[1] or method in hold[1]):
                hold[0] -= 1
                return "hold"
        return None

    @staticmethod
    def lease_name(path):
        """the Lease a request names (None for a collection or another path)"""
        if not path.startswith(PREFIX):
            return None
        parts = path[len(PREFIX):].split("/")
        return parts[2] if len(parts) == 3 and parts[1] == "leases" else None

    def handle_api(self, method):
        st = self.server.state
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        dry_run = query.get("dryRun") == ["All"]
        body = self.body() if method in ("POST", "PUT", "DELETE") else None
        with st.lock:
            st.requests += 1
            if self.headers.get("Authorization") != f"Bearer {st.token}":
                return self.fail(401, "Unauthorized")
            scripted = self.take_scripted(st, method, self.lease_name(url.path))
            if scripted == "hold":
                gen = st.release_gen
                st.held += 1
                while st.release_gen == gen and not st.stopping:
                    st.lock.wait()
                st.held -= 1
                return self.fail(504, "the simulator held this request")
            if scripted is not None:
                code, raw = scripted
                if raw is not None:
                    data = raw.encode()
                    self.send_response(code)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return None
                return self.fail(code, f"injected status {code}")
            if not url.path.startswith(PREFIX):
                return self.fail(404, f"the server could not find the requested resource")
            parts = url.path[len(PREFIX):].split("/")
            if len(parts) < 2 or parts[1] != "leases" or len(parts) > 3:
                return self.fail(404, "the server could not find the requested resource")
            ns = parts[0]
            name = parts[2] if len(parts) == 3 else None
            if method == "GET" and name:
                lease = st.leases.get((ns, name))
                if lease is None:
                    return self.fail(404, f'leases.coordination.k8s.io "{name}" not found')
                return self.reply(200, lease)
            if method == "GET" and name is None:
                return self.list(st, ns, query)
            if method == "DELETE" and name:
                return self.delete(st, ns, name, body)
            if method == "POST" and name is None:
                return self.create(st, ns, body, dry_run)
            if method == "PUT" and name:
                return self.replace(st, ns, name, body, dry_run)
            return self.fail(405, f"{method} is not supported here", "MethodNotAllowed")

    def validate(self, body, ns):
        if body is None:
            return (400, "the body is not a JSON object")
        if body.get("apiVersion") != "coordination.k8s.io/v1" or body.get("kind") != "Lease":
            return (400, "the body is not a coordination.k8s.io/v1 Lease")
        meta = body.get("metadata") or {}
        if meta.get("namespace") not in (None, ns):
            return (400, "the namespace of the object does not match the namespace of the request")
        spec = body.get("spec") or {}
        for key in ("acquireTime", "renewTime"):
            value = spec.get(key)
            if value is not None and not (isinstance(value, str) and MICRO_TIME.match(value)):
                return (400, f'spec.{key}: parsing time "{value}" as MicroTime failed')
        for key in ("leaseDurationSeconds", "leaseTransitions"):
            value = spec.get(key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                return (400, f"spec.{key}: not an int32")
        duration = spec.get("leaseDurationSeconds")
        if duration is not None and duration <= 0:
            return (422, "spec.leaseDurationSeconds: Invalid value: must be greater than 0")
        transitions = spec.get("leaseTransitions")
        if transitions is not None and transitions < 0:
            return (422, "spec.leaseTransitions: Invalid value: must be greater than or equal to 0")
        return None

    def record(self, st, method, name, body, status, dry_run):
        spec = (body or {}).get("spec") or {}
        st.writes.append({"method": method, "name": name, "holder": spec.get("holderIdentity"),
                          "transitions": spec.get("leaseTransitions"), "status": status,
                          "dryRun": dry_run,
                          "resourceVersion": ((body or {}).get("metadata") or {})
                          .get("resourceVersion")})

    def store(self, st, ns, name, body, dry_run):
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                 "metadata": dict(body.get("metadata") or {}), "spec": body.get("spec") or {}}
        lease["metadata"]["namespace"] = ns
        lease["metadata"]["name"] = name
        lease["metadata"]["resourceVersion"] = st.bump() if not dry_run else \
            lease["metadata"].get("resourceVersion", "0")
        if not dry_run:
            st.leases[(ns, name)] = lease
        return lease

    def create(self, st, ns, body, dry_run):
        bad = self.validate(body, ns)
        name = ((body or {}).get("metadata") or {}).get("name")
        if bad is None and not name:
            bad = (422, "metadata.name: Required value: name or generateName is required")
        if bad is None and (body.get("metadata") or {}).get("resourceVersion"):
            # the storage layer refuses a create that carries a version
            # (docs/internals/wire-notes.md, "Requests and errors")
            bad = (500, "resourceVersion should not be set on objects to be created")
        if bad is None and (ns, name) in st.leases:
            bad = (409, f'leases.coordination.k8s.io "{name}" already exists', "AlreadyExists")
        if bad is not None:
            self.record(st, "POST", name, body, bad[0], dry_run)
            return self.fail(*bad)
        lease = self.store(st, ns, name, body, dry_run)
        self.record(st, "POST", name, body, 201, dry_run)
        return self.reply(201, lease)

    def replace(self, st, ns, name, body, dry_run):
        if st.race is not None and not dry_run and (ns, name) in st.leases:
            # another writer lands between this client's read and its write
            intruder = st.race
            st.race = None
            current = st.leases[(ns, name)]
            spec = dict(current.get("spec") or {})
            spec["holderIdentity"] = intruder
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
            self.store(st, ns, name, {"metadata": dict(current["metadata"]), "spec": spec},
                       False)
            self.record(st, "PUT", name, {"spec": spec}, 200, False)
        bad = self.validate(body, ns)
        meta = (body or {}).get("metadata") or {}
        rv = meta.get("resourceVersion")
        if bad is None and meta.get("name") not in (None, name):
            bad = (400, "the name of the object does not match the name on the URL")
        if bad is None and not rv:
            # the Lease strategy does not allow unconditional updates
            # (docs/internals/wire-notes.md, "Requests and errors")
            bad = (422, f'Lease.coordination.k8s.io "{name}" is invalid: '
                   "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update")
        current = st.leases.get((ns, name))
        if bad is None and current is None:
            # create-on-update with a stale version: this simulator answers 404, one of the two
            # outcomes a client must handle (the API documents neither for certain)
            bad = (404, f'leases.coordination.k8s.io "{name}" not found')
        if bad is None and current["metadata"]["resourceVersion"] != rv:
            bad = (409, f'Operation cannot be fulfilled on leases.coordination.k8s.io "{name}": '
                   "the object has been modified; please apply your changes to the latest "
                   "version and try again")
        if bad is not None:
            self.record(st, "PUT", name, body, bad[0], dry_run)
            return self.fail(*bad)
        lease = self.store(st, ns, name, body, dry_run)
        self.record(st, "PUT", name, body, 200, dry_run)
        return self.reply(200, lease)

    def list(self, st, ns, query):
        wanted = {}
        for term in ",".join(query.get("labelSelector", [])).split(","):
            if not term:
                continue
            if "=" not in term or "!=" in term:
                return self.fail(400, f"unable to parse requirement: {term}")
            key, value = term.split("=", 1)
            wanted[key.rstrip("=")] = value
        items = []
        for (lns, _), lease in sorted(st.leases.items()):
            labels = (lease.get("metadata") or {}).get("labels") or {}
            if lns == ns and all(labels.get(k) == v for k, v in wanted.items()):
                items.append(lease)
        st.lists += 1
        return self.reply(200, {"apiVersion": "coordination.k8s.io/v1", "kind": "LeaseList",
                                "metadata": {"resourceVersion": str(st.next_rv)},
                                "items": items})

    def delete(self, st, ns, name, body):
        current = st.leases.get((ns, name))
        wanted = ((body or {}).get("preconditions") or {}).get("resourceVersion")
        bad = None
        if current is None:
            bad = (404, f'leases.coordination.k8s.io "{name}" not found')
        elif wanted is not None and current["metadata"]["resourceVersion"] != wanted:
            bad = (409, f'Operation cannot be fulfilled on leases.coordination.k8s.io "{name}": '
                   "Precondition failed: ResourceVersion in precondition: "
                   f"{wanted}, ResourceVersion in object meta: "
                   f"{current['metadata']['resourceVersion']}")
        self.record(st, "DELETE", name, current, bad[0] if bad else 200, False)
        if bad is not None:
            return self.fail(*bad)
        del st.leases[(ns, name)]
        return self.reply(200, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                "status": "Success",
                                "details": {"name": name, "group": "coordination.k8s.io",
                                            "kind": "leases"}})

    def do_GET(self):
        self.handle_api("GET")

    def do_DELETE(self):
        self.handle_api("DELETE")

    def do_POST(self):
        self.handle_api("POST")

    def do_PUT(self):
        self.handle_api("PUT")


class ControlHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, obj, code=200):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        st = self.server.state
        url = urllib.parse.urlsplit(self.path)
        if url.path != "/control/state":
            return self.reply({"error": "unknown"}, 404)
        since = int(urllib.parse.parse_qs(url.query).get("since", ["0"])[0])
        with st.lock:
            leases = {f"{k[0]}/{k[1]}": v for k, v in st.leases.items()}
            return self.reply({"leases": leases, "writes": st.writes[since:],
                               "writes_total": len(st.writes), "requests": st.requests,
                               "lists": st.lists, "held": st.held})

    def do_POST(self):
        st = self.server.state
        n = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            return self.reply({"error": "bad json"}, 400)
        with st.lock:
            if self.path == "/control/fault":
                st.faults.append([int(body.get("status", 500)), int(body.get("count", 1)),
                                  list(body.get("methods") or []), body.get("raw"),
                                  body.get("name")])
            elif self.path == "/control/hold":
                st.holds.append([int(body.get("count", 1)), list(body.get("methods") or [])])
            elif self.path == "/control/release":
                st.holds = []
                st.release_gen += 1
                st.lock.notify_all()
            elif self.path == "/control/race":
                st.race = body.get("holder", "intruder")
            elif self.path == "/control/delete":
                name = body.get("name")
                for key in list(st.leases):
                    if name is None or key[1] == name:
                        del st.leases[key]
            elif self.path == "/control/put":
                ns, name = body["namespace"], body["name"]
                current = st.leases.get((ns, name))
                meta = dict(current["metadata"]) if current else {}
                lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                         "metadata": meta, "spec": dict(body.get("spec") or {})}
                meta.update({"namespace": ns, "name": name, "resourceVersion": st.bump()})
                st.leases[(ns, name)] = lease
            elif self.path == "/control/token":
                st.token = body["token"]
                write_file(st.dir, "token", st.token + "\n")
            elif self.path == "/control/clear":
                st.faults = []
                st.holds = []
                st.race = None
                st.release_gen += 1
                st.lock.notify_all()
            else:
                return self.reply({"error": "unknown"}, 404)
        return self.reply({"ok": True})


def write_file(directory, name, text):
    tmp = os.path.join(directory, f".{name}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, os.path.join(directory, name))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--token", default="sim-token-0123456789")
    ap.add_argument("--namespace", default="default")
    opts = ap.parse_args()
    try:
        ctx, ca_pem = make_tls(opts.dir)
    except ImportError as exc:
        print(f"python3-cryptography missing: {exc}", file=sys.stderr)
        sys.exit(SKIP)
    state = State(opts.token, opts.dir)
    api = ThreadingHTTPServer(("127.0.0.1", 0), ApiHandler)
    api.daemon_threads = True
    api.socket = ctx.wrap_socket(api.socket, server_side=True)
    api.state = state
    control = ThreadingHTTPServer(("127.0.0.1", 0), ControlHandler)
    control.daemon_threads = True
    control.state = state
    port = api.server_address[1]
    import base64
    write_file(opts.dir, "token", opts.token + "\n")
    write_file(opts.dir, "namespace", opts.namespace + "\n")
    write_file(opts.dir, "api_port", f"{port}\n")
    common = ("apiVersion: v1\nkind: Config\ncurrent-context: sim\n"
              "contexts:\n- name: sim\n  context:\n    cluster: sim\n    user: sim\n"
              f"    namespace: {opts.namespace}\n"
              f"clusters:\n- name: sim\n  cluster:\n    server: https://127.0.0.1:{port}\n")
    write_file(opts.dir, "kubeconfig", common + "    certificate-authority: ca.crt\n"
               "users:\n- name: sim\n  user:\n    tokenFile: token\n")
    write_file(opts.dir, "kubeconfig-inline", common +
               f"    certificate-authority-data: {base64.b64encode(ca_pem).decode()}\n"
               f"users:\n- name: sim\n  user:\n    token: {opts.token}\n")
    threading.Thread(target=api.serve_forever, daemon=True).start()
    print(f"PORT {control.server_address[1]}", flush=True)
    try:
        control.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        with state.lock:
            state.stopping = True
            state.lock.notify_all()


if __name__ == "__main__":
    main()
