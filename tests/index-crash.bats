#!/usr/bin/env bats
# What a run of --db that does not end well leaves: killed at each step of
# the commit protocol, killed at random, failed system calls (fiu-run), a
# full file system, a closed pipe, a bad record, an output error, SIGTERM
# and an unreadable input.
# Every test has one shape: run 1 makes the index, run 2 fails, and then
# the index is exactly as before run 2 (or, past the commit point, exactly
# as after it), --db-verify passes, and run 2 run again writes what an
# uninterrupted run 2 writes.

load helpers

: "${NSDEDUP_CRASHPOINTS:?run the tests through make check}"
: "${NSD_INDEX_DUMP:?run the tests through make check}"
: "${GENCORPUS:?run the tests through make check}"

# The inputs, made once: run 1 reads a.jsonl (100 records, 525 entries in
# the log of a table of 4096 slots); b.jsonl (1000 records) makes run 2
# grow the table into db.next (a growth sweep), rename it into place, then,
# its log full and having added more than half a sweep period, go on as a
# bulk load (rebuild the table with the log, then store into it in place);
# small.jsonl (300 records) does none of that; few.jsonl (10 records) adds
# a few entries to the log; big.jsonl (3000 records, about 11 MB) is a
# longer run.
setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$GENCORPUS" --records 100 --seed 1 > a.jsonl
	"$GENCORPUS" --records 1000 --seed 2 > b.jsonl
	head -n 300 b.jsonl > small.jsonl
	head -n 10 b.jsonl > few.jsonl
	"$GENCORPUS" --records 3000 --seed 3 > big.jsonl
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	cp "$BATS_FILE_TMPDIR"/*.jsonl .
}

# Make the index db from $1 (run 1) and learn, from an uninterrupted run 2
# over the remaining arguments on a copy, what it writes (want.out) and
# what it leaves (post.dump). The state before run 2 is pre.dump, and its
# files are kept in pre/.
prepare() {
	local first=$1

	shift
	run2=("$@")
	run_nsd --db db "$first"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	"$NSD_INDEX_DUMP" db > pre.dump
	mkdir pre ref
	copy_index db pre
	copy_index db ref
	"$NSDEDUP" --db ref/db "${run2[@]}" > want.out 2> ref.err
	[ ! -s ref.err ]
	"$NSD_INDEX_DUMP" ref/db > post.dump
	if cmp -s pre.dump post.dump; then
		echo "run 2 leaves the index as it was: the test proves nothing"
		return 1
	fi
}

# What running run 2 again after a commit gives: run 2 over a copy of the
# state after an uninterrupted run 2 (again.out, again.dump).
prepare_again() {
	[ -e again.dump ] && return 0
	mkdir again
	copy_index ref/db again
	"$NSDEDUP" --db again/db "${run2[@]}" > again.out 2> again.err
	[ ! -s again.err ]
	"$NSD_INDEX_DUMP" again/db > again.dump
}

# After a failed run 2: the index is as in $1.dump (pre or post) and
# nothing else, --db-verify passes (its report kept in verify.out), and run
# 2 again writes what an uninterrupted run writes and leaves what it
# leaves.
check_recovered() {
	local want=want.out after=post.dump

	"$NSD_INDEX_DUMP" db > now.dump
	same_dump now.dump "$1.dump"
	run_nsd --db db --db-verify
	printf '%s\n' "$output" > verify.out
	if [ "$status" -ne 0 ] || [ -n "$stderr" ]; then
		printf '%s\n%s\n' "$output" "$stderr"
		return 1
	fi
	grep -q '^verified: *no problems found$' verify.out
	if [ "$1" = post ]; then
		prepare_again
		want=again.out
		after=again.dump
	fi
	local rc=0
	"$NSDEDUP" --db db "${run2[@]}" > rerun.out 2> rerun.err || rc=$?
	expect_eq "$rc" 0
	expect_eq "$(cat rerun.err)" ""
	cmp rerun.out "$want"
	"$NSD_INDEX_DUMP" db > now.dump
	same_dump now.dump "$after"
	[ ! -e db.new ]
}

# --db-verify (verify.out) says that run 2 did not commit, and that it
# left $1 slots to clear ("some": any number but none; "any": any number).
# A run's entries reach the table only when it is rebuilt with the log.
check_interrupted() {
	grep -q '^interrupted: *run 2 did not commit' verify.out
	case $1 in
	any)	;;
	0)	[ "$(grep -c '^leftovers:' verify.out)" -eq 0 ] ;;
	some)	grep -q '^leftovers: *[1-9][0-9]* slots of run 2' verify.out ;;
	*)	grep -q "^leftovers: *$1 slots of run 2," verify.out ;;
	esac
}

# Run 2 under the crash-point build, dying at step $1 ("name" or "name:N").
crash_at() {
	NSDEDUP_CRASH_AT=$1 run --separate-stderr "$NSDEDUP_CRASHPOINTS" \
	    --db db "${run2[@]}"
	if [ "$status" -ne 137 ]; then
		echo "NSDEDUP_CRASH_AT=$1: status $status, not killed"
		return 1
	fi
	[ -z "$stderr" ]
}

# The number of entries in the committed index of dump file $1.
entries() {
	sed -n '1s/.* entries \([0-9]*\) .*/\1/p' "$1"
}

