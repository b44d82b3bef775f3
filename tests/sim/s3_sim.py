#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for S3 object PUT/GET/HEAD/DELETE with conditional writes
(docs/internals/wire-notes.md, "S3").

usage: s3_sim.py [--access-key AK] [--secret-key SK] [--session-token T] [--region R]
                 [--variant aws|ceph|minio-old|no-conditional] [--page-size N]

One plain-HTTP listener on 127.0.0.1 (ephemeral port, printed as "PORT <n>"), path-style
/<bucket>/<key> for the API and /control/... for the test. Every API request must carry a
SigV4 signature that python3-botocore recomputes from the request as received (S3SigV4Auth,
the signed headers only); a mismatch, a wrong key id or region, a payload hash that is not the
body's, a missing session token, or a clock skew beyond 15 minutes answers 403 like S3.

GET /<bucket>?list-type=2&prefix=P[&continuation-token=T] lists (ListObjectsV2, at most
--page-size keys a page, ETags XML-escaped with &quot; as S3 writes them).

ETags are the quoted hex MD5 of the body. Conditional writes answer as AWS does: If-None-Match:
* on an existing key 412 PreconditionFailed; If-Match with another ETag 412; If-Match on a
missing key 404 NoSuchKey. Variants: ceph answers 412 for the latter; minio-old creates the
object anyway and answers 304 to If-None-Match on an existing key; no-conditional answers 501
NotImplemented to any conditional header.

Control (JSON bodies):
  GET  /control/state[?since=N]
                         {"objects": {"bucket/key": {"body", "etag"}}, "writes": [{method,
                          key, ifMatch, ifNoneMatch, status, body}] (from the Nth on; body is
                          what a successful PUT stored), "writes_total": n, "requests": n,
                          "auth_failures": n}
  POST /control/object   {"bucket", "key", "body"}: store an object directly ("body": null
                          deletes it); not listed in writes
  POST /control/fault    {"action": "status"|"reset"|"drop"|"truncate"|"hold", "status": 500,
                          "code": "InternalError", "count": 1, "methods": ["PUT"],
                          "keys": ["bucket/key"]}: the next
                          matching API requests get that status without touching the object;
                          are reset before any answer; are applied and then reset (a lost
                          response); get half their body and a reset; or are held without an
                          answer until /control/release
  POST /control/release  answers every held request with 503
  POST /control/race     {"body": "..."}: right before the next conditional PUT, another
                          writer replaces the object, so that PUT meets a real conflict
  POST /control/clear    drops faults, holds and races

