#!/usr/bin/env bats
# The persistent index (--db): results that carry over between runs,
# parameters, --no-update, --db-info, --db-verify, damage, the version-1
# fixture, locking, and the options' usage errors. What a killed run
# leaves is tested in index-crash.bats.

load helpers

: "${NSD_INDEX_DUMP:?run the tests through make check}"
: "${GENCORPUS:?run the tests through make check}"

NEWS="$TOP_SRCDIR/examples/news.jsonl"
FIXTURE="$TOP_SRCDIR/tests/data/index-v1"
# What every refusal of a damaged index ends with.
HINT='(try --db-verify; see Damage in nsdedup-index(5))'

# Background processes and directories to clean up after each test.
bg_pids=
shared_dir=

teardown() {
	local p
	for p in $bg_pids; do
		kill "$p" 2>/dev/null || true
	done
	if [ -n "$shared_dir" ]; then
		rm -rf "$shared_dir"
	fi
}

# day1.jsonl and day2.jsonl: the two halves of examples/news.jsonl.
news_halves() {
	head -n 20 "$NEWS" > day1.jsonl
	tail -n +21 "$NEWS" > day2.jsonl
}

# The committed state of an index, canonically.
dump() {
	"$NSD_INDEX_DUMP" "$@"
}

# Write bytes (a printf format, e.g. '\002') into a file at an offset.
put_bytes() {
	# shellcheck disable=SC2059
	printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# Make index $1 from enough records (1000, about 4900 fingerprints) that
# its log fills (at 4096) in a run that added more than half a sweep
# period: a bulk load, which rebuilds the table with the log and stores
# the rest into it. A run's fingerprints otherwise go to the log, then to
# the stage, and reach the table a stretch at a time.
in_table() {
	"$GENCORPUS" --records 1000 --seed 1 > many.jsonl
	"$NSDEDUP" --db "$1" many.jsonl > /dev/null
}

# The key of the slot (or log record) at byte $2 of file $1, and its slot
# word without the check (bits 0-55), as decimal numbers.
slot_at() {
	local key meta
	read -r key meta < <(od -An -t u8 -j "$2" -N 16 -w16 "$1")
	printf '%s %s\n' "$key" $((meta & 0xffffffffffffff))
}

# The number of the first slot of an index that holds an entry.
first_filled_slot() {
	od -An -v -t u8 -j 8192 -w16 "$1" | awk '$2 != 0 { print NR - 1; exit }'
}

# Wait until someone holds an exclusive lock on the lock file $1.
wait_for_lock() {
	local _
	for _ in $(seq 200); do
		flock -n "$1" true || return 0
		sleep 0.05
	done
	return 1
}

# The files in the scratch directory, but for those of bats's run.
files_here() {
	# shellcheck disable=SC2010
	ls -A | grep -v '^separate-stderr-' || true
}

# One line of --db-info's output ($output), by its label.
info_field() {
	printf '%s\n' "$output" | sed -n "s/^$1: *//p"
}

# --- Results carry over between runs ---

@test "two runs over two halves print what one run over the whole prints" {
	news_halves
	"$NSDEDUP" "$NEWS" > whole.jsonl
	run_nsd --db x day1.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	printf '%s\n' "$output" > got1.jsonl
	run_nsd --db x day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	printf '%s\n' "$output" > got2.jsonl
	cat got1.jsonl got2.jsonl | cmp - whole.jsonl
	# Day 2 found day 1's records: news-021 is a repost of news-002.
	grep -q '"id":"news-021".*"similar_id":"news-002","is_dup":true}$' \
	    got2.jsonl
	[ -f x ]
	[ -f x.ids ]
	[ -f x.lock ]
}

@test "group numbers of records without ids continue across runs" {
	for i in 1 2 3; do
		printf '{"text":"%s"}\n' "$(sentence "$i")"
	done > d1.jsonl
	for i in 4 2 5; do
		printf '{"text":"%s"}\n' "$(sentence "$i")"
	done > d2.jsonl
	run_nsd --db x d1.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(printf '%s\n' "$output" | grep -o '"similar_id".*')" \
	    "$(printf '"similar_id":%s,"is_dup":false}\n' 1 2 3)"
	# --no-update numbers its new groups as a writer would.
	run_nsd --db x --no-update d2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expected='"similar_id":4,"is_dup":false}
"similar_id":2,"is_dup":true}
"similar_id":5,"is_dup":false}'
	expect_eq "$(printf '%s\n' "$output" | grep -o '"similar_id".*')" \
	    "$expected"
	run_nsd --db x d2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(printf '%s\n' "$output" | grep -o '"similar_id".*')" \
	    "$expected"
	# A third run starts at 6: the numbers never repeat.
	printf '{"text":"%s"}\n' "$(sentence 6)" > d3.jsonl
	run_nsd --db x d3.jsonl
	[ "$status" -eq 0 ]
	[[ "$output" == *'"similar_id":6,"is_dup":false}' ]]
	# And the same records in one run get the same numbers.
	cat d1.jsonl d2.jsonl d3.jsonl | "$NSDEDUP" |
	    grep -o '"similar_id".*' > memory.txt
	expect_eq "$(cat memory.txt)" \
	    "$(printf '"similar_id":%s,"is_dup":%s}\n' 1 false 2 false \
	    3 false 4 false 2 true 5 false 6 false)"
}

@test "--drop-dups on day 2 drops what day 1 saw" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	run_nsd --db x --drop-dups day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# What one run over the whole keeps from the second half.
	n1=$("$NSDEDUP" --drop-dups day1.jsonl | wc -l)
	expect_eq "$output" \
	    "$("$NSDEDUP" --drop-dups "$NEWS" | tail -n +"$((n1 + 1))")"
	# Reposts of day 1's stories are gone; day 2's own originals stay.
	[[ "$output" != *'"id":"news-021"'* ]]
	[[ "$output" != *'"id":"news-024"'* ]]
	[[ "$output" == *'"id":"news-022"'* ]]
	[[ "$output" != *'"id":"news-038"'* ]]
}

