#!/usr/bin/env bats
# progress.bats: what a run says of itself while it runs and at its end.
# SIGUSR1 asks for one progress line and the run goes on; --progress=always
# into a file writes plain lines, never a terminal's escapes; --stats=json
# is one JSON object.

load helpers

: "${GENCORPUS:?run the tests through make check}"

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$GENCORPUS" --records 3000 --seed 3 > big.jsonl
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	cp "$BATS_FILE_TMPDIR"/big.jsonl .
}

# Wait (60 seconds at most) until file $1 has a line.
wait_line() {
	for _ in $(seq 1200); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	echo "$1 stayed empty"
	return 1
}

# Run nsdedup with the arguments given over big.jsonl fed through a FIFO:
# once it has written the first $1 records and waits for more, send it
# SIGUSR1 $2 times (the next once the first line is out), then feed the
# rest. Its output goes to sig.out, its standard error to sig.err; sets
# rc to its status.
usr1_midrun() {
	local first=$1 times=$2

	shift 2
	[ -d /proc/self/fd ] || skip "no /proc/PID/fd to follow the run"
	mkfifo feed
	"$NSDEDUP" "$@" feed > sig.out 2> sig.err 3>&- &
	pid=$!
	feed_open "$pid"
	head -n "$first" big.jsonl >&8
	# The input stalls: what was read is written, and the run waits.
	wait_lines sig.out "$first"
	kill -USR1 "$pid"
	wait_line sig.err
	for ((i = 1; i < times; i++)); do
		kill -USR1 "$pid"
	done
	tail -n +$((first + 1)) big.jsonl >&8
	exec 8>&-
	rc=0
	wait "$pid" || rc=$?
}

@test "SIGUSR1 mid-run: one progress line, the run goes on, the same output" {
	"$NSDEDUP" big.jsonl > want.out
	usr1_midrun 500 1
	expect_eq "$rc" 0
	cmp sig.out want.out
	# A pipe has no size: no share read, no time left.
	[ "$(wc -l < sig.err)" -eq 1 ]
	[[ $(cat sig.err) =~ ^"nsdedup: 500 records, "[0-9]+" duplicates, "[0-9.]+" MB, "[0-9.]+" MB/s"$ ]]
}

@test "SIGUSR1 while the index is written to: the run commits as without it" {
	"$NSDEDUP" --db ref.db big.jsonl > want.out
	usr1_midrun 1000 2 --db db -q
	expect_eq "$rc" 0
	cmp sig.out want.out
	# Asked for even with -q; the second may come before or after the end.
	[ "$(wc -l < sig.err)" -ge 1 ]
	[ "$(grep -cv '^nsdedup: [0-9]* records, ' sig.err)" -eq 0 ]
	# The index is the one a run without the signal makes.
	cmp <("$NSDEDUP" --db db --no-update big.jsonl) \
	    <("$NSDEDUP" --db ref.db --no-update big.jsonl)
}

@test "--progress=always into a file: plain lines, the last with the totals" {
	nsd_to out --progress=always big.jsonl
	[ "$status" -eq 0 ]
	cmp out <("$NSDEDUP" big.jsonl)
	# No carriage return, no escape: lines a log can keep.
	[ "$(grep -c $'[\r\033]' <<< "$stderr")" -eq 0 ]
	last=${stderr##*$'\n'}
	[[ $last =~ ^"nsdedup: 3000 records, "[0-9]+" duplicates, "[0-9.]+" MB, "[0-9.]+" MB/s, 100% read"$ ]]
}

@test "--progress=always over a compressed file counts its compressed bytes" {
	gzip -c big.jsonl > big.gz ||
	    skip "gzip cannot make the test's input"
	"$NSDEDUP" --version | grep -q '^compressed inputs: .*gzip' ||
	    skip "nsdedup is built without gzip"
	nsd_to out --progress=always big.gz
	[ "$status" -eq 0 ]
	[[ ${stderr##*$'\n'} == *", 100% read" ]]
}

@test "--progress=always over standard input from a pipe says no share" {
	nsd_to out --progress=always < <(cat big.jsonl)
	[ "$status" -eq 0 ]
	[[ ${stderr##*$'\n'} =~ ^"nsdedup: 3000 records, "[0-9]+" duplicates, "[0-9.]+" MB, "[0-9.]+" MB/s"$ ]]
}

@test "--quiet silences --progress=always" {
	nsd_to out -q --progress=always big.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "--stats=json is one JSON object that jq reads, with the run's status" {
	need jq
	nsd_to out --stats=json big.jsonl
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	expect_eq "$(jq -c '[.status, .files, .records, .duplicates + .originals, .bad]' <<< "$stderr")" \
	    "[0,1,3000,3000,0]"
	expect_eq "$(jq -r '.index | keys | join(",")' <<< "$stderr")" \
	    "entries,groups,mapped_bytes,memory_bytes,peak_bytes"
	expect_eq "$(jq -r '.bytes' <<< "$stderr")" "$(wc -c < big.jsonl)"
}

@test "--stats=json after bad records: the last line, with status 1" {
	need jq
	{ head -n 10 big.jsonl; echo '{"id":'; tail -n 5 big.jsonl; } > some.jsonl
	run_nsd --stats=json some.jsonl
	[ "$status" -eq 1 ]
	[[ $stderr == "nsdedup: some.jsonl:11: "* ]]
	expect_eq "$(jq -c '[.status, .records, .bad]' <<< "${stderr##*$'\n'}")" \
	    "[1,16,1]"
}

@test "--stats with no value is the text summary; --stats=xml is refused" {
	nsd_to out --stats big.jsonl
	[ "$status" -eq 0 ]
	[[ ${stderr%%$'\n'*} == "nsdedup: records     3000" ]]
	run_nsd --stats=xml big.jsonl
	usage_error "invalid value 'xml' for --stats (valid: text, json)"
}
