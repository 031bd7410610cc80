#!/usr/bin/env bats
# The key filter of an index file (PATH.filter): a run answers with it
# exactly as without it, whatever the method, across committed runs that
# fold the log into the stage, sweep, grow the table and load in bulk; a
# filter that is missing, damaged, another index's or older than the
# index is never believed, and the next run that writes makes it anew;
# --db-info shows it and --db-verify finds a key it lacks.
#
# Runs without the filter are the test build's (tests/nsdedup-crashpoints
# with $NSDEDUP_NO_FILTER), which leaves it out, and removes it when it
# writes.

load helpers

: "${NSDEDUP_CRASHPOINTS:?run the tests through make check}"
: "${NSD_INDEX_DUMP:?run the tests through make check}"
: "${GENCORPUS:?run the tests through make check}"

# The inputs, made once: r1 (100 records) makes an index; r2 (300)
# leaves its log more than half full, so that r3 (150 new, 100 seen)
# folds it into the stage first, and starts to grow the table; r5 and r6
# (300, half of them seen before) sweep the stage into the table and go on
# growing. r4 (1000) makes another index: it grows the table, renames
# PATH.next into place, then goes on as a bulk load, rebuilding the table.
# probe.jsonl is all of them.
setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$GENCORPUS" --records 100 --seed 1 > r1.jsonl
	"$GENCORPUS" --records 900 --seed 5 > more.jsonl
	"$GENCORPUS" --records 1000 --seed 2 > r4.jsonl
	sed -n 1,300p more.jsonl > r2.jsonl
	{ sed -n 301,450p more.jsonl; cat r1.jsonl; } > r3.jsonl
	{ sed -n 451,600p more.jsonl; sed -n 1,150p r4.jsonl; } > r5.jsonl
	{ sed -n 601,750p more.jsonl; sed -n 151,300p r2.jsonl; } > r6.jsonl
	cat r1.jsonl more.jsonl r4.jsonl > probe.jsonl
}

info_field() {
	printf '%s\n' "$output" | sed -n "s/^$1: *//p"
}

# Runs $1 (a list of run numbers) with method options "$2...", into
# index a with the filter and index b without; each run's output, with
# its evidence, must be the same, and so must the index each leaves, and
# what a run that reads each gives. Index a verifies after each run, its
# filter with it.
runs_with_and_without() {
	local i runs=$1

	shift
	rm -f a a.* b b.*
	for i in $runs; do
		"$NSDEDUP" "$@" --db a --explain "$BATS_FILE_TMPDIR/r$i.jsonl" \
		    > a.out
		NSDEDUP_NO_FILTER=1 "$NSDEDUP_CRASHPOINTS" "$@" --db b \
		    --explain "$BATS_FILE_TMPDIR/r$i.jsonl" > b.out
		cmp a.out b.out
		[ -e a.filter ] && [ ! -e b.filter ]
		run_nsd --db a --db-verify
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[[ "$(info_field filter)" == *" bytes in a.filter, "* ]]
		"$NSD_INDEX_DUMP" a > a.dump
		"$NSD_INDEX_DUMP" b > b.dump
		same_dump a.dump b.dump
	done
	"$NSDEDUP" "$@" --db a --no-update --explain \
	    "$BATS_FILE_TMPDIR/probe.jsonl" > a.out
	NSDEDUP_NO_FILTER=1 "$NSDEDUP_CRASHPOINTS" "$@" --db a --no-update \
	    --explain "$BATS_FILE_TMPDIR/probe.jsonl" > b.out
	cmp a.out b.out
	grep -q '"is_dup":true' a.out
	run_nsd --db a --db-info
	[[ "$(info_field entries)" != "0 in the table, "* ]]
	[[ "$(info_field filter)" == *" bits a key" ]]
}

# Both sequences: folds and growth, then a bulk load.
with_and_without() {
	runs_with_and_without "1 2 3 5 6" "$@"
	[ "$(info_field stage)" != none ]
	runs_with_and_without "4 5 6" "$@"
}

@test "nshash: the same answers with the filter as without, through folds, growth and a bulk load" {
	with_and_without
}

@test "simhash: the same answers with the filter as without, every block table's" {
	with_and_without -m simhash
}

@test "minhash: the same answers with the filter as without, every band's" {
	with_and_without -m minhash
}

# An index a of r1 to r3, and what a run that reads it answers (want).
made() {
	local i

	for i in 1 2 3; do
		"$NSDEDUP" --db a "$BATS_FILE_TMPDIR/r$i.jsonl" > /dev/null
	done
	"$NSDEDUP" --db a --no-update --explain \
	    "$BATS_FILE_TMPDIR/probe.jsonl" > want
	cp a.filter filter.keep
}

# A run that reads a, and one that writes r4 into a copy, answer as over
# the intact index; the writer leaves a filter that verifies.
answers_right() {
	nsd_to got --db a --no-update --explain "$BATS_FILE_TMPDIR/probe.jsonl"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	same_file got want
	rm -rf w && mkdir w && copy_index a w
	nsd_to got --db w/a --explain "$BATS_FILE_TMPDIR/r4.jsonl"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	same_file got want4
	[ -e w/a.filter ]
	run_nsd --db w/a --db-verify
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$(info_field filter)" == *" bits a key" ]]
}