@test "TSV input works with --db, and ids carry over between formats" {
	tsv="$TOP_SRCDIR/examples/news.tsv"
	head -n 7 "$tsv" > t1.tsv
	{ head -n 1 "$tsv"; tail -n +8 "$tsv"; } > t2.tsv
	run_nsd --db x t1.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	printf '%s\n' "$output" > got1.tsv
	run_nsd --db x t2.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	{ cat got1.tsv; printf '%s\n' "$output" | tail -n +2; } |
	    cmp - "$TOP_SRCDIR/tests/data/news.annotated.tsv"
	# A JSON record that reposts tsv-001 is named by the TSV id, as a
	# JSON string.
	sed -n 2p "$tsv" |
	    awk -F '\t' '{ printf "{\"id\":7,\"text\":\"%s\"}\n", $3 }' \
	    > repost.jsonl
	run_nsd --db x --no-update repost.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *'"similar_id":"tsv-001","is_dup":true}' ]]
}

@test "a run that fails commits nothing" {
	[ -c /dev/full ] || skip "no /dev/full"
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	dump x > before.txt
	{ cat day2.jsonl; printf 'junk\n'; } > bad.jsonl
	run_nsd --db x --on-error=fail bad.jsonl
	[ "$status" -eq 5 ]
	[[ "$stderr" == *"bad.jsonl:21:"* ]]
	dump x | cmp - before.txt
	# shellcheck disable=SC2016
	run --separate-stderr bash -c '"$NSDEDUP" --db x day2.jsonl > /dev/full'
	[ "$status" -eq 4 ]
	[ -z "$output" ]
	[[ "$stderr" == *"write error: No space left on device"* ]]
	dump x | cmp - before.txt
	# The same input again gives what it would have given the first time.
	run_nsd --db x day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$("$NSDEDUP" "$NEWS" | tail -n +21)"
}

# --- Fingerprint parameters ---

@test "an index made with other parameters is refused, naming the option" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	dump x > before.txt
	run_nsd --db x --sentences=3 day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: the index was made with --sentences 5, not 3" ]
	run_nsd --db x --min-length=10 day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = \
	    "nsdedup: x: the index was made with --min-length 30, not 10" ]
	run_nsd --db x --compat=nshash day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: the index was made without --compat=nshash" ]
	run_nsd --db x --no-update -n 4 day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[[ "$stderr" == *"--sentences 5, not 4"* ]]
	dump x | cmp - before.txt
	# The same parameters spelled out are no difference.
	run_nsd --db x --sentences=5 --min-length=30 --method=nshash day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "an index made with --compat=nshash is refused without it" {
	news_halves
	"$NSDEDUP" --db x --compat=nshash day1.jsonl > /dev/null
	run_nsd --db x day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: the index was made with --compat=nshash" ]
	run_nsd --db x --compat=nshash day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

# --- --no-update ---

@test "--no-update adds nothing but still finds duplicates within the run" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	cp x y
	cp x.ids y.ids
	cp x.log y.log
	dump x > before.txt
	run_nsd --db x --no-update day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	dump x | cmp - before.txt
	# news-038 reposts news-022, which only this run has seen.
	[[ "${lines[17]}" == '{"id":"news-038",'*'"similar_id":"news-022","is_dup":true}' ]]
	[[ "${lines[1]}" == '{"id":"news-022",'*'"similar_id":"news-022","is_dup":false}' ]]
	# What a writer prints over a copy of the same index.
	expect_eq "$output" "$("$NSDEDUP" --db y day2.jsonl)"
	# And again: nothing was remembered, news-022 is still new.
	first=$output
	run_nsd --db x --no-update day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$first"
	dump x | cmp - before.txt
}

@test "--no-update on a missing index: status 7, and no file is made" {
	printf '{"text":"%s"}\n' "$(sentence 1)" > in.jsonl
	run_nsd --db x --no-update in.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: x: no such index"* ]]
	[ "$(files_here)" = "in.jsonl" ]
	run_nsd --db x --db-info
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: x: no such index"* ]]
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: x: no such index"* ]]
	[ "$(files_here)" = "in.jsonl" ]
}

# --- The log ---

# The bytes of file $1.
size_of() {
	stat -c %s "$1"
}

@test "a run's fingerprints go to the log, not the table, and count there" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	fps=$("$NSDEDUP" --stats day1.jsonl 2>&1 >/dev/null |
	    sed -n 's/^nsdedup: index *\([0-9]*\) entries.*/\1/p')
	[ "$fps" -gt 50 ]
	# The table is as made: no slot is filled.
	[ -z "$(first_filled_slot x)" ]
	expect_eq "$(size_of x.log)" $((16 + 16 * fps))
	[ "$(head -c 8 x.log | od -An -c | tr -d ' ')" = 'NSDLOG\0001' ]
	run_nsd --db x --no-update day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(tail -n +21 <("$NSDEDUP" "$NEWS"))"
	run_nsd --db x --db-verify
	[ "$status" -eq 0 ]
	expect_eq "$(info_field entries)" \
	    "0 in the table, 0 in the stage, $fps in the log"
}

@test "a log half full is folded into the stage, and the results do not change" {
	"$GENCORPUS" --records 600 --seed 8 > many.jsonl
	# p1.jsonl adds about 2100 entries: over half the 4096 a table of 4096
	# slots folds its log at.
	head -n 420 many.jsonl > p1.jsonl
	tail -n +421 many.jsonl > p2.jsonl
	"$NSDEDUP" --db x p1.jsonl > out1.jsonl
	[ ! -e x.stage ]
	run_nsd --db x --db-info
	n1=$(info_field entries | sed 's/.* \([0-9]*\) in the log$/\1/')
	[ "$n1" -gt 2048 ]
	# Run 2 folds it before it begins, and sweeps part of the stage into
	# the table as it adds its own.
	"$NSDEDUP" --db x p2.jsonl > out2.jsonl
	[ -e x.stage ]
	[ -n "$(first_filled_slot x)" ]
	cat out1.jsonl out2.jsonl | cmp - <("$NSDEDUP" many.jsonl)
	run_nsd --db x --db-verify
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "verified:      no problems found" ]
	[[ "$(info_field stage)" == "$n1 entries in 4096 slots, $(stat -c %s x.stage) bytes in x.stage (build 1)" ]]
	[[ "$(info_field entries)" == *" in the stage, "*" in the log" ]]
	run_nsd --db x --no-update many.jsonl
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | grep -c '"is_dup":false')" -eq 0 ]
}

