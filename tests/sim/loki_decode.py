#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""Decode a Loki push body with third-party code and print it as normalised JSON.

usage: loki_decode.py BODY_FILE --encoding protobuf|json [--compression snappy|gzip|none]

Protobuf bodies are snappy raw blocks (python3-snappy) holding a PushRequest parsed with
python3-protobuf classes generated at run time by protoc from loki_push_reference.proto. The
label string is parsed here with a Prometheus-selector reader, independently of the encoder.

Output: {"streams": [{"labels": {name: value}, "entries": [{"ts": "<ns>", "line": str,
"metadata": {name: value}}]}]}; "metadata" is present only when the entry has some, and
"labels_raw" carries the protobuf label string verbatim.
Exit 77 (skip) when protoc or a Python module is missing.
"""

import argparse
import gzip
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def parse_label_string(text):
    """{a="x", b="y"} -> dict, with Go-style \\\\, \\" and \\n escapes in values."""
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"label string not in braces: {text!r}")
    body, i, out = text[1:-1], 0, {}
    while i < len(body):
        while body[i] in " ,":
            i += 1
        eq = body.index("=", i)
        name = body[i:eq]
        if not name or not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
            raise ValueError(f"bad label name {name!r}")
        if body[eq + 1] != '"':
            raise ValueError(f"unquoted value for {name!r}")
        j, value = eq + 2, []
        while body[j] != '"':
            if body[j] == "\\":
                esc = body[j + 1]
                value.append({"\\": "\\", '"': '"', "n": "\n"}[esc])
                j += 2
            else:
                if body[j] == "\n":
                    raise ValueError("raw newline in label value")
                value.append(body[j])
                j += 1
        if name in out:
            raise ValueError(f"duplicate label {name!r}")
        out[name] = "".join(value)
        i = j + 1
        if i < len(body) and body[i] != ",":
            raise ValueError(f"expected comma at {i} in {text!r}")
    return out


def load_push_pb2(workdir):
    protoc = shutil.which("protoc")
    if protoc is None:
        print("protoc not found (Debian package protobuf-compiler)", file=sys.stderr)
        sys.exit(SKIP)
    args = [protoc, f"-I{HERE}", f"--python_out={workdir}"]
    if os.path.isdir("/usr/include/google/protobuf"):
        args.append("-I/usr/include")
    subprocess.run(args + ["loki_push_reference.proto"], check=True, cwd=HERE)
    sys.path.insert(0, workdir)
    return importlib.import_module("loki_push_reference_pb2")


def decode_protobuf(data):
    try:
        import snappy  # python3-snappy: compress/uncompress are the raw block format
    except ImportError:
        print("python3-snappy missing", file=sys.stderr)
        sys.exit(SKIP)
    raw = snappy.uncompress(data)
    with tempfile.TemporaryDirectory() as workdir:
        pb2 = load_push_pb2(workdir)
        req = pb2.PushRequest.FromString(raw)
    streams = []
    for s in req.streams:
        if s.hash != 0:
            raise ValueError("client set StreamAdapter.hash")
        entries = []
        for e in s.entries:
            if len(e.parsed) != 0:
                raise ValueError("client set EntryAdapter.parsed")
            ts = e.timestamp.seconds * 1_000_000_000 + e.timestamp.nanos
            entry = {"ts": str(ts), "line": e.line}
            if len(e.structuredMetadata) > 0:
                entry["metadata"] = {p.name: p.value for p in e.structuredMetadata}
            entries.append(entry)
        streams.append({"labels": parse_label_string(s.labels), "labels_raw": s.labels,
                        "entries": entries})
    return {"format": req.format, "streams": streams}


def decode_json(data):
    doc = json.loads(data.decode("utf-8"))
    streams = []
    for s in doc["streams"]:
        entries = []
        for v in s["values"]:
            if not isinstance(v[0], str) or not v[0].lstrip("-").isdigit():
                raise ValueError(f"timestamp must be a decimal string: {v[0]!r}")
            entry = {"ts": v[0], "line": v[1]}
            if len(v) == 3:
                if not all(isinstance(x, str) for x in v[2].values()):
                    raise ValueError("structured metadata values must be strings")
                entry["metadata"] = v[2]
            elif len(v) != 2:
                raise ValueError(f"bad value tuple {v!r}")
            entries.append(entry)
        streams.append({"labels": s["stream"], "entries": entries})
    return {"streams": streams}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("body")
    ap.add_argument("--encoding", choices=["protobuf", "json"], required=True)
    ap.add_argument("--compression", choices=["snappy", "gzip", "none"], default="none")
    opts = ap.parse_args()
    with open(opts.body, "rb") as f:
        data = f.read()
    if opts.compression == "gzip":
        data = gzip.decompress(data)
    if opts.encoding == "protobuf":
        out = decode_protobuf(data)
    else:
        out = decode_json(data)
    json.dump(out, sys.stdout, ensure_ascii=True, sort_keys=True, indent=1)
    print()


if __name__ == "__main__":
    main()