# What a writer of r4 answers over the intact index a (want4).
want_r4() {
	mkdir ref && copy_index a ref
	"$NSDEDUP" --db ref/a --explain "$BATS_FILE_TMPDIR/r4.jsonl" > want4
	rm -r ref
}

@test "a deleted filter: runs that read go without it, the next that writes makes it" {
	made
	want_r4
	rm a.filter
	run_nsd --db a --db-info
	[ "$status" -eq 0 ]
	expect_eq "$(info_field filter)" "none (the next run that writes makes it)"
	run_nsd --db a --db-verify
	[ "$status" -eq 0 ]
	answers_right
}

@test "a damaged filter is never believed: same answers, made anew, and --db-verify names it" {
	local off size

	made
	want_r4
	size=$(stat -c %s a.filter)
	# A bit of its header, a byte of its blocks, a word of ones and of
	# zeros, the file cut short, and grown.
	for off in 40 4100 $((size / 2)) $((size - 8)) cut long; do
		cp filter.keep a.filter
		case $off in
		cut)	truncate -s $((size - 64)) a.filter ;;
		long)	truncate -s $((size + 64)) a.filter ;;
		*)	printf '\377\377\377\377\377\377\377\377' |
			    dd of=a.filter bs=1 seek="$off" conv=notrunc \
			    status=none
			cmp -s a.filter filter.keep && continue ;;
		esac
		run_nsd --db a --db-verify
		[ "$status" -eq 7 ]
		[[ "$stderr" == *"nsdedup: a: a.filter: "* ]]
		answers_right
	done
	# Zeros over its blocks, with a checksum that holds, would lose
	# duplicates: only the checksum stands in the way.
	cp filter.keep a.filter
	dd if=/dev/zero of=a.filter bs=1 seek=4096 count=4096 conv=notrunc \
	    status=none
	run_nsd --db a --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"a.filter: its blocks fail their checksum"* ]]
	answers_right
}

@test "another index's filter, or one older than the last commit, is not believed" {
	# Older: the filter of the index before run 3 put back.
	for i in 1 2; do
		"$NSDEDUP" --db a "$BATS_FILE_TMPDIR/r$i.jsonl" > /dev/null
	done
	cp a.filter old.filter
	"$NSDEDUP" --db a "$BATS_FILE_TMPDIR/r3.jsonl" > /dev/null
	"$NSDEDUP" --db a --no-update --explain \
	    "$BATS_FILE_TMPDIR/probe.jsonl" > want
	want_r4
	cp old.filter a.filter
	run_nsd --db a --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"a.filter: holds the entries up to run 2, older than the last commit (3)"* ]]
	run_nsd --db a --db-info
	expect_eq "$(info_field filter)" "a.filter cannot be used (the next run that writes makes it anew)"
	answers_right
	# Another index's.
	"$NSDEDUP" --db other "$BATS_FILE_TMPDIR/r1.jsonl" > /dev/null
	cp other.filter a.filter
	run_nsd --db a --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"a.filter: not this index's key filter"* ]]
	answers_right
}

@test "--db-verify finds a committed key that the filter lacks" {
	made
	run_nsd --db a --db-verify
	[ "$status" -eq 0 ]
	# Slot 0 of the table, with a key of this index's filter that is
	# surely not set: a checked slot that only the filter's check sees.
	key=$("$NSD_INDEX_DUMP" --absent-key a)
	# Generation 1, table 0, group 2: the first group record.
	"$NSD_INDEX_DUMP" --put-slot a 8192 "0x$key" $((1 | 2 << 24))
	run_nsd --db a --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"slot 0: the key filter does not hold its key ($key, table 0)"* ]]
}

@test "--db-info shows the filter's size and its bits a key" {
	made
	run_nsd --db a --db-info
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	slots=$(info_field load | sed 's/.* of \([0-9]*\) slots.*/\1/')
	expect_eq "$(stat -c %s a.filter)" $((4096 + slots))
	[[ "$(info_field filter)" =~ ^$((4096 + slots))\ bytes\ in\ a\.filter,\ [0-9]+\.[0-9]\ bits\ a\ key$ ]]
}

@test "an index of version 6 gets a filter from the first run that writes" {
	local dir="$TOP_SRCDIR/tests/data/index-v6"

	cp "$dir"/news.nsd* .
	chmod u+w news.nsd*
	"$NSDEDUP" --db news.nsd --no-update "$TOP_SRCDIR/examples/news.jsonl" \
	    > /dev/null
	[ ! -e news.nsd.filter ]
	run_nsd --db news.nsd --db-info
	expect_eq "$(info_field filter)" "none (the next run that writes makes it)"
	"$NSDEDUP" --db news.nsd "$BATS_FILE_TMPDIR/r1.jsonl" > /dev/null
	[ -e news.nsd.filter ]
	run_nsd --db news.nsd --db-verify
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" == "format:        version 8 "* ]]
	[[ "$(info_field filter)" == *" bytes in news.nsd.filter, "* ]]
}