@test "a version-1 index gets a log at its first commit, and version 8" {
	cp "$FIXTURE/news.nsd" "$FIXTURE/news.nsd.ids" .
	chmod u+w news.nsd news.nsd.ids
	chmod 640 news.nsd
	"$NSDEDUP" --db news.nsd --no-update "$NEWS" > /dev/null
	[ ! -e news.nsd.log ]
	"$NSDEDUP" --db news.nsd "$NEWS" > /dev/null
	[ -f news.nsd.log ]
	[ "$(stat -c %a news.nsd.log)" = 640 ]
	run_nsd --db news.nsd --db-info
	[[ "${lines[1]}" == "format:        version 8 "* ]]
	# Back to version 1 in every other way: its size, its checksum's place.
	"$NSD_INDEX_DUMP" --set-u32 12 368 news.nsd
	"$NSD_INDEX_DUMP" --set-u32 8 1 news.nsd
	run_nsd --db news.nsd --no-update "$NEWS"
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: news.nsd: both header copies are damaged $HINT" ]
}

# The fixtures of format version $1 in tests/data/index-v$1, each given
# as NAME:OPTIONS (news: nshash, simhash: -m simhash unless more are
# given), copied here: each gives its expected answers read-only, then,
# once a run that writes nothing has made it the current version (with
# the same committed state), in a run that writes; each verifies.
old_version_round_trip() {
	local version=$1 dir=$TOP_SRCDIR/tests/data/index-v$1 name spec
	local -a opts
	shift
	[ $# -gt 0 ] || set -- news: simhash:-m,simhash

	for spec in "$@"; do
		name=${spec%%:*}
		IFS=, read -r -a opts <<< "${spec#*:}"
		cp "$dir/$name".nsd* .
		chmod u+w "$name".nsd*
		run_nsd "${opts[@]}" --db "$name.nsd" --no-update --explain \
		    "$NEWS"
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		expect_eq "$output" "$(cat "$dir/$name.expected.jsonl")"
		run_nsd --db "$name.nsd" --db-verify
		[ "$status" -eq 0 ]
		[[ "${lines[1]}" == "format:        version $version "* ]]
		[ "${lines[-1]}" = "verified:      no problems found" ]
		records=$(info_field records)
		dump "$name.nsd" > before
		# The upgrade: every committed entry, group and count kept.
		run_nsd "${opts[@]}" --db "$name.nsd" < /dev/null
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[ -z "$output" ]
		dump "$name.nsd" > after
		expect_eq "$(cat after)" "$(cat before)"
		run_nsd --db "$name.nsd" --db-verify
		[ "$status" -eq 0 ]
		# Versions 5 to 7 need no upgrade: the next commit makes
		# them 8.
		[[ "${lines[1]}" == "format:        version $((version < 5 ? 8 : version)) "* ]]
		[ "${lines[-1]}" = "verified:      no problems found" ]
		[ "$(info_field stage)" = none ]
		[ ! -e "$name.nsd.stage" ] && [ ! -e "$name.nsd.next" ]
		# A run that writes keeps every entry of the log (and stage).
		run_nsd "${opts[@]}" --db "$name.nsd" --explain "$NEWS"
		[ "$status" -eq 0 ]
		expect_eq "$output" "$(cat "$dir/$name.expected.jsonl")"
		run_nsd --db "$name.nsd" --db-verify
		[ "$status" -eq 0 ]
		[[ "${lines[1]}" == "format:        version 8 "* ]]
		[ "${lines[-1]}" = "verified:      no problems found" ]
		expect_eq "$(info_field records)" $((records + 40))
	done
}

@test "version-2 indexes give the same answers, and become version 8 when written" {
	old_version_round_trip 2
}

@test "version-3 indexes with a stage give the same answers, and become version 8" {
	for name in news simhash; do
		cp "$TOP_SRCDIR/tests/data/index-v3/$name".nsd* .
		run_nsd --db "$name.nsd" --db-info
		[ "$status" -eq 0 ]
		[[ "$(info_field stage)" == *" entries in 4096 slots, "* ]]
		rm "$name".nsd*
	done
	old_version_round_trip 3
}

@test "version-4 indexes, MinHash and a growth under way among them, give the same answers, and become version 8" {
	cp "$TOP_SRCDIR/tests/data/index-v4/growing".nsd* .
	run_nsd --db growing.nsd --db-info
	[ "$status" -eq 0 ]
	[[ "$(info_field growing)" == "to 8192 slots in growing.nsd.next, "* ]]
	[[ "$(info_field stage)" == *" entries in 4096 slots, "* ]]
	[[ "$(info_field log)" != "0 records"* ]]
	rm growing.nsd*
	old_version_round_trip 4 news: simhash:-m,simhash minhash:-m,minhash \
	    growing:-m,minhash,--threshold,0.2
}

@test "version-5 indexes give the same answers, unconfirmed, and become version 8" {
	old_version_round_trip 5 news: simhash:-m,simhash minhash:-m,minhash
	# Their groups keep no sketch, and cannot: --db-info says so.
	run_nsd --db news.nsd --db-info
	[ "$status" -eq 0 ]
	expect_eq "$(info_field sketches)" "none (made before them: matches are not confirmed; rebuild the index to confirm them)"
}

@test "version-6 indexes give the same answers, confirmed, and become version 8" {
	old_version_round_trip 6 news: simhash:-m,simhash minhash:-m,minhash
	run_nsd --db minhash.nsd --db-info
	[ "$status" -eq 0 ]
	expect_eq "$(info_field sketches)" "192 bytes a group (matches are confirmed)"
}

@test "version-7 indexes give the same answers, keep their key filter, and become version 8 with no window" {
	old_version_round_trip 7 news: simhash:-m,simhash minhash:-m,minhash
	for name in news simhash minhash; do
		run_nsd --db $name.nsd --db-info
		[ "$status" -eq 0 ]
		expect_eq "$(info_field window)" "none: every group is kept (--ttl sets one)"
		expect_eq "$(info_field forgotten)" "0 groups; $name.nsd.ids takes $(($(stat -c %b $name.nsd.ids) * 512)) bytes on disk"
		[ -s $name.nsd.times ]
	done
}

@test "a log that is missing, truncated or another index's: status 7" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	"$NSDEDUP" --db y day1.jsonl > /dev/null
	cp x x.keep
	mv x.log x.log.keep
	for a in "" --no-update; do
		# shellcheck disable=SC2086
		run_nsd --db x $a day2.jsonl
		[ "$status" -eq 7 ]
		[ -z "$output" ]
		[ "$stderr" = "nsdedup: x.log: cannot open the index's log: No such file or directory" ]
		[ ! -e x.log ]
	done
	cp x.log.keep x.log
	truncate -s 100 x.log
	run_nsd --db x day2.jsonl
	[ "$status" -eq 7 ]
	[ "$stderr" = "nsdedup: x.log: truncated (100 bytes, the index has committed $(size_of x.log.keep)) $HINT" ]
	cp y.log x.log
	run_nsd --db x --no-update day2.jsonl
	[ "$status" -eq 7 ]
	[ "$stderr" = "nsdedup: x.log: not the log of x $HINT" ]
	cmp x x.keep
}

