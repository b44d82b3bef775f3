#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""A small Loki push endpoint for integration tests.

usage: loki_sim.py [--tenant T] [--token S] [--port N] [--journal FILE] [--tls DIR] [--discard]

Listens on 127.0.0.1 with an ephemeral port (or --port N, so a restarted simulator is found
where the client expects it) and prints "PORT <n>" as its first stdout line. With --journal,
every accepted push is appended to FILE as one JSON line {"t": unix time, "streams": [...]}
before its 204 is sent, so what was accepted survives a restart of the simulator. With --tls,
every connection (control calls too) is HTTPS with a self-signed certificate for
127.0.0.1/localhost written to DIR/cert.pem + DIR/key.pem; DIR/cert.pem is the CA. With
--discard (benchmarks), a protobuf push is decoded and its entries counted, nothing is kept, and
/control/summary reports only "entries": the simulator stays cheap next to what is measured.

POST /loki/api/v1/push   decodes with third-party code (python3-snappy + protoc-generated
                         python3-protobuf classes for protobuf, json + gzip for JSON), checks the
                         label strings with loki_decode's parser, stores every entry, answers 204.
                         With --token, Authorization must be Basic base64("<--tenant or
                         empty>:<token>") (the original's rule, which sends no X-Scope-OrgID
                         then); with --tenant alone, X-Scope-OrgID must match. Otherwise 401.
POST /control/fault      {"count": N, "status": S, "retry_after": "2"}: the next N pushes answer S
                         {"sequence": [{"count": N, "status": S}, ...]}: those faults one
                          after another (the next N pushes answer S, then the next M ...)
                         {"reject_line_over": BYTES}: 400 when any line is longer
                         {"max_body": BYTES}: 413 when the body is larger
                         {"reset": N}: the next N pushes get the connection closed, no response
                         {"hang": N}: the next N pushes get no answer until /control/clear
                         {"partial": {"status": S, "body": TEXT, "refuse": [PREFIX...],
                          "count": N, "all_or_nothing": false}}: Loki's partial acceptance
                         for the next N pushes holding a line that starts with a PREFIX: those
                         entries are refused (listed in /control/received "refused"), the others
                         stored (none with all_or_nothing), and the answer is S with TEXT
GET  /control/summary?field=F   {"entries", "distinct" (values of JSON line field F, default
                          REQUEST_ID), "unparsed", "by_labels", "by_prefix"}
GET  /control/received   {"refused": [lines], "pushes": [{content_type, content_encoding, org_id, auth (the scheme),
                                      authorization (the whole value), header_names (sorted,
                                      lower case), user_agent, entries, peer_port}],
                          "streams": [{labels, labels_raw?, entries: [{ts, line, metadata?}]}]}
POST /control/clear      forgets everything received and every fault

