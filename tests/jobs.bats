#!/usr/bin/env bats
# --jobs: fingerprinting on several threads changes nothing that comes out.
# Output, messages, exit status and the index are byte for byte the same
# for 1, 2 and 8 threads, whatever the input: the shared corpora, a
# generated corpus many batches long (batches are about 1 MiB) with bad
# records, long lines and TSV among the JSON, every mode, and --db. And a
# run over a slow pipe writes each record out before the input ends.

load helpers

: "${GENCORPUS:?run the tests through make check}"
: "${NSD_INDEX_DUMP:?run the tests through make check}"

# mixed.jsonl: a 6 MiB generated corpus (about 6 batches) with bad records
# and a line longer than --max-line=64K in it; mixed.tsv: part of it as TSV.
setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$GENCORPUS" --seed 11 --size 6M --dup-rate 0.3 > gen.jsonl
	{
		head -n 700 gen.jsonl
		printf '{"id":"bad-1","text":}\n\n{"id":"bad-2"}\n'
		printf '{"id":"long","text":"%s"}\n' "$(head -c 70000 /dev/zero |
		    tr '\0' x)"
		tail -n +701 gen.jsonl
		printf '[1,2]\n{"id":"last","text":"\xff"}\n'
	} > mixed.jsonl
	printf 'id\ttext\n' > mixed.tsv
	head -n 300 gen.jsonl | sed 's/^{"id":"\([^"]*\)".*"text":"\([^"]*\)".*/\1\t\2/' \
	    >> mixed.tsv
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# Run nsdedup with -j1, -j2 and -j8 and the arguments given (its standard
# input from file $stdin, if set); fail unless the three runs agree on
# stdout, stderr and status (kept from the -j1 run: stdout in file out,
# stderr in $stderr, status in $status). The outputs go to files and are
# compared whole, by cmp: bats's run would hold each in a variable and
# split it into lines, which takes seconds for the shared corpora's.
same_for_all_jobs() {
	local j want_err want_status

	for j in 1 2 8; do
		status=0
		"$NSDEDUP" -j "$j" "$@" < "${stdin:-/dev/null}" > "out$j" \
		    2> "err$j" || status=$?
		stderr=$(cat "err$j")
		if [ "$j" = 1 ]; then
			want_err=$stderr want_status=$status
			continue
		fi
		expect_eq "$status" "$want_status"
		expect_eq "$stderr" "$want_err"
		cmp -s out1 "out$j" ||
			{ echo "-j $j: stdout differs from -j 1"; return 1; }
	done
	mv out1 out
	rm -f out2 out8 err1 err2 err8
	stderr=$want_err status=$want_status
}

# The number of lines of file $1 that are not empty (as bats's $lines
# counts them).
nonempty_lines() {
	grep -c . "$1" || true
}

@test "-j1, -j2 and -j8 agree on a corpus of many batches, in every mode" {
	f=$BATS_FILE_TMPDIR/mixed.jsonl
	same_for_all_jobs --max-line=64K --explain "$f"
	expect_eq "$status" 1
	[ "$(nonempty_lines out)" -gt 1500 ]
	[[ "$stderr" == *"mixed.jsonl:701: invalid JSON"* ]]
	[[ "$stderr" == *"line longer than 65536 bytes"* ]]
	same_for_all_jobs --max-line=64K --drop-dups "$f"
	expect_eq "$status" 1
	same_for_all_jobs --max-line=64K --only-dups -m simhash --explain "$f"
	expect_eq "$status" 1
	grep -q . out
	same_for_all_jobs --max-line=64K --on-error=skip -q "$f"
	expect_eq "$status" 1
	[ -z "$stderr" ]
}

@test "-j1, -j2 and -j8 stop at the same bad record, having written the same" {
	same_for_all_jobs --max-line=64K --on-error=fail \
	    "$BATS_FILE_TMPDIR/mixed.jsonl"
	expect_eq "$status" 5
	[[ "$stderr" == *"mixed.jsonl:701: stopped at this bad record"* ]]
	expect_eq "$(nonempty_lines out)" 700
}

@test "-j1, -j2 and -j8 agree over several inputs, TSV and stdin among them" {
	d=$BATS_FILE_TMPDIR
	stdin=$d/mixed.tsv same_for_all_jobs --explain "$d/gen.jsonl" \
	    "$d/mixed.tsv" - "$d/gen.jsonl"
	expect_eq "$status" 0
	expect_eq "$stderr" ""
	# The second gen.jsonl is all duplicates.
	[ "$(grep -c '"is_dup":false' out)" -gt 1000 ]
	same_for_all_jobs "$d/gen.jsonl" no-such-file "$d/gen.jsonl"
	expect_eq "$status" 3
	expect_eq "$stderr" "nsdedup: no-such-file: No such file or directory"
}

