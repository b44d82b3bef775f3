#!/bin/sh
# Runs each libFuzzer target for a while and prints what it did.
#
#   sh scripts/run-fuzz.sh BUILD_DIR SECONDS [TARGET...]
#
# Targets: config (the YAML config loader), state-doc (the checkpoint document parser), csv
# (the EventLogFile CSV push parser), avro (the Pub/Sub payload decoder); all by default,
# SECONDS each. BUILD_DIR is a tree configured with -Dfuzzing=true (clang); `make fuzz` sets
# one up. The seed corpus
# tests/fuzz/corpus/TARGET is copied into the work corpus .fuzz/TARGET (gitignored), which
# keeps growing across runs. Crashes, leaks and timeouts go to .fuzz/artifacts/; copy one into
# tests/fuzz/crashes/ to keep it as a regression input (every file there is replayed first).
set -eu

if [ "$#" -lt 2 ]; then
	echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
	exit 2
fi
build_dir=$1
seconds=$2
shift 2
targets=${*:-config state-doc csv avro}

# paths below are relative to the repository root
root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
case $build_dir in
/*) ;;
*) build_dir=$(pwd)/$build_dir ;;
esac
cd "$root"

run_target() {
	target=$1
	fuzzer=$build_dir/tests/fuzz/fuzz-$target
	seeds=tests/fuzz/corpus/$target
	work=.fuzz/$target
	artifacts=.fuzz/artifacts
	log=.fuzz/fuzz-$target.log
	dict=tests/fuzz/$target.dict

	if [ ! -x "$fuzzer" ]; then
		echo "run-fuzz: $fuzzer not found; configure $build_dir with -Dfuzzing=true (make fuzz)" >&2
		exit 1
	fi

	mkdir -p "$work" "$artifacts"
	cp -p "$seeds"/* "$work"/
	seed_count=$(find "$seeds" -type f | wc -l)

	# known past findings must stay fixed
	for input in tests/fuzz/crashes/"$target"-*; do
		[ -f "$input" ] || continue
		echo "run-fuzz: replaying $input"
		"$fuzzer" -timeout=10 "$input" >/dev/null 2>&1 || {
			echo "run-fuzz: regression: $input fails again" >&2
			exit 1
		}
	done

	# only this run's artifacts count; older ones stay for inspection
	stamp=.fuzz/.run-stamp
	touch "$stamp"
	dict_arg=
	[ -f "$dict" ] && dict_arg="-dict=$dict"
	{
		status=0
		# shellcheck disable=SC2086 # empty or one argument
		"$fuzzer" "$work" "$seeds" $dict_arg \
			-max_total_time="$seconds" \
			-max_len=65536 \
			-timeout=10 \
			-artifact_prefix="$artifacts/" \
			-print_final_stats=1 2>&1 || status=$?
		# a pipeline's status is the last command's, so the fuzzer's goes through a file
		echo "$status" >.fuzz/.status
	} | tee "$log"
	status=$(cat .fuzz/.status)
	found=$(find "$artifacts" -type f -newer "$stamp" | wc -l)

	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	corpus_count=$(find "$work" -type f | wc -l)
	corpus_bytes=$(du -sk "$work" | cut -f 1)

	echo
	echo "run-fuzz: [$target] seed corpus:  $seed_count files ($seeds)"
	echo "run-fuzz: [$target] work corpus:  $corpus_count files, ${corpus_bytes} KiB ($work)"
	echo "run-fuzz: [$target] executions:   ${execs:-unknown} (${rate:-?} exec/s) in ${seconds}s"
	echo "run-fuzz: [$target] findings:     $found in $artifacts/"
	if [ "$found" -gt 0 ]; then
		find "$artifacts" -type f -newer "$stamp" | sed 's/^/run-fuzz:   /'
		exit 1
	fi
	[ "$status" -eq 0 ] || exit "$status"
}

# sanitizer reports must stop the run, and the leak suppressions are the test suite's
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/tests/lsan.supp:print_suppressions=0}"

for t in $targets; do
	run_target "$t"
done