Exit 77 when python3-botocore is missing.
"""

import argparse
import datetime
import hashlib
import json
import socket
import struct
import sys
import threading
import urllib.parse
import xml.sax.saxutils
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SKIP = 77
QUOT = {'"': "&quot;"}


class State:
    def __init__(self, opts):
        self.lock = threading.Condition()
        self.opts = opts
        self.objects = {}  # "bucket/key" -> (bytes, etag)
        self.writes = []
        self.requests = 0
        self.auth_failures = 0
        self.faults = []  # dicts with a remaining "count"
        self.release_gen = 0
        self.held = 0
        self.race = None
        self.stopping = False


def error_xml(code, message, extra=""):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
            f"<Message>{message}</Message>{extra}<RequestId>sim</RequestId></Error>").encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body=b"", headers=None, content_type="application/xml",
             head=False):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if body or status not in (204, 304):
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and not head:
            self.wfile.write(body)

    def fail(self, status, code, message, extra="", head=False):
        self.send(status, error_xml(code, message, extra), head=head)

    def reset(self):
        # an RST instead of an answer: SO_LINGER 0, then close
        try:
            self.wfile.flush()
        except OSError:
            pass
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    # --- SigV4, recomputed by botocore ---------------------------------------------------------

    def verify_signature(self, body):
        from botocore.auth import S3SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        opts = self.server.state.opts
        auth = self.headers.get("Authorization") or ""
        if not auth.startswith("AWS4-HMAC-SHA256 "):
            return "AccessDenied", "the request is not signed with SigV4"
        fields = {}
        for part in auth[len("AWS4-HMAC-SHA256 "):].split(","):
            name, _, value = part.strip().partition("=")
            fields[name] = value
        scope = fields.get("Credential", "").split("/")
        if len(scope) != 5 or scope[4] != "aws4_request" or scope[3] != "s3":
            return "AuthorizationHeaderMalformed", "bad credential scope"
        if scope[0] != opts.access_key:
            return "InvalidAccessKeyId", "the AWS access key id does not exist"
        if scope[2] != opts.region:
            return "AuthorizationHeaderMalformed", f"the region '{scope[2]}' is wrong; " \
                f"expecting '{opts.region}'"
        amz_date = self.headers.get("x-amz-date") or ""
        try:
            when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(
                tzinfo=datetime.timezone.utc)
        except ValueError:
            return "AccessDenied", "x-amz-date missing or malformed"
        if scope[1] != amz_date[:8]:
            return "SignatureDoesNotMatch", "the scope date is not the request date"
        skew = abs((datetime.datetime.now(datetime.timezone.utc) - when).total_seconds())
        if skew > 15 * 60:
            return "RequestTimeTooSkewed", "the difference between the request time and the " \
                "current time is too large"
        signed = fields.get("SignedHeaders", "").split(";")
        for needed in ("host", "x-amz-date", "x-amz-content-sha256"):
            if needed not in signed:
                return "AccessDenied", f"{needed} is not signed"
        declared = self.headers.get("x-amz-content-sha256")
        if declared != "UNSIGNED-PAYLOAD" and declared != hashlib.sha256(body).hexdigest():
            return "XAmzContentSHA256Mismatch", "the provided x-amz-content-sha256 header " \
                "does not match what was computed"
        token = self.headers.get("x-amz-security-token")
        if opts.session_token and (token != opts.session_token or
                                   "x-amz-security-token" not in signed):
            return "InvalidToken", "the provided token is malformed or otherwise invalid"
        headers = {}
        for name in signed:
            value = self.headers.get(name)
            if value is None:
                return "AccessDenied", f"signed header {name} is missing"
            headers[name] = value
        request = AWSRequest(method=self.command, url=f"http://{headers['host']}{self.path}",
                             headers=headers, data=body)
        request.context["timestamp"] = amz_date
        signer = S3SigV4Auth(Credentials(opts.access_key, opts.secret_key, token), "s3",
                             opts.region)
        canonical = signer.canonical_request(request)
        expected = signer.signature(signer.string_to_sign(request, canonical), request)
        if expected != fields.get("Signature"):
            return "SignatureDoesNotMatch", "the request signature we calculated does not " \
                "match the signature you provided"
        return None

    # --- the API -----------------------------------------------------------------------------

    def take_fault(self, st):
        key = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        for fault in st.faults:
            methods = fault.get("methods") or []
            keys = fault.get("keys") or []
            if fault["count"] > 0 and (not methods or self.command in methods) and \
                    (not keys or key in keys):
                fault["count"] -= 1
                return fault
        return None

    def record(self, st, key, status, body=None):
        st.writes.append({"method": self.command, "key": key,
                          "ifMatch": self.headers.get("If-Match"),
                          "ifNoneMatch": self.headers.get("If-None-Match"), "status": status,
                          "body": body.decode("utf-8", "replace") if body is not None else None})

    def handle_api(self):
        st = self.server.state
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        url = urllib.parse.urlsplit(self.path)
        head = self.command == "HEAD"
        with st.lock:
            st.requests += 1
            bad = self.verify_signature(body)
            if bad is not None:
                st.auth_failures += 1
                code, message = bad
                return self.fail(403, code, message, head=head)
            fault = self.take_fault(st)
            action = fault.get("action", "status") if fault else None
            if action == "hold":
                gen = st.release_gen
                st.held += 1
                while st.release_gen == gen and not st.stopping:
                    st.lock.wait()
                st.held -= 1
                return self.fail(503, "SlowDown", "the simulator held this request", head=head)
            if action == "reset":
                return self.reset()
            if action == "status":
                status = int(fault.get("status", 500))
                return self.fail(status, fault.get("code", "InternalError"),
                                 f"injected status {status}", head=head)
            path = urllib.parse.unquote(url.path)
            parts = path.lstrip("/").split("/", 1)
            if self.command == "GET" and parts[0] and (len(parts) == 1 or not parts[1]):
                return self.list_objects(st, parts[0], urllib.parse.parse_qs(url.query))
            if len(parts) != 2 or not parts[0] or not parts[1]:
                return self.fail(400, "InvalidRequest", "path-style /<bucket>/<key> only",
                                 head=head)
            key = f"{parts[0]}/{parts[1]}"
            if self.command in ("GET", "HEAD"):
                obj = st.objects.get(key)
                if obj is None:
                    return self.fail(404, "NoSuchKey", "The specified key does not exist.",
                                     head=head)
                if action == "truncate":
                    self.send_response(200)
                    self.send_header("ETag", obj[1])
                    self.send_header("Content-Length", str(len(obj[0])))
                    self.end_headers()
                    self.wfile.write(obj[0][:len(obj[0]) // 2])
                    return self.reset()
                return self.send(200, obj[0], {"ETag": obj[1]},
                                 content_type="application/octet-stream", head=head)
            if self.command == "PUT":
                return self.put(st, key, body, action)
            if self.command == "DELETE":
                return self.delete(st, key, action)
            return self.fail(405, "MethodNotAllowed", "not supported here")

    def list_objects(self, st, bucket, query):
        # ListObjectsV2 (docs/internals/wire-notes.md, "Listing"): keys in UTF-8 binary order,
        # at most max-keys (and --page-size) a page, the next page named by an opaque token
        if query.get("list-type") != ["2"]:
            return self.fail(400, "InvalidRequest", "only ListObjectsV2 (list-type=2) here")
        prefix = query.get("prefix", [""])[0]
        limit = min(int(query.get("max-keys", ["1000"])[0]), st.opts.page_size)
        after = ""
        token = query.get("continuation-token", [None])[0]
        if token is not None:
            try:
                after = bytes.fromhex(token).decode()
            except ValueError:
                return self.fail(400, "InvalidArgument", "The continuation token provided "
                                 "is incorrect")
        keys = sorted((k.split("/", 1)[1] for k in st.objects if k.startswith(bucket + "/")),
                      key=lambda k: k.encode())
        keys = [k for k in keys if k.startswith(prefix) and k.encode() > after.encode()]
        page, rest = keys[:limit], keys[limit:]
        st.lists = getattr(st, "lists", 0) + 1
        esc = xml.sax.saxutils.escape
        out = ['<?xml version="1.0" encoding="UTF-8"?>\n'
               '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">',
               f"<Name>{esc(bucket)}</Name><Prefix>{esc(prefix)}</Prefix>",
               f"<KeyCount>{len(page)}</KeyCount><MaxKeys>{limit}</MaxKeys>",
               f"<IsTruncated>{'true' if rest else 'false'}</IsTruncated>"]
        if token is not None:
            out.append(f"<ContinuationToken>{esc(token)}</ContinuationToken>")
        if rest:
            out.append(f"<NextContinuationToken>{page[-1].encode().hex()}"
                       "</NextContinuationToken>")
        for k in page:
            body, etag = st.objects[f"{bucket}/{k}"]
            etag = esc(etag, QUOT)
            out.append(f"<Contents><Key>{esc(k)}</Key><LastModified>2026-01-01T00:00:00.000Z"
                       f"</LastModified><ETag>{etag}</ETag>"
                       f"<Size>{len(body)}</Size><StorageClass>STANDARD</StorageClass>"
                       "</Contents>")
        out.append("</ListBucketResult>")
        return self.send(200, "".join(out).encode())

    def precondition(self, st, key):
        """None when the write may proceed, else (status, code, message, condition)"""
        variant = st.opts.variant
        if_match = self.headers.get("If-Match")
        if_none = self.headers.get("If-None-Match")
        if (if_match or if_none) and variant == "no-conditional":
            return (501, "NotImplemented", "A header you provided implies functionality that "
                    "is not implemented", "")
        current = st.objects.get(key)
        if if_none is not None:
            if if_none != "*":
                return (400, "InvalidArgument", "If-None-Match only accepts *", "")
            if current is not None:
                if variant == "minio-old":
                    return (304, None, None, None)
                return (412, "PreconditionFailed", "At least one of the pre-conditions you "
                        "specified did not hold", "If-None-Match")
        if if_match is not None:
            if current is None:
                if variant == "minio-old":
                    return None
                if variant == "ceph":
                    return (412, "PreconditionFailed", "At least one of the pre-conditions "
                            "you specified did not hold", "If-Match")
                return (404, "NoSuchKey", "The specified key does not exist.", "")
            if current[1] != if_match:
                return (412, "PreconditionFailed", "At least one of the pre-conditions you "
                        "specified did not hold", "If-Match")
        return None

    def put(self, st, key, body, action):
        conditional = self.headers.get("If-Match") or self.headers.get("If-None-Match")
        if st.race is not None and conditional:
            race_body = st.race
            data = st.race.encode()
            st.race = None
            st.objects[key] = (data, f'"{hashlib.md5(data).hexdigest()}"')
            st.writes.append({"method": "PUT", "key": key, "ifMatch": None,
                              "ifNoneMatch": None, "status": 200, "intruder": True,
                              "body": race_body})
        bad = self.precondition(st, key)
        if bad is not None:
            status, code, message, condition = bad
            self.record(st, key, status)
            if status == 304:
                return self.send(304)
            extra = f"<Condition>{condition}</Condition>" if condition else ""
            return self.fail(status, code, message, extra)
        etag = f'"{hashlib.md5(body).hexdigest()}"'
        st.objects[key] = (body, etag)
        self.record(st, key, 200, body)
        if action == "drop":
            return self.reset()
        return self.send(200, b"", {"ETag": etag})

    def delete(self, st, key, action):
        if_match = self.headers.get("If-Match")
        current = st.objects.get(key)
        if if_match is not None and current is not None and current[1] != if_match:
            self.record(st, key, 412)
            return self.fail(412, "PreconditionFailed", "At least one of the pre-conditions "
                             "you specified did not hold", "<Condition>If-Match</Condition>")
        st.objects.pop(key, None)
        self.record(st, key, 204)
        if action == "drop":
            return self.reset()
        return self.send(204)

    # --- control -------------------------------------------------------------------------------

    def reply(self, obj, code=200):
        self.send(code, json.dumps(obj).encode(), content_type="application/json")

    def control_get(self):
        st = self.server.state
        url = urllib.parse.urlsplit(self.path)
        if url.path != "/control/state":
            return self.reply({"error": "unknown"}, 404)
        since = int(urllib.parse.parse_qs(url.query).get("since", ["0"])[0])
        with st.lock:
            objects = {k: {"body": v[0].decode("utf-8", "replace"), "etag": v[1]}
                       for k, v in st.objects.items()}
            return self.reply({"objects": objects, "writes": st.writes[since:],
                               "writes_total": len(st.writes), "requests": st.requests, "auth_failures": st.auth_failures,
                               "held": st.held})

    def control_post(self):
        st = self.server.state
        n = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            return self.reply({"error": "bad json"}, 400)
        with st.lock:
            if self.path == "/control/fault":
                fault = dict(body)
                fault["count"] = int(body.get("count", 1))
                st.faults.append(fault)
            elif self.path == "/control/object":
                key = f"{body['bucket']}/{body['key']}"
                if body.get("body") is None:
                    st.objects.pop(key, None)
                else:
                    data = body["body"].encode()
                    st.objects[key] = (data, f'"{hashlib.md5(data).hexdigest()}"')
            elif self.path == "/control/release":
                st.faults = [f for f in st.faults if f.get("action") != "hold"]
                st.release_gen += 1
                st.lock.notify_all()
            elif self.path == "/control/race":
                st.race = body.get("body", "{}")
            elif self.path == "/control/clear":
                st.faults = []
                st.race = None
                st.release_gen += 1
                st.lock.notify_all()
            else:
                return self.reply({"error": "unknown"}, 404)
        return self.reply({"ok": True})

    def do_GET(self):
        if self.path.startswith("/control/"):
            return self.control_get()
        return self.handle_api()

    def do_POST(self):
        if self.path.startswith("/control/"):
            return self.control_post()
        return self.fail(405, "MethodNotAllowed", "not supported here")

    def do_PUT(self):
        self.handle_api()

    def do_HEAD(self):
        self.handle_api()

    def do_DELETE(self):
        self.handle_api()


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # resets are scripted; a client that went away is not the simulator's problem
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--access-key", default="AKIDSIMULATOR")
    ap.add_argument("--secret-key", default="sim/secret+key")
    ap.add_argument("--session-token", default="")
    ap.add_argument("--region", default="us-east-1")
    ap.add_argument("--variant", default="aws",
                    choices=["aws", "ceph", "minio-old", "no-conditional"])
    ap.add_argument("--page-size", type=int, default=1000,
                    help="at most this many keys a ListObjectsV2 page")
    opts = ap.parse_args()
    try:
        import botocore.auth  # noqa: F401
    except ImportError as exc:
        print(f"python3-botocore missing: {exc}", file=sys.stderr)
        sys.exit(SKIP)
    server = Server(("127.0.0.1", 0), Handler)
    server.state = State(opts)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        with server.state.lock:
            server.state.stopping = True
            server.state.lock.notify_all()


if __name__ == "__main__":
    main()
