# helpers.bash: what every tests/*.bats file loads.
#
# make check exports NSDEDUP (the program under test), TOP_SRCDIR and
# NSD_SHARED_DATA. Each test runs in its own scratch directory, and
# run_nsd keeps stdout ($output) and stderr ($stderr) apart so that both
# can be checked, along with $status.

bats_require_minimum_version 1.5.0

: "${NSDEDUP:?run the tests through make check}"
: "${TOP_SRCDIR:?run the tests through make check}"

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# Run nsdedup with stdout and stderr captured separately.
run_nsd() {
	run --separate-stderr "$NSDEDUP" "$@"
}

# A long sentence (more than 30 characters) that nshash will fingerprint.
sentence() {
	printf 'Sentence number %s is long enough to be fingerprinted by nshash' "$1"
}

# A JSON record with id $1 and text $2 (given as JSON string content).
record() {
	printf '{"id":"%s","text":"%s"}\n' "$1" "$2"
}

# The ids and similar_ids of nsdedup's JSON output $1, one pair a line.
groups_of() {
	printf '%s\n' "$1" |
	    sed 's/.*"id":"\([^"]*\)".*"similar_id":"\([^"]*\)".*/\1 \2/'
}

# The JSONTestSuite parsing files in the shared data (tests skip without).
suite_dir() {
	printf '%s/jsontestsuite/test_parsing' "$NSD_SHARED_DATA"
}

# Fail with a message showing what was expected and what came out.
expect_eq() {
	if [ "$1" != "$2" ]; then
		printf 'expected: %s\nactual:   %s\n' "$2" "$1" >&2
		return 1
	fi
}