# --- Killed at each step of the commit protocol ---

@test "killed after the pending header: the index is as before" {
	prepare a.jsonl b.jsonl
	crash_at begin
	check_recovered pre
	check_interrupted 0
}

@test "killed after the first insert: the index is as before" {
	prepare a.jsonl b.jsonl
	crash_at insert:1
	check_recovered pre
	check_interrupted 0
}

@test "killed at an insert in the middle: the index is as before" {
	# small.jsonl: the table does not grow, so the insert is into it.
	prepare a.jsonl small.jsonl
	n=$((($(entries post.dump) - $(entries pre.dump)) / 2))
	crash_at "insert:$n"
	[ "$(stat -c %s db)" -eq "$(stat -c %s pre/db)" ]
	check_recovered pre
	check_interrupted any
}

@test "killed at an insert while the table grows: the index is as before" {
	prepare a.jsonl b.jsonl
	# The table of 4096 slots starts to grow into db.next once the index
	# holds more than 5/8 of that (2560 entries).
	n=$((2560 - $(entries pre.dump) + 100))
	crash_at "insert:$n"
	[ -e db.next ]
	[ "$(stat -c %s db)" -eq "$(stat -c %s pre/db)" ]
	check_recovered pre
	[ ! -e db.next ]
	check_interrupted any
}

@test "killed when the table has started to grow" {
	prepare a.jsonl b.jsonl
	crash_at grow-started
	[ -e db.next ]
	check_recovered pre
	[ ! -e db.next ]
	check_interrupted any
}

@test "killed when the grown table is ready, before its rename" {
	prepare a.jsonl b.jsonl
	crash_at grown-built
	[ -e db.next ]
	[ "$(stat -c %s db)" -eq "$(stat -c %s pre/db)" ]
	check_recovered pre
	check_interrupted any
}

@test "killed just after the grown table is renamed into place" {
	prepare a.jsonl b.jsonl
	crash_at grown-renamed
	[ ! -e db.next ]
	[ "$(stat -c %s db)" -gt "$(stat -c %s pre/db)" ]
	check_recovered pre
	check_interrupted any
}

@test "a bulk load rebuilds the table: killed before its rename" {
	prepare a.jsonl b.jsonl
	crash_at rebuild-built
	[ -e db.new ]
	check_recovered pre
	check_interrupted any
}

@test "a bulk load rebuilds the table: killed just after its rename" {
	prepare a.jsonl b.jsonl
	crash_at rebuild-renamed
	if cmp -s -i 8192 db pre/db; then
		echo "the table was not rebuilt"
		false
	fi
	check_recovered pre
	check_interrupted some
}