@test "-j1, -j2 and -j8 build the same index, and read it alike" {
	d=$BATS_FILE_TMPDIR
	head -n 800 "$d/gen.jsonl" > day1.jsonl
	tail -n +801 "$d/gen.jsonl" > day2.jsonl
	for j in 1 2 8; do
		mkdir "j$j"
		run_nsd -j "$j" --db "j$j/db" day1.jsonl
		[ "$status" -eq 0 ]
		printf '%s\n' "$output" > "j$j/day1.out"
		run_nsd -j "$j" --db "j$j/db" --no-update -D day2.jsonl
		[ "$status" -eq 0 ]
		printf '%s\n' "$output" > "j$j/check.out"
		run_nsd -j "$j" --db "j$j/db" day2.jsonl
		[ "$status" -eq 0 ]
		printf '%s\n' "$output" > "j$j/day2.out"
		"$NSD_INDEX_DUMP" "j$j/db" > "j$j/dump"
	done
	[ -s j1/check.out ]
	for j in 2 8; do
		for f in day1.out check.out day2.out dump; do
			cmp "j1/$f" "j$j/$f"
		done
	done
}

@test "-j1, -j2 and -j8 agree on each shared corpus, with both methods" {
	local found=0 gz
	for gz in "$NSD_SHARED_DATA"/*.jsonl.gz; do
		[ -e "$gz" ] || continue
		found=1
		gzip -dc "$gz" > corpus.jsonl
		same_for_all_jobs --explain corpus.jsonl
		[ "$status" -le 1 ]
		same_for_all_jobs -m simhash --explain corpus.jsonl
		[ "$status" -le 1 ]
	done
	[ "$found" = 1 ] || skip "no *.jsonl.gz corpora in NSD_SHARED_DATA"
}

@test "-j1 and -j8 build the same index from a shared corpus" {
	gz=$NSD_SHARED_DATA/zh_sina_news_2018.jsonl.gz
	[ -f "$gz" ] || skip "zh_sina_news_2018.jsonl.gz not found in NSD_SHARED_DATA"
	gzip -dc "$gz" > corpus.jsonl
	for j in 1 8; do
		# To a file: bats's run would split the output into lines.
		"$NSDEDUP" -j "$j" --db "db$j" --explain corpus.jsonl > "out$j"
		"$NSD_INDEX_DUMP" "db$j" > "dump$j"
	done
	cmp out1 out8
	cmp dump1 dump8
}

@test "records from a slow pipe come out before the input ends" {
	[ -d /proc/self/fd ] || skip "no /proc/PID/fd to follow the run"
	mkfifo feed
	"$NSDEDUP" -j 2 feed > out 2> err &
	pid=$!
	feed_open "$pid"
	head -n 3 "$BATS_FILE_TMPDIR/gen.jsonl" >&8
	wait_lines out 3
	head -n 5 "$BATS_FILE_TMPDIR/gen.jsonl" | tail -n 2 >&8
	wait_lines out 5
	exec 8>&-
	wait "$pid"
	[ ! -s err ]
	head -n 5 "$BATS_FILE_TMPDIR/gen.jsonl" | "$NSDEDUP" | cmp - out
}

@test "a pipe and a file give the same output" {
	f=$BATS_FILE_TMPDIR/gen.jsonl
	"$NSDEDUP" -j 2 "$f" > from-file
	# shellcheck disable=SC2002 # a pipe, not a redirected file
	cat "$f" | "$NSDEDUP" -j 2 > from-pipe
	cmp from-file from-pipe
}

@test "--jobs must be a number from 1 to 256" {
	for bad in 0 257 x ""; do
		run_nsd --jobs="$bad" "$BATS_FILE_TMPDIR/gen.jsonl"
		expect_eq "$status" 2
		expect_eq "$output" ""
		[[ "${lines[0]}" == "" ]]
		[[ "$stderr" == "nsdedup: "*"--jobs"* ]]
		[[ "$stderr" == *"Try 'nsdedup --help' for more information." ]]
	done
	run_nsd -j 256 "$BATS_FILE_TMPDIR/gen.jsonl"
	expect_eq "$status" 0
	expect_eq "$stderr" ""
}
