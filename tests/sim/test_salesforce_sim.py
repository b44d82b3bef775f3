#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""Self-test of salesforce_sim.py: starts it as a subprocess and drives it over HTTP.

usage: test_salesforce_sim.py [unittest options]

Exit 77 (skip) when python3-jwt or python3-cryptography is missing.
"""

import base64
import csv
import http.client
import io
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

try:
    import jwt
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
except ImportError as exc:
    print(f"python module missing: {exc}", file=sys.stderr)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
SIM = os.path.join(HERE, "salesforce_sim.py")
PYTHON = "/usr/bin/python3"
V = "/services/data/v64.0"

Q_LIST = ("SELECT Id,EventType,Interval,LogDate,CreatedDate,LogFileLength,Sequence FROM "
          "EventLogFile WHERE EventType='Login' AND Interval='Hourly' AND CreatedDate >= "
          "2026-11-30T01:00:00.000Z ORDER BY CreatedDate, Id LIMIT 1000")
Q_GROUP = "SELECT EventType FROM EventLogFile WHERE Interval='Hourly' GROUP BY EventType"
Q_ASC = ("SELECT FIELDS(ALL) FROM LoginEvent WHERE EventDate >= 2026-11-30T01:00:00.000Z "
         "ORDER BY EventDate ASC, Id ASC LIMIT 200")
Q_CURSOR = ("SELECT FIELDS(ALL) FROM LoginEvent WHERE (EventDate > 2026-11-30T01:00:00.000Z OR "
            "(EventDate = 2026-11-30T01:00:00.000Z AND Id > '0Ld000000000001')) "
            "ORDER BY EventDate ASC, Id ASC LIMIT 200")
Q_RANGE = ("SELECT FIELDS(ALL) FROM LoginEvent WHERE EventDate >= 2026-11-30T01:00:00.000Z AND "
           "EventDate <= 2026-11-30T02:00:00.000Z ORDER BY EventDate ASC, Id ASC LIMIT 200")
Q_BIG_TIE = ("SELECT FIELDS(ALL) FROM MyBig__b WHERE EventDate >= 2026-11-30T01:00:00.000Z AND "
             "EventDate = 2026-11-30T01:30:00.000Z AND Id NOT IN ('a', 'b') "
             "ORDER BY EventDate DESC LIMIT 200")
Q_BIG_UPPER = ("SELECT FIELDS(ALL) FROM MyBig__b WHERE EventDate >= 2026-11-30T01:00:00.000Z AND "
               "EventDate < 2026-11-30T01:30:00.000Z ORDER BY EventDate DESC LIMIT 200")

GEN_ROWS = 20000


def elf(fid, etype, interval, created, **extra):
    doc = {"Id": fid, "EventType": etype, "Interval": interval,
           "LogDate": "2026-11-30T00:00:00Z", "CreatedDate": created, "Sequence": 0,
           "csv": '"EVENT_TYPE","REQUEST_ID"\n"%s","%s-0"\n' % (etype, fid)}
    doc.update(extra)
    return doc


DATASET = {
    "eventlogfiles": [
        elf("0ATSIM000000000007", "Login", "Hourly", "2026-11-30T00:59:59Z"),
        elf("0ATSIM000000000002", "Login", "Hourly", "2026-11-30T01:00:00.000+0000",
            Sequence=1),
        elf("0ATSIM000000000003", "Login", "Hourly", "2026-11-30T01:00:00Z"),
        elf("0ATSIM000000000001", "Login", "Hourly", "2026-11-30T02:30:00+01:00"),
        elf("0ATSIM000000000005", "Login", "Daily", "2026-11-30T03:00:00Z"),
        elf("0ATSIM000000000008", "ApexCallout", "Daily", "2026-11-30T03:00:00Z"),
        elf("0ATSIM000000000009", "URI", "Hourly", "2026-11-30T03:00:00Z"),
        {"Id": "0ATSIM000000000006", "EventType": "API", "Interval": "Hourly",
         "LogDate": "2026-11-30T01:00:00Z", "CreatedDate": "2026-11-30T04:00:00Z",
         "Sequence": 0, "generate": {"rows": GEN_ROWS, "kind": "API", "seed": 5}},
        {"Id": "0ATSIM00000000000L", "EventType": "API", "Interval": "Hourly",
         "LogDate": "2026-11-30T01:00:00Z", "CreatedDate": "2026-11-30T04:00:00Z",
         "Sequence": 1, "content_length": True,
         "generate": {"rows": 300, "kind": "Login", "seed": 1}},
    ],
    "objects": {
        "LoginEvent": {"big_object": False, "timestamp_field": "EventDate", "records": [
            {"Id": "0Ld000000000001", "EventDate": "2026-11-30T01:00:00Z", "Username": "u1"},
            {"Id": "0Ld000000000002", "EventDate": "2026-11-30T01:00:00Z", "Username": "u2"},
            {"Id": "0Ld000000000000", "EventDate": "2026-11-30T01:00:00.000+0000",
             "Username": "u0"},
            {"Id": "0Ld000000000004", "EventDate": "2026-11-30T01:30:00Z", "Username": "u4"},
            {"Id": "0Ld000000000005", "EventDate": "2026-11-30T02:00:00Z", "Username": "u5"},
            {"Id": "0Ld000000000006", "EventDate": "2026-11-30T02:00:00.001Z",
             "Username": "it's \\ \"odd\""},
            {"Id": "0Ld000000000007", "EventDate": "2026-11-30T00:59:59.999Z", "Username": "u7"},
        ]},
        "MyBig__b": {"big_object": True, "timestamp_field": "EventDate", "records": [
            {"Id": "a", "EventDate": "2026-11-30T01:30:00Z", "Score": 1},
            {"Id": "b", "EventDate": "2026-11-30T01:30:00Z", "Score": 2},
            {"Id": "c", "EventDate": "2026-11-30T01:30:00Z", "Score": 3},
            {"Id": "d", "EventDate": "2026-11-30T01:10:00Z", "Score": 4},
            {"Id": "e", "EventDate": "2026-11-30T00:30:00Z", "Score": 5},
            {"Id": "f", "EventDate": "2026-11-30T01:45:00Z", "Score": 6},
            {"Id": "g", "EventDate": "2026-11-30T01:20:00Z", "Score": 7.5},
        ]},
    },
}


def new_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_pem(key):
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)


def cert_pem(key):
    import datetime as dt
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "sim")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(1)
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1)).sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM)


class Sim:
    def __init__(self, args, cafile=None):
        self.proc = subprocess.Popen([PYTHON, SIM] + args, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        line = self.proc.stdout.readline().decode()
        if not line.startswith("PORT "):
            rc = self.proc.wait()
            if rc == 77:
                raise unittest.SkipTest("salesforce_sim.py skipped (module missing)")
            raise RuntimeError(f"simulator did not start (exit {rc})")
        self.port = int(line.split()[1])
        self.cafile = cafile
        scheme = "https" if cafile else "http"
        self.base = f"{scheme}://127.0.0.1:{self.port}"

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()

    def call(self, method, path, body=None, headers=None, token=None):
        hdrs = dict(headers or {})
        if token is not None:
            hdrs["Authorization"] = "Bearer " + token
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        elif isinstance(body, str):
            body = body.encode()
        req = urllib.request.Request(self.base + path, data=body, headers=hdrs, method=method)
        ctx = ssl.create_default_context(cafile=self.cafile) if self.cafile else None
        try:
            with urllib.request.urlopen(req, timeout=60, context=ctx) as resp:
                return resp.status, resp.headers, resp.read()
        except urllib.error.HTTPError as err:
            with err:
                return err.code, err.headers, err.read()

    def control(self, path, doc=None, method="POST"):
        status, _, body = self.call(method, path, doc if doc is not None else {})
        assert status == 200, (path, status, body)
        return json.loads(body)

    def token_form(self, form, headers=None):
        hdrs = {"Content-Type": "application/x-www-form-urlencoded"}
        hdrs.update(headers or {})
        status, _, body = self.call("POST", "/services/oauth2/token",
                                    urllib.parse.urlencode(form), hdrs)
        return status, json.loads(body)

    def jwt_token(self, key, **claims):
        doc = {"iss": "sim-client-id", "sub": "sim@example.com", "aud": self.base,
               "exp": int(time.time()) + 180}
        doc.update(claims)
        assertion = jwt.encode({k: v for k, v in doc.items() if v is not None}, key,
                               algorithm="RS256")
        return self.token_form({"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
                                "assertion": assertion})

    def cc_token(self):
        status, doc = self.token_form({"grant_type": "client_credentials",
                                       "client_id": "sim-client-id",
                                       "client_secret": "sim-secret"})
        assert status == 200, doc
        return doc["access_token"]

    def query(self, soql, token, tooling=False):
        path = f"{V}/{'tooling/' if tooling else ''}query?q=" + urllib.parse.quote(soql)
        status, headers, body = self.call("GET", path, token=token)
        return status, json.loads(body)


class SalesforceSimTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sf-sim-test-")
        cls.key = new_key()
        pub = os.path.join(cls.tmp, "pub.pem")
        with open(pub, "wb") as fh:
            fh.write(public_pem(cls.key))
        dataset = os.path.join(cls.tmp, "dataset.json")
        with open(dataset, "w") as fh:
            json.dump(DATASET, fh)
        cls.sim = Sim(["--public-key", pub, "--dataset", dataset])

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.sim.control("/control/clear_faults")
        self.sim.control("/control/clear_stats")
        self.sim.control("/control/batch_size", {"size": 2000})
        self.token = self.sim.cc_token()

    def ids(self, doc):
        return [r["Id"] for r in doc["records"]]

    # --- OAuth ---

    def test_jwt_accepted(self):
        status, doc = self.sim.jwt_token(self.key)
        self.assertEqual(status, 200, doc)
        self.assertTrue(doc["access_token"].startswith("SIM-"))
        self.assertEqual(doc["instance_url"], self.sim.base)
        self.assertEqual(doc["id"], self.sim.base + "/id/00DSIM0000000001AA/005SIM0000000001AA")
        self.assertEqual(doc["token_type"], "Bearer")
        self.assertIsInstance(doc["issued_at"], str)
        status, _, body = self.sim.call("GET", "/services/oauth2/userinfo",
                                        token=doc["access_token"])
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["organization_id"], "00DSIM0000000001AA")
        stats = self.sim.control("/control/stats", method="GET")
        self.assertEqual(stats["jwt_claims"][-1]["iss"], "sim-client-id")
        self.assertEqual(stats["jwt_claims"][-1]["aud"], self.sim.base)
        self.assertEqual(stats["userinfo_calls"], 1)

    def test_jwt_refused(self):
        cases = [
            ("wrong key", new_key(), {}),
            ("wrong aud", self.key, {"aud": "https://login.salesforce.com"}),
            ("exp too far", self.key, {"exp": int(time.time()) + 600}),
            ("expired", self.key, {"exp": int(time.time()) - 10}),
            ("no exp", self.key, {"exp": None}),
            ("wrong iss", self.key, {"iss": "other"}),
            ("wrong sub", self.key, {"sub": "other@example.com"}),
        ]
        for why, key, claims in cases:
            with self.subTest(why):
                status, doc = self.sim.jwt_token(key, **claims)
                self.assertEqual(status, 400, doc)
                self.assertEqual(doc["error"], "invalid_grant")
                self.assertTrue(doc["error_description"])
        status, doc = self.sim.token_form({
            "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": "x.y.z"})
        self.assertEqual((status, doc["error"]), (400, "invalid_grant"))
        stats = self.sim.control("/control/stats", method="GET")
        self.assertEqual(len(stats["jwt_claims"]), len(cases) + 1)
        self.assertEqual(stats["jwt_claims"][1]["aud"], "https://login.salesforce.com")
        self.assertIsNone(stats["jwt_claims"][-1])
        self.assertEqual(stats["tokens_minted"], 1)  # setUp's client-credentials token

    def test_jwt_certificate_and_no_key(self):
        pem = os.path.join(self.tmp, "cert.pem")
        with open(pem, "wb") as fh:
            fh.write(cert_pem(self.key))
        sim = Sim(["--public-key", pem, "--audience", "https://login.salesforce.com"])
        try:
            status, doc = sim.jwt_token(self.key, aud="https://login.salesforce.com")
            self.assertEqual(status, 200, doc)
        finally:
            sim.stop()
        sim = Sim([])
        try:
            status, doc = sim.jwt_token(self.key)
            self.assertEqual((status, doc["error"]), (400, "invalid_grant"))
        finally:
            sim.stop()

    def test_client_credentials(self):
        basic = base64.b64encode(b"sim-client-id:sim-secret").decode()
        status, doc = self.sim.token_form({"grant_type": "client_credentials"},
                                          {"Authorization": "Basic " + basic})
        self.assertEqual(status, 200, doc)
        status, doc = self.sim.token_form({"grant_type": "client_credentials",
                                           "client_id": "sim-client-id",
                                           "client_secret": "nope"})
        self.assertEqual((status, doc), (400, {"error": "invalid_client",
                                               "error_description":
                                               "invalid client credentials"}))
        status, doc = self.sim.token_form({"grant_type": "password"})
        self.assertEqual((status, doc["error"]), (400, "unsupported_grant_type"))

    def test_401(self):
        unauthorized = [{"message": "Session expired or invalid",
                         "errorCode": "INVALID_SESSION_ID"}]
        for token in (None, "SIM-999-bogus"):
            status, _, body = self.sim.call("GET", V + "/limits", token=token)
            self.assertEqual((status, json.loads(body)), (401, unauthorized))
        old = self.sim.cc_token()
        self.assertEqual(self.sim.call("GET", V + "/limits", token=old)[0], 200)
        self.assertGreaterEqual(self.sim.control("/control/expire_tokens")["expired"], 2)
        status, _, body = self.sim.call("GET", V + "/limits", token=old)
        self.assertEqual((status, json.loads(body)), (401, unauthorized))
        fresh = self.sim.cc_token()
        self.assertEqual(self.sim.call("GET", V + "/limits", token=fresh)[0], 200)

    def test_headers_and_limits(self):
        status, headers, body = self.sim.call("GET", V + "/limits", token=self.token)
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "application/json;charset=UTF-8")
        self.assertTrue(headers["Date"].endswith(" GMT"))
        used = int(headers["Sforce-Limit-Info"].split("=")[1].split("/")[0])
        self.assertEqual(headers["Sforce-Limit-Info"], f"api-usage={used}/15000")
        self.assertEqual(json.loads(body), {"DailyApiRequests": {"Max": 15000,
                                                                 "Remaining": 15000 - used}})
        _, headers, _ = self.sim.call("GET", V + "/limits", token=self.token)
        self.assertEqual(headers["Sforce-Limit-Info"], f"api-usage={used + 1}/15000")

    def test_keep_alive(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.sim.port, timeout=60)
        try:
            for _ in range(3):
                conn.request("GET", V + "/limits", headers={"Authorization":
                                                            "Bearer " + self.token})
                resp = conn.getresponse()
                resp.read()
                self.assertEqual(resp.status, 200)
                self.assertFalse(resp.will_close)
            sock = conn.sock
            conn.request("GET", V + "/limits", headers={"Authorization": "Bearer " + self.token})
            conn.getresponse().read()
            self.assertIs(conn.sock, sock)
        finally:
            conn.close()

    # --- SOQL ---

    def test_query_elf_listing(self):
        status, doc = self.sim.query(Q_LIST, self.token)
        self.assertEqual(status, 200, doc)
        self.assertEqual(self.ids(doc), ["0ATSIM000000000002", "0ATSIM000000000003",
                                         "0ATSIM000000000001"])
        self.assertEqual((doc["totalSize"], doc["done"]), (3, True))
        first = doc["records"][0]
        size = len('"EVENT_TYPE","REQUEST_ID"\n"Login","0ATSIM000000000002-0"\n')
        self.assertEqual(first, {
            "attributes": {"type": "EventLogFile",
                           "url": V + "/sobjects/EventLogFile/0ATSIM000000000002"},
            "Id": "0ATSIM000000000002", "EventType": "Login", "Interval": "Hourly",
            "LogDate": "2026-11-30T00:00:00.000+0000",
            "CreatedDate": "2026-11-30T01:00:00.000+0000",
            "LogFileLength": float(size), "Sequence": 1})
        self.assertIsInstance(first["LogFileLength"], float)
        self.assertIsInstance(first["Sequence"], int)
        self.assertEqual(doc["records"][2]["CreatedDate"], "2026-11-30T01:30:00.000+0000")
        stats = self.sim.control("/control/stats", method="GET")
        last = stats["requests"][-1]
        self.assertEqual(last, {"method": "GET", "path": V + "/query", "q": Q_LIST,
                                "status": 200})

    def test_query_group_by(self):
        status, doc = self.sim.query(Q_GROUP, self.token)
        self.assertEqual(status, 200, doc)
        self.assertEqual(sorted(r["EventType"] for r in doc["records"]), ["API", "Login", "URI"])
        self.assertEqual(doc["records"][0]["attributes"], {"type": "AggregateResult"})
        self.assertNotIn("Id", doc["records"][0])
        status, doc = self.sim.query(Q_GROUP, self.token, tooling=True)
        self.assertEqual((status, doc["totalSize"]), (200, 3))

    def test_query_objects(self):
        for soql, want in ((Q_ASC, ["0Ld000000000000", "0Ld000000000001", "0Ld000000000002",
                                    "0Ld000000000004", "0Ld000000000005", "0Ld000000000006"]),
                           (Q_CURSOR, ["0Ld000000000002", "0Ld000000000004", "0Ld000000000005",
                                       "0Ld000000000006"]),
                           (Q_RANGE, ["0Ld000000000000", "0Ld000000000001", "0Ld000000000002",
                                      "0Ld000000000004", "0Ld000000000005"]),
                           (Q_BIG_TIE, ["c"]),
                           (Q_BIG_UPPER, ["g", "d"])):
            with self.subTest(soql):
                status, doc = self.sim.query(soql, self.token)
                self.assertEqual(status, 200, doc)
                self.assertEqual(self.ids(doc), want)
        _, doc = self.sim.query(Q_ASC, self.token)
        self.assertEqual(doc["records"][0], {
            "attributes": {"type": "LoginEvent", "url": V + "/sobjects/LoginEvent/0Ld000000000000"},
            "Id": "0Ld000000000000", "EventDate": "2026-11-30T01:00:00.000+0000",
            "Username": "u0"})
        _, doc = self.sim.query(Q_BIG_UPPER, self.token)
        self.assertEqual(doc["records"][0]["Score"], 7.5)

    def test_query_literals(self):
        q = ("SELECT Id, Username FROM LoginEvent WHERE Username = 'it\\'s \\\\ \"odd\"' "
             "LIMIT 5")
        status, doc = self.sim.query(q, self.token)
        self.assertEqual((status, self.ids(doc)), (200, ["0Ld000000000006"]), doc)
        q = ("SELECT Id FROM LoginEvent WHERE EventDate = 2026-11-30T02:00:00.000+01:00 OR "
             "NOT Id IN ('0Ld000000000000','0Ld000000000001','0Ld000000000002',"
             "'0Ld000000000004','0Ld000000000005','0Ld000000000006') ORDER BY Id DESC")
        status, doc = self.sim.query(q, self.token)
        self.assertEqual((status, self.ids(doc)), (200, ["0Ld000000000007", "0Ld000000000002",
                                                         "0Ld000000000001", "0Ld000000000000"]),
                         doc)
        q = ("SELECT Id FROM LoginEvent WHERE Id = '0Ld000000000004' OR Id = '0Ld000000000005' "
             "AND Username = 'nobody'")
        self.assertEqual(self.ids(self.sim.query(q, self.token)[1]), ["0Ld000000000004"])
        q = "SELECT Id FROM MyBig__b WHERE Score >= 6 ORDER BY EventDate DESC"
        self.assertEqual(self.ids(self.sim.query(q, self.token)[1]), ["f", "g"])

    def test_query_errors(self):
        cases = [
            ("SELECT Id FROM LoginEvent WHERE", "MALFORMED_QUERY"),
            ("SELECT Id FROM LoginEvent WHERE EventDate >= 2026-11-30T01:00:00.000+0000",
             "MALFORMED_QUERY"),
            ("SELECT Id FROM LoginEvent WHERE EventDate >= 2026-11-30T01:00:00", "MALFORMED_QUERY"),
            ("SELECT Id FROM LoginEvent WHERE Username = 'open", "MALFORMED_QUERY"),
            ("SELECT Id FROM LoginEvent LIMIT", "MALFORMED_QUERY"),
            ("SELECT FIELDS(ALL) FROM LoginEvent", "MALFORMED_QUERY"),
            ("SELECT FIELDS(ALL) FROM LoginEvent LIMIT 201", "MALFORMED_QUERY"),
            ("SELECT Nope FROM LoginEvent", "INVALID_FIELD"),
            ("SELECT Id FROM LoginEvent WHERE Nope = 1", "INVALID_FIELD"),
            ("SELECT Id FROM LoginEvent ORDER BY Nope", "INVALID_FIELD"),
            ("SELECT Id FROM LoginEvent WHERE EventDate >= '2026-11-30T01:00:00Z'",
             "INVALID_FIELD"),
            ("SELECT Id FROM Nope__c", "INVALID_TYPE"),
        ]
        for soql, code in cases:
            with self.subTest(soql):
                status, doc = self.sim.query(soql, self.token)
                self.assertEqual(status, 400, doc)
                self.assertEqual(doc[0]["errorCode"], code)
                self.assertTrue(doc[0]["message"])
        status, doc = self.sim.query("", self.token)
        self.assertEqual((status, doc[0]["errorCode"]), (400, "MALFORMED_QUERY"))

    def test_paging(self):
        self.sim.control("/control/batch_size", {"size": 4})
        status, doc = self.sim.query(Q_ASC, self.token)
        self.assertEqual(status, 200)
        self.assertEqual((doc["totalSize"], doc["done"], len(doc["records"])), (6, False, 4))
        self.assertRegex(doc["nextRecordsUrl"], r"^/services/data/v64\.0/query/01gSIM\d+-4$")
        ids = self.ids(doc)
        status, _, body = self.sim.call("GET", doc["nextRecordsUrl"], token=self.token)
        self.assertEqual(status, 200)
        doc = json.loads(body)
        self.assertEqual((doc["totalSize"], doc["done"]), (6, True))
        self.assertNotIn("nextRecordsUrl", doc)
        ids += self.ids(doc)
        self.assertEqual(ids, ["0Ld000000000000", "0Ld000000000001", "0Ld000000000002",
                               "0Ld000000000004", "0Ld000000000005", "0Ld000000000006"])
        status, _, body = self.sim.call("GET", V + "/query/01gSIM999999-2", token=self.token)
        self.assertEqual((status, json.loads(body)[0]["errorCode"]),
                         (400, "INVALID_QUERY_LOCATOR"))

    def test_big_object_rules(self):
        base = "SELECT FIELDS(ALL) FROM MyBig__b WHERE EventDate >= 2026-11-30T01:00:00.000Z "
        for tail in ("ORDER BY EventDate ASC LIMIT 200", "ORDER BY EventDate LIMIT 200",
                     "ORDER BY EventDate DESC, Id DESC LIMIT 200", "LIMIT 200"):
            with self.subTest(tail):
                status, doc = self.sim.query(base + tail, self.token)
                self.assertEqual(status, 400, doc)
                self.assertEqual(doc[0]["errorCode"], "BIG_OBJECT_UNSUPPORTED_OPERATION")
        self.sim.control("/control/batch_size", {"size": 2})
        status, doc = self.sim.query(base + "ORDER BY EventDate DESC LIMIT 200", self.token)
        self.assertEqual((status, self.ids(doc), doc["done"]), (200, ["f", "a"], False))
        status, _, body = self.sim.call("GET", doc["nextRecordsUrl"], token=self.token)
        self.assertEqual((status, json.loads(body)[0]["errorCode"]),
                         (400, "BIG_OBJECT_UNSUPPORTED_OPERATION"))

    def test_uri_too_long(self):
        ids = ", ".join("'0Ld%012d'" % i for i in range(900))
        q = f"SELECT Id FROM LoginEvent WHERE Id NOT IN ({ids}) LIMIT 5"
        status, doc = self.sim.query(q, self.token)
        self.assertEqual(status, 414)
        self.assertEqual(doc[0]["errorCode"], "URI_TOO_LONG")
        ids = ", ".join("'0LdX%011d'" % i for i in range(400))
        q = f"SELECT Id FROM LoginEvent WHERE Id NOT IN ({ids}) ORDER BY Id LIMIT 5"
        status, doc = self.sim.query(q, self.token)
        self.assertEqual((status, self.ids(doc)), (200, ["0Ld000000000000", "0Ld000000000001",
                                                         "0Ld000000000002", "0Ld000000000004",
                                                         "0Ld000000000005"]))

    def test_control_add(self):
        self.sim.control("/control/add", {"objects": {"LateEvent__e": {
            "timestamp_field": "EventDate", "records": [
                {"Id": "x2", "EventDate": "2026-11-30T01:05:00Z"}]}}})
        self.sim.control("/control/add", {"objects": {"LateEvent__e": {"records": [
            {"Id": "x1", "EventDate": "2026-11-30T01:00:00+0000"}]}}})
        q = "SELECT Id, EventDate FROM LateEvent__e ORDER BY EventDate ASC, Id ASC"
        status, doc = self.sim.query(q, self.token)
        self.assertEqual((status, self.ids(doc)), (200, ["x1", "x2"]), doc)
        self.assertEqual(doc["records"][0]["EventDate"], "2026-11-30T01:00:00.000+0000")

    # --- downloads ---

    def test_download_generated(self):
        status, doc = self.sim.query(
            "SELECT Id, LogFileLength FROM EventLogFile WHERE Id = '0ATSIM000000000006'",
            self.token)
        self.assertEqual(status, 200, doc)
        length = doc["records"][0]["LogFileLength"]
        path = V + "/sobjects/EventLogFile/0ATSIM000000000006/LogFile"
        status, headers, body = self.sim.call("GET", path, token=self.token)
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "text/csv")
        self.assertEqual(headers["Transfer-Encoding"], "chunked")
        self.assertEqual(float(len(body)), length)
        rows = list(csv.DictReader(io.StringIO(body.decode("utf-8"), newline="")))
        self.assertEqual(len(rows), GEN_ROWS)
        ids = {r["REQUEST_ID"] for r in rows}
        self.assertEqual(ids, {"0ATSIM000000000006-%d" % i for i in range(GEN_ROWS)})
        self.assertGreaterEqual(len(rows[0]), 20)
        self.assertEqual(rows[96]["QUERY"].count("\n"), 1)
        self.assertIn('"Inc"', rows[96]["QUERY"])
        for r in rows:
            self.assertTrue(r["TIMESTAMP_DERIVED"].startswith("2026-11-30T01:"))
            self.assertEqual(r["TIMESTAMP"][:10], "2026113001")
        stats = self.sim.control("/control/stats", method="GET")
        self.assertEqual(stats["downloads"], {"0ATSIM000000000006": 1})
        self.assertEqual(stats["download_bytes"], {"0ATSIM000000000006": len(body)})
        # the same bytes again: deterministic
        _, _, again = self.sim.call("GET", path, token=self.token)
        self.assertEqual(again, body)

    def test_download_content_length_and_404(self):
        path = V + "/sobjects/EventLogFile/0ATSIM00000000000L/LogFile"
        status, headers, body = self.sim.call("GET", path, token=self.token)
        self.assertEqual(status, 200)
        self.assertEqual(int(headers["Content-Length"]), len(body))
        self.assertEqual(len(list(csv.reader(io.StringIO(body.decode(), newline="")))), 301)
        status, _, body = self.sim.call("GET", V + "/sobjects/EventLogFile/0ATnope/LogFile",
                                        token=self.token)
        self.assertEqual((status, json.loads(body)[0]["errorCode"]), (404, "NOT_FOUND"))
        status, _, _ = self.sim.call("GET", "/nope", token=self.token)
        self.assertEqual(status, 404)

    def test_download_path(self):
        body = b'"EVENT_TYPE","REQUEST_ID"\n' + b"".join(
            b'"API","R%d"\n' % i for i in range(40000))
        path = os.path.join(self.tmp, "file.csv")
        with open(path, "wb") as fh:
            fh.write(body)
        self.sim.control("/control/add", {"eventlogfiles": [
            {"Id": "0ATSIM00000000000P", "EventType": "API", "Interval": "Hourly",
             "LogDate": "2026-11-30T01:00:00Z", "CreatedDate": "2026-11-30T04:00:00Z",
             "Sequence": 0, "path": path}]})
        status, doc = self.sim.query(
            "SELECT Id, LogFileLength, LogFileFieldNames FROM EventLogFile "
            "WHERE Id = '0ATSIM00000000000P'", self.token)
        self.assertEqual(status, 200, doc)
        self.assertEqual(doc["records"][0]["LogFileLength"], float(len(body)))
        self.assertEqual(doc["records"][0]["LogFileFieldNames"], "EVENT_TYPE,REQUEST_ID")
        self.assertNotIn("path", doc["records"][0])
        status, headers, got = self.sim.call(
            "GET", V + "/sobjects/EventLogFile/0ATSIM00000000000P/LogFile", token=self.token)
        self.assertEqual(status, 200)
        self.assertEqual(int(headers["Content-Length"]), len(body))
        self.assertNotIn("Transfer-Encoding", headers)
        self.assertEqual(got, body)
        stats = self.sim.control("/control/stats", method="GET")
        self.assertEqual(stats["download_bytes"], {"0ATSIM00000000000P": len(body)})
        status, _, err = self.sim.call("POST", "/control/add", {"eventlogfiles": [
            {"Id": "0ATSIM00000000000Q", "CreatedDate": "2026-11-30T04:00:00Z",
             "path": os.path.join(self.tmp, "missing.csv")}]})
        self.assertEqual(status, 400, err)

    # --- Tooling API: ApexLog, TraceFlag ---

    def test_apexlog_tooling(self):
        body = "64.0 APEX_CODE,DEBUG\n12:00:00.1 (1)|USER_DEBUG|[1]|DEBUG|h\u00e9llo\n"
        self.sim.control("/control/add", {
            "apexlogs": [
                {"Id": "07LSIM0000000001", "StartTime": "2026-11-30T01:00:00Z",
                 "body": body, "Username": "a@x.com"},
                {"Id": "07LSIM0000000002", "StartTime": "2026-11-30T01:00:00Z",
                 "body": "two", "Username": "b@x.com", "Status": "Assertion Failed"},
                {"Id": "07LSIM0000000003", "StartTime": "2026-11-30T02:00:00Z",
                 "body": "three", "Username": "a@x.com", "LogLength": 99999999}],
            "traceflags": [
                {"Id": "7tfSIM01", "ExpirationDate": "2999-01-01T00:00:00Z"},
                {"Id": "7tfSIM02", "ExpirationDate": "2001-01-01T00:00:00Z"}]})
        q = ("SELECT Id, LogUserId, LogLength, Operation, Request, Status, StartTime, "
             "Application, DurationMilliseconds, Location FROM ApexLog WHERE "
             "(StartTime > 2026-11-30T01:00:00.000Z OR (StartTime = 2026-11-30T01:00:00.000Z "
             "AND Id > '07LSIM0000000001')) AND LogUser.Username IN ('a@x.com', 'b@x.com') "
             "ORDER BY StartTime ASC, Id ASC LIMIT 200")
        status, doc = self.sim.query(q, self.token, tooling=True)
        self.assertEqual(status, 200, doc)
        self.assertEqual(self.ids(doc), ["07LSIM0000000002", "07LSIM0000000003"])
        rec = doc["records"][0]
        self.assertEqual(rec["LogLength"], 3)
        self.assertEqual(rec["StartTime"], "2026-11-30T01:00:00.000+0000")
        self.assertEqual(rec["attributes"]["type"], "ApexLog")
        self.assertNotIn("LogUser.Username", rec)
        status, doc = self.sim.query(q.replace("'b@x.com'", "'nobody'"), self.token,
                                     tooling=True)
        self.assertEqual(self.ids(doc), ["07LSIM0000000003"])
        # Tooling objects are not REST objects
        status, doc = self.sim.query(q, self.token)
        self.assertEqual((status, doc[0]["errorCode"]), (400, "INVALID_TYPE"))
        status, doc = self.sim.query("SELECT Id FROM TraceFlag WHERE ExpirationDate > "
                                     "2026-12-01T00:00:00Z LIMIT 200", self.token,
                                     tooling=True)
        self.assertEqual(self.ids(doc), ["7tfSIM01"])
        # the body: exact bytes, counted; 404 for an unknown log; bearer auth as elsewhere
        path = V + "/tooling/sobjects/ApexLog/07LSIM0000000001/Body"
        status, headers, got = self.sim.call("GET", path, token=self.token)
        self.assertEqual((status, got), (200, body.encode()))
        self.assertTrue(headers["Content-Type"].startswith("text/plain"))
        status, _, _ = self.sim.call("GET", path)
        self.assertEqual(status, 401)
        status, _, err = self.sim.call("GET", V + "/tooling/sobjects/ApexLog/07Lnope/Body",
                                       token=self.token)
        self.assertEqual((status, json.loads(err)[0]["errorCode"]), (404, "NOT_FOUND"))
        # a fault for one log leaves the others alone
        self.sim.control("/control/fault", {"match": "apexlog_body", "id": "07LSIM0000000002",
                                            "status": 503, "error_code": "SERVER_UNAVAILABLE"})
        status, _, _ = self.sim.call("GET", path, token=self.token)
        self.assertEqual(status, 200)
        status, _, _ = self.sim.call("GET", path.replace("0001", "0002"), token=self.token)
        self.assertEqual(status, 503)
        status, _, got = self.sim.call("GET", path.replace("0001", "0002"), token=self.token)
        self.assertEqual((status, got), (200, b"two"))
        # bodies served (past the auth check and the faults); every request is in "requests"
        stats = self.sim.control("/control/stats", method="GET")
        self.assertEqual(stats["apexlog_bodies"],
                         {"07LSIM0000000001": 2, "07LSIM0000000002": 1, "07Lnope": 1})
        self.assertEqual(sum(1 for r in stats["requests"] if r["path"].endswith("/Body")), 6)

    # --- faults ---

    def test_fault_count_and_fifo(self):
        self.sim.control("/control/fault", {"match": "limits", "count": 2, "status": 503,
                                            "error_code": "SERVER_UNAVAILABLE",
                                            "message": "busy"})
        self.sim.control("/control/fault", {"match": "any", "status": 403,
                                            "error_code": "REQUEST_LIMIT_EXCEEDED",
                                            "message": "TotalRequests Limit exceeded."})
        got = []
        for _ in range(4):
            status, _, body = self.sim.call("GET", V + "/limits", token=self.token)
            got.append((status, json.loads(body)))
        self.assertEqual(got[0], (503, [{"message": "busy", "errorCode": "SERVER_UNAVAILABLE"}]))
        self.assertEqual(got[1], got[0])
        self.assertEqual(got[2][0], 403)
        self.assertEqual(got[2][1][0]["errorCode"], "REQUEST_LIMIT_EXCEEDED")
        self.assertEqual(got[3][0], 200)
        self.assertEqual(self.sim.control("/control/faults", method="GET")["faults"], [])

    def test_fault_token_and_body(self):
        self.sim.control("/control/fault", {"match": "token", "status": 400,
                                            "error_code": "inactive_user",
                                            "message": "user is inactive"})
        status, doc = self.sim.token_form({"grant_type": "client_credentials",
                                           "client_id": "sim-client-id",
                                           "client_secret": "sim-secret"})
        self.assertEqual((status, doc), (400, {"error": "inactive_user",
                                               "error_description": "user is inactive"}))
        self.sim.control("/control/fault", {"match": "query", "body": "[1, 2]"})
        status, headers, body = self.sim.call("GET", V + "/query?q=x", token=self.token)
        self.assertEqual((status, body), (200, b"[1, 2]"))

    def test_fault_non_json_and_delay(self):
        self.sim.control("/control/fault", {"match": "userinfo", "non_json": True})
        status, headers, body = self.sim.call("GET", "/services/oauth2/userinfo",
                                              token=self.token)
        self.assertEqual((status, body), (200, b"<html>maintenance</html>"))
        self.assertTrue(headers["Content-Type"].startswith("text/html"))
        self.sim.control("/control/fault", {"match": "userinfo", "delay_ms": 10})
        status, _, body = self.sim.call("GET", "/services/oauth2/userinfo", token=self.token)
        self.assertEqual((status, json.loads(body)["user_id"]), (200, "005SIM0000000001AA"))

    def test_fault_reset_after_bytes(self):
        self.sim.control("/control/fault", {"match": "logfile", "reset_after_bytes": 100000})
        conn = http.client.HTTPConnection("127.0.0.1", self.sim.port, timeout=60)
        try:
            conn.request("GET", V + "/sobjects/EventLogFile/0ATSIM000000000006/LogFile",
                         headers={"Authorization": "Bearer " + self.token})
            resp = conn.getresponse()
            self.assertEqual(resp.status, 200)
            with self.assertRaises(http.client.IncompleteRead) as cm:
                resp.read()
            self.assertEqual(len(cm.exception.partial), 100000)
        finally:
            conn.close()
        stats = self.sim.control("/control/stats", method="GET")
        self.assertEqual(stats["download_bytes"]["0ATSIM000000000006"], 100000)
        # the fault was used up: the next download is whole
        status, _, body = self.sim.call(
            "GET", V + "/sobjects/EventLogFile/0ATSIM000000000006/LogFile", token=self.token)
        self.assertEqual(status, 200)
        self.assertGreater(len(body), 100000)


class DemoAndTlsTest(unittest.TestCase):
    def test_demo_over_tls(self):
        tmp = tempfile.mkdtemp(prefix="sf-sim-tls-")
        try:
            sim = Sim(["--demo", "--tls", tmp], cafile=os.path.join(tmp, "cert.pem"))
            try:
                token = sim.cc_token()
                status, doc = sim.query(Q_GROUP, token)
                self.assertEqual(status, 200, doc)
                self.assertEqual(sorted(r["EventType"] for r in doc["records"]),
                                 ["API", "Login", "URI"])
                status, doc = sim.query(
                    "SELECT Id, CreatedDate, LogFileLength FROM EventLogFile "
                    "WHERE EventType='API' ORDER BY CreatedDate, Id", token)
                self.assertEqual((status, doc["totalSize"]), (200, 3))
                q = ("SELECT FIELDS(ALL) FROM LoginEvent WHERE EventDate >= "
                     "2000-01-01T00:00:00Z ORDER BY EventDate ASC, Id ASC LIMIT 200")
                status, doc = sim.query(q, token)
                self.assertEqual((status, doc["totalSize"]), (200, 200))
                self.assertIn("SourceIp", doc["records"][0])
                status, doc = sim.query("SELECT COUNT() FROM ApiAnomalyEventStore", token)
                self.assertEqual((status, doc["totalSize"]), (200, 50))
            finally:
                sim.stop()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