@test "a damaged log record is refused, with its number" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	cp x.log keep.log
	# A bit of record 2's group (from 0, as --db-verify counts): its check
	# fails.
	put_bytes x.log $((16 + 2 * 16 + 11)) '\377'
	run_nsd --db x --no-update day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x.log: damaged: record 2 fails its check $HINT" ]
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"nsdedup: x: x.log: record 2: fails its check"* ]]
	# With a check that holds: table 2, in an index of one table.
	cp keep.log x.log
	read -r key meta < <(slot_at x.log $((16 + 2 * 16)))
	dump --put-slot x.log $((16 + 2 * 16)) "$key" \
	    $((meta | 2 << 20))
	run_nsd --db x --no-update day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x.log: damaged: record 2 is not a committed fingerprint $HINT" ]
	# Record 0's generation: 5, after the last commit (1).
	cp keep.log x.log
	read -r key meta < <(slot_at x.log 16)
	dump --put-slot x.log 16 "$key" $(((meta & ~0xfffff) | 5))
	run_nsd --db x day2.jsonl
	[ "$status" -eq 7 ]
	[ "$stderr" = "nsdedup: x.log: damaged: record 0 is not a committed fingerprint $HINT" ]
	# Records 0 and 1 swapped: each is whole, but not where it was.
	cp keep.log x.log
	dd if=keep.log of=x.log bs=16 skip=1 seek=2 count=1 conv=notrunc \
	    status=none
	dd if=keep.log of=x.log bs=16 skip=2 seek=1 count=1 conv=notrunc \
	    status=none
	run_nsd --db x --no-update day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	n=$("$NSDEDUP" --db x --db-info | sed -n 's/^log: *\([0-9]*\) .*/\1/p')
	[ "$n" -gt 2 ]
	[ "$stderr" = "nsdedup: x.log: damaged: its $n committed records are not the ones the header sums up $HINT" ]
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"nsdedup: x: x.log: its $n committed records are not the ones the header sums up"* ]]
}

# --- --db-info ---

@test "--db-info prints every field, with the values of what was run" {
	news_halves
	start=$(date +%s)
	"$NSDEDUP" --db x -n 4 --min-length=25 day1.jsonl > out1.jsonl
	"$NSDEDUP" --db x -n 4 --min-length=25 day2.jsonl > out2.jsonl
	end=$(date +%s)
	groups=$(cat out1.jsonl out2.jsonl | grep -c '"is_dup":false}$')
	fps=$("$NSDEDUP" -n 4 --min-length=25 --stats "$NEWS" 2>&1 >/dev/null |
	    sed -n 's/^nsdedup: index *\([0-9]*\) entries.*/\1/p')
	[ "$groups" -gt 20 ]
	[ "$fps" -gt 100 ]
	run_nsd --db x --db-info
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[0]}" = "index:         x" ]
	[[ "${lines[1]}" =~ ^format:\ +version\ 8\ \(header\ copy\ [AB]\ in\ use\)$ ]]
	expect_eq "$(info_field parameters)" \
	    "--method nshash --sentences 4 --min-length 25, normalization 3"
	expect_eq "$(info_field records)" 40
	expect_eq "$(info_field groups)" "$groups"
	expect_eq "$(info_field entries)" \
	    "0 in the table, 0 in the stage, $fps in the log"
	expect_eq "$(info_field load)" \
	    "$(awk -v n="$fps" 'BEGIN { printf "%.1f", 100 * n / 4096 }')% of 4096 slots (grows past 62.5%)"
	# Every id is a JSON string of 10 bytes: 12 + 10, padded to 24, then
	# the group's sketch of 192.
	expect_eq "$(info_field 'file size')" \
	    "$(stat -c %s x) bytes, and $(stat -c %s x.ids) in x.ids ($((16 + (24 + 192) * groups)) committed)"
	expect_eq "$(info_field sketches)" \
	    "192 bytes a group (matches are confirmed)"
	[ "$(stat -c %s x)" -eq $((8192 + 4096 * 16)) ]
	expect_eq "$(info_field generation)" "2 (runs that added to it)"
	for f in created 'last commit'; do
		t=$(info_field "$f")
		[[ "$t" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]]
		s=$(date -d "$t" +%s)
		[ "$s" -ge "$start" ]
		[ "$s" -le "$end" ]
	done
	expect_eq "$(info_field log)" \
	    "$fps records, $((16 + 16 * fps)) bytes in x.log (folded into the stage at 4096)"
	expect_eq "$(info_field stage)" "none"
	# A byte a slot; every entry is still in the log.
	expect_eq "$(info_field filter)" "8192 bytes in x.filter, no key yet"
	# The sweep goes once round the hash space for 1024 entries added.
	pct=$(awk -v n="$fps" 'BEGIN { printf "%.1f", 100 * n / 1024 }')
	expect_eq "$(info_field sweep)" \
	    "at $pct% of the hash space, $pct% of it since the last fold"
	expect_eq "$(info_field window)" \
	    "none: every group is kept (--ttl sets one)"
	expect_eq "$(info_field forgotten)" \
	    "0 groups; x.ids takes $(($(stat -c %b x.ids) * 512)) bytes on disk"
	[[ "$(info_field 'oldest group')" =~ ^1,\ opened\ [0-9T:Z-]{20},\ 0\.0\ days\ ago$ ]]
	expect_eq "$(info_field undo)" \
	    "2 runs can be taken back (--db-undo), the last first:"
	[[ "${lines[20]}" =~ ^\ {15}generation\ 2,\ 40\ records,\ committed\ [0-9T:Z-]{20}$ ]]
	[[ "${lines[21]}" =~ ^\ {15}generation\ 1,\ 20\ records,\ committed\ [0-9T:Z-]{20}$ ]]
	expect_eq "${lines[22]}" "               not the one before: there is none"
	[ "${#lines[@]}" -eq 23 ]
}

