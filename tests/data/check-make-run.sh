#!/bin/sh
# `make run` without a configuration (scripts/run-dev.sh): rows must flow from the simulated
# org into the simulated Loki within a minute, and a stop request must end everything (a
# background job ignores SIGINT, so this sends the SIGTERM that run-dev.sh passes on, as it
# does for the SIGINT of a Ctrl-C).
# usage: check-make-run.sh path/to/sf2loki
set -eu
BIN=${1:?usage: check-make-run.sh path/to/sf2loki}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
LOG="$WORK/run.log"
trap 'kill -TERM $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT

if ! /usr/bin/python3 -c 'import jwt, cryptography' 2>/dev/null; then
	echo "SKIP: python3-jwt or python3-cryptography missing"
	exit 77
fi

SF2LOKI_DEV_DIR="$WORK/dev" sh "$ROOT/scripts/run-dev.sh" "$BIN" >"$LOG" 2>&1 &
PID=$!

# the first progress line that reports entries Loki accepted; tail -f waits for the writes
if ! timeout 60 tail -n +1 -f "$LOG" |
	grep -q -m 1 -E 'progress: [0-9]+ rows read, [1-9][0-9]* entries pushed'; then
	echo "FAIL: no entries reached the simulated Loki within 60 s" >&2
	cat "$LOG" >&2
	exit 1
fi
grep -m 1 -E 'progress: ' "$LOG"

kill -TERM $PID
if ! timeout 30 tail --pid="$PID" -f /dev/null; then
	echo "FAIL: make run did not stop" >&2
	exit 1
fi
if ! grep -q 'sf2loki stopped' "$LOG"; then
	echo "FAIL: sf2loki did not log an orderly stop" >&2
	cat "$LOG" >&2
	exit 1
fi
if pgrep -f "$WORK/dev" >/dev/null; then
	echo "FAIL: a simulator or sf2loki outlived the demo" >&2
	exit 1
fi
echo "ok: rows flowed and the stop ended the demo"