@test "a bulk load goes on in place: killed after the table is synced" {
	prepare a.jsonl b.jsonl
	crash_at table-synced
	check_recovered pre
	check_interrupted some
}

@test "killed after the second growth of a run: the index is as before" {
	"$GENCORPUS" --records 7000 --seed 4 > huge.jsonl
	prepare a.jsonl huge.jsonl
	crash_at rebuild-renamed:2
	[ "$(stat -c %s db)" -gt "$(stat -c %s pre/db)" ]
	check_recovered pre
	check_interrupted some
}

# first.jsonl leaves a log more than half full (over 2048 of the 4096
# entries a table of 4096 slots folds at), so that run 2 (next.jsonl, 10
# records it has not seen) folds it into the stage when it opens the
# index, and sweeps a little of it into the table at its commit.
fold_first() {
	cat a.jsonl small.jsonl > first.jsonl
	sed -n 301,310p b.jsonl > next.jsonl
	prepare first.jsonl next.jsonl
	[ ! -e pre/db.stage ]
	[ -e ref/db.stage ]
}

@test "killed when the fold before a run is built, before its rename" {
	fold_first
	crash_at fold-built
	[ -e db.stage.new ]
	[ ! -e db.stage ]
	check_recovered pre
	[ ! -e db.stage.new ]
	# Before the run began: it left nothing to clear.
	[ "$(grep -c '^interrupted:' verify.out)" -eq 0 ]
}

@test "killed just after the fold's rename: the next writer finishes it" {
	fold_first
	crash_at fold-renamed
	[ -e db.stage ]
	# Read as it is, with the log the header still names...
	run_nsd --db db --no-update next.jsonl
	[ "$status" -eq 0 ]
	cmp <(printf '%s\n' "$output") want.out
	# ...and taken by the next writer.
	check_recovered pre
	[ "$(grep -c '^interrupted:' verify.out)" -eq 0 ]
}

# The key filter is written whole to db.filter.new and renamed into place
# before each file that takes in the log (the fold's stage, a rebuilt
# table) and before the commit's header; a run that put nothing new into
# the table files only stamps its header. Killed at any of these, the
# index is as before, and the filter it leaves holds every committed key
# (--db-verify checks it).

@test "killed when the key filter is built, before its rename" {
	prepare a.jsonl b.jsonl
	crash_at filter-built
	[ -e db.filter.new ]
	check_recovered pre
	[ ! -e db.filter.new ]
	check_interrupted any
}

@test "killed just after the key filter's rename, before the rebuild's" {
	prepare a.jsonl b.jsonl
	crash_at filter-renamed
	[ ! -e db.filter.new ]
	check_recovered pre
	check_interrupted any
}

@test "killed when the key filter is built for the fold before a run" {
	fold_first
	crash_at filter-renamed
	[ ! -e db.stage ]
	check_recovered pre
	[ "$(grep -c '^interrupted:' verify.out)" -eq 0 ]
}

@test "killed when the key filter's header is stamped at the commit" {
	prepare a.jsonl few.jsonl
	cmp -s pre/db.filter ref/db.filter && false
	crash_at filter-stamped
	check_recovered pre
	check_interrupted 0
}

