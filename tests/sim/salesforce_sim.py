#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""A Salesforce REST simulator (OAuth, SOQL, EventLogFile downloads) for integration tests.

usage: salesforce_sim.py [--dataset FILE.json] [--demo] [--demo-live SECONDS]
                         [--public-key PEM_FILE] [--client-id ID] [--username USER]
                         [--client-secret SECRET] [--org-id ORGID] [--api-version 64.0]
                         [--audience URL] [--tls DIR]

Listens on 127.0.0.1 with an ephemeral port and prints "PORT <n>" as its first stdout line.
The base URL B (http://127.0.0.1:<n>, or https with --tls: a self-signed certificate for
127.0.0.1/localhost is written to DIR/cert.pem + DIR/key.pem; DIR/cert.pem is the CA) is both the
login URL and the instance_url. Nothing else is written to stdout; logs go to stderr.

POST /services/oauth2/token        jwt-bearer (RS256, checked with --public-key, which may be a
                                   PEM public key or an X.509 certificate; aud = --audience or B;
                                   iss = client id; sub = username; exp required, at most
                                   now+185 s, not expired) or client_credentials (form fields or
                                   HTTP Basic). Errors: 400 {"error", "error_description"}.
GET  /services/oauth2/userinfo     {"organization_id", "user_id", "preferred_username"}
GET  /services/data/vNN.N/limits   {"DailyApiRequests": {"Max": 15000, "Remaining": ...}}
GET  /services/data/vNN.N/query?q=SOQL  (also tooling/query, queryAll); paging through
                                   nextRecordsUrl /services/data/vNN.N/query/01gSIM<cursor>-<offset>
GET  /services/data/vNN.N/sobjects/EventLogFile/<Id>/LogFile   the CSV, chunked, text/csv
GET  /services/data/vNN.N/tooling/sobjects/ApexLog/<Id>/Body   the debug log, text/plain
                                   (also without tooling/); 404 NOT_FOUND for an unknown Id
GET  /services/data/vNN.N/sobjects  describeGlobal (names only)
GET  /services/data/vNN.N/sobjects/<Name>/describe   a minimal describe of EventLogFile or a
                                   dataset object (name, queryable, field names); else 404
Every API call needs "Authorization: Bearer <token>" (else 401 INVALID_SESSION_ID) and answers
with Date and "Sforce-Limit-Info: api-usage=<n>/15000". A request line over 16384 bytes → 414
[{"errorCode": "URI_TOO_LONG"}]. The SOQL subset is described in sf_soql.py; big objects
("big_object": true) only accept ORDER BY <timestamp_field> DESC and refuse nextRecordsUrl.
ApexLog and TraceFlag are Tooling API objects: only tooling/query sees them (INVALID_TYPE
otherwise). ApexLog has the relationship field LogUser.Username (a flat column here).

Control API (JSON, no auth):
POST /control/fault       {"match": token|userinfo|query|logfile|apexlog_body|limits|describe|any,
                           "id": ID (apexlog_body/logfile: only that log), "count": N,
                           "status": S, "error_code": C, "message": M, "body": RAW,
                           "content_type": T, "delay_ms": D, "reset_after_bytes": B,
                           "non_json": true}; FIFO, each request consumes the first match
POST /control/expire_tokens  → {"expired": n}: every token issued so far stops working
POST /control/add         a dataset document (below), appended (records with a known Id replace it)
POST /control/batch_size  {"size": N}: query page size (default 2000)
GET  /control/stats       {"tokens_minted", "token_requests", "jwt_claims", "userinfo_calls",
                           "api_calls", "requests": [{method, path, q, status}],
                           "downloads": {Id: started}, "download_bytes": {Id: bytes},
                           "apexlog_bodies": {Id: bodies served past auth and faults}}
GET  /control/faults      the pending faults
POST /control/clear_stats, POST /control/clear_faults

Dataset: {"eventlogfiles": [{"Id", "EventType", "Interval", "LogDate", "CreatedDate",
           "Sequence", and "csv": TEXT or "generate": {"rows": N, "kind": API|Login|URI,
           "seed": S} or "path": FILE, optional "crlf": true, "content_length": true}],
          "objects": {"Name": {"big_object": bool, "timestamp_field": "EventDate",
                               "records": [{"Id": ..., ...}]}},
          "apexlogs": [{"Id", "StartTime", "body": TEXT, "Username", optional "LogUserId",
                        "Operation", "Request", "Status", "Application",
                        "DurationMilliseconds", "Location", "LogLength" (default: the body's
                        UTF-8 length)}],
          "traceflags": [{"Id", "ExpirationDate", optional "TracedEntityId", "LogType"}]}
Generated CSV rows have REQUEST_ID "<Id>-<row index>" and TIMESTAMP_DERIVED inside the LogDate
hour (day for Daily); every 97th row's QUERY holds a comma, doubled quotes and a newline.
A "path" LogFile is that file's bytes as they are, read at each download in 256 KiB pieces and
sent with Content-Length (unless "content_length": false); LogFileLength is the file's size.

--demo loads a dataset relative to now; --demo-live S adds LoginEvent records every S seconds
and a small Hourly API file every 10*S seconds.

