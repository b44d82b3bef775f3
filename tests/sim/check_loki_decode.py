#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""Meson test: our encoder's bodies, decoded by third-party code, must match a hand-written
expectation, and all three encodings must carry the same streams.

usage: check_loki_decode.py TEST_LOKI_ENCODE_BINARY
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = [
    ("sample.pb.snappy", "protobuf", "none"),
    ("sample.json", "json", "none"),
    ("sample.json.gz", "json", "gzip"),
]


def expected_for(expected, encoding):
    streams = expected["streams"]
    if encoding == "protobuf":
        return {"format": "", "streams": streams}
    # the JSON body carries labels as an object only
    return {"streams": [{k: v for k, v in s.items() if k != "labels_raw"} for s in streams]}


def main():
    binary = sys.argv[1]
    with open(os.path.join(HERE, "loki-sample.expected.json"), encoding="utf-8") as f:
        expected = json.load(f)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([binary, "--write-sample", tmp], check=True)
        for name, encoding, compression in SAMPLES:
            proc = subprocess.run(
                [sys.executable, os.path.join(HERE, "loki_decode.py"), os.path.join(tmp, name),
                 "--encoding", encoding, "--compression", compression],
                stdout=subprocess.PIPE, check=False)
            if proc.returncode == 77:
                print(f"skip: {name}: decoder prerequisites missing")
                return 77
            if proc.returncode != 0:
                print(f"FAIL {name}: decoder exited {proc.returncode}")
                failed = True
                continue
            got = json.loads(proc.stdout)
            want = expected_for(expected, encoding)
            if got != want:
                print(f"FAIL {name}:\n got: {json.dumps(got, sort_keys=True)}\n"
                      f"want: {json.dumps(want, sort_keys=True)}")
                failed = True
            else:
                print(f"ok {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
