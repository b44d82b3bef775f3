#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""Avro test vectors for src/salesforce/sfl-avro.c, made by third-party code.

Payloads are encoded with python3-avro (Apache's own implementation) from realistic
Pub/Sub schemas, decoded back with python3-avro (the values fastavro gives the original:
dicts, bare union values, enum symbols, bytes, floats), and the expected line is computed the
way the original service writes it: json.dumps(event, sort_keys=True, default=str), so bytes
and fixed are Python's str() of them (b'...'). CDC bitmap fields get their field-name lists
from the decoding rule Salesforce's samples use, written out here independently of the C code.

  avro_vectors.py            JSON {"cases": [...]} on stdout; each case has name, schema,
                             payload_hex and either expected (the JSON line) or error (a
                             substring of the error message); CDC cases also have
                             cdc_metadata (name → comma-joined field names, the non-empty
                             ones) and expected_cdc_line (the line with changedFieldNames,
                             nulledFieldNames and diffFieldNames beside the bitmaps)
  avro_vectors.py --bench N  JSON {"schema": ..., "payloads": [hex, ...]} with N distinct
                             LoginEventStream-like events
  avro_vectors.py --fuzz-seeds DIR
                             writes the seed corpus of tests/fuzz/fuzz-avro.c (datums for the
                             schema text in that file) into DIR
"""

import io
import json
import math
import os
import random
import re
import struct
import sys

import avro.io
import avro.schema

NS = "com.sforce.eventbus"


def opt(name, type_="string"):
    """A Salesforce-style optional field: a union with null, defaulting to null."""
    return {"name": name, "type": ["null", type_], "default": None}


LOGIN_SCHEMA = {
    "type": "record",
    "name": "LoginEventStream",
    "namespace": NS,
    "doc": "A LoginEventStream-like real-time event",
    "fields": [
        {"name": "EventDate", "type": "long", "doc": "EventDate:DateTime"},
        opt("EventIdentifier"),
        opt("UserId"),
        opt("Username"),
        opt("LoginUrl"),
        opt("SessionKey"),
        opt("LoginKey"),
        opt("SourceIp"),
        opt("City"),
        opt("Country"),
        opt("CountryIso"),
        opt("PostalCode"),
        opt("LoginLatitude", "double"),
        opt("LoginLongitude", "double"),
        opt("Browser"),
        opt("Platform"),
        opt("Application"),
        opt("Status"),
        opt("LoginType"),
        opt("TlsProtocol"),
        opt("CipherSuite"),
        opt("HttpMethod"),
        opt("AdditionalInfo"),
        opt("ApiVersion", "float"),
        opt("EvaluationTime", "double"),
        opt("SessionLevel"),
        opt("LoginAttempt", "int"),
        opt("IsSecure", "boolean"),
        opt("SessionToken", "bytes"),
        {"name": "CreatedDate", "type": "long", "doc": "CreatedDate:DateTime"},
        opt("CreatedById"),
    ],
}

CITIES = [
    ("San Francisco", "United States", "US", 37.7749, -122.4194),
    ("São Paulo", "Brazil", "BR", -23.5505, -46.6333),
    ("Zürich", "Switzerland", "CH", 47.3769, 8.5417),
    ("東京", "Japan", "JP", 35.6762, 139.6503),
    ("Kraków", "Poland", "PL", 50.0647, 19.945),
    ("Reykjavík", "Iceland", "IS", 64.1466, -21.9426),
]


def login_event(rng, i):
    city = CITIES[i % len(CITIES)]
    ev = {
        "EventDate": 1767225600000 + i * 137,
        "EventIdentifier": "0c%016x" % rng.getrandbits(64),
        "UserId": "005%015d" % rng.randrange(10**15),
        "Username": "user%d@example.com" % (i % 97),
        "LoginUrl": "login.salesforce.com",
        "SessionKey": "%032x" % rng.getrandbits(128),
        "LoginKey": "%016x" % rng.getrandbits(64),
        "SourceIp": "203.0.113.%d" % (i % 250),
        "City": city[0],
        "Country": city[1],
        "CountryIso": city[2],
        "PostalCode": None if i % 3 == 0 else "%05d" % rng.randrange(100000),
        "LoginLatitude": city[3] + rng.randrange(1000) / 10000.0,
        "LoginLongitude": city[4],
        "Browser": "Chrome %d" % (100 + i % 30),
        "Platform": "Mac OSX",
        "Application": "Browser",
        "Status": "Success" if i % 7 else "Invalid Password",
        "LoginType": "Application",
        "TlsProtocol": "TLS 1.3",
        "CipherSuite": "TLS_AES_256_GCM_SHA384",
        "HttpMethod": "POST",
        "AdditionalInfo": '{"note": "tab\there, quote \\" ok", "emoji": "\U0001f510"}'
        if i % 5 == 0
        else None,
        "ApiVersion": 62.0 if i % 2 else 0.1,
        "EvaluationTime": rng.random() * 10,
        "SessionLevel": "STANDARD",
        "LoginAttempt": i % 4,
        "IsSecure": bool(i % 2),
        "SessionToken": bytes(rng.getrandbits(8) for _ in range(6)) + b"'\"\\\x00\x7f",
        "CreatedDate": 1767225600000 + i * 137 + 5,
        "CreatedById": None if i % 4 else "005000000000001AAA",
    }
    return ev


def address_record():
    return {
        "type": "record",
        "name": "Address",
        "namespace": NS,
        "fields": [
            opt("Street"),
            opt("City"),
            opt("State"),
            opt("PostalCode"),
            opt("Country"),
            opt("Latitude", "double"),
            opt("Longitude", "double"),
            opt("GeocodeAccuracy"),
        ],
    }


HEADER_SCHEMA = {
    "type": "record",
    "name": "ChangeEventHeader",
    "namespace": NS,
    "fields": [
        {"name": "entityName", "type": "string"},
        {"name": "recordIds", "type": {"type": "array", "items": "string"}},
        {
            "name": "changeType",
            "type": {
                "type": "enum",
                "name": "ChangeType",
                "namespace": NS,
                "symbols": ["CREATE", "UPDATE", "DELETE", "UNDELETE", "GAP_CREATE",
                            "GAP_UPDATE", "GAP_DELETE", "GAP_UNDELETE", "GAP_OVERFLOW"],
            },
        },
        {"name": "changeOrigin", "type": "string"},
        {"name": "transactionKey", "type": "string"},
        {"name": "sequenceNumber", "type": "int"},
        {"name": "commitTimestamp", "type": "long"},
        {"name": "commitNumber", "type": "long"},
        {"name": "commitUser", "type": "string"},
        {"name": "nulledFields", "type": {"type": "array", "items": "string"}},
        {"name": "diffFields", "type": {"type": "array", "items": "string"}},
        {"name": "changedFields", "type": {"type": "array", "items": "string"}},
    ],
}

# 32 top-level fields, so the worked bitmap 0x650004E0 (bits up to 30) lands on real fields;
# BillingAddress is field 4 and ShippingAddress field 7, the compound fields of the example
ACCOUNT_FIELDS = [
    {"name": "ChangeEventHeader", "type": HEADER_SCHEMA},
    opt("Name"),
    opt("Type"),
    opt("ParentId"),
    {"name": "BillingAddress", "type": ["null", address_record()], "default": None},
    opt("Phone"),
    opt("Fax"),
    {"name": "ShippingAddress", "type": ["null", "string", NS + ".Address"], "default": None},
    opt("AccountNumber"),
    opt("Website"),
    opt("Sic"),
    opt("Industry"),
    opt("AnnualRevenue", "double"),
    opt("NumberOfEmployees", "int"),
    opt("Ownership"),
    opt("TickerSymbol"),
    opt("Description"),
    opt("Rating"),
    opt("Site"),
    opt("OwnerId"),
    opt("CreatedDate", "long"),
    opt("CreatedById"),
    opt("LastModifiedDate", "long"),
    opt("LastModifiedById"),
    opt("Jigsaw"),
    opt("JigsawCompanyId"),
    opt("CleanStatus"),
    opt("AccountSource"),
    opt("DunsNumber"),
    opt("Tradestyle"),
    opt("NaicsCode"),
    opt("YearStarted"),
]

ACCOUNT_SCHEMA = {
    "type": "record",
    "name": "AccountChangeEvent",
    "namespace": NS,
    "fields": ACCOUNT_FIELDS,
}


def account_event(changed, nulled, diff):
    return {
        "ChangeEventHeader": {
            "entityName": "Account",
            "recordIds": ["001xx000003DGb2AAG"],
            "changeType": "UPDATE",
            "changeOrigin": "com/salesforce/api/soap/62.0;client=SfdcInternalAPI/",
            "transactionKey": "0002f4e7-0c6f-2d51-7c1e-4e0b3d8e1a7b",
            "sequenceNumber": 1,
            "commitTimestamp": 1767225600000,
            "commitNumber": 10794418226563,
            "commitUser": "005xx000001X8UQAA0",
            "nulledFields": nulled,
            "diffFields": diff,
            "changedFields": changed,
        },
        "Name": "Acme — Zürich",
        "BillingAddress": {"Street": "1 Main St", "City": "Zürich", "Country": "CH",
                           "Latitude": 47.3769},
        "ShippingAddress": {"City": "Bern", "State": "BE"},
        "Phone": None,
        "AnnualRevenue": 1.5e7,
        "NumberOfEmployees": 250,
        "LastModifiedDate": 1767225600000,
    }


def unwrap(type_, named):
    """A compound field's record: [null, X], [string, X], [null, string, X] stand for X."""
    if isinstance(type_, list):
        rest = [t for t in type_ if t not in ("null", "string")]
        type_ = rest[-1] if rest else None
    if isinstance(type_, str):
        type_ = named.get(type_, type_)
    return type_ if isinstance(type_, dict) and type_.get("type") == "record" else None


def bitmap_field_names(schema, elements):
    """Field names of CDC bitmap elements, as Salesforce's sample utilities decode them."""
    named = {NS + ".Address": address_record()}
    top = schema["fields"]
    names = []
    for element in elements:
        if element.startswith("0x"):
            parent, digits = None, element[2:]
        else:
            pos, sep, digits = element.partition("-0x")
            if not sep or not pos.isdigit():
                continue
            parent = int(pos)
        try:
            bits = int(digits, 16)
        except ValueError:
            continue
        if parent is None:
            fields, prefix = top, ""
        else:
            if parent >= len(top):
                continue
            record = unwrap(top[parent]["type"], named)
            if record is None:
                continue
            fields, prefix = record["fields"], top[parent]["name"] + "."
        for i, field in enumerate(fields):
            if bits >> i & 1:
                names.append(prefix + field["name"])
    return names


def encode(schema_json, datum):
    schema = avro.schema.parse(schema_json)
    buf = io.BytesIO()
    avro.io.DatumWriter(schema).write(datum, avro.io.BinaryEncoder(buf))
    return buf.getvalue()


def decode(schema_json, payload):
    schema = avro.schema.parse(schema_json)
    return avro.io.DatumReader(schema).read(avro.io.BinaryDecoder(io.BytesIO(payload)))


def original_line(event):
    """The line for a decoded event exactly as the original renders it
    (docs/differences-from-python.md, "Kept as in the original"): anything json cannot hold, bytes
    above all, goes through str()."""
    return json.dumps(event, sort_keys=True, default=str)


CDC_FIELDS = (("changedFields", "changedFieldNames", "changed_fields"),
              ("nulledFields", "nulledFieldNames", "nulled_fields"),
              ("diffFields", "diffFieldNames", "diff_fields"))


def good_case(name, schema, datum, cdc=False):
    schema_json = json.dumps(schema)
    payload = encode(schema_json, datum)
    event = decode(schema_json, payload)
    case = {"name": name, "schema": schema_json, "payload_hex": payload.hex(),
            "expected": original_line(event)}
    if cdc:
        header = event["ChangeEventHeader"]
        metadata = {}
        for field, key, label in CDC_FIELDS:
            names = bitmap_field_names(schema, header[field])
            header[key] = names
            if names:
                metadata[label] = ",".join(names)
        case["cdc_metadata"] = metadata
        case["expected_cdc_line"] = original_line(event)
    return case


def bad_case(name, schema, payload, error):
    return {"name": name, "schema": json.dumps(schema), "payload_hex": payload.hex(),
            "error": error}


def record(name, fields):
    return {"type": "record", "name": name, "fields": fields}


KITCHEN_SCHEMA = {
    "type": "record",
    "name": "Kitchen",
    "namespace": "test.avro",
    "fields": [
        {"name": "flag", "type": "boolean"},
        {"name": "small", "type": "int"},
        {"name": "big", "type": "long"},
        {"name": "ratio", "type": "float"},
        {"name": "exact", "type": "double"},
        {"name": "text", "type": "string"},
        {"name": "blob", "type": "bytes"},
        {"name": "digest", "type": {"type": "fixed", "name": "Digest", "size": 4}},
        {"name": "color", "type": {"type": "enum", "name": "Color",
                                   "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "counts", "type": {"type": "map", "values": "long"}},
        {"name": "attrs", "type": {"type": "map", "values": ["null", "string", "double"]}},
        {"name": "inner", "type": record("Inner", [
            {"name": "zeta", "type": "string"},
            {"name": "alpha", "type": ["null", "Inner"]},
            {"name": "Mid", "type": {"type": "array", "items": "Color"}},
        ])},
        {"name": "items", "type": {"type": "array", "items": record("Item", [
            {"name": "sku", "type": "string"},
            {"name": "qty", "type": "int"},
        ])}},
        {"name": "nothing", "type": "null"},
        {"name": "choice", "type": ["null", "long", "string", "Item"]},
        {"name": "Zcase", "type": "string"},
        {"name": "_under", "type": "string"},
    ],
}


def kitchen_event(variant):
    weird = "ctl\x00\x01\x1f del\x7f tab\t nl\n cr\r quote\" bslash\\ é ǅ \u2028 \U0001f600 \uffff"
    return {
        "flag": variant % 2 == 0,
        "small": [-2147483648, 2147483647, 0][variant % 3],
        "big": [-(2**63), 2**63 - 1, 64][variant % 3],
        "ratio": [0.1, -1.5, 3.4028234663852886e38][variant % 3],
        "exact": [1e-05, 1e16, float("nan"), float("inf"), -float("inf"), -0.0,
                  123456789.123, 5e-324][variant % 8],
        "text": weird if variant % 2 else "",
        "blob": [b"", b"'", b"'\"", b"\x00\xff\t\n\r\\abc"][variant % 4],
        "digest": b"\xde\xad'\x01",
        "color": ["RED", "GREEN", "BLUE"][variant % 3],
        "tags": [] if variant % 2 else ["a", "ß", "a"],
        "counts": {} if variant % 2 else {"b": 2, "a": 1, "é": 3, "Z": 4, "aa": 5, "": 6},
        "attrs": {"x": None, "y": "why", "z": 2.5},
        "inner": {"zeta": "z", "alpha": {"zeta": "nested", "alpha": None, "Mid": ["BLUE"]},
                  "Mid": []},
        "items": [{"sku": "A-1", "qty": 3}, {"sku": "B\u00e9", "qty": -1}],
        "nothing": None,
        "choice": [None, 42, "forty-two", {"sku": "C", "qty": 0}][variant % 4],
        "Zcase": "upper first",
        "_under": "underscore",
    }


LIST_SCHEMA = {
    "type": "record",
    "name": "Node",
    "fields": [
        {"name": "value", "type": "long"},
        {"name": "next", "type": ["null", "Node"]},
    ],
}


def chain(depth):
    node = None
    for i in range(depth):
        node = {"value": i, "next": node}
    return node


# bytes whose str() exercises every rule of Python's bytes repr: the quote choice (single
# unless there is a single quote and no double one), the escaped quote and backslash, \t \n
# \r, \xNN below 0x20 and from 0x7f, and every other printable character as it is
HOSTILE_BYTES = [
    b"", b"'", b'"', b"'\"", b"\x00\xff\n\t\\", b"\r", b"\\'", b"a'b", b'a"b', b"''\"\"",
    b"\x7f\x80\x1f\x20\x7e", b"\\x41", b"b'not a literal'", bytes(range(256)),
    "é😀".encode("utf-8"),
]

# everything else json.dumps treats specially: floats in repr form and the non-finite
# spellings, long extremes, non-ASCII and astral strings under ensure_ascii
HOSTILE_FLOATS = [1.0, 1e-05, 1e16, -0.0, 0.0, float("nan"), float("inf"), -float("inf"),
                  0.1, 1e22, 1.5e-07, 123456789012345678.0, 5e-324, 1.7976931348623157e308]
HOSTILE_LONGS = [0, -1, 1, 2**31, -(2**31) - 1, 2**53 + 1, 2**63 - 1, -(2**63)]
HOSTILE_STRINGS = ["", "plain", "é", "ß\u00e9\u00ff", "\u2028\u2029", "\U0001f600",
                   "\U0010ffff", "\x00\x1f\x7f", "quote\" back\\ slash/", "\ud7ff\ue000\uffff",
                   "b'looks like bytes'"]


def hostile_cases():
    out = []
    blob = {"type": "record", "name": "Blob", "fields": [
        {"name": "b", "type": "bytes"},
        {"name": "ob", "type": ["null", "bytes"]},
        {"name": "arr", "type": {"type": "array", "items": "bytes"}},
        {"name": "map", "type": {"type": "map", "values": "bytes"}},
        {"name": "inner", "type": record("BlobInner", [{"name": "x", "type": "bytes"}])},
    ]}
    for i, b in enumerate(HOSTILE_BYTES):
        out.append(good_case("bytes-%02d" % i, blob, {
            "b": b, "ob": b if i % 2 else None, "arr": [b, b"ok"], "map": {"k": b},
            "inner": {"x": b}}))
        fixed = {"type": "record", "name": "Fix", "fields": [
            {"name": "f", "type": {"type": "fixed", "name": "F%d" % len(b), "size": len(b)}},
            {"name": "of", "type": ["null", "F%d" % len(b)]},
            {"name": "list", "type": {"type": "array", "items": "F%d" % len(b)}},
        ]}
        out.append(good_case("fixed-%02d" % i, fixed, {"f": b, "of": b, "list": [b, b]}))
    scalars = {"type": "record", "name": "Scalars", "fields": [
        {"name": "d", "type": "double"},
        {"name": "f", "type": "float"},
        {"name": "od", "type": ["null", "double"]},
        {"name": "l", "type": "long"},
        {"name": "ol", "type": ["null", "long", "string"]},
        {"name": "s", "type": "string"},
        {"name": "os", "type": ["null", "string"]},
        {"name": "t", "type": "boolean"},
        {"name": "n", "type": "null"},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "b_2", "Zz"]}},
    ]}
    n = max(len(HOSTILE_FLOATS), len(HOSTILE_LONGS), len(HOSTILE_STRINGS))
    for i in range(n):
        # the float field gets the same value where a float32 can hold it (rounded: the
        # expected line takes what python3-avro reads back), else the largest float32
        f = HOSTILE_FLOATS[i % len(HOSTILE_FLOATS)]
        f32 = f if f != f or math.isinf(f) or abs(f) <= 3.4e38 else 3.4028234663852886e38
        out.append(good_case("scalars-%02d" % i, scalars, {
            "d": f, "f": f32, "od": f if i % 2 else None,
            "l": HOSTILE_LONGS[i % len(HOSTILE_LONGS)],
            "ol": [None, HOSTILE_LONGS[i % len(HOSTILE_LONGS)], "s"][i % 3],
            "s": HOSTILE_STRINGS[i % len(HOSTILE_STRINGS)],
            "os": HOSTILE_STRINGS[(i + 3) % len(HOSTILE_STRINGS)],
            "t": bool(i % 2), "n": None, "e": ["A", "b_2", "Zz"][i % 3]}))
    return out


