#!/usr/bin/env bats
# The hot loops have a plain C version, an SSE2 one and an AVX2 one (taken
# when the processor has it; src/cpu.h); NSDEDUP_SIMD=portable or sse2
# keeps a run to the first or the first two. Every version must give the
# same results: tests/unit/simd_test holds each to references written from
# the definitions, the other unit tests and the fuzzing replays run under
# each, and nsdedup writes the same bytes, messages and status under each.

load helpers

: "${UNIT_TESTS:?run the tests through make check}"
: "${FUZZ_REPLAY:?run the tests through make check}"
: "${GENCORPUS:?run the tests through make check}"

# The versions this processor runs: portable and sse2 everywhere x86-64
# runs, avx2 when it has it (what simd_test says it uses by default).
levels() {
	local best
	best=$("$UNIT_TESTS/simd_test" | sed -n 's/^# versions in use: //p')
	case $best in
	avx2) echo portable sse2 avx2 ;;
	sse2) echo portable sse2 ;;
	*) echo portable ;;
	esac
}

@test "simd_test passes with each version of the hot loops" {
	for level in $(levels); do
		run --separate-stderr env NSDEDUP_SIMD="$level" \
		    "$UNIT_TESTS/simd_test"
		[ "$status" -eq 0 ] || { echo "$level: $output"; false; }
		[ "${lines[0]}" = "# versions in use: $level" ]
		[ -z "$stderr" ]
	done
	[ "$(levels | wc -w)" -ge 2 ] || skip "only the portable version here"
}

@test "the unit tests and the fuzzing replays pass with each version" {
	for level in $(levels); do
		for t in json_test nshash_test simhash_test sketch_test \
		    minhash_test hanfold_test; do
			run --separate-stderr env NSDEDUP_SIMD="$level" \
			    "$UNIT_TESTS/$t"
			[ "$status" -eq 0 ] ||
				{ echo "$level $t: $output"; false; }
		done
		for h in json text tsv; do
			run env NSDEDUP_SIMD="$level" "$FUZZ_REPLAY-$h" \
			    "$TOP_SRCDIR/tests/data/fuzz/$h"/*
			[ "$status" -eq 0 ] ||
				{ echo "$level $h: $output"; false; }
		done
	done
}

# Run nsdedup with each version and the arguments given; fail unless
# stdout, stderr and status are the same for all.
same_for_all_levels() {
	local level want_out want_err want_status first=1

	for level in $(levels); do
		run --separate-stderr env NSDEDUP_SIMD="$level" "$NSDEDUP" "$@"
		if [ "$first" = 1 ]; then
			want_out=$output want_err=$stderr want_status=$status
			first=0
			continue
		fi
		expect_eq "$status" "$want_status"
		expect_eq "$stderr" "$want_err"
		[ "$output" = "$want_out" ] ||
			{ echo "$level: stdout differs"; return 1; }
	done
}

@test "nsdedup writes the same with each version, both methods" {
	"$GENCORPUS" --seed 5 --size 3M --dup-rate 0.3 --edit-rate 0.5 \
	    --edit-strength every > c.jsonl
	# Records made of what the loops look at: white space of every kind,
	# full-width forms, delimiters, tags, broken UTF-8 in long strings.
	for n in 0 1 7 15 16 17 31 32 33 63 64 65; do
		pad=$(head -c "$n" /dev/zero | tr '\0' x)
		printf '{"id":"w%s","text":"%s\xe3\x80\x80\xe4\xb8\xad\xef\xbc\x8c \\n\\t\xc2\xa0\xe2\x80\xa8 %s. <p>\xe6\x96\x87\xe3\x80\x82 %s: \xef\xbd\x9e</p> %s"}\n' \
		    "$n" "$pad" "$(sentence "$n")" "$(sentence "$n")" "$pad"
		printf '{"id":"u%s","text":"%s\xe4\xb8\xad\xe4\xb8%s"}\n' \
		    "$n" "$pad" "$pad"
		printf '{"id":"c%s","text":"%s\x01%s"}\n' "$n" "$pad" "$pad"
	done >> c.jsonl
	same_for_all_levels --explain c.jsonl
	expect_eq "$status" 1
	[[ "$stderr" == *"invalid UTF-8"* ]]
	same_for_all_levels -m simhash --explain c.jsonl
	expect_eq "$status" 1
	same_for_all_levels --compat=nshash c.jsonl
	expect_eq "$status" 1
}

@test "nsdedup reads JSONTestSuite alike with each version" {
	[ -d "$(suite_dir)" ] || skip "JSONTestSuite not found in NSD_SHARED_DATA"
	for f in "$(suite_dir)"/*.json; do
		[ "$(tr -d '\n\r\0' < "$f" | wc -c)" -eq "$(wc -c < "$f")" ] ||
			continue
		{ printf '{"text":'; cat "$f"; printf '}\n'; } >> records.jsonl
	done
	same_for_all_levels records.jsonl
	[ "$status" -le 1 ]
}
