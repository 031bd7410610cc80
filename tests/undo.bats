#!/usr/bin/env bats
# --db-undo: the last committed run taken back, so that the same input run
# again writes what it wrote; runs before it in turn; what it refuses
# (after a fold, a growth, a rebuild; an empty index; --no-update; Redis);
# and a crash at each of its steps.

load helpers

: "${NSDEDUP_CRASHPOINTS:?run the tests through make check}"
: "${NSD_INDEX_DUMP:?run the tests through make check}"
: "${GENCORPUS:?run the tests through make check}"

# The inputs, made once: day0.jsonl to day9.jsonl, 60 records each of one
# corpus (about 300 nshash entries a day: the log of a table of 4096 slots
# is folded at the start of the eighth run); a.jsonl (100 records) and
# b.jsonl (1000 records), whose run grows the table and rebuilds it as a
# bulk load.
setup_file() {
	local i

	cd "$BATS_FILE_TMPDIR" || return 1
	"$GENCORPUS" --records 600 --seed 5 > all.jsonl
	for i in 0 1 2 3 4 5 6 7 8 9; do
		sed -n "$((i * 60 + 1)),$((i * 60 + 60))p" all.jsonl > "day$i.jsonl"
	done
	"$GENCORPUS" --records 100 --seed 1 > a.jsonl
	"$GENCORPUS" --records 1000 --seed 2 > b.jsonl
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	cp "$BATS_FILE_TMPDIR"/*.jsonl .
}

# Run day $1 over index db (with the options after it), keeping its output
# in out$1 and the committed state before it and after it in pre$1.dump and
# post$1.dump.
day() {
	local n=$1

	shift
	"$NSD_INDEX_DUMP" db > "pre$n.dump" 2> /dev/null || : > "pre$n.dump"
	"$NSDEDUP" --db db "$@" "day$n.jsonl" > "out$n" 2> "err$n"
	[ ! -s "err$n" ]
	"$NSD_INDEX_DUMP" db > "post$n.dump"
}

# Run day $1 again: what it writes, and leaves, must be what it wrote, and
# left, the first time.
again() {
	local n=$1

	shift
	"$NSDEDUP" --db db "$@" "day$n.jsonl" > "again$n" 2> "err$n"
	[ ! -s "err$n" ]
	cmp "again$n" "out$n"
	state_is "post$n.dump"
}

# --db-undo, which must succeed, saying it took back the run.
undo() {
	run_nsd --db db --db-undo
	expect_eq "$status" 0
	expect_eq "$stderr" ""
	[[ "${lines[0]}" == "undone:        the run committed "* ]]
}

# The committed state of db is the one in file $1.
state_is() {
	"$NSD_INDEX_DUMP" db > now.dump
	same_dump now.dump "$1"
}

# --db-info, but for what a larger table or file may change: which header
# copy is in use, and the sizes of the files.
info() {
	"$NSDEDUP" --db db --db-info |
	    grep -v -e '^format:' -e '^file size:' -e '^log:'
}

# --db-verify passes.
verified() {
	run_nsd --db db --db-verify
	if [ "$status" -ne 0 ] || [ -n "$stderr" ]; then
		printf '%s\n%s\n' "$output" "$stderr"
		return 1
	fi
	[[ "$output" == *"verified:      no problems found" ]]
}

# A refused --db-undo: status 7, the reason $1, and the index unchanged.
refused() {
	"$NSD_INDEX_DUMP" db > before.dump
	run_nsd --db db --db-undo
	expect_eq "$status" 7
	expect_eq "$output" ""
	expect_eq "$stderr" "nsdedup: db: cannot undo the last run: $1 (see Undo in nsdedup-index(5))"
	state_is before.dump
}

# --- Taking back runs ---

@test "each method: day 2 taken back, and run again, writes what it wrote" {
	local m d

	# 20 records a day: no fold, whose new stage would stay.
	for d in 1 2; do
		head -n 20 "day$d.jsonl" > "small$d.jsonl"
		mv "small$d.jsonl" "day$d.jsonl"
	done
	for m in nshash simhash minhash; do
		remove_index db
		day 1 -m "$m"
		info > info1
		day 2 -m "$m"
		undo
		expect_eq "${lines[1]}" "index:         db, as before it: generation 1, 20 records"
		state_is pre2.dump
		info > info-undone
		diff -u info1 info-undone
		verified
		again 2 -m "$m"
	done
}

@test "--db-info says which runs can be taken back, and when they were committed" {
	day 1
	day 2
	run_nsd --db db --db-info
	expect_eq "$status" 0
	n=${#lines[@]}
	expect_eq "${lines[n - 4]}" \
	    "undo:          2 runs can be taken back (--db-undo), the last first:"
	[[ "${lines[n - 3]}" =~ ^\ {15}generation\ 2,\ 120\ records,\ committed\ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$ ]]
	[[ "${lines[n - 2]}" =~ ^\ {15}generation\ 1,\ 60\ records,\ committed\ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$ ]]
	expect_eq "${lines[n - 1]}" "               not the one before: there is none"
	undo
	expect_eq "${lines[2]}" "undo:          1 run can be taken back (--db-undo)"
	expect_eq "${lines[3]}" "               not the one before: there is none"
}

@test "undo twice, then the two days again: the same output, the same index" {
	day 1
	day 2
	day 3
	undo
	state_is pre3.dump
	undo
	state_is pre2.dump
	verified
	again 2
	again 3
	# Run again, they can be taken back once more.
	undo
	state_is pre3.dump
}

@test "a run that only counts records (all duplicates) is taken back alone" {
	day 1
	day 2
	"$NSD_INDEX_DUMP" db > two.dump
	"$NSDEDUP" --db db day1.jsonl > dups.out
	[ "$(grep -c '"is_dup":true' dups.out)" -gt 50 ]
	undo
	[[ "${lines[0]}" == *", 180 records)" ]]
	expect_eq "${lines[1]}" "index:         db, as before it: generation 2, 120 records"
	state_is two.dump
	undo
	state_is pre2.dump
}

@test "all the runs taken back: an empty index, and nothing more to take back" {
	day 1
	day 2
	undo
	undo
	expect_eq "${lines[1]}" "index:         db, as before it: generation 0, 0 records"
	expect_eq "${lines[2]}" "undo:          nothing to take back: no run has committed to it"
	refused "no run has committed to it"
	verified
	again 1
	again 2
}

@test "an empty index: nothing to take back, status 7" {
	"$NSDEDUP" --db db < /dev/null > out
	[ ! -s out ]
	refused "no run has committed to it"
	run_nsd --db db --db-info
	expect_eq "${lines[-1]}" "undo:          nothing to take back: no run has committed to it"
}

@test "no index: status 7, and no file is made" {
	run_nsd --db db --db-undo
	expect_eq "$status" 7
	expect_eq "$stderr" "nsdedup: db: no such index"
	[ ! -e db ]
	[ ! -e db.ids ]
	[ ! -e db.undo ]
}

@test "an index made before db.undo, or whose db.undo is gone: nothing to take back" {
	day 1
	day 2
	rm db.undo
	refused "nothing of it is kept for --db-undo (only of the last 8 commits, by an nsdedup that has it)"
	verified
	day 3
	undo
	state_is pre3.dump
	refused "nothing of it is kept for --db-undo (only of the last 8 commits, by an nsdedup that has it)"
}

@test "only the last 8 commits are kept" {
	local i d

	# 20 records a day: ten days do not fill half the log.
	for i in 0 1 2 3 4 5 6 7 8 9; do
		head -n 20 "day$i.jsonl" > "small$i.jsonl"
		mv "small$i.jsonl" "day$i.jsonl"
		day "$i"
	done
	run_nsd --db db --db-info
	[[ "$output" == *"undo:          8 runs can be taken back (--db-undo), the last first:"* ]]
	[[ "$output" == *"               not the one before: nothing of it is kept for --db-undo (only of the last 8 commits, by an nsdedup that has it)" ]]
	for d in 9 8 7 6 5 4 3 2; do
		undo
		state_is "pre$d.dump"
	done
	refused "nothing of it is kept for --db-undo (only of the last 8 commits, by an nsdedup that has it)"
	for d in 2 3 4 5 6 7 8 9; do
		again "$d"
	done
}

# --- Folds, growth, bulk loads ---

@test "across a fold: the run that folded can be taken back, the one before not" {
	local i

	for i in 0 1 2 3 4 5 6; do
		day "$i"
	done
	grep -q '^stage: *none$' <("$NSDEDUP" --db db --db-info)
	# The log is half full: day 7 folds it first.
	day 7
	grep -q '^stage: .*(build 1)$' <("$NSDEDUP" --db db --db-info)
	day 8
	undo
	state_is pre8.dump
	undo
	state_is pre7.dump
	expect_eq "${lines[2]}" "undo:          nothing to take back: the log has been folded into the stage since"
	refused "the log has been folded into the stage since"
	verified
	again 7
	again 8
}

@test "across a growth and a bulk load: that run can be taken back, the one before not" {
	"$NSDEDUP" --db db a.jsonl > a.out
	"$NSD_INDEX_DUMP" db > a.dump
	"$NSDEDUP" --db db b.jsonl > b.out
	# The run grew the table into db.next, renamed it, then rebuilt it.
	grep -q '^load: .* of 8192 slots' <("$NSDEDUP" --db db --db-info)
	undo
	state_is a.dump
	verified
	refused "the table has grown, been renewed or been rebuilt since"
	"$NSDEDUP" --db db b.jsonl > b.again
	cmp b.out b.again
}

@test "a growth under way that the run started: taken back with it" {
	"$NSDEDUP" --db db a.jsonl > a.out
	head -n 400 b.jsonl > c.jsonl
	"$NSD_INDEX_DUMP" db > a.dump
	"$NSDEDUP" --db db c.jsonl > c.out
	# The run started to grow the table, and did not finish.
	[ -e db.next ]
	grep -q '^growing: ' <("$NSDEDUP" --db db --db-info)
	undo
	state_is a.dump
	[ ! -e db.next ]
	verified
	"$NSDEDUP" --db db c.jsonl > c.again
	cmp c.out c.again
}

# --- What is refused ---

@test "--db-undo with --no-update, without --db, with a FILE: usage errors" {
	day 1
	run_nsd --db db --db-undo --no-update
	expect_eq "$status" 2
	expect_eq "${stderr_lines[0]}" "nsdedup: --db-undo changes the index: it cannot go with --no-update"
	run_nsd --db-undo
	expect_eq "$status" 2
	expect_eq "${stderr_lines[0]}" "nsdedup: --db-undo needs --db PATH"
	run_nsd --db db --db-undo day1.jsonl
	expect_eq "$status" 2
	expect_eq "${stderr_lines[0]}" "nsdedup: --db-undo reads no FILE ('day1.jsonl')"
	run_nsd --db redis://127.0.0.1:1/ns --db-undo
	expect_eq "$status" 2
	expect_eq "${stderr_lines[0]}" "nsdedup: --db-undo takes back runs of a file index only: a redis:// index keeps no state before a run (see Undo in nsdedup-index(5))"
	state_is post1.dump
}

@test "--db-undo takes the writer's lock: --no-wait gives up, status 8" {
	day 1
	exec 8> db.lock
	flock -s 8
	run --separate-stderr timeout 10 "$NSDEDUP" --db db --db-undo --no-wait
	expect_eq "$status" 8
	expect_eq "$output" ""
	expect_eq "$stderr" "nsdedup: db: in use by another nsdedup run"
	exec 8>&-
	run_nsd --db db --db-undo --no-wait
	expect_eq "$status" 0
}

@test "a damaged entry of db.undo: that run cannot be taken back, --db-verify says so" {
	day 1
	day 2
	# The second entry, run 2's: a byte of its saved header.
	printf '\377' | dd of=db.undo bs=1 seek=$((64 + 512 + 100)) conv=notrunc 2> /dev/null
	refused "nothing of it is kept for --db-undo (only of the last 8 commits, by an nsdedup that has it)"
	run_nsd --db db --db-verify
	expect_eq "$status" 7
	expect_eq "$stderr" "nsdedup: db: db.undo: 1 of its entries fail their checks (their runs cannot be undone)
nsdedup: db: damaged: 1 problem found"
	# Runs go on, and the next commit writes over it.
	day 3
	undo
	state_is pre3.dump
	verified
}

# --- Crashes ---

# --db-undo under the crash-point build, dying at step $1.
crash_undo() {
	NSDEDUP_CRASH_AT=$1 run --separate-stderr "$NSDEDUP_CRASHPOINTS" \
	    --db db --db-undo
	if [ "$status" -ne 137 ]; then
		echo "NSDEDUP_CRASH_AT=$1: status $status, not killed"
		return 1
	fi
	[ -z "$output" ]
	[ -z "$stderr" ]
}

@test "killed when one header copy says the undo: the index is as before the undo" {
	local n

	# After two runs and after three, the other header copy is current.
	for n in 2 3; do
		remove_index db
		day 1
		day 2
		[ "$n" -eq 2 ] || day 3
		"$NSDEDUP" --db db --db-info | grep '^format:' > "copy$n"
		crash_undo undo-prepared
		state_is "post$n.dump"
		verified
		undo
		state_is "pre$n.dump"
		again "$n"
	done
	run ! cmp -s copy2 copy3
}

@test "killed when both header copies say the undo: the index is as after it" {
	local n

	for n in 2 3; do
		remove_index db
		day 1
		day 2
		[ "$n" -eq 2 ] || day 3
		crash_undo undo-written
		state_is "pre$n.dump"
		verified
		grep -q "^interrupted: *run $n did not commit" <("$NSDEDUP" --db db --db-info)
		again "$n"
	done
}

@test "killed after the undo has cleared the run's entries: as after it" {
	day 1
	day 2
	crash_undo undone
	state_is pre2.dump
	verified
	again 2
}

@test "killed when the undo has cleared the run's entries, before its header: as after it" {
	day 1
	day 2
	# The header that says the run's entries are cleared.
	crash_undo header-written
	state_is pre2.dump
	verified
	again 2
}

@test "killed after the undo file is saved, before the commit: as before the run" {
	day 1
	"$NSD_INDEX_DUMP" db > pre2.dump
	NSDEDUP_CRASH_AT=undo-saved run --separate-stderr "$NSDEDUP_CRASHPOINTS" \
	    --db db day2.jsonl
	expect_eq "$status" 137
	state_is pre2.dump
	verified
	# What the run saved names no commit: the undo takes back run 1.
	undo
	expect_eq "${lines[1]}" "index:         db, as before it: generation 0, 0 records"
	again 1
	day 2
	undo
	state_is pre2.dump
}

# --- Failed system calls, injected with fiu-run ---

# --db-undo with the named POSIX function failing with errno $2.
fiu_undo() {
	need fiu
	run --separate-stderr "$FIU_RUN" -x -f '' \
	    -c "enable name=$1,failinfo=$2" "${fiu_nsdedup[@]}" --db db --db-undo
}

@test "fiu: a header copy of the undo cannot be synced: status 9, as before the undo" {
	need fiu
	day 1
	day 2
	fiu_undo posix/io/sync/fdatasync 5
	expect_eq "$status" 9
	expect_eq "$output" ""
	expect_eq "$stderr" "nsdedup: db: syncing a header copy: Input/output error; the index is as before --db-undo"
	state_is post2.dump
	verified
	undo
	state_is pre2.dump
}

@test "fiu: the run's entries cannot be cleared: status 9, the run taken back" {
	need fiu
	day 1
	day 2
	fiu_undo posix/mm/msync 5
	expect_eq "$status" 9
	expect_eq "$stderr" "nsdedup: db: msync of the table: Input/output error; the run is taken back, and the next run that writes clears what it left"
	state_is pre2.dump
	verified
	again 2
}
