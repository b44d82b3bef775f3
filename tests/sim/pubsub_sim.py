#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""A Salesforce Pub/Sub API simulator (gRPC, eventbus.v1.PubSub) for integration tests.

usage: pubsub_sim.py [--tls DIR] [--keepalive-ms MS]

Serves Subscribe, GetSchema and GetTopic with python3-grpcio (generic handlers) on 127.0.0.1,
using message classes that protoc generates at start-up from the project's
proto/pubsub_api.proto into a temporary directory (never sf2loki's encoder). Plain h2c by
default; with --tls DIR a self-signed certificate for 127.0.0.1/localhost is written to
DIR/cert.pem (also the CA) and the server speaks TLS with ALPN h2.

A control API (plain HTTP/1.1 JSON) listens on a second port; its port is the "PORT <n>" first
line on stdout. Nothing else is written to stdout; logs go to stderr.

Events are Avro-encoded (schemaless binary) with python3-avro from realistic schemas:
"login" (a LoginEventStream-like record, 30 fields, many ["null", T] unions; version 2 adds a
field, so it has another schema id) and "account" (a CDC AccountChangeEvent with a
ChangeEventHeader whose changedFields / nulledFields / diffFields are bitmaps). Replay ids are
8 bytes, big-endian (REPLAY_BASE + sequence); sequence numbers start at 1 per topic.

Every call must carry the metadata accesstoken, instanceurl and tenantid (else UNAUTHENTICATED
with the auth.error error-code); a token that was once refused stays refused (an expired
session), so the client has to mint a new one.

Subscribe is faithful to the documented flow control: the first FetchRequest names the topic,
the preset (LATEST, EARLIEST, CUSTOM + replay_id) and num_requested; later requests add credit;
outstanding credit is capped at 100 per stream; num_requested outside 1..100 fails with
INVALID_ARGUMENT (requested.events.invalid); a different topic in a later request fails with
INVALID_ARGUMENT. The server never sends more events than the credit outstanding. When events
are not available while credit is outstanding, an empty FetchResponse carrying latest_replay_id
is sent after the keepalive interval (default 270 s, --keepalive-ms for tests). A CUSTOM
replay_id that is malformed, below the topic's retention floor or past its latest id fails with
INVALID_ARGUMENT and error-code ...replayid.corrupted (or the code set by /control/retention).

Control API:
GET  /control/info        {"grpc_port", "tls", "cert"}
POST /control/publish     {"topic", "count", "kind": "login"|"account", "version": 1|2,
                           "corrupt": [i, ...] (indexes in this batch whose payload is cut
                           short), "changed": ["0x..", ...], "lines": bool} → {"first",
                           "last"} sequences; with "lines": true also "lines", the
                           original's line of each event, json.dumps(decoded,
                           sort_keys=True, default=str) over python3-avro's decoding of its
                           payload (null for a corrupt one)
POST /control/latest      {"topic", "advance": N}: latest_replay_id moves N past the last event
                           (the shared event bus), no events
POST /control/retention   {"topic", "floor": SEQ, "error_code": C|null}: CUSTOM ids below SEQ
                           are refused; error_code null sends no error-code trailer
POST /control/fault       {"kind": "unauthenticated"|"unavailable"|"rst"|"end"|"invalid"|
                           "replay_corrupted"|"schema_unavailable", "scope": "open"|"next",
                           "count": N, "topic": T (optional)}: "open" ends the matching open
                           streams now (end = grpc-status OK while the client waits); "next"
                           fails the next N calls at once (Trailers-Only); replay_corrupted
                           refuses the next N CUSTOM subscriptions, whatever their replay id,
                           with INVALID_ARGUMENT and error-code ...replayid.corrupted (an
                           expired id, as Salesforce reports it); schema_unavailable fails the
                           next N GetSchema calls with UNAVAILABLE
POST /control/topic       {"topic", "can_subscribe": bool (default true)}: creates the topic
                           (GetTopic of an unknown one is NOT_FOUND) and sets what GetTopic
                           reports as can_subscribe
GET  /control/stats       {"topics": {T: {"outstanding", "sent", "subscribes", "open",
                           "keepalives", "max_outstanding", "overdrawn", "fetch_requests",
                           "last_first_request": {preset, replay_seq}, "first_requests":
                           [{preset, replay_seq, refused}, ...] (every Subscribe's first
                           FetchRequest, in order)}},
                           "schema_requests": {id: n}, "topic_requests": n,
                           "refused_tokens": n, "metadata_ok": bool}