Exit 77 (skip) when python3-jwt or python3-cryptography is missing.
"""

import argparse
import base64
import collections
import csv
import datetime as dt
import importlib.util
import io
import json
import os
import re
import secrets
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sf_soql  # noqa: E402
import sim_tls  # noqa: E402
from sf_soql import UTC, Lazy, SoqlError  # noqa: E402

SKIP = 77
USER_ID = "005SIM0000000001AA"
API_MAX = 15000
URI_LIMIT = 16384
READ_LIMIT = 1 << 20
CHUNK = 64 * 1024
FILE_CHUNK = 256 * 1024
JSON_TYPE = "application/json;charset=UTF-8"
DEFAULT_BATCH = 2000
MAX_CURSORS = 1000

_VERSION_RE = re.compile(r"^/services/data/v(\d+\.\d+)(/.*)?$")
_LOCATOR_RE = re.compile(r"^01gSIM(\d+)-(\d+)$")


class BadRequest(Exception):
    pass


def now_utc():
    return dt.datetime.now(UTC)


def iso_z(t):
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


# --- generated EventLogFile CSV ---------------------------------------------------------

_USERS = ["005SIM0000000%d" % (10 + k) for k in range(7)]
_IPS = ["10.0.%d.%d" % (k, 3 * k + 1) for k in range(11)]
_URIS = ["/services/data/v64.0/query", "/services/data/v64.0/sobjects/Account",
         "/services/data/v64.0/composite", "/services/apexrest/orders",
         "/services/data/v64.0/limits"]
_ENTITIES = ["Account", "Contact", "Opportunity", "Case", "Lead"]
_METHODS = ["query", "create", "update", "describeSObject", "retrieve"]
_CLIENTS = ["sfdx-cli", "", "DataLoader", "Workbench/64.0"]
_SPECIAL_QUERY = ('SELECT Id, Name FROM Account WHERE Name = \'Acme, "Inc"\'\n'
                  'AND Industry = \'Tools, Hardware\' LIMIT 5')
_BROWSERS = ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) '
             'Chrome/126.0 Safari/537.36', "python-requests/2.31", "Java (1.8.0_402)",
             'curl/8.5.0 "sim"']
_LOGIN_TYPES = ["Application", "Remote Access 2.0", "SAML Sfdc Initiated SSO", "Other Apex API"]
_PAGES = ["/lightning/page/home", "/lightning/r/Account/001SIM0000000001/view",
          "/lightning/o/Case/list?filterName=Recent", "/apex/Search?q=a,b"]


def _q(v):
    return '"' + str(v).replace('"', '""') + '"'


_KINDS = {
    "API": ["EVENT_TYPE", "TIMESTAMP", "REQUEST_ID", "ORGANIZATION_ID", "USER_ID", "RUN_TIME",
            "CPU_TIME", "URI", "SESSION_KEY", "LOGIN_KEY", "USER_TYPE", "REQUEST_STATUS",
            "DB_TOTAL_TIME", "API_TYPE", "API_VERSION", "METHOD_NAME", "ENTITY_NAME",
            "ROWS_PROCESSED", "REQUEST_SIZE", "RESPONSE_SIZE", "CLIENT_IP", "TIMESTAMP_DERIVED",
            "USER_ID_DERIVED", "CLIENT_NAME", "QUERY"],
    "Login": ["EVENT_TYPE", "TIMESTAMP", "REQUEST_ID", "ORGANIZATION_ID", "USER_ID", "RUN_TIME",
              "CPU_TIME", "URI", "SESSION_KEY", "LOGIN_KEY", "USER_TYPE", "REQUEST_STATUS",
              "DB_TOTAL_TIME", "LOGIN_TYPE", "BROWSER_TYPE", "API_TYPE", "API_VERSION",
              "USER_NAME", "TLS_PROTOCOL", "CIPHER_SUITE", "LOGIN_STATUS", "SOURCE_IP",
              "CLIENT_IP", "TIMESTAMP_DERIVED", "USER_ID_DERIVED"],
    "URI": ["EVENT_TYPE", "TIMESTAMP", "REQUEST_ID", "ORGANIZATION_ID", "USER_ID", "RUN_TIME",
            "CPU_TIME", "URI", "SESSION_KEY", "LOGIN_KEY", "USER_TYPE", "REQUEST_STATUS",
            "DB_TOTAL_TIME", "REFERRER_URI", "CLIENT_IP", "TIMESTAMP_DERIVED",
            "USER_ID_DERIVED", "URI_ID_DERIVED", "DB_BLOCKS", "DB_CPU_TIME", "PAGE_APP_NAME",
            "QUERY"],
}


class Generated:
    """A deterministic EventLogFile CSV for (Id, seed), rendered chunk by chunk."""

    ROWS_PER_CHUNK = 128

    def __init__(self, file_id, kind, rows, seed, log_date, interval, org_id, crlf):
        if kind not in _KINDS:
            raise BadRequest(f"unknown generate kind {kind!r}")
        self.file_id = file_id
        self.kind = kind
        self._length = None
        self.rows = int(rows)
        self.seed = int(seed)
        self.nl = "\r\n" if crlf else "\n"
        self.org15 = org_id[:15]
        daily = interval == "Daily"
        base = log_date.astimezone(UTC)
        self.span = 86400000 if daily else 3600000
        self.base_hour = 0 if daily else base.hour
        self.day_compact = base.strftime("%Y%m%d")
        self.day_iso = base.strftime("%Y-%m-%dT")
        self.header = ",".join(_q(c) for c in _KINDS[kind]) + self.nl
        self.special_query = _q(_SPECIAL_QUERY)[1:-1]
        cells = {
            "EVENT_TYPE": kind if kind != "Login" else "Login",
            "TIMESTAMP": "%s%02d%02d%02d.%03d",
            "REQUEST_ID": "%s-%d",
            "TIMESTAMP_DERIVED": "%s%02d:%02d:%02d.%03dZ",
        }
        self.template = ",".join('"' + cells.get(c, "%s") + '"' for c in _KINDS[kind]) + self.nl

    def length(self):
        if self._length is None:
            self._length = sum(len(c) for c in self.chunks())
        return self._length

    def field_names(self):
        return ",".join(_KINDS[self.kind])

    def chunks(self):
        yield self.header.encode()
        rows, seed, span = self.rows, self.seed, self.span
        fid, org, tpl = self.file_id, self.org15, self.template
        dc, di, bh = self.day_compact, self.day_iso, self.base_hour
        row_fn = getattr(self, "_row_" + self.kind.lower())
        out = []
        for i in range(rows):
            off = (i * span) // rows + (seed % 7) if rows else 0
            off = min(off, span - 1)
            h = bh + off // 3600000
            mi = off // 60000 % 60
            s = off // 1000 % 60
            ms = off % 1000
            out.append(tpl % row_fn(i, seed, fid, org, dc, di, h, mi, s, ms))
            if len(out) == self.ROWS_PER_CHUNK:
                yield "".join(out).encode()
                out = []
        if out:
            yield "".join(out).encode()

    def _row_api(self, i, seed, fid, org, dc, di, h, mi, s, ms):
        k = i + seed
        user = _USERS[k % 7]
        query = self.special_query if i % 97 == 96 else "SELECT Id FROM %s LIMIT %d" % (
            _ENTITIES[k % 5], 1 + k % 200)
        return (dc, h, mi, s, ms, fid, i, org, user, 10 + k % 990, k % 333,
                _URIS[k % 5], "sk%08x" % (k // 50), "lk%06x" % (k // 500), "Standard",
                "F" if k % 53 == 0 else "S", 100000 + (k * 7919) % 9000000, "R", "64.0",
                _METHODS[k % 5], _ENTITIES[(k // 3) % 5], k % 2000, 200 + k % 4000,
                1000 + (k * 31) % 50000, _IPS[k % 11], di, h, mi, s, ms, user + "AAA",
                _CLIENTS[k % 4], query)

    def _row_login(self, i, seed, fid, org, dc, di, h, mi, s, ms):
        k = i + seed
        user = _USERS[k % 7]
        name = "jos\u00e9%d@example.com" % (k % 7) if k % 13 == 0 else "user%d@example.com" % (
            k % 7)
        browser = _BROWSERS[k % 4].replace('"', '""')
        return (dc, h, mi, s, ms, fid, i, org, user, 50 + k % 400, k % 90, "/index.jsp",
                "sk%08x" % k, "lk%06x" % k, "Standard", "F" if k % 29 == 0 else "S",
                200000 + (k * 104729) % 5000000, _LOGIN_TYPES[k % 4], browser,
                "" if k % 3 else "R", "64.0" if k % 3 == 0 else "", name, "TLS 1.3",
                "TLS_AES_256_GCM_SHA384", "LOGIN_ERROR_INVALID_PASSWORD" if k % 29 == 0
                else "LOGIN_NO_ERROR", _IPS[k % 11], _IPS[(k + 3) % 11], di, h, mi, s, ms,
                user + "AAA")

    def _row_uri(self, i, seed, fid, org, dc, di, h, mi, s, ms):
        k = i + seed
        user = _USERS[k % 7]
        query = self.special_query if i % 97 == 96 else ""
        return (dc, h, mi, s, ms, fid, i, org, user, 20 + k % 700, k % 120, _PAGES[k % 4],
                "sk%08x" % (k // 20), "lk%06x" % (k // 200), "Standard", "S",
                50000 + (k * 7907) % 900000, _PAGES[(k + 1) % 4], _IPS[k % 11], di, h, mi, s,
                ms, user + "AAA", "001SIM%012d" % (k % 1000), k % 64, k % 40, "one:one",
                query)


class Literal:
    def __init__(self, text):
        self.data = text.encode()

    def length(self):
        return len(self.data)

    def field_names(self):
        try:
            return ",".join(next(csv.reader(io.StringIO(self.data.decode()))))
        except StopIteration:
            return ""

    def chunks(self):
        for i in range(0, len(self.data), CHUNK):
            yield self.data[i:i + CHUNK]


class FileBody:
    """A LogFile served from a file on disk, read per request in FILE_CHUNK pieces, so a
    benchmark's multi-GiB CSV costs the simulator neither memory nor generation time."""

    def __init__(self, path):
        self.path = path
        try:
            self._length = os.path.getsize(path)
        except OSError as exc:
            raise BadRequest(f"path {path!r}: {exc.strerror}") from exc

    def length(self):
        return self._length

    def field_names(self):
        with open(self.path, encoding="utf-8", newline="") as fh:
            try:
                return ",".join(next(csv.reader(fh)))
            except StopIteration:
                return ""

    def chunks(self):
        with open(self.path, "rb") as fh:
            while True:
                data = fh.read(FILE_CHUNK)
                if not data:
                    return
                yield data


