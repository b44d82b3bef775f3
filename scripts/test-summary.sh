#!/bin/sh
# Prints one closing line for a meson test run, counting GTest cases (TAP subtests):
#   tests: N passed, N failed, N skipped
# then one line per skip with the binary, the case and the reason the test gave, so a skip is
# never silent (docs/testing.md lists the expected ones, e.g. under wine).
# Exits non-zero when anything failed, so CI cannot mistake a broken run for a green one.
set -eu
BUILD_DIR=${1:-build-asan}
LOG="$BUILD_DIR/meson-logs/testlog.json"
if [ ! -f "$LOG" ]; then
	echo "test-summary: $LOG not found (did meson test run?)" >&2
	exit 1
fi
exec /usr/bin/python3 - "$LOG" <<'PY'
import json, re, sys

passed = failed = skipped = 0
binaries_failed = []
skips = []
# GTest writes "ok 3 /path # SKIP reason", the platform suite "ok 3 - name # SKIP reason"
skip_re = re.compile(r"^ok \d+ (?:- )?(.*?)\s*# SKIP\s*(.*)$")
for line in open(sys.argv[1], encoding="utf-8"):
    rec = json.loads(line)
    out = rec.get("stdout") or ""
    cases = 0
    for l in out.splitlines():
        m = skip_re.match(l)
        if m:
            skipped += 1
            cases += 1
            skips.append(f"{rec['name']}: {m.group(1)}: {m.group(2) or '(no reason given)'}")
        elif re.match(r"^ok \d+", l):
            passed += 1
            cases += 1
        elif re.match(r"^not ok \d+", l):
            failed += 1
            cases += 1
    if rec["result"] not in ("OK", "SKIP", "EXPECTEDFAIL"):
        binaries_failed.append(rec["name"])
        if cases == 0:
            failed += 1
    elif cases == 0 and rec["result"] == "OK":
        passed += 1
    elif cases == 0 and rec["result"] == "SKIP":
        # a whole program that exited 77 (a prerequisite missing) counts as one skip
        skipped += 1
        skips.append(f"{rec['name']}: (the whole program): exit status 77")
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
for s in skips:
    print(f"  skipped {s}")
if binaries_failed:
    print("failed binaries: " + ", ".join(binaries_failed), file=sys.stderr)
sys.exit(1 if failed or binaries_failed else 0)
PY