@test "--db-info shows --compat=nshash, reads no FILE and changes nothing" {
	news_halves
	"$NSDEDUP" --db x --compat=nshash day1.jsonl > /dev/null
	dump x > before.txt
	run_nsd --db x --db-info
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(info_field parameters)" \
	    "--method nshash --sentences 5 --min-length 30 --compat=nshash, normalization 3"
	# Parameters given with --db-info are not compared: it only describes.
	run_nsd --db x --db-info -n 3
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run_nsd --db x --db-info day2.jsonl
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == *"--db-info reads no FILE ('day2.jsonl')"* ]]
	dump x | cmp - before.txt
}

# --- --db-verify and damage ---

@test "--db-verify passes a good index" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	"$NSDEDUP" --db x day2.jsonl > /dev/null
	run_nsd --db x --db-verify
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[0]}" = "index:         x" ]
	[ "${lines[-1]}" = "verified:      no problems found" ]
	[ "$(info_field records)" = 40 ]
}

@test "an index that grew from 4096 slots still verifies, and grows on" {
	"$GENCORPUS" --records 1000 --seed 7 > corpus.jsonl
	head -n 500 corpus.jsonl > c1.jsonl
	tail -n +501 corpus.jsonl > c2.jsonl
	"$NSDEDUP" --db x c1.jsonl > got.jsonl
	run_nsd --db x --db-info
	[[ "$(info_field load)" == *"of 4096 slots"* ]]
	"$NSDEDUP" --db x c2.jsonl >> got.jsonl
	"$NSDEDUP" corpus.jsonl | cmp - got.jsonl
	run_nsd --db x --db-verify
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	slots=$(info_field load | sed 's/.* of \([0-9]*\) slots.*/\1/')
	[ "$slots" -gt 4096 ]
	[ "${lines[-1]}" = "verified:      no problems found" ]
	[ "$(stat -c %s x)" -eq $((8192 + slots * 16)) ]
	[ ! -e x.new ]
	# Grown once more, in a run that also adds to the grown table.
	"$GENCORPUS" --records 6000 --seed 8 > more.jsonl
	"$NSDEDUP" --db x more.jsonl > /dev/null
	run_nsd --db x --db-verify
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(info_field load | sed 's/.* of \([0-9]*\) slots.*/\1/')" -gt \
	    "$slots" ]
	nsd_to out --db x --no-update corpus.jsonl more.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# Everything is known now, but for records with nothing to compare.
	none=$(cat corpus.jsonl more.jsonl | "$NSDEDUP" --stats 2>&1 >/dev/null |
	    sed -n 's/^nsdedup: originals .*(\([0-9]*\) with nothing.*/\1/p')
	[ -n "$none" ]
	expect_eq "$(grep -c '"is_dup":false}$' out)" "$none"
	expect_eq "$(wc -l < out)" 7000
}

# The offset of byte $2 (default 100) of the header copy of x that --db-info
# says is in use ($1 = in-use) or not ($1 = other).
header_byte() {
	local copy
	copy=$("$NSDEDUP" --db x --db-info | sed -n 's/.*header copy \(.\) in use.*/\1/p')
	if [ "$copy" = A ] && [ "$1" = in-use ] || [ "$copy" = B ] && [ "$1" = other ]; then
		echo $((0 + ${2:-100}))
	else
		echo $((4096 + ${2:-100}))
	fi
}

@test "a damaged header copy not in use: runs go on, --db-verify names it" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	"$NSDEDUP" --db x --no-update day2.jsonl > expected.jsonl
	run_nsd --db x --db-info
	[[ "${lines[1]}" == *"(header copy B in use)" ]]
	put_bytes x "$(header_byte other)" 'XXXX'
	run_nsd --db x --no-update day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(cat expected.jsonl)"
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"nsdedup: x: header copy A is damaged (checksum or values); copy B is in use"* ]]
	[[ "$stderr" == *"nsdedup: x: damaged: 1 problem found" ]]
	[ "${lines[0]}" = "index:         x" ]
	[[ "$output" != *"verified:"* ]]
	# A run that writes writes that copy afresh.
	run_nsd --db x day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(cat expected.jsonl)"
	run_nsd --db x --db-verify
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "a damaged header copy in use: the other copy has the same commit" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	"$NSDEDUP" --db x day2.jsonl > /dev/null
	dump x > day2.txt
	"$NSDEDUP" --db x --no-update day2.jsonl > expected.jsonl
	put_bytes x "$(header_byte in-use)" 'XXXX'
	# Both copies were brought up to date by the commit: nothing is lost.
	run_nsd --db x --no-update day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(cat expected.jsonl)"
	dump x | cmp - day2.txt
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"nsdedup: x: header copy B is damaged (checksum or values); copy A is in use"* ]]
	[[ "${lines[1]}" == *"(header copy A in use)" ]]
	[ "${lines[3]}" = "records:       40" ]
}

@test "both header copies damaged: status 7 for runs and --db-verify" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	put_bytes x 100 'XXXX'
	put_bytes x 4196 'XXXX'
	cp x damaged
	run_nsd --db x day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: both header copies are damaged $HINT" ]
	run_nsd --db x --no-update day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: both header copies are damaged $HINT" ]
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: both header copies are damaged $HINT" ]
	run_nsd --db x --db-info
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: both header copies are damaged $HINT" ]
	cmp x damaged
}

@test "a damaged slot: --db-verify says which" {
	news_halves
	in_table x
	slot=$(first_filled_slot x)
	[ -n "$slot" ]
	cp x x.good
	# A byte of its group changed: its check fails.
	put_bytes x $((8192 + 16 * slot + 12)) '\377'
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"nsdedup: x: slot $slot: fails its check"* ]]
	[[ "$stderr" == *"nsdedup: x: damaged: "*" problem"*" found" ]]
	[[ "$output" != *"verified:"* ]]
	# Generation 1, table 15 (the index has one), group 0, with a check
	# that holds.
	cp x.good x
	dump --put-slot x $((8192 + 16 * slot)) 1 $((1 | 15 << 20))
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"nsdedup: x: slot $slot: table 15, but the index has 1"* ]]
	[[ "$stderr" == *"nsdedup: x: damaged: "*" problem"*" found" ]]
	[[ "$output" != *"verified:"* ]]
	# A generation after the last commit, in an empty slot.
	"$NSDEDUP" --db y day1.jsonl > /dev/null
	empty=0
	while [ "$(od -An -t u8 -j $((8192 + 16 * empty + 8)) -N 8 y | tr -d ' ')" != 0 ]; do
		empty=$((empty + 1))
	done
	dump --put-slot y $((8192 + 16 * empty)) 0 $(((1 << 20) - 1))
	run_nsd --db y --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"nsdedup: y: slot $empty: generation 1048575 is after the last commit (1)"* ]]
}