class LogFileRef:
    """The LogFile field: a relative URL rendered with the request's API version."""

    def __init__(self, file_id):
        self.file_id = file_id


# --- state ------------------------------------------------------------------------------

class State:
    def __init__(self, opts, base, public_key):
        self.lock = threading.Lock()
        self.opts = opts
        self.base = base
        self.audience = opts.audience or base
        self.public_key = public_key
        self.tokens = set()
        self.token_seq = 0
        self.api_calls = 0
        self.faults = []
        # set by /control/clear_faults and at shutdown: delayed answers and the demo ticker
        # wait on it, so no wait outlives what it was for
        self.wake = threading.Event()
        self.batch_size = DEFAULT_BATCH
        self.cursors = collections.OrderedDict()
        self.cursor_seq = 0
        self.tables = {}
        self.logfiles = {}
        self.elf = self.table("EventLogFile")
        # Tooling API objects, apart from the REST tables: describeGlobal does not list them
        self.tooling = {}
        self.apex_bodies = {}
        self.apexlog = self.tooling_table("ApexLog", {
            "Id": "string", "LogUserId": "string", "LogLength": "number",
            "Operation": "string", "Request": "string", "Status": "string",
            "StartTime": "datetime", "Application": "string",
            "DurationMilliseconds": "number", "Location": "string",
            "LogUser.Username": "string"})
        self.traceflag = self.tooling_table("TraceFlag", {
            "Id": "string", "ExpirationDate": "datetime", "TracedEntityId": "string",
            "LogType": "string"})
        self.clear_stats()

    def tooling_table(self, name, fields):
        t = sf_soql.Table(name)
        for field, typ in fields.items():
            t.declare(field, typ)
        self.tooling[name.lower()] = t
        return t

    def clear_stats(self):
        self.tokens_minted = 0
        self.token_requests = 0
        self.jwt_claims = []
        self.userinfo_calls = 0
        self.requests = []
        self.downloads = {}
        self.download_bytes = {}
        self.apexlog_bodies = {}

    def table(self, name, big_object=None, timestamp_field=None):
        t = self.tables.get(name.lower())
        if t is None:
            t = sf_soql.Table(name)
            t.declare("Id", "string")
            self.tables[name.lower()] = t
        if big_object is not None:
            t.big_object = bool(big_object)
        if timestamp_field is not None:
            t.timestamp_field = timestamp_field
            t.declare(timestamp_field, "datetime")
        return t

    # caller holds the lock
    def add(self, doc):
        if not isinstance(doc, dict):
            raise BadRequest("dataset must be a JSON object")
        for f in doc.get("eventlogfiles", []) or []:
            self.add_logfile(f)
        for log in doc.get("apexlogs", []) or []:
            self.add_apexlog(log)
        for flag in doc.get("traceflags", []) or []:
            if not isinstance(flag, dict) or not flag.get("Id") or \
                    sf_soql.parse_iso(str(flag.get("ExpirationDate", ""))) is None:
                raise BadRequest("traceflags entries need an Id and an ExpirationDate")
            self.traceflag.upsert({k: sf_soql.normalize_value(v) for k, v in flag.items()})
        for name, spec in (doc.get("objects", {}) or {}).items():
            if not re.match(r"^[A-Za-z0-9_]+$", name):
                raise BadRequest(f"bad object name {name!r}")
            spec = spec or {}
            if name.lower() in self.tooling:
                # a Tooling object given as an object: its records, on the Tooling side
                for rec in spec.get("records", []) or []:
                    if not isinstance(rec, dict) or not rec.get("Id"):
                        raise BadRequest(f"{name}: every record needs an Id")
                    self.tooling[name.lower()].upsert(
                        {k: sf_soql.normalize_value(v) for k, v in rec.items()})
                continue
            t = self.table(name, spec.get("big_object", None),
                           spec.get("timestamp_field", None))
            if t.timestamp_field is None:
                t.timestamp_field = "EventDate"
                t.declare("EventDate", "datetime")
            for field in spec.get("fields", []) or []:
                t.declare(field)
            for rec in spec.get("records", []) or []:
                if not isinstance(rec, dict) or not rec.get("Id"):
                    raise BadRequest(f"{name}: every record needs an Id")
                t.upsert({k: sf_soql.normalize_value(v) for k, v in rec.items()
                          if k != "attributes"})

    def add_logfile(self, f):
        if not isinstance(f, dict):
            raise BadRequest("eventlogfiles entries must be objects")
        fid = f.get("Id") or "0ATSIM%012d" % (len(self.logfiles) + 1)
        created = sf_soql.parse_iso(str(f.get("CreatedDate", "")))
        log_date = sf_soql.parse_iso(str(f.get("LogDate", f.get("CreatedDate", ""))))
        if created is None or log_date is None:
            raise BadRequest(f"{fid}: CreatedDate and LogDate must be ISO datetimes")
        interval = f.get("Interval", "Hourly")
        if "csv" in f:
            src = Literal(f["csv"])
        elif "path" in f:
            src = FileBody(str(f["path"]))
        elif "generate" in f:
            g = f["generate"] or {}
            src = Generated(fid, g.get("kind", f.get("EventType", "API")), g.get("rows", 100),
                            g.get("seed", 0), log_date, interval, self.opts.org_id,
                            bool(f.get("crlf", False)))
        else:
            raise BadRequest(f"{fid}: needs csv, generate or path")
        src.content_length = bool(f.get("content_length", "path" in f))
        self.logfiles[fid] = src
        rec = {
            "Id": fid,
            "EventType": f.get("EventType", "API"),
            "Interval": interval,
            "LogDate": log_date,
            "CreatedDate": created,
            "LogFileLength": Lazy(lambda s=src: float(s.length())),
            "Sequence": int(f.get("Sequence", 0)),
            "LogFile": LogFileRef(fid),
            "LogFileContentType": "CSV",
            "LogFileFieldNames": src.field_names(),
            "ApiVersion": float(self.opts.api_version),
            "SystemModstamp": created,
        }
        for k, v in f.items():
            if k not in rec and k not in ("csv", "generate", "path", "crlf", "content_length"):
                rec[k] = sf_soql.normalize_value(v)
        self.elf.upsert(rec)
        self.elf.types["LogFileLength"] = "number"

    def add_apexlog(self, log):
        if not isinstance(log, dict) or not log.get("Id"):
            raise BadRequest("apexlogs entries need an Id")
        lid = str(log["Id"])
        start = sf_soql.parse_iso(str(log.get("StartTime", "")))
        if start is None:
            raise BadRequest(f"{lid}: StartTime must be an ISO datetime")
        body = str(log.get("body", "")).encode()
        self.apex_bodies[lid] = body
        rec = {"Id": lid, "LogUserId": log.get("LogUserId", USER_ID),
               "LogLength": log.get("LogLength", len(body)),
               "Operation": log.get("Operation", "/apex/Test"),
               "Request": log.get("Request", "Application"),
               "Status": log.get("Status", "Success"), "StartTime": start,
               "Application": log.get("Application", "Unknown"),
               "DurationMilliseconds": log.get("DurationMilliseconds", 12),
               "Location": log.get("Location", "SystemLog"),
               "LogUser.Username": log.get("Username", "user0@example.com")}
        self.apexlog.upsert(rec)

    def take_fault(self, category, ident=None):
        for idx, fault in enumerate(self.faults):
            if fault.get("id") is not None and fault["id"] != ident:
                continue
            if fault.get("match", "any") in (category, "any"):
                fault["count"] -= 1
                if fault["count"] <= 0:
                    del self.faults[idx]
                return dict(fault)
        return None

    def mint(self):
        self.token_seq += 1
        tok = "SIM-%d-%s" % (self.token_seq, secrets.token_hex(16))
        self.tokens.add(tok)
        self.tokens_minted += 1
        return tok

    def store_cursor(self, rows, total, version, tooling, big):
        self.cursor_seq += 1
        key = "%012d" % self.cursor_seq
        self.cursors[key] = (rows, total, version, tooling, big)
        while len(self.cursors) > MAX_CURSORS:
            self.cursors.popitem(last=False)
        return key


