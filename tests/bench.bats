#!/usr/bin/env bats
# bench/run.sh against a baseline: the nsdedup commands are timed with both
# programs, a run of one and a run of the other in turn, and the report
# says whether this nsdedup keeps 95% of the baseline's throughput. The
# programs here are wrappers that log each call and may sleep, so that the
# order of the runs and the verdict are known in advance; nothing here
# measures nsdedup's speed.

load helpers

: "${GENCORPUS:?run the tests through make check}"

setup() {
	need jq
	export TMPDIR=$BATS_TEST_TMPDIR
	export NSD_SHARED_DATA=$BATS_TEST_TMPDIR/no-shared-data
	calls=$BATS_TEST_TMPDIR/calls
}

# Write an executable wrapper $1 around nsdedup that logs "$2 ARGS" to
# $calls, sleeps $3 seconds (when given) before each fingerprinting run,
# and runs nsdedup.
wrapper() {
	cat > "$1" <<EOF
#!/bin/sh
echo "$2 \$*" >> '$calls'
case "\$1" in --annotate|--drop-dups|-m) sleep ${3:-0} ;; esac
exec '$NSDEDUP' "\$@"
EOF
	chmod +x "$1"
}

# Run bench/run.sh on a 2 MiB corpus, 2 runs each, without the index at
# scale; extra arguments are passed on.
bench() {
	run env GENCORPUS="$GENCORPUS" NSD_BENCH_NO_HYPERFINE=1 \
	    NSD_BENCH_NO_STRACE=1 \
	    bash "${RUN_SH:-$TOP_SRCDIR/bench/run.sh}" --size 2M --runs 2 \
	    --no-scale --out "$BATS_TEST_TMPDIR/report.md" "$@"
}

# Whether the source tree is a git checkout of its own (make distcheck's
# copy lies inside one, and is not).
own_checkout() {
	local top
	top=$(git -C "$TOP_SRCDIR" rev-parse --show-toplevel 2>/dev/null) ||
		return 1
	[ "$(cd "$top" && pwd -P)" = "$(cd "$TOP_SRCDIR" && pwd -P)" ]
}

# The baseline section's lines of the report.
baseline_rows() {
	sed -n '/^## Against a baseline/,/^## Memory/p' \
	    "$BATS_TEST_TMPDIR/report.md" | grep '^| `\$NSDEDUP'
}

@test "bench/run.sh --baseline times the two programs in turn, ABBA" {
	wrapper "$BATS_TEST_TMPDIR/this" A
	wrapper "$BATS_TEST_TMPDIR/base" B
	NSDEDUP=$BATS_TEST_TMPDIR/this bench --baseline "$BATS_TEST_TMPDIR/base"
	[ "$status" -eq 0 ]
	[[ $output == *"wrote $BATS_TEST_TMPDIR/report.md"* ]]
	# Plain --annotate of the corpus: 1 + 2 runs for the main table, then
	# one untimed run of each program and the timed runs A B, B A.
	run sh -c "grep -E '^[AB] --annotate [^ ]+\$' '$calls' | cut -c 1 |
	    tr -d '\n'"
	[ "$output" = "AAAABABBA" ]
	# Every command of the section ran 1 + 2 times with the baseline.
	run sh -c "grep '^B ' '$calls' | grep -vc -- ' --version\$'"
	[ "$output" -eq 15 ]
	run baseline_rows
	[ "${#lines[@]}" -eq 5 ]
	grep -q "^Written by \`bench/run.sh --size 2M --runs 2 --seed 1 --baseline $BATS_TEST_TMPDIR/base\`" \
	    "$BATS_TEST_TMPDIR/report.md"
	grep -q "^Baseline: \`nsdedup [0-9.]*\`, $BATS_TEST_TMPDIR/base (sha256 [0-9a-f]*\\.\\.\\.)" \
	    "$BATS_TEST_TMPDIR/report.md"
}

@test "bench/run.sh --baseline: a slower nsdedup does not meet the 95% target" {
	wrapper "$BATS_TEST_TMPDIR/this" A 0.1
	wrapper "$BATS_TEST_TMPDIR/base" B
	NSDEDUP=$BATS_TEST_TMPDIR/this bench --baseline "$BATS_TEST_TMPDIR/base"
	[ "$status" -eq 0 ]
	[[ $output == *"| throughput >= 95% of the baseline's, every command | lowest share 0."*" | NOT MET |"* ]]
	# Each row's share is the baseline's median over this one's, and
	# well under 1 here.
	run baseline_rows
	for row in "${lines[@]}"; do
		awk -F' \\| ' '{ exit !($4 < 0.95 && $4 > 0 &&
		    ($4 - $3 / $2) ^ 2 < 0.001 ^ 2) }' <<< "$row"
	done
}

@test "bench/run.sh --baseline: a slower baseline meets the 95% target" {
	wrapper "$BATS_TEST_TMPDIR/this" A
	wrapper "$BATS_TEST_TMPDIR/base" B 0.1
	NSDEDUP=$BATS_TEST_TMPDIR/this bench --baseline "$BATS_TEST_TMPDIR/base"
	[ "$status" -eq 0 ]
	[[ $output == *"| throughput >= 95% of the baseline's, every command | lowest share "[1-9]*" | MET |"* ]]
}

@test "bench/run.sh --baseline: bad baselines are refused before any timing" {
	bench --baseline "$BATS_TEST_TMPDIR/missing"
	[ "$status" -eq 1 ]
	[ "$output" = "bench/run.sh: $BATS_TEST_TMPDIR/missing: not an executable (--baseline)" ]
	bench --baseline "$NSDEDUP" --baseline-rev HEAD
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "bench/run.sh: --baseline and --baseline-rev exclude each other" ]
	[ ! -e "$BATS_TEST_TMPDIR/report.md" ]
}

@test "bench/run.sh --baseline-rev builds the revision and names it" {
	own_checkout || skip "the source tree is not a git checkout"
	command -v autoreconf > /dev/null || skip "autoreconf is not installed"
	bench --baseline-rev no-such-revision
	[ "$status" -eq 1 ]
	[ "$output" = "bench/run.sh: --baseline-rev: 'no-such-revision' is not a revision of $TOP_SRCDIR" ]
	bench --baseline-rev HEAD
	[ "$status" -eq 0 ]
	[[ $output == *"building the baseline from HEAD ($(git -C "$TOP_SRCDIR" rev-parse HEAD))"* ]]
	grep -q "^Baseline: \`nsdedup [0-9.]*\`, built from git revision HEAD ($(git -C "$TOP_SRCDIR" rev-parse --short HEAD), \"" \
	    "$BATS_TEST_TMPDIR/report.md"
	run baseline_rows
	[ "${#lines[@]}" -eq 5 ]
}

@test "bench/run.sh --baseline-rev outside a git checkout says so" {
	command -v git > /dev/null || skip "git is not installed"
	mkdir "$BATS_TEST_TMPDIR/copy"
	cp "$TOP_SRCDIR/bench/run.sh" "$TOP_SRCDIR/bench/common.sh" \
	    "$BATS_TEST_TMPDIR/copy/"
	git -C "$BATS_TEST_TMPDIR" rev-parse --git-dir > /dev/null 2>&1 &&
		skip "the test's temporary directory is inside a checkout"
	RUN_SH=$BATS_TEST_TMPDIR/copy/run.sh bench --baseline-rev HEAD
	[ "$status" -eq 1 ]
	[ "$output" = "bench/run.sh: --baseline-rev: $BATS_TEST_TMPDIR is not a git checkout" ]
	[ ! -e "$BATS_TEST_TMPDIR/report.md" ]
}
