#!/usr/bin/env bats
# The fuzzing harnesses of fuzz/, replayed over their regression files in
# tests/data/fuzz/HARNESS/ (findings of make fuzz, and hand-made inputs at
# the edges), built with the normal compiler: each must run every file
# without breaking a property (an abort) or crashing.

load helpers

: "${FUZZ_REPLAY:?run the tests through make check}"

replay() {
	local dir="$TOP_SRCDIR/tests/data/fuzz/$1" f n=0
	for f in "$dir"/*; do
		[ -f "$f" ] && n=$((n + 1))
	done
	[ "$n" -gt 0 ] || { echo "no regression files in $dir"; return 1; }
	run --separate-stderr "$FUZZ_REPLAY-$1" "$dir"/*
	[ "$status" -eq 0 ] || { echo "$stderr"; return 1; }
	[ "$stderr" = "" ]
	[ "$(grep -c '^replayed ' <<< "$output")" -eq "$n" ]
}

@test "the JSON scanner replays its regression files" {
	replay json
}

@test "the TSV reader replays its regression files" {
	replay tsv
}

@test "normalization and splitting replay their regression files" {
	replay text
}

@test "index opening replays its regression files" {
	replay index
}

@test "a regression file that cannot be read fails the replay" {
	run --separate-stderr "$FUZZ_REPLAY-json" no-such-file
	[ "$status" -eq 2 ]
	[ -n "$stderr" ]
}