# --- rendering --------------------------------------------------------------------------

def render_value(field, v, version, tooling):
    if field in ("LogLength", "DurationMilliseconds") and isinstance(v, float) and \
            v.is_integer():
        return int(v)
    if isinstance(v, dt.datetime):
        return sf_soql.format_sf_datetime(v)
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, LogFileRef):
        return f"/services/data/v{version}/sobjects/EventLogFile/{v.file_id}/LogFile"
    if field == "LogFileLength" and isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if field == "Sequence" and isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def render_rows(result, obj_name, version, tooling):
    out = []
    prefix = "/services/data/v%s/%ssobjects/" % (version, "tooling/" if tooling else "")
    for rec, cols in result.rows:
        if result.aggregate:
            doc = {"attributes": {"type": "AggregateResult"}}
        else:
            attrs = {"type": obj_name}
            if rec.get("Id") is not None:
                attrs["url"] = f"{prefix}{obj_name}/{rec['Id']}"
            doc = {"attributes": attrs}
        for f, v in cols:
            doc[f] = render_value(f, v, version, tooling)
        out.append(doc)
    return out


def page(rows, offset, batch, total, version, tooling, cursor):
    chunk = rows[offset:offset + batch]
    doc = {"totalSize": total, "done": offset + batch >= len(rows), "records": chunk}
    if not doc["done"]:
        doc["nextRecordsUrl"] = "/services/data/v%s/%squery/01gSIM%s-%d" % (
            version, "tooling/" if tooling else "", cursor, offset + batch)
    return doc


