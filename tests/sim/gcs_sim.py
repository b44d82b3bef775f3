#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for the Cloud Storage JSON API, its OAuth token endpoint and the metadata server
(docs/internals/wire-notes.md, "Cloud Storage").

usage: gcs_sim.py [--public-key PEM --client-email EMAIL] [--metadata] [--page-size N]

One plain-HTTP listener on 127.0.0.1 (ephemeral port, printed as "PORT <n>"):
  POST /token            the service-account JWT bearer grant: the assertion is verified with
                         python3-jwt (RS256 against --public-key, aud = this URL, iss =
                         --client-email, the devstorage.read_write scope, exp at most an hour
                         after iat) and answered with a fresh access token
  GET  /computeMetadata/v1/instance/service-accounts/default/token
                         with --metadata: a token for requests carrying Metadata-Flavor: Google
  GET  /storage/v1/b/B/o/NAME[?alt=media]   metadata (generation as a string) or the bytes
  POST /upload/storage/v1/b/B/o?uploadType=media&name=NAME&ifGenerationMatch=G
  DELETE /storage/v1/b/B/o/NAME[?ifGenerationMatch=G]
  GET  /storage/v1/b/B/o?prefix=P[&pageToken=T]   objects.list, --page-size items a page
With --public-key or --metadata every API request needs "Authorization: Bearer <a token this
simulator issued>" (401 otherwise); without either it is an emulator and takes anything.
Preconditions: ifGenerationMatch=0 only when no live object exists, =G only when the live
generation is G; else 412 conditionNotMet. Generations grow and are not sequential.

Control (JSON bodies):
  GET  /control/state[?since=N]
                         {"objects": {"bucket/name": {"body", "generation"}}, "writes": [{method,
                          name, ifGenerationMatch, status, body}] (from the Nth on),
                          "writes_total": n, "requests": n, "tokens_issued": n,
                          "auth_failures": n}
  POST /control/object   {"bucket", "name", "body"} ("body": null deletes; not listed in
                          writes)
  POST /control/fault    {"action": "status"|"reset"|"drop"|"truncate", "status": 503,
                          "count": 1, "methods": ["POST"], "keys": ["bucket/name"]}: as in
                          s3_sim.py
  POST /control/race     {"body": "..."}: another writer replaces the object right before the
                          next conditional upload
  POST /control/clear

