#!/usr/bin/env bats
# The window of an index file (--ttl): kept in the index, it forgets each
# group a fixed time after the commit that opened it, so that a copy of a
# story older than the window is an original again; the table of a steady
# feed stops growing (the growth renews it at its size without what was
# forgotten) and the group records forgotten give their bytes back;
# --db-info shows it, --db-verify holds it to its rules, undo never takes
# the forgetting back, and PATH.times, where the commits' times are, may
# be lost without harm. The clock is $NSDEDUP_NOW: no test waits.

load helpers

: "${NSDEDUP_CRASHPOINTS:?run the tests through make check}"
: "${GENCORPUS:?run the tests through make check}"

# Day 0 of the tests' clock, 2023-11-14T22:13:20Z; day $1 is $1 days on.
T0=1700000000
at_day() {
	echo $((T0 + $1 * 86400))
}

# The inputs, made once: dayN.jsonl (N from 1 to 24), 150 records of a
# corpus of their own, their ids marked dN-.
setup_file() {
	local d

	cd "$BATS_FILE_TMPDIR" || return 1
	for d in $(seq 1 24); do
		"$GENCORPUS" --records 150 --seed "$d" |
		    sed "s/\"id\":\"/\"id\":\"d$d-/" > "day$d.jsonl"
	done
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

info_field() {
	printf '%s\n' "$output" | sed -n "s/^$1: *//p"
}

# Run nsdedup at day $1 of the clock, with the arguments after it.
run_at() {
	local day=$1

	shift
	NSDEDUP_NOW=$(at_day "$day") run --separate-stderr "$NSDEDUP" "$@"
}

# The ids of the records of output file $1 that are (is_dup $2: true) or
# are not (false) duplicates.
ids_where() {
	grep "\"is_dup\":$2" "$1" | sed 's/^{"id":"\([^"]*\)".*/\1/'
}

# --db-undo of index db refused, status 7, for what the window forgot;
# the index then verifies at day 3 of the clock.
undo_refused_by_window() {
	run_nsd --db db --db-undo
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: db: cannot undo the last run: the window has forgotten the groups it opened since (see Undo in nsdedup-index(5))"
	run_at 3 --db db --db-verify
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "--ttl with an index file: the index keeps it as its window, a run without it keeps it, one with another changes it" {
	run_at 1 --db db --ttl 5d "$BATS_FILE_TMPDIR/day1.jsonl"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 150 ]
	run_at 1 --db db --db-info
	[ "$status" -eq 0 ]
	expect_eq "$(info_field window)" \
	    "5d (--ttl): groups opened before 2023-11-10T22:13:20Z are forgotten"
	run_at 2 --db db "$BATS_FILE_TMPDIR/day2.jsonl"
	[ "$status" -eq 0 ]
	run_at 2 --db db --db-info
	expect_eq "$(info_field window)" \
	    "5d (--ttl): groups opened before 2023-11-11T22:13:20Z are forgotten"
	run_at 3 --db db --ttl 36h "$BATS_FILE_TMPDIR/day3.jsonl"
	[ "$status" -eq 0 ]
	run_at 3 --db db --db-info
	expect_eq "$(info_field window)" \
	    "36h (--ttl): groups opened before 2023-11-16T10:13:20Z are forgotten"
	# A run that reads only uses its --ttl, and keeps nothing of it.
	run_at 3 --db db --no-update --ttl 1d /dev/null
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run_at 3 --db db --db-info
	expect_eq "$(info_field window)" \
	    "36h (--ttl): groups opened before 2023-11-16T10:13:20Z are forgotten"
	# A run that adds nothing still keeps a new window.
	run_at 3 --db db --ttl 2d /dev/null
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run_at 3 --db db --db-info
	expect_eq "$(info_field window)" \
	    "2d (--ttl): groups opened before 2023-11-15T22:13:20Z are forgotten"
}

@test "--ttl: usage errors, status 2, nothing read or written" {
	run_nsd --ttl 5d "$BATS_FILE_TMPDIR/day1.jsonl"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: --ttl needs --db: a run without an index forgets everything when it ends"* ]]
	for action in --db-info --db-verify --db-undo; do
		run_nsd --db db --ttl 5d "$action"
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[[ "$stderr" == "nsdedup: --ttl sets the window of a run over the index: it does not go with ${action}"* ]]
	done
	for bad in 0 -1 5x 3651d; do
		run_nsd --db db --ttl "$bad" "$BATS_FILE_TMPDIR/day1.jsonl"
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[[ "$stderr" == "nsdedup: "*"--ttl"* ]]
	done
	[ ! -e db ]
}

# Day $1's records that opened groups (is_dup false in its output out$1),
# and those records copied, with ids cN- for day $2, to stdout.
copies_of() {
	local id

	for id in $(ids_where "out$1" false | head -n 10); do
		grep "^{\"id\":\"$id\"" "$BATS_FILE_TMPDIR/day$1.jsonl" |
		    sed "s/^{\"id\":\"d$1-/{\"id\":\"c$2-from$1-/"
	done
}

@test "a story copied within the window is a duplicate; copied later, an original; no duplicate names a forgotten group" {
	local d k

	for d in $(seq 1 12); do
		{
			cat "$BATS_FILE_TMPDIR/day$d.jsonl"
			[ "$d" -le 2 ] || copies_of $((d - 2)) "$d"
			[ "$d" -le 8 ] || copies_of $((d - 8)) "$d"
		} > "in$d.jsonl"
		# A run that only reads answers as the one that writes.
		[ "$d" -eq 1 ] || NSDEDUP_NOW=$(at_day "$d") "$NSDEDUP" \
		    --db db --no-update "in$d.jsonl" > "read$d"
		NSDEDUP_NOW=$(at_day "$d") "$NSDEDUP" --db db --ttl 5d \
		    "in$d.jsonl" > "out$d"
		[ "$d" -eq 1 ] || cmp "read$d" "out$d"
		# Copies of two days before: each a duplicate of a group of
		# that day.
		if [ "$d" -gt 2 ]; then
			[ "$(grep -c "\"id\":\"c$d-from$((d - 2))-" "out$d")" -eq 10 ]
			[ "$(ids_where "out$d" false | grep -c "^c$d-from$((d - 2))-")" -eq 0 ]
		fi
		# Copies of eight days before: originals again.
		if [ "$d" -gt 8 ]; then
			[ "$(ids_where "out$d" false | grep -c "^c$d-from$((d - 8))-")" -eq 10 ]
		fi
		# No duplicate names a group opened five days or more before.
		while read -r k; do
			[ "$k" -gt $((d - 5)) ]
		done < <(grep '"is_dup":true' "out$d" |
		    sed 's/.*"similar_id":"[dc]\([0-9]*\)-.*/\1/')
		NSDEDUP_NOW=$(at_day "$d") run --separate-stderr "$NSDEDUP" \
		    --db db --db-verify
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
	done
}

@test "simhash and minhash forget too" {
	local m

	for m in simhash minhash; do
		rm -f db db.*
		NSDEDUP_NOW=$(at_day 1) "$NSDEDUP" -m $m --db db --ttl 5d \
		    "$BATS_FILE_TMPDIR/day1.jsonl" > /dev/null
		run_at 3 -m $m --db db --no-update "$BATS_FILE_TMPDIR/day1.jsonl"
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[ "$(printf '%s\n' "$output" | grep -c '"is_dup":false')" -eq 0 ]
		run_at 6 -m $m --db db "$BATS_FILE_TMPDIR/day1.jsonl"
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		# Forgotten, the day is as new as in an empty index.
		expect_eq "$output" "$("$NSDEDUP" -m $m "$BATS_FILE_TMPDIR/day1.jsonl")"
		run_at 6 --db db --db-verify
		[ "$status" -eq 0 ]
	done
}

@test "a steady feed: the table stops growing, forgotten group records give their bytes back, and every run answers as one without the key filter" {
	local d size

	for d in $(seq 1 24); do
		NSDEDUP_NOW=$(at_day "$d") "$NSDEDUP" --db a --ttl 3d --explain \
		    "$BATS_FILE_TMPDIR/day$d.jsonl" > a.out
		NSDEDUP_NOW=$(at_day "$d") NSDEDUP_NO_FILTER=1 \
		    "$NSDEDUP_CRASHPOINTS" --db b --ttl 3d --explain \
		    "$BATS_FILE_TMPDIR/day$d.jsonl" > b.out
		cmp a.out b.out
		NSDEDUP_NOW=$(at_day "$d") run --separate-stderr "$NSDEDUP" \
		    --db a --db-verify
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[ "$d" -ne 10 ] || size=$(stat -c %s a)
	done
	# The table has been renewed at its size since day 10.
	[ "$(stat -c %s a)" -eq "$size" ]
	run_at 24 --db a --db-info
	[ "$status" -eq 0 ]
	[[ "$(info_field forgotten)" =~ ^[0-9]+\ groups\;\ a\.ids\ takes\ [0-9]+\ bytes\ on\ disk$ ]]
	forgotten=$(info_field forgotten | cut -d' ' -f1)
	[ "$forgotten" -gt 2000 ]
	# Their records, more than half of those committed, are a hole in
	# PATH.ids now: its data starts again only past them.
	committed=$(info_field 'file size' | sed 's/.*(\([0-9]*\) committed)/\1/')
	if [ -n "$PYTHON3" ]; then
		data=$("$PYTHON3" -c 'import os, sys
print(os.lseek(os.open(sys.argv[1], os.O_RDONLY), 4096, os.SEEK_DATA))' a.ids)
		[ "$data" -gt $((committed / 2)) ]
	fi
	[[ "$(info_field 'oldest group')" =~ ^[0-9]+,\ opened\ 2023-12-0[5-7]T22:13:20Z,\ [0-9.]+\ days\ ago$ ]]
	# The next writer reserves room only past the committed records:
	# the hole stays a hole.
	NSDEDUP_NOW=$(at_day 24) "$NSDEDUP" --db a < /dev/null > /dev/null
	size=$(stat -c %s a.ids)
	[ "$(($(stat -c %b a.ids) * 512))" -lt $((size - committed / 2)) ]
}

@test "a steady feed, each day's runs taken back one by one: every state verifies, and none before a renewal is taken back" {
	local d n renewed=0

	for d in $(seq 1 24); do
		NSDEDUP_NOW=$(at_day "$d") "$NSDEDUP" --db db --ttl 3d \
		    "$BATS_FILE_TMPDIR/day$d.jsonl" > /dev/null
		rm -rf copy && mkdir copy && cp db db.* copy/
		for n in 1 2 3 4 5 6 7 8 9; do
			run_at "$d" --db copy/db --db-undo
			[ "$status" -eq 0 ] || break
			run_at "$d" --db copy/db --db-verify
			[ "$status" -eq 0 ] ||
			    { echo "day $d, undo $n: $stderr"; return 1; }
		done
		[ "$n" -lt 9 ]
		[ "$status" -eq 7 ]
		case $stderr in
		*"the table has grown, been renewed or been rebuilt since"*)
			renewed=$((renewed + 1)) ;;
		esac
		run_at "$d" --db copy/db "$BATS_FILE_TMPDIR/day$d.jsonl"
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
	done
	# The table is renewed, at its size, every few days.
	[ "$renewed" -gt 2 ]
}

@test "killed after a fold that left out what a narrower window forgot: the header said so first" {
	local d

	for d in $(seq 1 9); do
		NSDEDUP_NOW=$(at_day "$d") "$NSDEDUP" --db db --ttl 30d \
		    "$BATS_FILE_TMPDIR/day$d.jsonl" > /dev/null
	done
	# Day 10's run, with a window of a day, folds the log into a new
	# stage without the groups of days 1 to 8, and is killed.
	NSDEDUP_NOW=$(at_day 10) NSDEDUP_CRASH_AT=fold-renamed \
	    run --separate-stderr "$NSDEDUP_CRASHPOINTS" --db db --ttl 1d \
	    "$BATS_FILE_TMPDIR/day10.jsonl"
	[ "$status" -eq 137 ]
	# A run with the index's own window forgets them too: none is
	# half there.
	run_at 10 --db db --db-verify
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run_at 10 --db db --db-info
	[ "$(info_field forgotten | cut -d' ' -f1)" -gt 1000 ]
	run_at 10 --db db "$BATS_FILE_TMPDIR/day1.jsonl"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$("$NSDEDUP" "$BATS_FILE_TMPDIR/day1.jsonl")"
}

@test "--db-info: the window, the groups forgotten, and the oldest kept" {
	NSDEDUP_NOW=$(at_day 1) "$NSDEDUP" --db db --ttl 2d \
	    "$BATS_FILE_TMPDIR/day1.jsonl" > out1
	NSDEDUP_NOW=$(at_day 2) "$NSDEDUP" --db db \
	    "$BATS_FILE_TMPDIR/day2.jsonl" > out2
	day1=$(ids_where out1 false | wc -l)
	day2=$(ids_where out2 false | wc -l)
	run_at 2 --db db --db-info
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(info_field window)" \
	    "2d (--ttl): groups opened before 2023-11-14T22:13:20Z are forgotten"
	expect_eq "$(info_field forgotten)" \
	    "0 groups; db.ids takes $(($(stat -c %b db.ids) * 512)) bytes on disk"
	expect_eq "$(info_field 'oldest group')" \
	    "1, opened 2023-11-15T22:13:20Z, 1.0 days ago"
	NSDEDUP_NOW=$((T0 + 84 * 3600)) run --separate-stderr "$NSDEDUP" \
	    --db db --db-info
	[ "$status" -eq 0 ]
	expect_eq "$(info_field forgotten)" \
	    "$day1 groups; db.ids takes $(($(stat -c %b db.ids) * 512)) bytes on disk"
	expect_eq "$(info_field 'oldest group')" \
	    "$((day1 + 1)), opened 2023-11-16T22:13:20Z, 1.5 days ago"
	run_at 5 --db db --db-info
	expect_eq "$(info_field forgotten)" \
	    "$((day1 + day2)) groups; db.ids takes $(($(stat -c %b db.ids) * 512)) bytes on disk"
	expect_eq "$(info_field 'oldest group')" "none"
}

@test "undo with a window: run, undo, run again writes the same; an undo past what the window forgot is refused" {
	local d

	for d in 1 2; do
		NSDEDUP_NOW=$(at_day "$d") "$NSDEDUP" --db db --ttl 1d \
		    "$BATS_FILE_TMPDIR/day$d.jsonl" > "out$d"
	done
	# Day 3's run forgets the groups of days 1 and 2.
	NSDEDUP_NOW=$(at_day 3) "$NSDEDUP" --db db \
	    "$BATS_FILE_TMPDIR/day1.jsonl" > out3
	expect_eq "$(cat out3)" "$("$NSDEDUP" "$BATS_FILE_TMPDIR/day1.jsonl")"
	run_nsd --db db --db-undo
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	NSDEDUP_NOW=$(at_day 3) "$NSDEDUP" --db db \
	    "$BATS_FILE_TMPDIR/day1.jsonl" > again3
	cmp out3 again3
	run_at 3 --db db --db-verify
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# The undo keeps them forgotten, and the runs that opened them
	# cannot be taken back.
	run_nsd --db db --db-undo
	[ "$status" -eq 0 ]
	undo_refused_by_window
}

@test "undo is refused where the window's hole took the newest group record of the state before the run" {
	# The first 46 records of day 1 leave the newest group record
	# across byte 8192 of db.ids: day 3 forgets their groups and punches
	# PATH.ids up to 8192, into that record, which an undo of day 3
	# would need (the run's before it numbers groups from it).
	head -n 46 "$BATS_FILE_TMPDIR/day1.jsonl" |
	    NSDEDUP_NOW=$(at_day 1) "$NSDEDUP" --db db --ttl 1d > /dev/null
	head -n 3 "$BATS_FILE_TMPDIR/day2.jsonl" |
	    NSDEDUP_NOW=$(at_day 3) "$NSDEDUP" --db db > out3
	undo_refused_by_window
	head -n 3 "$BATS_FILE_TMPDIR/day2.jsonl" |
	    NSDEDUP_NOW=$(at_day 3) run --separate-stderr "$NSDEDUP" --db db
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(printf '%s\n' "$output" | grep -c '"is_dup":false')" -eq 0 ]
}

@test "a run that only sets a new window is no run to undo, and an undo forgets no more than the index had" {
	NSDEDUP_NOW=$(at_day 1) "$NSDEDUP" --db db --ttl 5d \
	    "$BATS_FILE_TMPDIR/day1.jsonl" > out1
	NSDEDUP_NOW=$(at_day 2) "$NSDEDUP" --db db \
	    "$BATS_FILE_TMPDIR/day2.jsonl" > out2
	# A day later, a new window alone: the header keeps day 2's time,
	# by which the undo knows day 2's run.
	NSDEDUP_NOW=$(at_day 3) run --separate-stderr "$NSDEDUP" --db db \
	    --ttl 6d < /dev/null
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run_at 2 --db db --db-info
	expect_eq "$(info_field window)" \
	    "6d (--ttl): groups opened before 2023-11-10T22:13:20Z are forgotten"
	# The undo, at a clock that forgets everything, takes back day 2 and
	# leaves day 1 whole, the window kept.
	run_at 30 --db db --db-undo
	[ "$status" -eq 0 ]
	run_at 2 --db db --db-verify
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run_at 2 --db db --db-info
	expect_eq "$(info_field window)" \
	    "6d (--ttl): groups opened before 2023-11-10T22:13:20Z are forgotten"
	run_at 2 --db db --no-update "$BATS_FILE_TMPDIR/day1.jsonl"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | grep -c '"is_dup":false')" -eq 0 ]
	NSDEDUP_NOW=$(at_day 2) "$NSDEDUP" --db db \
	    "$BATS_FILE_TMPDIR/day2.jsonl" > again2
	cmp out2 again2
}