# --- HTTP -------------------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "salesforce-sim"
    fault = None
    record = None
    api_usage = 0

    def log_message(self, fmt, *args):
        sys.stderr.write("salesforce_sim: " + (fmt % args) + "\n")

    def handle_one_request(self):
        # http.server refuses request lines over 64 KiB with an HTML 414; read more so the
        # Salesforce-like JSON 414 (at 16 KiB) is what clients see.
        try:
            line = self.rfile.readline(READ_LIMIT + 1)
            if not line:
                self.close_connection = True
                return
            if len(line) > READ_LIMIT:
                self.command, self.path, self.request_version = "GET", "/", "HTTP/1.1"
                self.requestline = "<too long>"
                self.close_connection = True
                self.uri_too_long(len(line))
                return
            self.raw_requestline = line
            if not self.parse_request():
                return
            if len(line.rstrip(b"\r\n")) > URI_LIMIT:
                self.read_body()
                self.uri_too_long(len(line.rstrip(b"\r\n")))
                return
            mname = "do_" + self.command
            if not hasattr(self, mname):
                self.send_error(501, "Unsupported method (%r)" % self.command)
                return
            getattr(self, mname)()
            self.wfile.flush()
        except (TimeoutError, ConnectionError, ssl.SSLError) as exc:
            self.log_error("connection: %r", exc)
            self.close_connection = True

    def uri_too_long(self, n):
        self.record = {"method": self.command, "path": "<too long>", "q": None, "status": 414}
        with self.server.state.lock:
            self.server.state.requests.append(self.record)
        self.send_json(414, [{"errorCode": "URI_TOO_LONG",
                              "message": f"The request URI is too long ({n} bytes, limit "
                                         f"{URI_LIMIT})"}], api=False)

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_PATCH(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    # -- plumbing --

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(parts)
        return self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))

    def send_body(self, status, body, ctype, api=True, extra=None):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if api:
            self.send_header("Sforce-Limit-Info", f"api-usage={self.api_usage}/{API_MAX}")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.record is not None:
            self.record["status"] = status
        reset = self.fault.get("reset_after_bytes") if self.fault else None
        if reset is not None:
            self.wfile.write(body[:int(reset)])
            self.abort()
            return
        self.wfile.write(body)

    def send_json(self, status, doc, api=True):
        self.send_body(status, json.dumps(doc), JSON_TYPE, api)

    def sf_error(self, status, code, message):
        self.send_json(status, [{"message": message, "errorCode": code}])

    def abort(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()

    # -- routing --

    def dispatch(self):
        st = self.server.state
        self.fault = None
        self.record = None
        self.api_usage = 0
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        params = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        body = self.read_body()
        if path.startswith("/control/"):
            self.control(path, body)
            return
        q = params.get("q", [None])[0]
        m = None
        rest = ""
        self.record = {"method": self.command, "path": path, "q": q, "status": None}
        with st.lock:
            st.requests.append(self.record)
        if path == "/services/oauth2/token":
            category = "token"
        elif path == "/services/oauth2/userinfo":
            category = "userinfo"
        else:
            m = _VERSION_RE.match(path)
            rest = (m.group(2) or "") if m else ""
            if rest.rstrip("/") == "/limits":
                category = "limits"
            elif re.match(r"^/(tooling/)?(query|queryAll)(/|$)", rest):
                category = "query"
            elif re.match(r"^/sobjects/EventLogFile/[^/]+/LogFile$", rest):
                category = "logfile"
            elif re.match(r"^/(tooling/)?sobjects/ApexLog/[^/]+/Body$", rest):
                category = "apexlog_body"
            elif re.match(r"^/sobjects/[A-Za-z0-9_]+/describe$", rest.rstrip("/")):
                category = "describe"
            else:
                category = "other"
        with st.lock:
            if category != "token":
                st.api_calls += 1
            self.api_usage = st.api_calls
            ident = path.split("/")[-2] if category in ("logfile", "apexlog_body") else None
            fault = st.take_fault(category, ident)
        api = category != "token"
        if fault is not None:
            self.fault = fault
            if fault.get("delay_ms"):
                st.wake.wait(float(fault["delay_ms"]) / 1000.0)
            if fault.get("non_json"):
                self.send_body(int(fault.get("status", 200)), "<html>maintenance</html>",
                               "text/html", api)
                return
            if "body" in fault:
                raw = fault["body"]
                if not isinstance(raw, str):
                    raw = json.dumps(raw)
                self.send_body(int(fault.get("status", 200)), raw,
                               fault.get("content_type", JSON_TYPE), api)
                return
            if "status" in fault or "error_code" in fault or "message" in fault:
                status = int(fault.get("status", 500))
                if category == "token":
                    doc = {"error": fault.get("error_code", "unknown_error"),
                           "error_description": fault.get("message", "injected fault")}
                else:
                    doc = [{"message": fault.get("message", "injected fault"),
                            "errorCode": fault.get("error_code", "UNKNOWN_EXCEPTION")}]
                self.send_body(status, json.dumps(doc), fault.get("content_type", JSON_TYPE),
                               api)
                return
        if category == "token":
            if self.command != "POST":
                self.send_json(405, {"error": "invalid_request",
                                     "error_description": "must use HTTP POST"}, api=False)
                return
            self.token(body)
            return
        auth = self.headers.get("Authorization", "")
        with st.lock:
            ok = auth.startswith("Bearer ") and auth[7:].strip() in st.tokens
        if not ok:
            self.sf_error(401, "INVALID_SESSION_ID", "Session expired or invalid")
            return
        try:
            if category == "userinfo":
                with st.lock:
                    st.userinfo_calls += 1
                self.send_json(200, {"organization_id": st.opts.org_id, "user_id": USER_ID,
                                     "preferred_username": st.opts.username,
                                     "sub": f"{st.base}/id/{st.opts.org_id}/{USER_ID}"})
            elif category == "limits":
                self.send_json(200, {"DailyApiRequests": {"Max": API_MAX,
                                                          "Remaining": API_MAX - self.api_usage}})
            elif category == "query":
                self.query(path, q)
            elif category == "logfile":
                self.logfile(path)
            elif category == "apexlog_body":
                self.apexlog_body(path)
            elif category == "describe":
                self.describe(rest.rstrip("/").split("/")[2])
            elif m and (rest.rstrip("/") == "/sobjects") and self.command == "GET":
                with st.lock:
                    names = [t.name for t in st.tables.values()]
                self.send_json(200, {"encoding": "UTF-8", "maxBatchSize": 200,
                                     "sobjects": [{"name": n, "queryable": True}
                                                  for n in names]})
            else:
                self.sf_error(404, "NOT_FOUND", "The requested resource does not exist")
        except SoqlError as exc:
            self.sf_error(400, exc.code, exc.message)

    def describe(self, name):
        st = self.server.state
        with st.lock:
            table = st.tables.get(name.lower())
            fields = sorted(table.types) if table is not None else None
        if table is None:
            self.sf_error(404, "NOT_FOUND", f"The requested resource does not exist: {name}")
            return
        self.send_json(200, {"name": table.name, "queryable": True, "retrieveable": True,
                             "fields": [{"name": f} for f in fields]})

    # -- OAuth --

    def token(self, body):
        st = self.server.state
        form = urllib.parse.parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
        grant = form.get("grant_type", [""])[0]
        with st.lock:
            st.token_requests += 1
        if grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            why = self.check_assertion(form.get("assertion", [""])[0])
            if why is not None:
                self.send_json(400, {"error": "invalid_grant", "error_description": why},
                               api=False)
                return
        elif grant == "client_credentials":
            cid = form.get("client_id", [None])[0]
            secret = form.get("client_secret", [None])[0]
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Basic "):
                try:
                    pair = base64.b64decode(auth[6:].strip()).decode()
                    bid, _, bsecret = pair.partition(":")
                    cid = urllib.parse.unquote_plus(bid)
                    secret = urllib.parse.unquote_plus(bsecret)
                except (ValueError, UnicodeDecodeError):
                    cid = secret = None
            if cid != st.opts.client_id or secret != st.opts.client_secret:
                self.send_json(400, {"error": "invalid_client",
                                     "error_description": "invalid client credentials"},
                               api=False)
                return
        else:
            self.send_json(400, {"error": "unsupported_grant_type",
                                 "error_description": "grant type not supported"}, api=False)
            return
        with st.lock:
            tok = st.mint()
        self.send_json(200, {"access_token": tok, "instance_url": st.base,
                             "id": f"{st.base}/id/{st.opts.org_id}/{USER_ID}",
                             "token_type": "Bearer", "scope": "api",
                             "issued_at": str(int(time.time() * 1000)), "signature": "x"},
                       api=False)

    def check_assertion(self, assertion):
        import jwt
        st = self.server.state
        try:
            claims = jwt.decode(assertion, options={"verify_signature": False})
        except jwt.PyJWTError:
            claims = None
        with st.lock:
            st.jwt_claims.append(claims)
        if st.public_key is None:
            return "invalid assertion: no certificate registered for this client"
        if claims is None:
            return "invalid assertion: not a JWT"
        try:
            claims = jwt.decode(assertion, key=st.public_key, algorithms=["RS256"],
                                audience=st.audience,
                                options={"require": ["exp", "iss", "sub", "aud"]})
        except jwt.ExpiredSignatureError:
            return "expired authorization code: the assertion has expired"
        except jwt.InvalidAudienceError:
            return "audience is invalid"
        except jwt.PyJWTError as exc:
            return f"invalid assertion: {exc}"
        if claims.get("iss") != st.opts.client_id:
            return "invalid client_id: iss does not name the connected app"
        if claims.get("sub") != st.opts.username:
            return "user hasn't approved this consumer"
        if not isinstance(claims.get("exp"), (int, float)) or \
                claims["exp"] > time.time() + 180 + 5:
            return "invalid assertion: exp is more than 3 minutes in the future"
        return None

    # -- SOQL --

    def query(self, path, q):
        st = self.server.state
        m = _VERSION_RE.match(path)
        version = m.group(1)
        rest = m.group(2)
        tooling = rest.startswith("/tooling/")
        tail = rest.split("/")[-1] if rest.count("/") >= (3 if tooling else 2) else None
        batch = st.batch_size
        opt = re.search(r"batchSize=(\d+)", self.headers.get("Sforce-Query-Options", ""))
        if opt:
            batch = min(batch, max(200, min(2000, int(opt.group(1)))))
        if tail:
            lm = _LOCATOR_RE.match(tail)
            with st.lock:
                entry = st.cursors.get(lm.group(1)) if lm else None
            if entry is None:
                self.sf_error(400, "INVALID_QUERY_LOCATOR", "invalid query locator")
                return
            rows, total, qversion, qtooling, big = entry
            if big:
                self.sf_error(400, "BIG_OBJECT_UNSUPPORTED_OPERATION",
                              "queryMore (nextRecordsUrl) is not supported on big objects")
                return
            offset = int(lm.group(2))
            if offset > len(rows):
                self.sf_error(400, "INVALID_QUERY_LOCATOR", "invalid query locator offset")
                return
            self.send_json(200, page(rows, offset, batch, total, version, tooling,
                                     lm.group(1)))
            return
        if not q:
            self.sf_error(400, "MALFORMED_QUERY", "A query string has to be specified")
            return
        query = sf_soql.parse(q)
        with st.lock:
            tables = dict(st.tables, **st.tooling) if tooling else st.tables
            result = sf_soql.execute(query, tables)
            table = tables[query.obj[0].lower()]
            if result.count is not None:
                doc = {"totalSize": result.count, "done": True, "records": []}
                cursor = None
            else:
                rows = render_rows(result, table.name, version, tooling)
                cursor = st.store_cursor(rows, len(rows), version, tooling, table.big_object) \
                    if len(rows) > batch else None
        if result.count is None:
            doc = page(rows, 0, batch, len(rows), version, tooling, cursor)
        self.send_json(200, doc)

    # -- downloads --

    def apexlog_body(self, path):
        st = self.server.state
        lid = path.split("/")[-2]
        with st.lock:
            body = st.apex_bodies.get(lid)
            st.apexlog_bodies[lid] = st.apexlog_bodies.get(lid, 0) + 1
        if body is None:
            self.sf_error(404, "NOT_FOUND", f"The requested resource does not exist: {lid}")
            return
        self.send_body(200, body, "text/plain;charset=UTF-8")

    def logfile(self, path):
        st = self.server.state
        fid = path.split("/")[-2]
        with st.lock:
            src = st.logfiles.get(fid)
            if src is not None:
                st.downloads[fid] = st.downloads.get(fid, 0) + 1
                st.download_bytes.setdefault(fid, 0)
        if src is None:
            self.sf_error(404, "NOT_FOUND", f"The requested resource does not exist: {fid}")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/csv")
        self.send_header("Sforce-Limit-Info", f"api-usage={self.api_usage}/{API_MAX}")
        chunked = not src.content_length
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(src.length()))
        self.end_headers()
        self.record["status"] = 200
        limit = self.fault.get("reset_after_bytes") if self.fault else None
        limit = int(limit) if limit is not None else None
        sent = 0
        try:
            for chunk in src.chunks():
                if limit is not None and sent + len(chunk) > limit:
                    chunk = chunk[:limit - sent]
                if chunk:
                    # counted before it is sent: a client that has the bytes sees them counted
                    with st.lock:
                        st.download_bytes[fid] += len(chunk)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
                    sent += len(chunk)
                if limit is not None and sent >= limit:
                    self.abort()
                    return
            if limit is not None:
                self.abort()
                return
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except (ConnectionError, ssl.SSLError) as exc:
            self.log_error("download %s aborted by the client after %d bytes: %r", fid, sent,
                           exc)
            self.close_connection = True

    # -- control --

    def control(self, path, body):
        st = self.server.state
        try:
            doc = json.loads(body) if body.strip() else {}
        except ValueError as exc:
            self.send_body(400, json.dumps({"error": f"bad JSON: {exc}"}), JSON_TYPE, False)
            return
        if self.command == "GET" and path == "/control/stats":
            with st.lock:
                out = {"tokens_minted": st.tokens_minted, "token_requests": st.token_requests,
                       "jwt_claims": st.jwt_claims, "userinfo_calls": st.userinfo_calls,
                       "api_calls": st.api_calls, "requests": st.requests,
                       "downloads": st.downloads, "download_bytes": st.download_bytes,
                       "apexlog_bodies": st.apexlog_bodies}
                text = json.dumps(out)
            self.send_body(200, text, JSON_TYPE, False)
            return
        if self.command == "GET" and path == "/control/faults":
            with st.lock:
                text = json.dumps({"faults": st.faults})
            self.send_body(200, text, JSON_TYPE, False)
            return
        if self.command != "POST":
            self.send_body(404, json.dumps({"error": "not found"}), JSON_TYPE, False)
            return
        out = {"ok": True}
        try:
            with st.lock:
                if path == "/control/fault":
                    if not isinstance(doc, dict):
                        raise BadRequest("fault must be an object")
                    fault = dict(doc)
                    fault.setdefault("match", "any")
                    if fault["match"] not in ("token", "userinfo", "query", "logfile",
                                              "apexlog_body", "limits", "describe", "any"):
                        raise BadRequest(f"unknown match {fault['match']!r}")
                    fault["count"] = int(fault.get("count", 1))
                    if fault["count"] > 0:
                        st.faults.append(fault)
                    out["pending"] = len(st.faults)
                elif path == "/control/expire_tokens":
                    out = {"expired": len(st.tokens)}
                    st.tokens.clear()
                elif path == "/control/add":
                    st.add(doc)
                elif path == "/control/batch_size":
                    size = int(doc.get("size", DEFAULT_BATCH))
                    if size < 1:
                        raise BadRequest("size must be positive")
                    st.batch_size = size
                    out["size"] = size
                elif path == "/control/clear_stats":
                    st.clear_stats()
                elif path == "/control/clear_faults":
                    st.faults.clear()
                    # release answers held by a delay fault now; later ones wait again
                    st.wake.set()
                    st.wake = threading.Event()
                else:
                    self.send_body(404, json.dumps({"error": "not found"}), JSON_TYPE, False)
                    return
        except (BadRequest, ValueError, TypeError) as exc:
            self.send_body(400, json.dumps({"error": str(exc)}), JSON_TYPE, False)
            return
        self.send_body(200, json.dumps(out), JSON_TYPE, False)