Exit 77 when python3-jwt is missing.
"""

import argparse
import json
import socket
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SKIP = 77
SCOPE = "https://www.googleapis.com/auth/devstorage.read_write"


class State:
    def __init__(self, opts):
        self.lock = threading.Lock()
        self.opts = opts
        self.objects = {}  # "bucket/name" -> (bytes, generation int)
        self.last_gen = int(time.time() * 1000000)
        self.writes = []
        self.requests = 0
        self.tokens = set()
        self.tokens_issued = 0
        self.auth_failures = 0
        self.faults = []
        self.race = None
        self.port = 0

    def next_generation(self):
        # grows, not sequential (docs/internals/wire-notes.md, "Objects")
        self.last_gen += 1000 + (self.last_gen % 7)
        return self.last_gen


def gcs_error(code, message, reason):
    return json.dumps({"error": {"code": code, "message": message,
                                 "errors": [{"domain": "global", "reason": reason,
                                             "message": message}]}}).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body=b"", headers=None, content_type="application/json"):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def fail(self, status, message, reason):
        self.send(status, gcs_error(status, message, reason))

    def reset(self):
        try:
            self.wfile.flush()
        except OSError:
            pass
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    # --- tokens ----------------------------------------------------------------------------

    def issue(self, st):
        st.tokens_issued += 1
        token = f"sim-gcs-token-{st.tokens_issued}"
        st.tokens.add(token)
        self.send(200, json.dumps({"access_token": token, "expires_in": 3599,
                                   "token_type": "Bearer"}).encode())

    def token_grant(self, st, raw):
        import jwt

        form = urllib.parse.parse_qs(raw.decode())
        if form.get("grant_type") != ["urn:ietf:params:oauth:grant-type:jwt-bearer"]:
            return self.send(400, b'{"error": "unsupported_grant_type"}')
        assertion = (form.get("assertion") or [""])[0]
        try:
            with open(st.opts.public_key, "rb") as f:
                key = f.read()
            claims = jwt.decode(assertion, key, algorithms=["RS256"],
                                audience=f"http://127.0.0.1:{st.port}/token")
        except Exception as exc:  # any verification failure is invalid_grant
            body = json.dumps({"error": "invalid_grant", "error_description": str(exc)})
            return self.send(400, body.encode())
        if (claims.get("iss") != st.opts.client_email or SCOPE not in
                str(claims.get("scope", "")).split() or
                int(claims.get("exp", 0)) - int(claims.get("iat", 0)) > 3600):
            return self.send(400, b'{"error": "invalid_grant", "error_description": "claims"}')
        return self.issue(st)

    def authorized(self, st):
        if not st.opts.public_key and not st.opts.metadata:
            return True
        auth = self.headers.get("Authorization") or ""
        return auth.startswith("Bearer ") and auth[len("Bearer "):] in st.tokens

    # --- API -------------------------------------------------------------------------------

    @staticmethod
    def object_key(url, query):
        """bucket/name of an API request, or None"""
        parts = url.path.split("/")
        if url.path.startswith("/upload/storage/v1/b/") and len(parts) > 5:
            return f"{urllib.parse.unquote(parts[5])}/{query.get('name')}"
        if url.path.startswith("/storage/v1/b/") and len(parts) == 7:
            return f"{urllib.parse.unquote(parts[4])}/{urllib.parse.unquote(parts[6])}"
        return None

    def take_fault(self, st, key=None):
        for fault in st.faults:
            methods = fault.get("methods") or []
            keys = fault.get("keys") or []
            if fault["count"] > 0 and (not methods or self.command in methods) and \
                    (not keys or key in keys):
                fault["count"] -= 1
                return fault
        return None

    def handle(self):
        try:
            super().handle()
        except (ConnectionError, OSError):
            pass

    def dispatch(self):
        st = self.server.state
        raw = self.body()
        url = urllib.parse.urlsplit(self.path)
        query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
        with st.lock:
            if url.path.startswith("/control/"):
                return self.control(st, url.path, raw, query)
            st.requests += 1
            if url.path == "/token" and self.command == "POST":
                return self.token_grant(st, raw)
            if url.path.startswith("/computeMetadata/"):
                if not st.opts.metadata or self.headers.get("Metadata-Flavor") != "Google":
                    return self.send(403, b"Missing Metadata-Flavor:Google header",
                                     content_type="text/plain")
                return self.issue(st)
            if not self.authorized(st):
                st.auth_failures += 1
                return self.fail(401, "Invalid Credentials", "authError")
            fault = self.take_fault(st, self.object_key(url, query))
            action = fault.get("action", "status") if fault else None
            if action == "reset":
                return self.reset()
            if action == "status":
                return self.fail(int(fault.get("status", 503)), "injected", "backendError")
            return self.api(st, url, query, raw, action)

    def api(self, st, url, query, raw, action):
        parts = url.path.split("/")
        # /storage/v1/b/B/o/NAME  or  /upload/storage/v1/b/B/o
        if url.path.startswith("/upload/storage/v1/b/") and self.command == "POST":
            bucket = urllib.parse.unquote(parts[5])
            name = query.get("name")
            if query.get("uploadType") != "media" or not name:
                return self.fail(400, "uploadType=media and name are required", "invalid")
            return self.upload(st, f"{bucket}/{name}", raw, query, action)
        if url.path.startswith("/storage/v1/b/") and len(parts) == 6 and parts[5] == "o" \
                and self.command == "GET":
            return self.list_objects(st, urllib.parse.unquote(parts[4]), query)
        if url.path.startswith("/storage/v1/b/") and len(parts) == 7 and parts[5] == "o":
            key = f"{urllib.parse.unquote(parts[4])}/{urllib.parse.unquote(parts[6])}"
            obj = st.objects.get(key)
            if self.command == "GET":
                if obj is None:
                    return self.fail(404, f"No such object: {key}", "notFound")
                want = query.get("ifGenerationMatch")
                if want is not None and int(want) != obj[1]:
                    return self.fail(412, "At least one of the pre-conditions you specified "
                                     "did not hold.", "conditionNotMet")
                if query.get("alt") == "media":
                    headers = {"x-goog-generation": str(obj[1])}
                    if action == "truncate":
                        self.send_response(200)
                        self.send_header("Content-Length", str(len(obj[0])))
                        self.end_headers()
                        self.wfile.write(obj[0][:len(obj[0]) // 2])
                        return self.reset()
                    return self.send(200, obj[0], headers, "application/octet-stream")
                return self.send(200, json.dumps(self.resource(key, obj)).encode())
            if self.command == "DELETE":
                want = query.get("ifGenerationMatch")
                if obj is None:
                    return self.fail(404, f"No such object: {key}", "notFound")
                if want is not None and int(want) != obj[1]:
                    return self.fail(412, "At least one of the pre-conditions you specified "
                                     "did not hold.", "conditionNotMet")
                del st.objects[key]
                return self.send(204)
        return self.fail(404, "Not Found", "notFound")

    def list_objects(self, st, bucket, query):
        # objects.list (docs/internals/wire-notes.md, "Listing"): names in lexicographic
        # order, at most maxResults (and --page-size) a page, nextPageToken while more remain
        prefix = query.get("prefix", "")
        limit = min(int(query.get("maxResults", "1000")), st.opts.page_size)
        after = ""
        if query.get("pageToken") is not None:
            try:
                after = bytes.fromhex(query["pageToken"]).decode()
            except ValueError:
                return self.fail(400, "Invalid page token", "invalid")
        names = sorted((k.split("/", 1)[1] for k in st.objects if k.startswith(bucket + "/")),
                       key=lambda k: k.encode())
        names = [n for n in names if n.startswith(prefix) and n.encode() > after.encode()]
        page, rest = names[:limit], names[limit:]
        out = {"kind": "storage#objects"}
        if page:
            out["items"] = [self.resource(f"{bucket}/{n}", st.objects[f"{bucket}/{n}"])
                            for n in page]
        if rest:
            out["nextPageToken"] = page[-1].encode().hex()
        return self.send(200, json.dumps(out).encode())

    def resource(self, key, obj):
        bucket, name = key.split("/", 1)
        return {"kind": "storage#object", "bucket": bucket, "name": name,
                "generation": str(obj[1]), "metageneration": "1", "size": str(len(obj[0]))}

    def upload(self, st, key, raw, query, action):
        want = query.get("ifGenerationMatch")
        if st.race is not None and want is not None:
            st.objects[key] = (st.race.encode(), st.next_generation())
            st.writes.append({"method": "POST", "name": key, "ifGenerationMatch": None,
                              "status": 200, "intruder": True, "body": st.race})
            st.race = None
        current = st.objects.get(key)
        ok = want is None or (int(want) == 0 and current is None) or \
            (current is not None and int(want) == current[1])
        record = {"method": "POST", "name": key, "ifGenerationMatch": want}
        if not ok:
            record["status"] = 412
            st.writes.append(record)
            return self.fail(412, "At least one of the pre-conditions you specified did not "
                             "hold.", "conditionNotMet")
        obj = (raw, st.next_generation())
        st.objects[key] = obj
        record["status"] = 200
        record["body"] = raw.decode("utf-8", "replace")
        st.writes.append(record)
        if action == "drop":
            return self.reset()
        return self.send(200, json.dumps(self.resource(key, obj)).encode())

    # --- control ---------------------------------------------------------------------------

    def control(self, st, path, raw, query=None):
        if self.command == "GET" and path == "/control/state":
            since = int((query or {}).get("since", "0"))
            objects = {k: {"body": v[0].decode("utf-8", "replace"), "generation": str(v[1])}
                       for k, v in st.objects.items()}
            return self.send(200, json.dumps({
                "objects": objects, "writes": st.writes[since:],
                "writes_total": len(st.writes), "requests": st.requests,
                "tokens_issued": st.tokens_issued,
                "auth_failures": st.auth_failures}).encode())
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self.send(400, b'{"error": "bad json"}')
        if path == "/control/fault":
            fault = dict(body)
            fault["count"] = int(body.get("count", 1))
            st.faults.append(fault)
        elif path == "/control/object":
            key = f"{body['bucket']}/{body['name']}"
            if body.get("body") is None:
                st.objects.pop(key, None)
            else:
                st.objects[key] = (body["body"].encode(), st.next_generation())
        elif path == "/control/race":
            st.race = body.get("body", "{}")
        elif path == "/control/clear":
            st.faults = []
            st.race = None
        else:
            return self.send(404, b'{"error": "unknown"}')
        return self.send(200, b'{"ok": true}')

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--public-key", default="")
    ap.add_argument("--client-email", default="sf2loki@sim-project.iam.gserviceaccount.com")
    ap.add_argument("--metadata", action="store_true")
    ap.add_argument("--page-size", type=int, default=1000,
                    help="at most this many objects an objects.list page")
    opts = ap.parse_args()
    try:
        import jwt  # noqa: F401
    except ImportError as exc:
        print(f"python3-jwt missing: {exc}", file=sys.stderr)
        sys.exit(SKIP)
    server = Server(("127.0.0.1", 0), Handler)
    server.state = State(opts)
    server.state.port = server.server_address[1]
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