@test "PATH.times lost or damaged: the window forgets no more until runs record their times again, and nothing else changes" {
	local d

	for d in 1 2; do
		NSDEDUP_NOW=$(at_day "$d") "$NSDEDUP" --db db --ttl 1d \
		    "$BATS_FILE_TMPDIR/day$d.jsonl" > "out$d"
	done
	# Damaged: day 2's record no longer matches its checksum.
	printf '\377' | dd of=db.times bs=1 seek=72 conv=notrunc 2> /dev/null
	run_at 4 --db db --db-verify
	[ "$status" -eq 7 ]
	[[ "$stderr" == *"nsdedup: db: db.times: the record of generation 2 fails its checksum"* ]]
	run_at 4 --db db --db-info
	[ "$status" -eq 0 ]
	expect_eq "$(info_field window)" \
	    "1d (--ttl): groups opened before 2023-11-17T22:13:20Z are forgotten; the times of the commits are missing or damaged, so no more are until runs record theirs"
	# Day 1's groups were forgotten at day 2 (ids_start); day 2's are
	# kept while the times cannot be read.
	run_at 4 --db db --no-update "$BATS_FILE_TMPDIR/day2.jsonl"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | grep -c '"is_dup":false')" -eq 0 ]
	run_at 4 --db db --no-update "$BATS_FILE_TMPDIR/day1.jsonl"
	[ "$status" -eq 0 ]
	expect_eq "$output" "$("$NSDEDUP" "$BATS_FILE_TMPDIR/day1.jsonl")"
	# A writer starts the times again, from its own commit.
	run_at 4 --db db "$BATS_FILE_TMPDIR/day3.jsonl"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(stat -c %s db.times)" -eq 64 ]
	run_at 4 --db db --db-verify
	[ "$status" -eq 0 ]
	# Missing: the same.
	rm db.times
	run_at 9 --db db --no-update "$BATS_FILE_TMPDIR/day3.jsonl"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | grep -c '"is_dup":false')" -eq 0 ]
}