class Server(sim_tls.TlsThreadingHTTPServer):
    sim_name = "salesforce_sim"


# --- demo -------------------------------------------------------------------------------

def demo_dataset(now):
    hour = now.replace(minute=0, second=0, microsecond=0)
    files = []
    for t, (etype, code) in enumerate((("Login", 1), ("API", 2), ("URI", 3))):
        for k in range(3):
            created = now - dt.timedelta(hours=3 - k) + dt.timedelta(minutes=7 * t + k)
            fid = "0ATSIM%d%011d" % (code, k + 1)
            files.append({"Id": fid, "EventType": etype, "Interval": "Hourly",
                          "LogDate": iso_z(hour - dt.timedelta(hours=6 - k)),
                          "CreatedDate": iso_z(created), "Sequence": 0,
                          "generate": {"rows": 500 + (code * 389 + k * 601) % 1501,
                                       "kind": etype, "seed": code * 10 + k}})
    login_events = [login_event(now - dt.timedelta(minutes=50) + dt.timedelta(seconds=15 * i), i)
                    for i in range(200)]
    anomalies = []
    for i in range(50):
        when = now - dt.timedelta(minutes=120) + dt.timedelta(seconds=144 * i)
        anomalies.append({"Id": "0ApSIM%012d" % (i + 1), "EventDate": iso_z(when),
                          "CreatedDate": iso_z(when), "EventIdentifier": "evt-%06d" % i,
                          "Username": "user%d@example.com" % (i % 7),
                          "UserId": _USERS[i % 7] + "AAA", "SourceIp": _IPS[i % 11],
                          "Score": round(0.5 + (i % 50) / 100.0, 2),
                          "Operation": "dataExport", "QueriedEntities": "Account, Contact",
                          "RowsProcessed": 1000 * (i + 1), "PolicyOutcome": "Notified",
                          "Summary": "Unusual data volume, \"%d\" rows" % (1000 * (i + 1))})
    return {"eventlogfiles": files,
            "objects": {"LoginEvent": {"big_object": False, "timestamp_field": "EventDate",
                                       "records": login_events},
                        "ApiAnomalyEventStore": {"big_object": False,
                                                 "timestamp_field": "EventDate",
                                                 "records": anomalies}}}