@test "a truncated index is refused: status 7" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	cp x.ids keep.ids
	truncate -s 20000 x
	run_nsd --db x day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: truncated (20000 bytes, the header says 73728) $HINT" ]
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"nsdedup: x: the file is 20000 bytes; the header says 73728"* ]]
	truncate -s 5000 x
	run_nsd --db x --no-update day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: truncated (5000 bytes) $HINT" ]
	[ "$(stat -c %s x)" -eq 5000 ]
	# The id file cut short.
	"$NSDEDUP" --db y day1.jsonl > /dev/null
	truncate -s 100 y.ids
	run_nsd --db y day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: y.ids: truncated"* ]]
	run_nsd --db y --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"y.ids: 100 bytes, but "*" are committed"* ]]
}

@test "a file of another kind is not an index, and is left alone" {
	news_halves
	cp day1.jsonl x
	run_nsd --db x day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: not an nsdedup index" ]
	cmp x day1.jsonl
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: not an nsdedup index" ]
	: > empty
	run_nsd --db empty day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: empty: not an nsdedup index"* ]]
	[ ! -s empty ]
	run_nsd --db empty --db-info
	[ "$status" -eq 7 ]
	[[ "$stderr" == "nsdedup: empty: not an nsdedup index"* ]]
	[ ! -e x.ids ]
	[ ! -e empty.ids ]
}

@test "a directory is not an index" {
	news_halves
	mkdir x
	run_nsd --db x day1.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: x: "*"directory"* ]]
	run_nsd --db x --no-update day1.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: x: "* ]]
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: x: "* ]]
	[ -z "$(ls -A x)" ]
}

@test "a refusal leaves no file that it made, and every file that was there" {
	local opts before

	news_halves
	# Not an index, a directory, an index of another method: written
	# to, read (--no-update), described and verified, each is refused
	# and the directory holds what it held before.
	cp day1.jsonl data.jsonl
	mkdir dir
	"$NSDEDUP" -m simhash --db sim day1.jsonl > /dev/null
	rm sim.lock
	"$NSDEDUP" -m simhash --db locked day1.jsonl > /dev/null
	before=$(files_here)
	for opts in "--db data.jsonl day2.jsonl" \
	    "--db data.jsonl --no-update day2.jsonl" \
	    "--db data.jsonl --db-info" "--db data.jsonl --db-verify" \
	    "--db dir day2.jsonl" "--db dir --no-update day2.jsonl" \
	    "--db dir --db-info" \
	    "--db sim day2.jsonl" "--db sim --no-update day2.jsonl" \
	    "--db locked day2.jsonl" "--db locked --no-update day2.jsonl"; do
		# shellcheck disable=SC2086  # the options, split
		run_nsd $opts
		echo "$opts: $stderr"
		[ "$status" -eq 7 ]
		[ -z "$output" ]
		expect_eq "$(files_here)" "$before"
		[ -z "$(ls -A dir)" ]
	done
	cmp data.jsonl day1.jsonl
	# The lock file that was there stays; the index that lacked one is
	# used, and gets one, by the run that can use it.
	[ -e locked.lock ]
	run_nsd -m simhash --db sim --no-update day2.jsonl
	[ "$status" -eq 0 ]
	[ -e sim.lock ]
}

@test "an index in a missing directory: status 7, naming it" {
	news_halves
	run_nsd --db no/such/x day1.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: no/such/x: cannot create the index: its directory does not exist" ]
	run_nsd --db no/such/x --no-update day1.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: no/such/x: no such index" ]
	[ ! -e no ]
}

@test "a read-only index: a writer is refused and the index is unchanged" {
	news_halves
	if [ "$(id -u)" -eq 0 ]; then
		command -v setpriv > /dev/null || skip "no setpriv to drop root"
		# A directory that the unprivileged user can reach.
		shared_dir=$(mktemp -d "${TMPDIR:-/tmp}/nsd-index.XXXXXX")
		chmod 755 "$shared_dir"
		as_user() {
			setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
		}
		as_user "$NSDEDUP" --version > /dev/null 2>&1 ||
		    skip "the unprivileged user cannot run $NSDEDUP"
		cd "$shared_dir"
		cp "$BATS_TEST_TMPDIR"/day?.jsonl .
	else
		as_user() { "$@"; }
	fi
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	chmod 444 x x.ids
	dump x > before.txt
	cp x x.copy
	cp x.ids x.ids.copy
	run --separate-stderr as_user "$NSDEDUP" --db x day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: x: "*"Permission denied" ]]
	dump x | cmp - before.txt
	cmp x x.copy
	cmp x.ids x.ids.copy
	# Reading it needs no write permission.
	run --separate-stderr as_user "$NSDEDUP" --db x --no-update day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$("$NSDEDUP" "$NEWS" | tail -n +21)"
	run --separate-stderr as_user "$NSDEDUP" --db x --db-verify
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	cmp x x.copy
}

@test "a missing id file: status 7, naming it" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	rm x.ids
	cp x keep
	run_nsd --db x day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: x.ids: "*"No such file or directory" ]]
	run_nsd --db x --no-update day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: x.ids: "*"No such file or directory" ]]
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"x.ids: cannot open: No such file or directory"* ]]
	cmp x keep
	[ ! -e x.ids ]
}

# --- The index written by format version 1 ---

@test "the version-1 index in tests/data still opens and gives its output" {
	# Its output was made by 0.1.0, which matched on any one fingerprint
	# and counted no boilerplate: the same rules are asked for here.
	local rules=(--min-match=1 --common=0)
	cp "$FIXTURE/news.nsd" "$FIXTURE/news.nsd.ids" .
	chmod u+w news.nsd news.nsd.ids
	run_nsd --db news.nsd --no-update "${rules[@]}" "$NEWS"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(cat "$FIXTURE/news.expected.jsonl")"
	run_nsd --db news.nsd --db-verify
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "${lines[1]}" == "format:        version 1 "* ]]
	[ "$(info_field records)" = 20 ]
	[ "${lines[-1]}" = "verified:      no problems found" ]
	# A writer can add to it.
	run_nsd --db news.nsd "${rules[@]}" "$NEWS"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(cat "$FIXTURE/news.expected.jsonl")"
	run_nsd --db news.nsd --db-verify
	[ "$status" -eq 0 ]
	[ "$(info_field records)" = 60 ]
}