GET  /control/schemas     {id: schema_json}

Exit 77 (skip) when protoc, python3-grpcio, python3-protobuf or python3-avro is missing.
"""

import argparse
import base64
import bisect
import hashlib
import importlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "..", "..", "proto")
SKIP = 77
REPLAY_BASE = 0x10DB00
MAX_CREDIT = 100
ERR_AUTH = "sfdc.platform.eventbus.grpc.service.auth.error"
ERR_CORRUPTED = "sfdc.platform.eventbus.grpc.subscription.fetch.replayid.corrupted"
ERR_REQUESTED = "sfdc.platform.eventbus.grpc.subscription.fetch.requested.events.invalid"
ERR_UNAVAILABLE = "sfdc.platform.eventbus.grpc.service.unavailable"
ERR_TOPIC = "sfdc.platform.eventbus.grpc.subscription.topic.notfound"

try:
    import grpc
    import avro.io
    import avro.schema
except ImportError as exc:  # pragma: no cover
    print(f"missing module: {exc}", file=sys.stderr)
    sys.exit(SKIP)


def load_pb2(workdir):
    protoc = shutil.which("protoc")
    if protoc is None:
        print("protoc not found (Debian package protobuf-compiler)", file=sys.stderr)
        sys.exit(SKIP)
    try:
        importlib.import_module("google.protobuf")
    except ImportError:
        print("python3-protobuf missing", file=sys.stderr)
        sys.exit(SKIP)
    subprocess.run([protoc, f"-I{os.path.abspath(PROTO_DIR)}", f"--python_out={workdir}",
                    "pubsub_api.proto"], check=True)
    sys.path.insert(0, workdir)
    return importlib.import_module("pubsub_api_pb2")


# --- schemas -----------------------------------------------------------------------------------

def opt(name, t):
    return {"name": name, "type": ["null", t], "default": None}


LOGIN_FIELDS = [
    {"name": "EventIdentifier", "type": "string"},
    {"name": "Sequence", "type": "long"},
    {"name": "EventDate", "type": "long", "doc": "CreatedDate:DateTime"},
    {"name": "CreatedDate", "type": "long", "doc": "CreatedDate:DateTime"},
    {"name": "CreatedById", "type": "string"},
    opt("EventUuid", "string"),
    opt("UserId", "string"),
    opt("Username", "string"),
    opt("LoginType", "string"),
    opt("LoginUrl", "string"),
    opt("SourceIp", "string"),
    opt("Status", "string"),
    opt("Application", "string"),
    opt("Browser", "string"),
    opt("Platform", "string"),
    opt("CountryIso", "string"),
    opt("City", "string"),
    opt("Latitude", "double"),
    opt("Longitude", "double"),
    opt("LoginKey", "string"),
    opt("SessionKey", "string"),
    opt("SessionLevel", "string"),
    opt("ApiType", "string"),
    opt("ApiVersion", "string"),
    opt("AuthServiceId", "string"),
    opt("LoginHistoryId", "string"),
    opt("HttpMethod", "string"),
    opt("PolicyOutcome", "string"),
    opt("EvaluationTime", "double"),
    opt("LoginLatency", "long"),
    opt("TlsProtocol", "string"),
    opt("CipherSuite", "string"),
    opt("AdditionalInfo", "string"),
]


def login_schema(version):
    fields = list(LOGIN_FIELDS)
    if version >= 2:
        fields.append(opt("AuthMethodReference", "string"))
    return {"type": "record", "name": "LoginEventStream", "namespace": "com.sforce.eventbus",
            "fields": fields}


ADDRESS = {"type": "record", "name": "Address", "fields": [
    opt("Street", "string"), opt("City", "string"), opt("State", "string"),
    opt("PostalCode", "string"), opt("Country", "string"), opt("Latitude", "double"),
    opt("Longitude", "double"), opt("GeocodeAccuracy", "string")]}

HEADER = {"type": "record", "name": "ChangeEventHeader", "fields": [
    {"name": "entityName", "type": "string"},
    {"name": "recordIds", "type": {"type": "array", "items": "string"}},
    {"name": "changeType", "type": {"type": "enum", "name": "ChangeType", "symbols": [
        "CREATE", "UPDATE", "DELETE", "UNDELETE", "GAP_CREATE", "GAP_UPDATE", "GAP_DELETE",
        "GAP_UNDELETE", "GAP_OVERFLOW", "SNAPSHOT"]}},
    {"name": "changeOrigin", "type": "string"},
    {"name": "transactionKey", "type": "string"},
    {"name": "sequenceNumber", "type": "int"},
    {"name": "commitTimestamp", "type": "long"},
    {"name": "commitNumber", "type": "long"},
    {"name": "commitUser", "type": "string"},
    {"name": "nulledFields", "type": {"type": "array", "items": "string"}},
    {"name": "diffFields", "type": {"type": "array", "items": "string"}},
    {"name": "changedFields", "type": {"type": "array", "items": "string"}},
]}


def account_schema(version):
    fields = [{"name": "ChangeEventHeader", "type": HEADER},
              opt("Name", "string"), opt("Type", "string"), opt("ParentId", "string"),
              {"name": "BillingAddress", "type": ["null", ADDRESS], "default": None},
              opt("Phone", "string"), opt("Industry", "string"),
              opt("AnnualRevenue", "double"), opt("NumberOfEmployees", "int"),
              opt("OwnerId", "string"), opt("CreatedDate", "long"),
              opt("LastModifiedDate", "long"), opt("Sequence", "long"),
              opt("Signature", "bytes"),
              {"name": "Digest", "type": ["null", {"type": "fixed", "name": "Digest4",
                                                   "size": 4}], "default": None}]
    return {"type": "record", "name": "AccountChangeEvent", "namespace": "com.sforce.eventbus",
            "fields": fields}


def schema_id_of(text):
    # a 22-character fingerprint, like Salesforce's
    return base64.urlsafe_b64encode(hashlib.md5(text.encode()).digest()).decode().rstrip("=")


class Schema:
    def __init__(self, doc):
        self.json = json.dumps(doc)
        self.id = schema_id_of(self.json)
        self.parsed = avro.schema.parse(self.json)
        self.writer = avro.io.DatumWriter(self.parsed)

    def encode(self, datum):
        buf = io.BytesIO()
        self.writer.write(datum, avro.io.BinaryEncoder(buf))
        return buf.getvalue()

    def original_line(self, payload):
        """The line the Python original writes for the event
        (docs/differences-from-python.md, "Kept as in the original")."""
        datum = avro.io.DatumReader(self.parsed).read(avro.io.BinaryDecoder(io.BytesIO(payload)))
        return json.dumps(datum, sort_keys=True, default=str)


def login_datum(topic, seq, now_ms, version):
    d = {
        "EventIdentifier": f"{topic.rsplit('/', 1)[-1]}-{seq:08d}",
        "Sequence": seq,
        "EventDate": now_ms + seq,
        "CreatedDate": now_ms + seq,
        "CreatedById": "005xx000001SvVfAAK",
        "EventUuid": f"0b1e{seq:08x}-7a5c-4d6e-9f10-{seq:012x}",
        "UserId": "005xx000001SvVfAAK",
        "Username": "ops@example.com",
        "LoginType": "Application",
        "LoginUrl": "login.salesforce.com",
        "SourceIp": f"10.0.{seq % 256}.{(seq // 256) % 256}",
        "Status": "Success" if seq % 7 else "Failed: Invalid Password",
        "Application": "Browser",
        "Browser": "Chrome 120",
        "Platform": "Mac OSX",
        "CountryIso": "FR",
        "City": "Montr\u00e9al" if seq % 5 == 0 else "Paris",
        "Latitude": 48.8566,
        "Longitude": None,
        "LoginKey": f"lk{seq}",
        "SessionKey": None,
        "SessionLevel": "STANDARD",
        "ApiType": None,
        "ApiVersion": "61.0",
        "AuthServiceId": None,
        "LoginHistoryId": f"0Yaxx{seq:010d}",
        "HttpMethod": "POST",
        "PolicyOutcome": None,
        "EvaluationTime": 0.25,
        "LoginLatency": 120 + seq % 50,
        "TlsProtocol": "TLS 1.3",
        "CipherSuite": "TLS_AES_256_GCM_SHA384",
        "AdditionalInfo": "{}",
    }
    if version >= 2:
        d["AuthMethodReference"] = "pwd"
    return d


def account_datum(seq, now_ms, changed):
    return {
        "ChangeEventHeader": {
            "entityName": "Account",
            "recordIds": [f"001xx{seq:013d}"],
            "changeType": "UPDATE",
            "changeOrigin": "com/salesforce/api/soap/61.0;client=sim",
            "transactionKey": f"tx-{seq}",
            "sequenceNumber": 1,
            "commitTimestamp": now_ms + seq,
            "commitNumber": 10000 + seq,
            "commitUser": "005xx000001SvVfAAK",
            "nulledFields": ["0x10"],
            "diffFields": [],
            "changedFields": changed,
        },
        "Name": f"Account {seq}",
        "Type": None,
        "ParentId": None,
        "BillingAddress": {"Street": "1 Main St", "City": "Lyon", "State": None,
                           "PostalCode": "69001", "Country": "FR", "Latitude": None,
                           "Longitude": None, "GeocodeAccuracy": None},
        "Phone": None,
        "Industry": "Energy",
        "AnnualRevenue": 1.5e6,
        "NumberOfEmployees": 42,
        "OwnerId": "005xx000001SvVfAAK",
        "CreatedDate": now_ms,
        "LastModifiedDate": now_ms + seq,
        "Sequence": seq,
        # bytes the way Python prints them: quotes, backslash, control and high bytes
        "Signature": b"\x00'\"\\\xff\n\t" + bytes([seq % 256]),
        "Digest": b"'" + b"\x7f" * 3 if seq % 2 else b"ab\rc",
    }


def rid(seq):
    return struct.pack(">Q", REPLAY_BASE + seq)


def seq_of(replay_id):
    if len(replay_id) != 8:
        return None
    return struct.unpack(">Q", replay_id)[0] - REPLAY_BASE


# --- state -------------------------------------------------------------------------------------

class Topic:
    def __init__(self, name):
        self.name = name
        self.events = []  # (seq, schema_id, payload)
        self.latest = 0
        self.floor = 1
        self.floor_code = ERR_CORRUPTED
        self.sent = 0
        self.subscribes = 0
        self.keepalives = 0
        self.max_outstanding = 0
        self.overdrawn = 0
        self.fetch_requests = 0
        self.last_first = None
        self.first_requests = []
        self.can_subscribe = True


class Stream:
    def __init__(self, topic, token):
        self.topic = topic
        self.token = token
        self.credit = 0
        self.fault = None
        self.closed = False


class State:
    def __init__(self, keepalive_ms):
        self.lock = threading.Condition()
        self.topics = {}
        self.schemas = {}
        self.streams = []
        self.next_faults = []
        self.schema_faults = 0
        self.schema_requests = {}
        self.topic_requests = 0
        self.refused = set()
        self.metadata_ok = True
        self.keepalive = keepalive_ms / 1000.0
        for v in (1, 2):
            for doc in (login_schema(v), account_schema(v)):
                s = Schema(doc)
                self.schemas[s.id] = s
        self.login = {v: Schema(login_schema(v)) for v in (1, 2)}
        self.account = Schema(account_schema(1))

    def topic(self, name):
        t = self.topics.get(name)
        if t is None:
            t = Topic(name)
            self.topics[name] = t
        return t


STATE = None
PB = None


def check_metadata(context):
    md = dict(context.invocation_metadata())
    token = md.get("accesstoken")
    if not token or not md.get("instanceurl") or not md.get("tenantid"):
        STATE.metadata_ok = False
        context.set_trailing_metadata((("error-code", ERR_AUTH),))
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing auth headers")
    with STATE.lock:
        refused = token in STATE.refused
    if refused:
        context.set_trailing_metadata((("error-code", ERR_AUTH),))
        context.abort(grpc.StatusCode.UNAUTHENTICATED,
                      "The session is invalid or expired. rpcId: sim")
    return token


def take_next_fault(kinds, topic=None):
    with STATE.lock:
        for f in STATE.next_faults:
            if f["kind"] in kinds and f.get("topic") in (None, topic) and f["count"] > 0:
                f["count"] -= 1
                return f["kind"]
    return None


def abort_for(context, kind, token):
    if kind == "unauthenticated":
        with STATE.lock:
            STATE.refused.add(token)
        context.set_trailing_metadata((("error-code", ERR_AUTH),))
        context.abort(grpc.StatusCode.UNAUTHENTICATED,
                      "The session is invalid or expired. rpcId: sim")
    if kind == "unavailable":
        context.set_trailing_metadata((("error-code", ERR_UNAVAILABLE),))
        context.abort(grpc.StatusCode.UNAVAILABLE, "service unavailable, rpcId: sim")
    if kind == "invalid":
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "invalid request, rpcId: sim")
    if kind == "rst":
        context.cancel()
        raise grpc.RpcError("cancelled")


def subscribe(request_iterator, context):
    token = check_metadata(context)
    try:
        first = next(request_iterator)
    except StopIteration:
        return
    name = first.topic_name
    if not name:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "topic_name is required")
    kind = take_next_fault(("unauthenticated", "unavailable", "invalid", "rst"), name)
    if kind is not None:
        abort_for(context, kind, token)
    if not (1 <= first.num_requested <= MAX_CREDIT):
        context.set_trailing_metadata((("error-code", ERR_REQUESTED),))
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "num_requested must be 1..100")
    with STATE.lock:
        t = STATE.topic(name)
        t.subscribes += 1
        t.fetch_requests += 1
        preset = PB.ReplayPreset.Name(first.replay_preset)
        pos = None
        refuse = None
        if first.replay_preset == PB.CUSTOM:
            s = seq_of(first.replay_id)
            t.last_first = {"preset": preset, "replay_seq": s}
            if take_next_fault(("replay_corrupted",), name) is not None:
                refuse = ERR_CORRUPTED
            elif s is None or s < t.floor or s > t.latest:
                refuse = t.floor_code
            else:
                pos = s
        elif first.replay_preset == PB.EARLIEST:
            t.last_first = {"preset": preset, "replay_seq": None}
            pos = t.floor - 1
        else:
            t.last_first = {"preset": preset, "replay_seq": None}
            pos = t.latest
        t.first_requests.append(dict(t.last_first, refused=pos is None))
    if refuse is not None or pos is None:
        if refuse:
            context.set_trailing_metadata((("error-code", refuse),))
        context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                      "The Replay ID validation failed. rpcId: sim")
    stream = Stream(name, token)

    def on_end():
        with STATE.lock:
            stream.closed = True
            STATE.lock.notify_all()

    # wakes the sender when the client goes away (cancel, reset, disconnect)
    context.add_callback(on_end)
    with STATE.lock:
        stream.credit = min(MAX_CREDIT, first.num_requested)
        t.max_outstanding = max(t.max_outstanding, stream.credit)
        STATE.streams.append(stream)
        STATE.lock.notify_all()

    def reader():
        try:
            for req in request_iterator:
                with STATE.lock:
                    t.fetch_requests += 1
                    if req.topic_name and req.topic_name != name:
                        stream.fault = "invalid"
                    elif not (1 <= req.num_requested <= MAX_CREDIT):
                        stream.fault = "requested"
                    else:
                        if stream.credit + req.num_requested > MAX_CREDIT:
                            t.overdrawn += 1
                        stream.credit = min(MAX_CREDIT, stream.credit + req.num_requested)
                        t.max_outstanding = max(t.max_outstanding, stream.credit)
                    STATE.lock.notify_all()
        except Exception:  # the call ended under us
            pass
        with STATE.lock:
            STATE.lock.notify_all()

    threading.Thread(target=reader, daemon=True).start()
    try:
        while True:
            with STATE.lock:
                # the keepalive is due after a quiet interval with credit outstanding
                due = time.monotonic() + STATE.keepalive
                while True:
                    if stream.fault or not context.is_active():
                        break
                    if stream.closed and not context.is_active():
                        break
                    if stream.credit > 0 and t.events and t.events[-1][0] > pos:
                        break
                    now = time.monotonic()
                    if stream.credit > 0 and now >= due:
                        break
                    if stream.credit == 0:
                        due = now + STATE.keepalive
                    STATE.lock.wait(max(0.0, due - now) if stream.credit > 0 else None)
                fault = stream.fault
                if fault is None and not context.is_active():
                    return
                batch = []
                if fault is None:
                    start = bisect.bisect_right(t.events, pos, key=lambda e: e[0])
                    batch = t.events[start:start + stream.credit]
                    stream.credit -= len(batch)
                    t.sent += len(batch)
                    if batch:
                        pos = batch[-1][0]
                    else:
                        t.keepalives += 1
                    resp = PB.FetchResponse(rpc_id="sim", pending_num_requested=stream.credit)
                    for seq, sid, payload in batch:
                        ce = resp.events.add()
                        ce.replay_id = rid(seq)
                        ce.event.id = f"evt-{seq}"
                        ce.event.schema_id = sid
                        ce.event.payload = payload
                    if not batch:
                        resp.latest_replay_id = rid(t.latest)
            if fault is not None:
                if fault == "end":
                    return
                if fault == "requested":
                    context.set_trailing_metadata((("error-code", ERR_REQUESTED),))
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT, "num_requested invalid")
                abort_for(context, fault, token)
            yield resp
    finally:
        with STATE.lock:
            stream.closed = True
            if stream in STATE.streams:
                STATE.streams.remove(stream)


def get_schema(request, context):
    check_metadata(context)
    with STATE.lock:
        STATE.schema_requests[request.schema_id] = \
            STATE.schema_requests.get(request.schema_id, 0) + 1
        fail = STATE.schema_faults > 0
        if fail:
            STATE.schema_faults -= 1
        s = STATE.schemas.get(request.schema_id)
    if fail:
        context.abort(grpc.StatusCode.UNAVAILABLE, "schema service unavailable")
    if s is None:
        context.abort(grpc.StatusCode.NOT_FOUND, f"no schema {request.schema_id}")
    return PB.SchemaInfo(schema_json=s.json, schema_id=s.id, rpc_id="sim")


def get_topic(request, context):
    check_metadata(context)
    with STATE.lock:
        STATE.topic_requests += 1
        t = STATE.topics.get(request.topic_name)
    if t is None:
        context.set_trailing_metadata((("error-code", ERR_TOPIC),))
        context.abort(grpc.StatusCode.NOT_FOUND, f"topic {request.topic_name} not found")
    sid = STATE.login[1].id
    return PB.TopicInfo(topic_name=t.name, tenant_guid="00Dxx0000001gPFEAY", can_publish=True,
                        can_subscribe=t.can_subscribe, schema_id=sid, rpc_id="sim")


# --- control -----------------------------------------------------------------------------------

def publish(doc):
    name = doc["topic"]
    count = int(doc.get("count", 1))
    kind = doc.get("kind", "login")
    version = int(doc.get("version", 1))
    corrupt = set(doc.get("corrupt", []))
    changed = doc.get("changed", ["0x650004E0", "4-0x10", "7-0x06"])
    now_ms = int(doc.get("now_ms", time.time() * 1000))
    out = []
    lines = []
    with STATE.lock:
        t = STATE.topic(name)
        first = t.latest + 1
        for i in range(count):
            seq = t.latest + 1
            if kind == "account":
                s = STATE.account
                payload = s.encode(account_datum(seq, now_ms, changed))
            else:
                s = STATE.login[version]
                payload = s.encode(login_datum(name, seq, now_ms, version))
            if i in corrupt:
                payload = payload[:3]
                lines.append(None)
            elif doc.get("lines"):
                lines.append(s.original_line(payload))
            out.append((seq, s.id, payload))
            t.latest = seq
        t.events.extend(out)
        STATE.lock.notify_all()
        answer = {"first": first, "last": t.latest}
        if doc.get("lines"):
            answer["lines"] = lines
        return answer


def stats():
    with STATE.lock:
        topics = {}
        for name, t in STATE.topics.items():
            outstanding = sum(s.credit for s in STATE.streams if s.topic == name)
            topics[name] = {
                "outstanding": outstanding, "sent": t.sent, "subscribes": t.subscribes,
                "open": sum(1 for s in STATE.streams if s.topic == name),
                "keepalives": t.keepalives, "max_outstanding": t.max_outstanding,
                "overdrawn": t.overdrawn, "fetch_requests": t.fetch_requests,
                "last_first_request": t.last_first, "latest": t.latest,
                "first_requests": list(t.first_requests),
            }
        return {"topics": topics, "schema_requests": dict(STATE.schema_requests),
                "topic_requests": STATE.topic_requests, "refused_tokens": len(STATE.refused),
                "metadata_ok": STATE.metadata_ok}


class Control(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    grpc_port = 0
    cert = None

    def log_message(self, fmt, *args):
        sys.stderr.write("pubsub_sim: " + (fmt % args) + "\n")

    def reply(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"{}")

    def do_GET(self):
        if self.path == "/control/info":
            return self.reply(200, {"grpc_port": Control.grpc_port, "tls": Control.cert is not None,
                                    "cert": Control.cert})
        if self.path == "/control/stats":
            return self.reply(200, stats())
        if self.path == "/control/schemas":
            return self.reply(200, {k: v.json for k, v in STATE.schemas.items()})
        self.reply(404, {"error": "not found"})

    def do_POST(self):
        doc = self.body()
        if self.path == "/control/publish":
            return self.reply(200, publish(doc))
        if self.path == "/control/latest":
            with STATE.lock:
                t = STATE.topic(doc["topic"])
                t.latest += int(doc.get("advance", 1))
                STATE.lock.notify_all()
                return self.reply(200, {"latest": t.latest})
        if self.path == "/control/topic":
            with STATE.lock:
                t = STATE.topic(doc["topic"])
                t.can_subscribe = bool(doc.get("can_subscribe", True))
            return self.reply(200, {"ok": True})
        if self.path == "/control/retention":
            with STATE.lock:
                t = STATE.topic(doc["topic"])
                t.floor = int(doc["floor"])
                t.floor_code = doc.get("error_code", ERR_CORRUPTED)
            return self.reply(200, {"ok": True})
        if self.path == "/control/fault":
            kind = doc["kind"]
            scope = doc.get("scope", "next")
            n = 0
            with STATE.lock:
                if kind == "schema_unavailable":
                    STATE.schema_faults += int(doc.get("count", 1))
                elif scope == "open":
                    for s in STATE.streams:
                        if doc.get("topic") in (None, s.topic) and s.fault is None:
                            s.fault = kind
                            n += 1
                else:
                    STATE.next_faults.append({"kind": kind, "count": int(doc.get("count", 1)),
                                              "topic": doc.get("topic")})
                STATE.lock.notify_all()
            return self.reply(200, {"applied": n})
        self.reply(404, {"error": "not found"})


def make_cert(directory):
    import datetime
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import ipaddress
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pubsub-sim")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    path = os.path.join(directory, "cert.pem")
    with open(path, "wb") as f:
        f.write(cert_pem)
    return path, cert_pem, key_pem


def main():
    global STATE, PB
    ap = argparse.ArgumentParser()
    ap.add_argument("--tls", metavar="DIR")
    ap.add_argument("--keepalive-ms", type=int, default=270000)
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="pubsub-sim-")
    PB = load_pb2(workdir)
    STATE = State(args.keepalive_ms)

    handler = grpc.method_handlers_generic_handler("eventbus.v1.PubSub", {
        "Subscribe": grpc.stream_stream_rpc_method_handler(
            subscribe, request_deserializer=PB.FetchRequest.FromString,
            response_serializer=PB.FetchResponse.SerializeToString),
        "GetSchema": grpc.unary_unary_rpc_method_handler(
            get_schema, request_deserializer=PB.SchemaRequest.FromString,
            response_serializer=PB.SchemaInfo.SerializeToString),
        "GetTopic": grpc.unary_unary_rpc_method_handler(
            get_topic, request_deserializer=PB.TopicRequest.FromString,
            response_serializer=PB.TopicInfo.SerializeToString),
    })
    # two threads per open Subscribe (responses and the request reader run in the pool's
    # worker and a helper thread): plenty for a test's handful of topics
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=64),
                         options=[("grpc.keepalive_permit_without_calls", 1),
                                  ("grpc.http2.min_ping_interval_without_data_ms", 1000),
                                  ("grpc.http2.max_ping_strikes", 0)])
    server.add_generic_rpc_handlers((handler,))
    if args.tls:
        cert_path, cert_pem, key_pem = make_cert(args.tls)
        creds = grpc.ssl_server_credentials([(key_pem, cert_pem)])
        port = server.add_secure_port("127.0.0.1:0", creds)
        Control.cert = cert_path
    else:
        port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    Control.grpc_port = port
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Control)
    httpd.daemon_threads = True
    print(f"PORT {httpd.server_address[1]}", flush=True)
    try:
        httpd.serve_forever()
    finally:
        server.stop(None)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