Exit 77 (skip) when protoc or a Python module is missing.
"""

import argparse
import base64
import gzip
import json
import socket
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

import loki_decode
import sim_tls

SKIP = 77


class State:
    def __init__(self, tenant, token, pb2, snappy, journal=None, discard=False):
        self.discard = discard
        self.lock = threading.Lock()
        # notified on every accepted push: /control/summary?wait_entries=N waits on it
        self.pushed = threading.Condition(self.lock)
        self.journal = journal
        self.tenant = tenant
        self.token = token
        self.pb2 = pb2
        self.snappy = snappy
        self.release = threading.Event()
        self.clear()

    def clear(self):
        self.discarded = 0
        self.pushes = []
        self.streams = []
        self.fault = None
        self.fault_queue = []
        self.reject_line_over = None
        self.max_body = None
        self.resets = 0
        self.hangs = 0
        self.partial = None
        self.refused = []
        if hasattr(self, "release"):
            self.release.set()
        self.release = threading.Event()


def decode_protobuf(state, data):
    req = state.pb2.PushRequest.FromString(state.snappy.uncompress(data))
    streams = []
    for s in req.streams:
        if s.hash != 0:
            raise ValueError("client set StreamAdapter.hash")
        entries = []
        for e in s.entries:
            entry = {"ts": str(e.timestamp.seconds * 1_000_000_000 + e.timestamp.nanos),
                     "line": e.line}
            if len(e.structuredMetadata) > 0:
                entry["metadata"] = {p.name: p.value for p in e.structuredMetadata}
            entries.append(entry)
        streams.append({"labels": loki_decode.parse_label_string(s.labels),
                        "labels_raw": s.labels, "entries": entries})
    return streams


def decode_json(data):
    return loki_decode.decode_json(data)["streams"]


def summarize(streams, field):
    """Entry counts, per label set, and distinct values of one JSON line field.

    A value "<prefix>-<n>" is also counted per prefix (the simulator's REQUEST_IDs are
    "<LogFile Id>-<row>", so a test can check every row of every file arrived)."""
    total = 0
    by_labels = {}
    values = set()
    unparsed = 0
    for s in streams:
        key = s.get("labels_raw") or json.dumps(s["labels"], sort_keys=True)
        by_labels[key] = by_labels.get(key, 0) + len(s["entries"])
        for e in s["entries"]:
            total += 1
            try:
                v = json.loads(e["line"]).get(field)
            except (ValueError, AttributeError):
                unparsed += 1
                continue
            if v is not None:
                values.add(str(v))
    by_prefix = {}
    for v in values:
        prefix = v.rsplit("-", 1)[0]
        by_prefix[prefix] = by_prefix.get(prefix, 0) + 1
    return {"entries": total, "distinct": len(values), "unparsed": unparsed,
            "by_labels": by_labels, "by_prefix": by_prefix}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "loki-sim"

    def log_message(self, fmt, *args):
        sys.stderr.write("loki_sim: " + (fmt % args) + "\n")

    def reply(self, status, body=b"", headers=None, ctype="text/plain; charset=utf-8"):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def check_auth(self):
        st = self.server.state
        org = self.headers.get("X-Scope-OrgID")
        auth = self.headers.get("Authorization")
        if st.token is not None:
            cred = base64.b64encode(f"{st.tenant or ''}:{st.token}".encode()).decode()
            if auth != "Basic " + cred:
                # like some gateways, echo what was received: the client must redact it
                return f"invalid credentials: got Authorization {auth}"
        elif st.tenant is not None and org != st.tenant:
            return "no org id"
        return None

    def do_GET(self):
        st = self.server.state
        if self.path.startswith("/control/summary"):
            # counts without shipping every entry back: what the large end-to-end tests need
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            field = query.get("field", ["REQUEST_ID"])[0]
            want = int(query.get("wait_entries", ["0"])[0])
            timeout = min(float(query.get("timeout", ["30"])[0]), 120.0)
            with st.lock:
                if st.discard:
                    st.pushed.wait_for(lambda: st.discarded >= want, timeout)
                    body = json.dumps({"entries": st.discarded})
                    self.reply(200, body, ctype="application/json")
                    return
                # a long poll: answer once N entries arrived or the timeout passed, whichever
                # comes first, so callers wait on the condition instead of polling in a loop
                st.pushed.wait_for(
                    lambda: sum(len(s["entries"]) for s in st.streams) >= want, timeout)
                body = json.dumps(summarize(st.streams, field))
            self.reply(200, body, ctype="application/json")
        elif self.path == "/control/received":
            with st.lock:
                doc = {"pushes": st.pushes, "streams": st.streams, "refused": st.refused}
                body = json.dumps(doc)
            self.reply(200, body, ctype="application/json")
        else:
            self.reply(404, "not found")

    def do_POST(self):
        st = self.server.state
        body = self.read_body()
        if self.path == "/control/fault":
            doc = json.loads(body or b"{}")
            with st.lock:
                if "status" in doc:
                    st.fault = {"count": int(doc.get("count", 1)), "status": int(doc["status"]),
                                "retry_after": doc.get("retry_after")}
                if "sequence" in doc:
                    st.fault = None
                    st.fault_queue = [{"count": int(f.get("count", 1)), "status": int(f["status"]),
                                       "retry_after": f.get("retry_after")}
                                      for f in doc["sequence"]]
                if "reject_line_over" in doc:
                    st.reject_line_over = int(doc["reject_line_over"])
                if "max_body" in doc:
                    st.max_body = int(doc["max_body"])
                if "reset" in doc:
                    st.resets = int(doc["reset"])
                if "hang" in doc:
                    st.hangs = int(doc["hang"])
                if "partial" in doc:
                    st.partial = dict(doc["partial"])
                    st.partial.setdefault("count", 1)
            self.reply(200, "{}", ctype="application/json")
            return
        if self.path == "/control/clear":
            with st.lock:
                st.clear()
            self.reply(200, "{}", ctype="application/json")
            return
        if self.path != "/loki/api/v1/push":
            self.reply(404, "not found")
            return
        self.push(body)

    def push(self, body):
        st = self.server.state
        with st.lock:
            reset = st.resets > 0
            if reset:
                st.resets -= 1
            hang = not reset and st.hangs > 0
            if hang:
                st.hangs -= 1
                release = st.release
            fault = None
            if (st.fault is None or st.fault["count"] <= 0) and st.fault_queue:
                st.fault = st.fault_queue.pop(0)
            if not reset and not hang and st.fault is not None and st.fault["count"] > 0:
                st.fault["count"] -= 1
                fault = dict(st.fault)
        if reset:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if hang:
            release.wait(60)
            self.close_connection = True
            return
        if fault is not None:
            headers = {}
            if fault.get("retry_after") is not None:
                headers["Retry-After"] = str(fault["retry_after"])
            self.reply(fault["status"], "fault injected", headers)
            return
        denied = self.check_auth()
        if denied is not None:
            self.reply(401, denied)
            return
        if st.discard:
            try:
                req = st.pb2.PushRequest.FromString(st.snappy.uncompress(body))
            except Exception as exc:  # any decode failure is the client's fault
                self.reply(400, f"error parsing push request: {exc}")
                return
            with st.lock:
                st.discarded += sum(len(s.entries) for s in req.streams)
                st.pushed.notify_all()
            self.reply(204, "")
            return
        if st.max_body is not None and len(body) > st.max_body:
            self.reply(413, "request body too large")
            return
        ctype = self.headers.get("Content-Type", "")
        cenc = self.headers.get("Content-Encoding", "")
        try:
            data = body
            if cenc == "gzip":
                data = gzip.decompress(data)
            elif cenc not in ("", "snappy"):
                self.reply(400, f'Content-Encoding "{cenc}" not supported')
                return
            if ctype == "application/json":
                streams = decode_json(data)
                for s in streams:
                    for name in s["labels"]:
                        if not loki_decode.parse_label_string(f'{{{name}=""}}'):
                            raise ValueError(f"bad label name {name!r}")
            else:
                streams = decode_protobuf(st, data)
        except Exception as exc:  # any decode failure is the client's fault
            self.reply(400, f"error parsing push request: {exc}")
            return
        if not streams:
            self.reply(422, "error at least one valid stream is required for ingestion")
            return
        if st.reject_line_over is not None:
            for s in streams:
                for e in s["entries"]:
                    if len(e["line"].encode()) > st.reject_line_over:
                        self.reply(400, "Max entry size exceeded for stream "
                                   f"'{json.dumps(s['labels'])}'")
                        return
        partial = None
        with st.lock:
            if st.partial is not None and st.partial["count"] > 0:
                prefixes = tuple(st.partial.get("refuse", []))
                refused = [e["line"] for s in streams for e in s["entries"]
                           if prefixes and e["line"].startswith(prefixes)]
                if refused:
                    st.partial["count"] -= 1
                    partial = dict(st.partial)
                    st.refused.extend(refused)
                    if partial.get("all_or_nothing"):
                        streams = []
                    else:
                        streams = [dict(s, entries=[e for e in s["entries"]
                                                    if not e["line"].startswith(prefixes)])
                                   for s in streams]
                        streams = [s for s in streams if s["entries"]]
        auth = self.headers.get("Authorization")
        with st.lock:
            st.pushes.append({
                "content_type": ctype,
                "content_encoding": cenc,
                "org_id": self.headers.get("X-Scope-OrgID"),
                "auth": auth.split(" ", 1)[0] if auth else None,
                "authorization": auth,
                "header_names": sorted({k.lower() for k in self.headers.keys()}),
                "user_agent": self.headers.get("User-Agent"),
                "entries": sum(len(s["entries"]) for s in streams),
                # the client's source port: equal ports mean a reused keep-alive connection
                "peer_port": self.client_address[1],
            })
            st.streams.extend(streams)
            st.pushed.notify_all()
            if st.journal is not None:
                # written and flushed before the 204: an acknowledged push is never forgotten
                st.journal.write(json.dumps({"t": time.time(), "streams": streams}) + "\n")
                st.journal.flush()
        if partial is not None:
            self.reply(int(partial["status"]), partial.get("body", ""))
            return
        self.reply(204)


class Server(sim_tls.TlsThreadingHTTPServer):
    sim_name = "loki_sim"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tenant")
    ap.add_argument("--token")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--journal")
    ap.add_argument("--tls", metavar="DIR")
    ap.add_argument("--discard", action="store_true")
    opts = ap.parse_args()
    try:
        import snappy  # python3-snappy: raw block format
    except ImportError:
        print("python3-snappy missing", file=sys.stderr)
        sys.exit(SKIP)
    with tempfile.TemporaryDirectory(prefix="loki-sim-") as workdir:
        try:
            pb2 = loki_decode.load_push_pb2(workdir)
        except ImportError as exc:
            print(f"python3-protobuf missing: {exc}", file=sys.stderr)
            sys.exit(SKIP)
    server = Server(("127.0.0.1", opts.port), Handler)
    if opts.tls:
        server.ssl_context = sim_tls.make_tls(opts.tls)
    journal = open(opts.journal, "a", encoding="utf-8") if opts.journal else None
    server.state = State(opts.tenant, opts.token, pb2, snappy, journal, opts.discard)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