def cases():
    rng = random.Random(8)
    out = []
    # the Avro specification's own example
    out.append(good_case("spec-example", record("T", [{"name": "a", "type": "long"},
                                                     {"name": "b", "type": "string"}]),
                         {"a": 27, "b": "foo"}))
    for i in range(12):
        out.append(good_case("login-%d" % i, LOGIN_SCHEMA, login_event(rng, i)))
    all_null = {f["name"]: None for f in LOGIN_SCHEMA["fields"]}
    all_null.update({"EventDate": 0, "CreatedDate": -1})
    out.append(good_case("login-all-null", LOGIN_SCHEMA, all_null))
    # the worked example of docs/internals/wire-notes.md "Change Data Capture bitmap fields"
    out.append(good_case("cdc-worked-example", ACCOUNT_SCHEMA,
                         account_event(["0x650004E0", "4-0x10", "7-0x06"], [], []), cdc=True))
    out.append(good_case("cdc-odd-digits-and-junk", ACCOUNT_SCHEMA,
                         account_event(["0x1", "4-0x1FF", "0xFFFFFFFFFFFF", "x", "1-0x1",
                                        "99-0x1", "0x", "0xZZ"],
                                       ["7-0x3"], ["0x20000"]), cdc=True))
    for v in range(8):
        out.append(good_case("kitchen-%d" % v, KITCHEN_SCHEMA, kitchen_event(v)))
    out.extend(hostile_cases())
    out.append(good_case("recursive-chain", LIST_SCHEMA, chain(20)))
    # 64 nested records is the most the decoder takes (a limit of ours, not of the original)
    out.append(good_case("recursive-chain-at-depth-limit", LIST_SCHEMA, chain(64)))
    out.append(good_case("top-level-string", "string", "just a string"))
    out.append(good_case("top-level-map", {"type": "map", "values": "int"}, {"k": 1}))

    # bad payloads: each must fail cleanly with a message naming the problem
    spec = record("T", [{"name": "a", "type": "long"}, {"name": "b", "type": "string"}])
    out.append(bad_case("empty", spec, b"", "runs past the end"))
    out.append(bad_case("truncated-varint", spec, b"\x80", "runs past the end"))
    out.append(bad_case("varint-too-long", spec, b"\xff" * 10 + b"\x01", "64 bits"))
    out.append(bad_case("negative-string-length", spec, b"\x36\x01abc", "negative"))
    out.append(bad_case("string-past-end", spec, b"\x36\x08foo", "past the end"))
    out.append(bad_case("huge-string-length", spec, b"\x36\xfe\xff\xff\xff\xff\xff\xff\xff\x7f",
                        "past the end"))
    out.append(bad_case("invalid-utf8", spec, b"\x36\x04\xc3\x28", "UTF-8"))
    out.append(bad_case("utf8-surrogate", spec, b"\x36\x06\xed\xa0\x80", "UTF-8"))
    out.append(bad_case("utf8-overlong", spec, b"\x36\x04\xc0\xaf", "UTF-8"))
    opt_schema = record("U", [opt("s")])
    out.append(bad_case("unknown-union-branch", opt_schema, b"\x04", "union branch 2"))
    out.append(bad_case("negative-union-branch", opt_schema, b"\x01", "union branch -1"))
    enum_schema = record("E", [{"name": "e", "type": {"type": "enum", "name": "C",
                                                      "symbols": ["A", "B"]}}])
    out.append(bad_case("enum-out-of-range", enum_schema, b"\x04", "enum C index 2"))
    out.append(bad_case("enum-negative", enum_schema, b"\x01", "enum C index -1"))
    dbl = record("D", [{"name": "d", "type": "double"}])
    out.append(bad_case("truncated-double", dbl, b"\x00\x00\x00", "double"))
    arr = record("A", [{"name": "a", "type": {"type": "array", "items": "long"}}])
    out.append(bad_case("array-count-past-end", arr, b"\xfe\xff\xff\xff\x0f\x02",
                        "needs more than"))
    out.append(bad_case("array-count-min-int64", arr, b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
                        "block count"))
    out.append(bad_case("array-unterminated", arr, b"\x02\x02", "runs past the end"))
    nulls = record("N", [{"name": "a", "type": {"type": "array", "items": "null"}}])
    out.append(bad_case("array-of-nulls-bomb", nulls, b"\xfe\xff\xff\xff\xff\xff\xff\xff\x7f",
                        "empty items"))
    mp = record("M", [{"name": "m", "type": {"type": "map", "values": "long"}}])
    out.append(bad_case("map-key-past-end", mp, b"\x02\x10ab", "map key length"))
    boolean = record("B", [{"name": "b", "type": "boolean"}])
    out.append(bad_case("boolean-not-0-or-1", boolean, b"\x02", "boolean"))
    fixed = record("F", [{"name": "f", "type": {"type": "fixed", "name": "Four", "size": 4}}])
    out.append(bad_case("fixed-past-end", fixed, b"abc", "fixed Four"))
    wide = record("Wide", [{"name": "b", "type": "boolean"}] +
                  [{"name": "null_field_with_a_rather_long_name_%02d" % i, "type": "null"}
                   for i in range(63)])
    items = 30000  # one payload byte each, about 3 KB of line each
    out.append(bad_case("rendering-too-long",
                        record("Outer", [{"name": "w", "type": {"type": "array", "items": wide}}]),
                        encode('"long"', items) + b"\x00" * items + b"\x00", "rendering passes"))
    deep = encode(json.dumps(LIST_SCHEMA), chain(100))
    out.append(bad_case("deep-nesting", LIST_SCHEMA, deep, "nested more than"))
    out.append(bad_case("depth-limit-plus-one", LIST_SCHEMA, encode(json.dumps(LIST_SCHEMA),
                                                                     chain(65)),
                        "nested more than"))
    nested = record("Outer", [{"name": "hdr", "type": record("Hdr", [
        {"name": "id", "type": "string"}])}])
    out.append(bad_case("error-names-field-path", nested, b"\x07", "field hdr.id"))
    return out


