#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""A stand-in OTLP/HTTP metrics collector for integration tests.

usage: otlp_collector.py [--path /v1/metrics]

Listens on 127.0.0.1 with an ephemeral port and prints "PORT <n>" as its first stdout line.

POST <path>              (default /v1/metrics) parses the body as an ExportMetricsServiceRequest
                         with python3-protobuf classes generated at run time by protoc from
                         otlp_metrics_reference.proto (never with sf2loki's encoder). A body
                         that does not parse, carries a field the schema does not know (a wrong
                         field number or wire type), or is not application/x-protobuf is
                         answered 400 and recorded under "rejected"; otherwise 200 with an empty
                         ExportMetricsServiceResponse.
POST /control/fault      {"count": N, "status": S}: the next N exports answer S
GET  /control/received   {"exports": [{path, content_type, auth, user_agent, body_bytes,
                           resource: {key: value}, scopes: [{name, version}],
                           metrics: [{name, description, unit, kind: sum|gauge|histogram,
                                      temporality, monotonic, points: [{attributes: {k: v},
                                      start, time, value} | {attributes, start, time, count,
                                      sum, bucket_counts, explicit_bounds}]}]}],
                          "rejected": [{path, reason}]}
                         Times are strings of Unix nanoseconds (fixed64), temporality the enum
                         name. Exports that answered a fault are recorded too ("status").
POST /control/clear      forgets everything received and every fault

Exit 77 (skip) when protoc or python3-protobuf is missing.
"""

import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def load_pb2(workdir):
    protoc = shutil.which("protoc")
    if protoc is None:
        print("protoc not found (Debian package protobuf-compiler)", file=sys.stderr)
        sys.exit(SKIP)
    subprocess.run([protoc, f"-I{HERE}", f"--python_out={workdir}",
                    "otlp_metrics_reference.proto"], check=True, cwd=HERE)
    sys.path.insert(0, workdir)
    return importlib.import_module("otlp_metrics_reference_pb2")


def unknown_fields(msg, where="request"):
    """The dotted paths of every message holding a field the schema does not know."""
    found = []
    if len(msg.UnknownFields()) > 0:
        found.append(where)
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        children = value if field.label == field.LABEL_REPEATED else [value]
        for i, child in enumerate(children):
            found += unknown_fields(child, f"{where}.{field.name}[{i}]")
    return found


def any_value(v):
    kind = v.WhichOneof("value")
    if kind == "string_value":
        return v.string_value
    raise ValueError(f"attribute value of kind {kind!r}, expected string_value")


def attributes(kvs):
    out = {}
    for kv in kvs:
        if kv.key in out:
            raise ValueError(f"duplicate attribute {kv.key!r}")
        out[kv.key] = any_value(kv.value)
    return out


def number_point(p):
    if p.WhichOneof("value") != "as_double":
        raise ValueError(f"number point holds {p.WhichOneof('value')!r}")
    return {"attributes": attributes(p.attributes), "start": str(p.start_time_unix_nano),
            "time": str(p.time_unix_nano), "value": p.as_double}


def histogram_point(p):
    if len(p.bucket_counts) != len(p.explicit_bounds) + 1:
        raise ValueError("bucket_counts must be one longer than explicit_bounds")
    if sum(p.bucket_counts) != p.count:
        raise ValueError("bucket_counts do not add up to count")
    if list(p.explicit_bounds) != sorted(set(p.explicit_bounds)):
        raise ValueError("explicit_bounds not strictly increasing")
    return {"attributes": attributes(p.attributes), "start": str(p.start_time_unix_nano),
            "time": str(p.time_unix_nano), "count": p.count,
            "sum": p.sum if p.HasField("sum") else None,
            "bucket_counts": list(p.bucket_counts), "explicit_bounds": list(p.explicit_bounds)}


def normalise(pb2, req):
    if len(req.resource_metrics) != 1:
        raise ValueError(f"{len(req.resource_metrics)} ResourceMetrics, expected 1")
    rm = req.resource_metrics[0]
    doc = {"resource": attributes(rm.resource.attributes), "scopes": [], "metrics": []}
    for sm in rm.scope_metrics:
        doc["scopes"].append({"name": sm.scope.name, "version": sm.scope.version})
        for m in sm.metrics:
            kind = m.WhichOneof("data")
            entry = {"name": m.name, "description": m.description, "unit": m.unit, "kind": kind}
            if kind == "sum":
                entry["temporality"] = pb2.AggregationTemporality.Name(
                    m.sum.aggregation_temporality)
                entry["monotonic"] = m.sum.is_monotonic
                entry["points"] = [number_point(p) for p in m.sum.data_points]
            elif kind == "gauge":
                entry["points"] = [number_point(p) for p in m.gauge.data_points]
            elif kind == "histogram":
                entry["temporality"] = pb2.AggregationTemporality.Name(
                    m.histogram.aggregation_temporality)
                entry["points"] = [histogram_point(p) for p in m.histogram.data_points]
            else:
                raise ValueError(f"metric {m.name!r} has data {kind!r}")
            doc["metrics"].append(entry)
    return doc


class State:
    def __init__(self, pb2, path):
        self.lock = threading.Lock()
        self.pb2 = pb2
        self.path = path
        self.clear()

    def clear(self):
        self.exports = []
        self.rejected = []
        self.faults = []  # [status, remaining]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "otlp-collector-sim"

    def log_message(self, fmt, *args):
        sys.stderr.write("otlp_collector: " + (fmt % args) + "\n")

    def reply(self, status, body=b"", ctype="application/json"):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def do_GET(self):
        st = self.server.state
        if self.path == "/control/received":
            with st.lock:
                body = json.dumps({"exports": st.exports, "rejected": st.rejected})
            self.reply(200, body)
        else:
            self.reply(404, "{}")

    def do_POST(self):
        st = self.server.state
        body = self.read_body()
        if self.path == "/control/fault":
            doc = json.loads(body or b"{}")
            with st.lock:
                st.faults.append([int(doc.get("status", 503)), int(doc.get("count", 1))])
            self.reply(200, "{}")
        elif self.path == "/control/clear":
            with st.lock:
                st.clear()
            self.reply(200, "{}")
        elif self.path == st.path:
            self.export(body)
        else:
            self.reply(404, "{}")

    def export(self, body):
        st = self.server.state
        ctype = self.headers.get("Content-Type")
        try:
            if ctype != "application/x-protobuf":
                raise ValueError(f"Content-Type {ctype!r}")
            req = st.pb2.ExportMetricsServiceRequest.FromString(body)
            unknown = unknown_fields(req)
            if unknown:
                raise ValueError("fields unknown to the OTLP schema in " + ", ".join(unknown))
            doc = normalise(st.pb2, req)
        except Exception as exc:  # the client sees why, and so does the test
            with st.lock:
                st.rejected.append({"path": self.path, "reason": str(exc)})
            self.reply(400, json.dumps({"error": str(exc)}))
            return
        status = 200
        with st.lock:
            if st.faults:
                status = st.faults[0][0]
                st.faults[0][1] -= 1
                if st.faults[0][1] <= 0:
                    st.faults.pop(0)
            doc.update({"path": self.path, "content_type": ctype,
                        "auth": self.headers.get("Authorization"),
                        "user_agent": self.headers.get("User-Agent"),
                        "body_bytes": len(body), "status": status})
            st.exports.append(doc)
        if status == 200:
            # an empty ExportMetricsServiceResponse serialises to no bytes
            self.reply(200, b"", ctype="application/x-protobuf")
        else:
            self.reply(status, json.dumps({"error": "injected fault"}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--path", default="/v1/metrics")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="otlp-collector-") as workdir:
        try:
            pb2 = load_pb2(workdir)
        except ImportError as exc:
            print(f"python3-protobuf missing: {exc}", file=sys.stderr)
            sys.exit(SKIP)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.state = State(pb2, opts.path)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