def login_event(when, n):
    return {"Id": "0LdSIM%012d" % (n + 1), "EventDate": iso_z(when),
            "Username": "user%d@example.com" % (n % 7), "SourceIp": _IPS[n % 11],
            "LoginType": _LOGIN_TYPES[n % 4], "Status": "Success" if n % 17 else "Failed",
            "Application": "Browser" if n % 3 else "sf2loki", "Browser": "Chrome 126",
            "Platform": "Linux", "LoginUrl": "login.salesforce.com"}


def demo_live(state, period):
    n = 10000
    tick = 0
    stop = threading.Event()
    state.demo_stop = stop
    while not stop.wait(period):
        tick += 1
        now = now_utc()
        recs = []
        for _ in range(1 + tick % 3):
            n += 1
            recs.append(login_event(now, n))
        doc = {"objects": {"LoginEvent": {"records": recs}}}
        if tick % 10 == 0:
            log_date = now.replace(minute=0, second=0, microsecond=0) - dt.timedelta(hours=3)
            with state.lock:
                seq = sum(1 for r in state.elf.records
                          if r["EventType"] == "API" and r["LogDate"] == log_date)
            doc["eventlogfiles"] = [{
                "Id": "0ATSIM9%011d" % tick, "EventType": "API", "Interval": "Hourly",
                "LogDate": iso_z(log_date), "CreatedDate": iso_z(now - dt.timedelta(minutes=6)),
                "Sequence": seq, "generate": {"rows": 50, "kind": "API", "seed": tick}}]
        with state.lock:
            state.add(doc)