@test "killed at each step of the upgrade of a version-4 index: as before, in either version" {
	local point version dir="$TOP_SRCDIR/tests/data/index-v4"
	local news="$TOP_SRCDIR/examples/news.jsonl"
	local -a opts=(-m minhash --threshold 0.2)

	for point in upgrade-ids upgrade-built upgrade-renamed; do
		rm -rf up && mkdir up
		cp "$dir"/growing.nsd* up/
		chmod u+w up/*
		"$NSD_INDEX_DUMP" up/growing.nsd > before.dump
		NSDEDUP_CRASH_AT=$point run --separate-stderr \
		    "$NSDEDUP_CRASHPOINTS" "${opts[@]}" --db up/growing.nsd \
		    "$news"
		expect_eq "$status" 137
		same_dump <("$NSD_INDEX_DUMP" up/growing.nsd) before.dump
		run_nsd --db up/growing.nsd --db-verify
		expect_eq "$status" 0
		version=4
		[ "$point" != upgrade-renamed ] || version=8
		[[ "${lines[1]}" == "format:        version $version "* ]]
		[ "${lines[-1]}" = "verified:      no problems found" ]
		# Read as it is, then taken by the next writer.
		run_nsd "${opts[@]}" --db up/growing.nsd --no-update --explain \
		    "$news"
		expect_eq "$status" 0
		cmp <(printf '%s\n' "$output") "$dir/growing.expected.jsonl"
		run_nsd "${opts[@]}" --db up/growing.nsd --explain "$news"
		expect_eq "$status" 0
		expect_eq "$stderr" ""
		cmp <(printf '%s\n' "$output") "$dir/growing.expected.jsonl"
		[ ! -e up/growing.nsd.stage ] && [ ! -e up/growing.nsd.next ]
		run_nsd --db up/growing.nsd --db-verify
		expect_eq "$status" 0
		[[ "${lines[1]}" == "format:        version 8 "* ]]
	done
}

@test "killed in the sweep at the commit: the index is as before" {
	fold_first
	crash_at sweep
	check_recovered pre
	check_interrupted some
}

@test "killed after the log is synced: the index is as before" {
	prepare a.jsonl b.jsonl
	crash_at log-synced
	check_recovered pre
	check_interrupted any
}

@test "killed after the id file is synced: the index is as before" {
	prepare a.jsonl b.jsonl
	crash_at ids-synced
	check_recovered pre
	check_interrupted any
}

@test "killed after the time of the commit is written: the index is as before" {
	# PATH.times holds a record of run 2's generation that no header
	# has committed; the run again writes it over.
	prepare a.jsonl b.jsonl
	crash_at times-written
	[ "$(stat -c %s db.times)" -eq $((32 + 2 * 32)) ]
	check_recovered pre
	check_interrupted any
	[ "$(stat -c %s db.times)" -eq $((32 + 2 * 32)) ]
}

@test "killed after writing the pending header, before its sync" {
	# The first header write of a run is the one that says it is pending.
	prepare a.jsonl b.jsonl
	crash_at header-written:1
	check_recovered pre
	check_interrupted 0
}

@test "killed after writing the commit header, before its sync: committed" {
	# A killed process loses nothing it wrote: the commit is the write.
	prepare a.jsonl b.jsonl
	crash_at commit-written
	check_recovered post
	[ "$(grep -c '^interrupted:' verify.out)" -eq 0 ]
}

@test "killed just after the commit: the index is as after the run" {
	prepare a.jsonl b.jsonl
	crash_at committed
	check_recovered post
	[ "$(grep -c '^interrupted:' verify.out)" -eq 0 ]
}

@test "killed again and again, also while clearing what a killed run left" {
	prepare a.jsonl b.jsonl
	crash_at insert:2000
	# The next writer clears the leftovers, then writes its header.
	crash_at header-written:1
	same_dump <("$NSD_INDEX_DUMP" db) pre.dump
	# The generation of the killed runs is taken again, over no leftovers.
	crash_at insert:1
	crash_at grown-renamed
	same_dump <("$NSD_INDEX_DUMP" db) pre.dump
	crash_at ids-synced
	check_recovered pre
	check_interrupted some
}

@test "kill -9 at random moments leaves the index as before or as after" {
	prepare a.jsonl big.jsonl
	# How long a run takes here, on a copy: the kills spread over it.
	mkdir timed
	copy_index pre/db timed
	t0=$(date +%s%N)
	"$NSDEDUP" --db timed/db big.jsonl > /dev/null
	# Eight rounds, each killing within its eighth of 1.25 times that.
	span=$((($(date +%s%N) - t0) * 5 / 32000000 + 1))
	for round in 1 2 3 4 5 6 7 8; do
		remove_index db
		copy_index pre/db .
		ms=$(((round - 1) * span + RANDOM % span))
		"$NSDEDUP" --db db big.jsonl > killed.out 2> /dev/null 3>&- &
		pid=$!
		sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
		kill -KILL "$pid" 2> /dev/null || true
		rc=0
		wait "$pid" || rc=$?
		"$NSD_INDEX_DUMP" db > now.dump
		if cmp -s now.dump pre.dump; then
			state=pre
		else
			state=post
		fi
		echo "round $round: killed at $ms ms: status $rc, index $state"
		[ "$rc" -eq 137 ] || [ "$rc" -eq 0 ]
		if [ "$rc" -eq 0 ]; then
			[ "$state" = post ]
			cmp killed.out want.out
		fi
		check_recovered "$state"
		if grep -q '^interrupted:' verify.out; then
			echo "round $round: run 2 was cut short after it began"
		fi
	done
}

# --- Failed system calls, injected with fiu-run ---

# fiu-run -x makes the named POSIX function fail with errno $2 (its
# failinfo; without one, libfiu picks an errno at random among those the
# function may return). The rest is the command line of nsdedup.
fiu_fail() {
	local point=$1 errno=$2

	shift 2
	run --separate-stderr "$FIU_RUN" -x -f '' \
	    -c "enable name=$point,failinfo=$errno" "${fiu_nsdedup[@]}" "$@"
}

# The message of a failure that leaves run 2 uncommitted: $1 is the step.
commit_failed() {
	expect_eq "$status" 9
	expect_eq "$stderr" \
	    "nsdedup: db: $1; nothing of this run was committed"
}

# Run 2 over file $4 read through a FIFO, under fiu-run; the failure point
# $2 (errno $3) is enabled through fiu-ctrl once the index is open ($1 is
# "open") or once run 2 has begun ("begun").
fiu_midrun() {
	local when=$1 point=$2 errno=$3 input=$4

	[ -d /proc/self/fd ] || skip "no /proc/PID/fd to follow the run"
	mkfifo feed
	"$FIU_RUN" -x -f "$PWD/ctl" "${fiu_nsdedup[@]}" --db db feed > midrun.out \
	    2> midrun.err 3>&- &
	pid=$!
	# nsdedup opens its input only once the index is open.
	feed_open "$pid"
	if [ "$when" = begun ]; then
		cat "$input" >&8 2> /dev/null || true
		wait_begun
	fi
	"$FIU_CTRL" -f "$PWD/ctl" -c "enable name=$point,failinfo=$errno" "$pid"
	if [ "$when" = open ]; then
		cat "$input" >&8 2> /dev/null || true
	fi
	exec 8>&-
	status=0
	wait "$pid" || status=$?
	stderr=$(cat midrun.err)
}

@test "fiu: msync of the id file fails at the commit" {
	need fiu
	prepare a.jsonl few.jsonl
	fiu_fail posix/mm/msync 5 --db db few.jsonl
	commit_failed "msync of the id file: Input/output error"
	check_recovered pre
	check_interrupted 0
}

@test "fiu: msync of a grown table fails" {
	need fiu
	prepare a.jsonl b.jsonl
	fiu_fail posix/mm/msync 5 --db db b.jsonl
	commit_failed "msync of the grown table: Input/output error"
	[ -e db.next ]
	check_recovered pre
	check_interrupted 0
}

@test "fiu: fdatasync of the pending header fails" {
	need fiu
	prepare a.jsonl small.jsonl
	fiu_fail posix/io/sync/fdatasync 5 --db db small.jsonl
	commit_failed "syncing a header copy: Input/output error"
	check_recovered pre
}

@test "fiu: fdatasync of the log fails at the commit" {
	need fiu
	prepare a.jsonl few.jsonl
	fiu_midrun begun posix/io/sync/fdatasync 5 few.jsonl
	commit_failed "fdatasync of the log: Input/output error"
	check_recovered pre
	check_interrupted 0
}

@test "fiu: the commit of a run that adds no entry cannot be written" {
	need fiu
	# Run 2 reads run 1's records again: its commit only counts them.
	prepare a.jsonl a.jsonl
	# Before the header, the entry of db.undo that saves the state
	# before the run is written and synced.
	fiu_fail posix/io/sync/fdatasync 5 --db db a.jsonl
	commit_failed "writing the undo file: Input/output error"
	check_recovered pre
	fiu_fail posix/io/rw/pwrite 28 --db db a.jsonl
	commit_failed "writing the undo file: No space left on device"
	check_recovered post
}

@test "fiu: pwrite of the pending header fails" {
	need fiu
	prepare a.jsonl small.jsonl
	fiu_fail posix/io/rw/pwrite 28 --db db small.jsonl
	commit_failed "writing a header copy: No space left on device"
	check_recovered pre
}

@test "fiu: pwrite of the log fails at the commit" {
	need fiu
	prepare a.jsonl few.jsonl
	fiu_midrun begun posix/io/rw/pwrite 5 few.jsonl
	commit_failed "writing the log: Input/output error"
	check_recovered pre
	check_interrupted 0
}

@test "fiu: fsync of the directory fails after a grown table's rename" {
	need fiu
	prepare a.jsonl b.jsonl
	fiu_midrun open posix/io/sync/fsync 5 b.jsonl
	commit_failed "syncing the index's directory: Input/output error"
	check_recovered pre
	check_interrupted any
}

@test "fiu: fsync of the directory fails when a writer opens the index" {
	need fiu
	prepare a.jsonl b.jsonl
	# A rebuild's rename must last before the log is written over.
	fiu_fail posix/io/sync/fsync 5 --db db b.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" \
	    "nsdedup: db: cannot sync the index's directory: Input/output error"
	[ -z "$output" ]
	check_recovered pre
}

@test "fiu: the rename of a grown table fails" {
	need fiu
	prepare a.jsonl b.jsonl
	fiu_fail posix/io/dir/rename 5 --db db b.jsonl
	commit_failed "renaming the grown table into place: Input/output error"
	[ -e db.next ]
	[ "$(stat -c %s db)" -eq "$(stat -c %s pre/db)" ]
	check_recovered pre
	check_interrupted 0
}

@test "fiu: a new index cannot be renamed into place or its directory synced" {
	need fiu
	"$NSDEDUP" b.jsonl > want.out
	for point in posix/io/dir/rename posix/io/sync/fsync; do
		remove_index db
		fiu_fail "$point" 5 --db db b.jsonl
		echo "$point: $status: $stderr"
		[ "$status" -eq 9 ]
		[[ "$stderr" == "nsdedup: db: "*": Input/output error; nothing of this run was committed" ]]
		case $point in
		*rename) [[ "$stderr" == *renam* ]] ;;
		*fsync) [[ "$stderr" == *sync* ]] ;;
		esac
		[ ! -e db.new ]
		# No index, or an empty one.
		if [ -e db ]; then
			"$NSD_INDEX_DUMP" db | head -n 1 > now.dump
			grep -q '^committed 0 records 0 ' now.dump
		fi
		run_nsd --db db b.jsonl
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		cmp <(printf '%s\n' "$output") want.out
	done
}

@test "fiu: mmap fails when the index is opened (exit 7)" {
	need fiu
	prepare a.jsonl small.jsonl
	fiu_fail posix/mm/mmap 12 --db db small.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" "nsdedup: db: cannot map: Cannot allocate memory"
	cmp db pre/db
	check_recovered pre
	[ "$(grep -c '^interrupted:' verify.out)" -eq 0 ]
}

@test "fiu: mmap of a rebuilt table fails (exit 9)" {
	need fiu
	prepare a.jsonl b.jsonl
	fiu_midrun open posix/mm/mmap 12 b.jsonl
	commit_failed "cannot map the new table: Cannot allocate memory"
	[ ! -e db.new ]
	check_recovered pre
	check_interrupted 0
}

# --- A full file system ---

# Run nsdedup with the arguments given on the index db copied onto a tmpfs
# of $1 bytes (copied with cp option $2), in a mount namespace of its own;
# then copy the index back. $3 is a command run on the tmpfs before (may be
# ":"). Sets status and stderr.
on_tiny_fs() {
	local size=$1 sparse=$2 before=$3

	shift 3
	mkdir -p mnt
	unshare -m sh -c '
		size=$1 sparse=$2 before=$3
		shift 3
		mount -t tmpfs -o "size=$size" nsdedup-test mnt || exit 1
		for f in db db.ids db.log db.stage db.next; do
			[ ! -e "$f" ] || cp "$sparse" "$f" mnt/ || exit 1
		done
		eval "$before"
		rc=0
		"$@" > tiny.out 2> tiny.err || rc=$?
		echo "$rc" > tiny.status
		ls -A mnt > tiny.ls
		rm -f db.stage db.next
		for f in db db.ids db.log db.stage db.next; do
			[ ! -e "mnt/$f" ] || cp "mnt/$f" .
		done
	    ' sh "$size" "$sparse" "$before" "$@"
	status=$(cat tiny.status)
	stderr=$(cat tiny.err)
}

need_tmpfs() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to mount a tmpfs"
	mkdir probe
	unshare -m sh -c 'mount -t tmpfs -o size=64k none probe' \
	    2> /dev/null || skip "cannot mount a tmpfs in a mount namespace"
}

@test "a full file system: a rebuilt table gets no room (exit 9)" {
	need_tmpfs
	prepare a.jsonl b.jsonl
	# Room for the index (72 KB, and 64 KB of ids that grow to 128 KB with
	# the groups' sketches), not for a table twice as big.
	on_tiny_fs 240k --sparse=never : "$NSDEDUP" --db mnt/db b.jsonl
	expect_eq "$status" 9
	expect_eq "$stderr" "nsdedup: mnt/db: cannot make room for the table: No space left on device; nothing of this run was committed"
	[ "$(grep -c db.new tiny.ls)" -eq 0 ]
	check_recovered pre
	check_interrupted 0
}

@test "a full file system: the id file gets no room (exit 9)" {
	need_tmpfs
	# Groups with ids of 3000 bytes and no text: the id file must grow
	# past its first 64 KB, and the table does not.
	long=$(printf '%3000s' '' | tr ' ' i)
	for i in $(seq 40); do
		printf '{"id":"%s-%d","text":"short"}\n' "$long" "$i"
	done > longids.jsonl
	prepare a.jsonl longids.jsonl
	on_tiny_fs 160k --sparse=never : "$NSDEDUP" --db mnt/db longids.jsonl
	expect_eq "$status" 9
	expect_eq "$stderr" "nsdedup: mnt/db: making room in the id file: No space left on device; nothing of this run was committed"
	check_recovered pre
	check_interrupted 0
}

@test "a full file system under a sparse copy of the index: exit 9, no SIGBUS" {
	need_tmpfs
	prepare a.jsonl small.jsonl
	# Copied sparsely (as cp, tar -S or rsync -S may do), the unused part
	# of the id file has no blocks; then the file system fills up.
	on_tiny_fs 200k --sparse=always \
	    'dd if=/dev/zero of=mnt/fill bs=4k 2> /dev/null' \
	    "$NSDEDUP" --db mnt/db small.jsonl
	echo "status $status: $stderr"
	[ "$status" -eq 9 ]
	[[ "$stderr" == "nsdedup: mnt/db: "*": No space left on device; nothing of this run was committed" ]]
	check_recovered pre
}

# --- The other ways a run ends without committing ---

@test "a closed pipe (SIGPIPE) leaves the index as before" {
	prepare a.jsonl big.jsonl
	run --separate-stderr bash -c \
	    'set -o pipefail; "$NSDEDUP" --db db big.jsonl | head -n 1 > head.out'
	expect_eq "$status" 141
	[ -z "$stderr" ]
	[ "$(head -n 1 want.out)" = "$(cat head.out)" ]
	check_recovered pre
}

@test "--on-error=fail at a bad record leaves the index as before" {
	prepare a.jsonl b.jsonl
	{ head -n 500 b.jsonl; echo 'junk'; tail -n +501 b.jsonl; } > bad.jsonl
	run_nsd --db db --on-error=fail bad.jsonl
	expect_eq "$status" 5
	expect_eq "$stderr" "nsdedup: bad.jsonl:501: invalid JSON: expected a JSON object at byte 1
nsdedup: bad.jsonl:501: stopped at this bad record (--on-error=fail)"
	check_recovered pre
}

@test "an output that cannot be written leaves the index as before" {
	mknod full c 1 7 2> /dev/null || skip "cannot make device nodes here"
	prepare a.jsonl b.jsonl
	# A private node: never the real /dev/full as a target of -o.
	run_nsd --db db -o full b.jsonl
	expect_eq "$status" 4
	expect_eq "$stderr" "nsdedup: full: write error: No space left on device"
	[ -c full ]
	check_recovered pre
}

@test "SIGTERM in the middle of a run leaves the index as before" {
	[ -d /proc/self/fd ] || skip "no /proc/PID/fd to follow the run"
	prepare a.jsonl b.jsonl
	mkfifo feed
	"$NSDEDUP" --db db feed > term.out 2> term.err 3>&- &
	pid=$!
	feed_open "$pid"
	head -n 500 b.jsonl >&8 2> /dev/null || true
	# Every record read, its entries in the index (grown), not committed.
	wait_lines term.out 500
	kill -TERM "$pid"
	exec 8>&-
	rc=0
	wait "$pid" || rc=$?
	expect_eq "$rc" 143
	[ ! -s term.err ]
	check_recovered pre
	check_interrupted any
}

@test "an unreadable input among several leaves the index as before" {
	head -n 400 b.jsonl > p1.jsonl
	sed -n '401,700p' b.jsonl > p2.jsonl
	tail -n +701 b.jsonl > p3.jsonl
	prepare a.jsonl p1.jsonl p2.jsonl p3.jsonl
	# A directory cannot be read, even by root.
	mv p2.jsonl p2.keep
	mkdir p2.jsonl
	run_nsd --db db p1.jsonl p2.jsonl p3.jsonl
	expect_eq "$status" 3
	expect_eq "$stderr" "nsdedup: p2.jsonl: Is a directory"
	rmdir p2.jsonl
	mv p2.keep p2.jsonl
	check_recovered pre
}

@test "SIGTERM during the commit comes too late: the run completes, status 0" {
	prepare a.jsonl b.jsonl
	NSDEDUP_CRASH_AT=log-synced NSDEDUP_CRASH_SIGNAL=15 \
	    run --separate-stderr "$NSDEDUP_CRASHPOINTS" --db db b.jsonl
	expect_eq "$status" 0
	expect_eq "$stderr" ""
	printf '%s\n' "$output" | cmp - want.out
	same_dump <("$NSD_INDEX_DUMP" db) post.dump
}

@test "SIGTERM during the commit, with the warming thread alive, comes too late too" {
	# The thread that reads the table into memory lives until the index
	# is closed, after the commit: a signal sent to the process while the
	# main thread holds it must not reach that thread and kill the run.
	prepare a.jsonl few.jsonl
	NSDEDUP_WARM_LINGER=1 NSDEDUP_CRASH_AT=commit-written \
	    NSDEDUP_CRASH_SIGNAL=15 \
	    run --separate-stderr "$NSDEDUP_CRASHPOINTS" --db db few.jsonl
	expect_eq "$status" 0
	expect_eq "$stderr" ""
	printf '%s\n' "$output" | cmp - want.out
	same_dump <("$NSD_INDEX_DUMP" db) post.dump
}

@test "SIGTERM before the commit still stops the run: the index as before" {
	prepare a.jsonl b.jsonl
	NSDEDUP_CRASH_AT=insert:100 NSDEDUP_CRASH_SIGNAL=15 \
	    run --separate-stderr "$NSDEDUP_CRASHPOINTS" --db db b.jsonl
	expect_eq "$status" 143
	expect_eq "$stderr" ""
	check_recovered pre
}
