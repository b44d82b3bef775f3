#!/bin/sh
# Runs each libFuzzer target for a while and prints what it did.
#
#   sh scripts/run-fuzz.sh BUILD_DIR SECONDS [TARGET...]
#
# Targets: every tests/fuzz/fuzz-TARGET.c, all by default, SECONDS each. BUILD_DIR is a tree
# configured with -Dfuzzing=true (clang); `make fuzz` sets one up.
#
# Each target first replays its past findings (tests/fuzz/crashes/TARGET-*), then fuzzes from a
# copy of its seed corpus tests/fuzz/corpus/TARGET in the work corpus WORK/TARGET, so the
# committed corpus is only ever read. WORK is FUZZ_WORK_DIR, by default .fuzz (gitignored),
# where the corpus keeps growing across runs; CI points it at a fresh temporary directory.
# Crashes, leaks, timeouts and out-of-memory inputs go to WORK/artifacts/; copy one into
# tests/fuzz/crashes/ to keep it as a regression input. A slow-unit input fails the run only
# when its replay alone is still slow (is_scheduling_stall below).
#
# Every target runs even when an earlier one fails; the exit status is 1 when any target had a
# finding or failed to run, and each failure is named with its input at the end.
set -eu

if [ "$#" -lt 2 ]; then
	echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
	exit 2
fi
build_dir=$1
seconds=$2
shift 2

# paths below are relative to the repository root
root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
case $build_dir in
/*) ;;
*) build_dir=$(pwd)/$build_dir ;;
esac
work_root=${FUZZ_WORK_DIR:-.fuzz}
case $work_root in
/*) ;;
*) work_root=$(pwd)/$work_root ;;
esac
cd "$root"

if [ "$#" -gt 0 ]; then
	targets=$*
else
	targets=$(for f in tests/fuzz/fuzz-*.c; do
		t=${f#tests/fuzz/fuzz-}
		echo "${t%.c}"
	done)
fi

failures=
fail() {
	echo "run-fuzz: FAILED [$1] $2" >&2
	failures="$failures
  [$1] $2"
}

# the first bytes of a finding, so a CI log alone is enough to start reproducing it
show_input() {
	echo "run-fuzz:   $1 ($(wc -c <"$1") bytes), first bytes:" >&2
	od -A d -c "$1" | head -n 16 | sed 's/^/run-fuzz:     /' >&2
}

run_target() {
	target=$1
	fuzzer=$build_dir/tests/fuzz/fuzz-$target
	seeds=tests/fuzz/corpus/$target
	work=$work_root/$target
	artifacts=$work_root/artifacts
	log=$work_root/fuzz-$target.log
	dict=tests/fuzz/$target.dict

	if [ ! -x "$fuzzer" ]; then
		fail "$target" "$fuzzer not found; configure $build_dir with -Dfuzzing=true (make fuzz)"
		return 0
	fi
	if [ ! -d "$seeds" ]; then
		fail "$target" "no seed corpus $seeds"
		return 0
	fi

	mkdir -p "$work" "$artifacts"
	cp -p "$seeds"/* "$work"/
	seed_count=$(find "$seeds" -type f | wc -l)

	# known past findings must stay fixed
	for input in tests/fuzz/crashes/"$target"-*; do
		[ -f "$input" ] || continue
		echo "run-fuzz: [$target] replaying $input"
		if ! "$fuzzer" -timeout=10 -rss_limit_mb=2048 "$input" >"$log" 2>&1; then
			tail -n 40 "$log" >&2
			fail "$target" "regression: $input fails again (log $log)"
			return 0
		fi
	done

	# only this run's artifacts count; older ones stay for inspection
	# (by name, not mtime: a finding in the first second shares the stamp's timestamp)
	stamp=$work_root/.run-stamp-$target
	find "$artifacts" -type f | sort >"$stamp.before"
	dict_arg=
	[ -f "$dict" ] && dict_arg="-dict=$dict"
	status=0
	# shellcheck disable=SC2086 # empty or one argument
	"$fuzzer" "$work" $dict_arg \
		-max_total_time="$seconds" \
		-max_len=65536 \
		-timeout=10 \
		-rss_limit_mb=2048 \
		-artifact_prefix="$artifacts/$target-" \
		-print_final_stats=1 >"$log" 2>&1 || status=$?
	find "$artifacts" -type f ! -name '*.replay.log' | sort | comm -13 "$stamp.before" - >"$stamp.found"
	found=$(wc -l <"$stamp.found")

	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	corpus_count=$(find "$work" -type f | wc -l)
	corpus_bytes=$(du -sk "$work" | cut -f 1)

	echo "run-fuzz: [$target] seed corpus:  $seed_count files ($seeds)"
	echo "run-fuzz: [$target] work corpus:  $corpus_count files, ${corpus_bytes} KiB ($work)"
	echo "run-fuzz: [$target] executions:   ${execs:-unknown} (${rate:-?} exec/s) in ${seconds}s"
	echo "run-fuzz: [$target] findings:     $found, exit status $status (log $log)"
	if [ "$found" -gt 0 ] || [ "$status" -ne 0 ]; then
		# the report: the sanitizer's or the target's message and the stack
		grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|INITED|RELOAD)|^INFO: ' "$log" |
			tail -n 60 >&2
		if [ "$found" -eq 0 ]; then
			fail "$target" "exited with status $status without saving an input (log $log)"
			return 0
		fi
		while IFS= read -r input; do
			show_input "$input"
			if is_scheduling_stall "$input"; then
				echo "run-fuzz: [$target] $input was slow once but replays within" \
					"${slow_replay_seconds}s: a stall of the machine, not a finding" >&2
				continue
			fi
			fail "$target" "$input (reproduce: $fuzzer $input)"
		done <"$stamp.found"
	fi
}

# libFuzzer saves a slow-unit-* input when one execution took longer than its report threshold
# (10 s) without reaching -timeout; on a shared CI machine a stall of the whole process does
# that too. Such an input counts only when replaying it alone is still slow: an input that
# really costs seconds fails here, one that ran during a stall does not.
slow_replay_seconds=2
is_scheduling_stall() {
	case ${1##*/} in
	*-slow-unit-*) ;;
	*) return 1 ;;
	esac
	"$fuzzer" -timeout="$slow_replay_seconds" -rss_limit_mb=2048 "$1" >"$1.replay.log" 2>&1
}

# sanitizer reports must stop the run, and the leak suppressions are the test suite's
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/tests/lsan.supp:print_suppressions=0}"

mkdir -p "$work_root"
count=0
for t in $targets; do
	run_target "$t"
	count=$((count + 1))
done

if [ -n "$failures" ]; then
	echo "run-fuzz: findings in $count targets, ${seconds}s each:$failures" >&2
	exit 1
fi
echo "run-fuzz: $count targets, ${seconds}s each: no findings"