# --- main -------------------------------------------------------------------------------

def load_public_key(path):
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    with open(path, "rb") as fh:
        data = fh.read()
    if b"BEGIN CERTIFICATE" in data:
        return x509.load_pem_x509_certificate(data).public_key()
    return serialization.load_pem_public_key(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset")
    ap.add_argument("--demo", action="store_true")
    ap.add_argument("--demo-live", type=float)
    ap.add_argument("--public-key")
    ap.add_argument("--client-id", default="sim-client-id")
    ap.add_argument("--username", default="sim@example.com")
    ap.add_argument("--client-secret", default="sim-secret")
    ap.add_argument("--org-id", default="00DSIM0000000001AA")
    ap.add_argument("--api-version", default="64.0")
    ap.add_argument("--audience")
    ap.add_argument("--tls")
    opts = ap.parse_args()
    for module in ("jwt", "cryptography"):  # python3-jwt, python3-cryptography
        if importlib.util.find_spec(module) is None:
            print(f"python module missing: {module}", file=sys.stderr)
            sys.exit(SKIP)
    public_key = load_public_key(opts.public_key) if opts.public_key else None
    server = Server(("127.0.0.1", 0), Handler)
    scheme = "http"
    if opts.tls:
        server.ssl_context = sim_tls.make_tls(opts.tls)
        scheme = "https"
    base = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    state = State(opts, base, public_key)
    server.state = state
    try:
        with state.lock:
            if opts.demo:
                state.add(demo_dataset(now_utc()))
            if opts.dataset:
                with open(opts.dataset, encoding="utf-8") as fh:
                    state.add(json.load(fh))
    except (BadRequest, ValueError, OSError) as exc:
        print(f"salesforce_sim: bad dataset: {exc}", file=sys.stderr)
        sys.exit(2)
    if opts.demo_live:
        threading.Thread(target=demo_live, args=(state, opts.demo_live), daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        state.wake.set()
        if getattr(state, "demo_stop", None) is not None:
            state.demo_stop.set()


if __name__ == "__main__":
    main()