# Every way of using news.nsd fails with status 7 and message $1, and leaves
# the file as it was.
refused_everywhere() {
	cp news.nsd keep
	run_nsd --db news.nsd --no-update "$NEWS"
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "$1" ]
	run_nsd --db news.nsd "$NEWS"
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "$1" ]
	run_nsd --db news.nsd --db-info
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "$1" ]
	run_nsd --db news.nsd --db-verify
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "$1" ]
	cmp news.nsd keep
}

@test "an index of a newer format version is refused, saying so" {
	cp "$FIXTURE/news.nsd" "$FIXTURE/news.nsd.ids" .
	chmod u+w news.nsd news.nsd.ids
	dump --set-u32 8 9 news.nsd
	refused_everywhere "nsdedup: news.nsd: index format version 9 is newer than this nsdedup reads (8); use a newer nsdedup"
}

@test "a version field changed without its checksum: newer, or damaged" {
	cp "$FIXTURE/news.nsd" "$FIXTURE/news.nsd.ids" .
	chmod u+w news.nsd news.nsd.ids
	put_bytes news.nsd 8 '\011\000\000\000'
	put_bytes news.nsd 4104 '\011\000\000\000'
	refused_everywhere "nsdedup: news.nsd: index format version 9 is newer than this nsdedup reads (8), or the index is damaged"
}

@test "one copy's version field damaged: the other copy is used" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	"$NSDEDUP" --db x --no-update day2.jsonl > expected.jsonl
	put_bytes x "$(header_byte in-use 8)" '\011\000\000\000'
	run_nsd --db x --no-update day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(cat expected.jsonl)"
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"header copy B is of an unknown format version (newer, or damaged); copy A is in use"* ]]
}

# --- Locking ---

@test "a writer holding the lock: --no-wait gives up at once, status 8" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	exec 8> x.lock
	flock -x 8
	# timeout: a run that waited would be killed, and fail the test.
	run --separate-stderr timeout 10 "$NSDEDUP" --db x --no-wait day2.jsonl
	[ "$status" -eq 8 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: in use by another nsdedup run" ]
	run --separate-stderr timeout 10 "$NSDEDUP" --db x --no-update \
	    --no-wait day2.jsonl
	[ "$status" -eq 8 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: in use by another nsdedup run" ]
	run --separate-stderr timeout 10 "$NSDEDUP" --db x --db-verify --no-wait
	[ "$status" -eq 8 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: in use by another nsdedup run" ]
	exec 8>&-
	run_nsd --db x --no-wait day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "a writer holding the lock: --wait=1 gives up after a second, status 8" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	dump x > before.txt
	exec 8> x.lock
	flock -x 8
	start=$(date +%s%N)
	run --separate-stderr timeout 10 "$NSDEDUP" --db x --wait=1 day2.jsonl
	end=$(date +%s%N)
	[ "$status" -eq 8 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: in use by another nsdedup run (waited 1 s)" ]
	[ $((end - start)) -ge 1000000000 ]
	exec 8>&-
	dump x | cmp - before.txt
}

@test "a writer holding the lock: by default the next one waits, then runs" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	exec 8> x.lock
	flock -x 8
	"$NSDEDUP" --db x day2.jsonl > got.jsonl 2> err.txt 3>&- 8>&- &
	pid=$!
	bg_pids=$pid
	sleep 0.5
	kill -0 "$pid"
	[ ! -s got.jsonl ]
	exec 8>&-
	st=0
	wait "$pid" || st=$?
	[ "$st" -eq 0 ]
	[ ! -s err.txt ]
	expect_eq "$(cat got.jsonl)" "$("$NSDEDUP" "$NEWS" | tail -n +21)"
	run_nsd --db x --db-info
	[ "$(info_field records)" = 40 ]
}

@test "a --no-update run waits for a writer, then sees what it committed" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	mkfifo feed
	# The writer locks the index, then waits for its input.
	"$NSDEDUP" --db x feed > writer.jsonl 2> writer.err 3>&- &
	writer=$!
	bg_pids=$writer
	wait_for_lock x.lock
	"$NSDEDUP" --db x --no-update day2.jsonl > reader.jsonl \
	    2> reader.err 3>&- &
	reader=$!
	bg_pids="$writer $reader"
	sleep 0.5
	kill -0 "$reader"
	[ ! -s reader.jsonl ]
	# timeout: should the writer be gone, nobody would read the FIFO.
	timeout 10 sh -c 'cat day2.jsonl > feed'
	st=0
	wait "$writer" || st=$?
	[ "$st" -eq 0 ]
	wait "$reader" || st=$?
	[ "$st" -eq 0 ]
	[ ! -s writer.err ]
	[ ! -s reader.err ]
	expect_eq "$(cat writer.jsonl)" "$("$NSDEDUP" "$NEWS" | tail -n +21)"
	# The reader saw day 2 committed: news-022 is already known.
	grep -q '"id":"news-022".*"similar_id":"news-022","is_dup":true}$' \
	    reader.jsonl
	# Only news-027, with nothing to compare, is not a duplicate.
	expect_eq "$(grep '"is_dup":false}$' reader.jsonl |
	    grep -o '^{"id":"[^"]*"')" '{"id":"news-027"'
	run_nsd --db x --no-update day2.jsonl
	expect_eq "$(cat reader.jsonl)" "$output"
}

@test "--no-update runs do not block each other, but block a writer" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	exec 8< x.lock
	flock -s 8
	run --separate-stderr timeout 10 "$NSDEDUP" --db x --no-update \
	    --no-wait day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$("$NSDEDUP" "$NEWS" | tail -n +21)"
	run --separate-stderr timeout 10 "$NSDEDUP" --db x --db-info --no-wait
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run --separate-stderr timeout 10 "$NSDEDUP" --db x --no-wait day2.jsonl
	[ "$status" -eq 8 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: in use by another nsdedup run" ]
	exec 8<&-
}

# --- Usage errors ---

@test "--no-update, --db-info and --db-verify need --db: status 2" {
	printf '{"text":"%s"}\n' "$(sentence 1)" > in.jsonl
	for opt in --no-update --db-info --db-verify; do
		if [ "$opt" = --no-update ]; then
			run_nsd "$opt" in.jsonl
		else
			run_nsd "$opt"
		fi
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[[ "$stderr" == "nsdedup: $opt needs --db PATH"* ]]
		[[ "$stderr" == *"Try 'nsdedup --help' for more information."* ]]
	done
	[ "$(files_here)" = "in.jsonl" ]
}

