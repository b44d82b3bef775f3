#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""The original's log timestamps, rendered by Python itself: tests/unit/test-log.c's oracle.

structlog's TimeStamper(fmt="iso", utc=True) is datetime.isoformat() of the UTC time, with
"+00:00" written as "Z". Prints one "USEC STAMP" line per argument (microseconds since the
epoch). test-log runs it as a child; the Windows build runs it at build time instead (wine
cannot start a Linux python3) and hands the test its output.
"""

import datetime
import sys


def stamp(usec):
    d = datetime.datetime.fromtimestamp(usec // 1000000, tz=datetime.timezone.utc)
    return d.replace(microsecond=usec % 1000000).isoformat().replace("+00:00", "Z")


def main(argv):
    if len(argv) < 2:
        print("usage: iso_timestamps.py USEC...", file=sys.stderr)
        return 2
    for arg in argv[1:]:
        print(arg, stamp(int(arg)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