def bench(n):
    rng = random.Random(300)
    schema_json = json.dumps(LOGIN_SCHEMA)
    return {"schema": schema_json,
            "payloads": [encode(schema_json, login_event(rng, i)).hex() for i in range(n)]}


def fuzz_schema_text():
    """The schema string literal of tests/fuzz/fuzz-avro.c, so the seeds cannot drift from it."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "fuzz", "fuzz-avro.c"), encoding="utf-8") as f:
        source = f.read()
    literal = re.search(r"fuzz_avro_schema\[\] =(.*?);", source, re.S).group(1)
    return "".join(json.loads('"%s"' % part) for part in re.findall(r'"((?:[^"\\]|\\.)*)"',
                                                                    literal))


def fuzz_seeds(directory):
    schema_json = fuzz_schema_text()
    header = {"entityName": "Account", "changeType": "UPDATE",
              "changedFields": ["0x1E", "2-0x03"], "nulledFields": ["0x2"], "diffFields": []}
    chain = None
    for i in range(3):
        chain = {"value": i - 1, "next": chain}
    seeds = {
        "full": {"ChangeEventHeader": header, "Name": "Zürich \U0001f510", "Address":
                 {"Street": "1 Main", "City": None}, "Revenue": 1.5e7, "Ratio": 0.1,
                 "Count": 2**40, "Active": True, "Token": b"\x00'\"", "Digest": b"abcd",
                 "Tags": {"b": "x", "a": None}, "Empty": [None, None], "Chain": chain},
        "minimal": {"ChangeEventHeader": dict(header, changedFields=[], nulledFields=None),
                    "Name": None, "Address": "plain", "Revenue": None, "Ratio": -0.0,
                    "Count": None, "Active": False, "Token": None, "Digest": b"\xff" * 4,
                    "Tags": {}, "Empty": [], "Chain": None},
    }
    os.makedirs(directory, exist_ok=True)
    for name, datum in seeds.items():
        with open(os.path.join(directory, name + ".avro"), "wb") as f:
            f.write(encode(schema_json, datum))


def floats(n):
    """n finite doubles as [bits in hex, json.dumps(value)]: Python's repr is the oracle for
    the shortest-digits formatting (its fast exact path and its general path alike)."""
    rng = random.Random(300)
    out = []
    while len(out) < n:
        kind = len(out) % 5
        if kind == 0:  # any finite bit pattern
            v = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
            if v != v or v in (float("inf"), float("-inf")):
                continue
        elif kind == 1:  # a decimal of 1 to 17 digits
            v = rng.randrange(10 ** rng.randint(1, 17)) / 10 ** rng.randint(0, 23)
        elif kind == 2:  # a float32 widened, as Avro floats are
            v = struct.unpack("<f", struct.pack("<f", rng.uniform(-1e6, 1e6)))[0]
        elif kind == 3:  # the bottom of a binade, where the interval below is narrower
            v = math.ldexp(1.0, rng.randint(-80, 59))
            if rng.random() < 0.5:
                v = math.nextafter(v, math.inf)
        else:
            v = rng.uniform(-1000, 1000)
        out.append([struct.pack("<d", v).hex(), json.dumps(v)])
    return out


def main(argv):
    if len(argv) == 3 and argv[1] == "--floats":
        json.dump({"floats": floats(int(argv[2]))}, sys.stdout)
    elif len(argv) == 3 and argv[1] == "--bench":
        json.dump(bench(int(argv[2])), sys.stdout)
    elif len(argv) == 3 and argv[1] == "--fuzz-seeds":
        fuzz_seeds(argv[2])
        return 0
    elif len(argv) == 1:
        json.dump({"cases": cases()}, sys.stdout, indent=1)
    else:
        sys.stderr.write(__doc__)
        return 2
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