@test "--wait and --no-wait need --db: status 2" {
	printf '{"text":"%s"}\n' "$(sentence 1)" > in.jsonl
	for opt in --wait=1 --no-wait; do
		run_nsd "$opt" in.jsonl
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[[ "$stderr" == "nsdedup: ${opt%=*} needs --db PATH"* ]]
		[[ "$stderr" == *"Try 'nsdedup --help' for more information."* ]]
	done
}

@test "--wait takes a number of seconds" {
	run_nsd --db x --wait=soon --db-info
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == *"invalid number 'soon' for --wait"* ]]
	run_nsd --db x --wait=-1 --db-info
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	run_nsd --db= --db-info
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--db must not be empty"* ]]
	[ -z "$(files_here)" ]
}

@test "--db through a symbolic link: the index lives where it points" {
	news_halves
	mkdir store
	ln -s store/crawl.nsd link.nsd
	# Dangling at first: the index is made behind the link.
	run_nsd --db link.nsd day1.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ -L link.nsd ]
	[ -f store/crawl.nsd ] && [ -f store/crawl.nsd.ids ]
	[ ! -e link.nsd.ids ]
	# Growth renames into the file behind the link, not over the link.
	"$GENCORPUS" --records 1000 --seed 5 > more.jsonl
	run_nsd --db link.nsd more.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ -L link.nsd ]
	[ "$("$NSDEDUP" --db store/crawl.nsd --db-info | sed -n 's/^records: *//p')" = 1020 ]
}

# --- Damage that a checksum cannot see ---

@test "a header whose counts cannot be is damaged, not obeyed" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	cp x x.good
	# entries (offset 264) far past what 4096 slots can hold.
	dump --set-u64 264 1000000000 x
	run_nsd --db x day2.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: x: both header copies are damaged $HINT" ]
	[ "$(stat -c %s x)" -eq "$(stat -c %s x.good)" ]
	# ids_length (offset 272) of an exabyte: refused, and verify does not
	# try to hold a map of it.
	cp x.good x
	dump --set-u64 272 1152921504606846976 x
	run_nsd --db x day2.jsonl
	[ "$status" -eq 7 ]
	[[ "$stderr" == "nsdedup: x.ids: truncated"* ]]
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"x.ids: "*" bytes, but 1152921504606846976 are committed"* ]]
}

@test "a damaged id record is an error, never broken output" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	# The first id starts at byte 16 + 12 of x.ids: a newline inside it.
	put_bytes x.ids 30 '\n'
	run_nsd --db x --no-update day1.jsonl
	[ "$status" -eq 7 ]
	[ "$stderr" = "nsdedup: x: damaged: group 2 of x.ids is not a good group record $HINT" ]
	[ -z "$output" ]
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"x.ids: group 1's id has control characters or its padding is not zero"* ]]
}

@test "a FIFO in place of an index file: an error, not a hang" {
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	rm x.ids
	mkfifo x.ids
	run --separate-stderr timeout 10 "$NSDEDUP" --db x --no-update \
	    day2.jsonl
	[ "$status" -eq 7 ]
	[ "$stderr" = "nsdedup: x.ids: not a regular file" ]
	run --separate-stderr timeout 10 "$NSDEDUP" --db x --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"nsdedup: x: x.ids: not a regular file"* ]]
	# --db-info reads only the header.
	run --separate-stderr timeout 10 "$NSDEDUP" --db x --db-info
	[ "$status" -eq 0 ]
	mkfifo y
	run --separate-stderr timeout 10 "$NSDEDUP" --db y --db-info
	[ "$status" -eq 7 ]
	[ "$stderr" = "nsdedup: y: not a regular file" ]
}

@test "growth keeps the index's owner and group" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to give the index away"
	"$GENCORPUS" --records 1000 --seed 6 > more.jsonl
	news_halves
	"$NSDEDUP" --db x day1.jsonl > /dev/null
	chown 1001:2000 x x.ids
	chmod 664 x
	run_nsd --db x more.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(stat -c %s x)" -gt $((8192 + 4096 * 16)) ]
	[ "$(stat -c '%u:%g %a' x)" = "1001:2000 664" ]
}

@test "a reader of an index without a lock file in a directory it cannot write" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to switch users"
	setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null ||
	    skip "setpriv cannot switch users here"
	news_halves
	mkdir ro
	"$NSDEDUP" --db ro/x day1.jsonl > /dev/null
	"$NSDEDUP" --db ro/x --no-update day2.jsonl > expected.jsonl
	rm ro/x.lock
	chmod 755 ro
	chmod 644 ro/x ro/x.ids
	chmod 755 .
	run --separate-stderr setpriv --reuid=65534 --regid=65534 \
	    --clear-groups "$NSDEDUP" --db ro/x --no-update day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(cat expected.jsonl)"
	[ ! -e ro/x.lock ]
}

@test "an entry moved out of its probe chain: --db-verify says it cannot be found" {
	in_table x
	slot=$(first_filled_slot x)
	# An empty bucket, far from the entry's own (the table is 13% full).
	far=$(od -An -v -t u8 -j 8192 -w64 x |
	    awk -v s="$slot" 'NR - 1 > s / 4 + 8 && $2 $4 $6 $8 == "0000" {
		print (NR - 1) * 4; exit }')
	[ -n "$far" ]
	dd if=x of=entry bs=16 skip=$((512 + slot)) count=1 status=none
	dd if=entry of=x bs=16 seek=$((512 + far)) conv=notrunc status=none
	dd if=/dev/zero of=x bs=16 seek=$((512 + slot)) count=1 conv=notrunc \
	    status=none
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"nsdedup: x: slot $far: cannot be found from its home slot "*" (a bucket in between has an empty slot)"* ]]
}

@test "built without hiredis, a redis:// index is a usage error that says so" {
	[ -z "${NSD_HIREDIS-}" ] || skip "built with hiredis (tests/redis.bats)"
	record 1 "$(sentence 1)" > in.jsonl
	run_nsd --db redis://127.0.0.1:6379/ns -o out in.jsonl
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: --db redis://127.0.0.1:6379/ns: this nsdedup was built without Redis (configure found no hiredis; on Debian: apt-get install libhiredis-dev)" ]
	[ ! -e out ]
	for opt in --db-info --db-verify; do
		run_nsd --db redis://127.0.0.1:6379/ns "$opt"
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[ "$stderr" = "nsdedup: --db redis://127.0.0.1:6379/ns: this nsdedup was built without Redis (configure found no hiredis; on Debian: apt-get install libhiredis-dev)" ]
	done
}
