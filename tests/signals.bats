#!/usr/bin/env bats
# Signals, failing input and output, and what nsdedup creates beside an
# index: a run ended by a signal (SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGUSR2
# and every other that ends a process unless caught, but SIGUSR1, which
# asks for progress: progress.bats), or whose input or
# output fails, commits nothing and leaves no temporary file; the index
# files get the modes the umask allows; a symbolic link planted at a name
# nsdedup creates is never followed. (index-crash.bats has the commit
# protocol, a closed pipe and SIGTERM on stdout, fiu-run and a full disk.)

load helpers

: "${NSD_INDEX_DUMP:?run the tests through make check}"
: "${GENCORPUS:?run the tests through make check}"

# a.jsonl (100 records) makes the index; big.jsonl (3000 records, about
# 11 MB) is a long run over it.
setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$GENCORPUS" --records 100 --seed 1 > a.jsonl
	"$GENCORPUS" --records 3000 --seed 3 > big.jsonl
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	cp "$BATS_FILE_TMPDIR"/*.jsonl .
}

# Make the index db from a.jsonl, keep its files in pre/ and its dump in
# pre.dump.
make_index() {
	run_nsd --db db a.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	mkdir pre
	copy_index db pre
	"$NSD_INDEX_DUMP" db > pre.dump
}

# The index is as in pre.dump, --db-verify passes, and no PATH.new or
# temporary output file is left.
check_unchanged() {
	same_dump <("$NSD_INDEX_DUMP" db) pre.dump
	run_nsd --db db --db-verify
	expect_eq "$status" 0
	expect_eq "$stderr" ""
	[[ "$output" == *"verified: "*"no problems found"* ]]
	[ ! -e db.new ]
	expect_eq "$(temp_files)" ""
}

# Run nsdedup --db db with the arguments given and the FIFO feed as its
# input, with signal $1 at its default action (a shell starts a background
# job with SIGINT ignored); send it that signal once it has read 500
# records of big.jsonl and begun its run. Sets status and stderr.
signal_midrun() {
	local sig=$1

	shift
	[ -d /proc/self/fd ] || skip "no /proc/PID/fd to follow the run"
	mkfifo feed
	env --default-signal="$sig" "$NSDEDUP" --db db "$@" feed \
	    > sig.out 2> sig.err 3>&- &
	pid=$!
	feed_open "$pid"
	head -n 500 big.jsonl >&8 2> /dev/null || true
	wait_begun
	kill -"$sig" "$pid"
	exec 8>&-
	status=0
	wait "$pid" || status=$?
	stderr=$(cat sig.err)
}

@test "every signal that ends a process ends a run with -o: nothing committed, no temporary file" {
	env --help 2>&1 | grep -q default-signal ||
	    skip "env has no --default-signal"
	make_index
	# No core files from SIGQUIT, SIGXCPU and SIGXFSZ.
	ulimit -c 0
	n=0
	for sig in INT TERM HUP PIPE QUIT ALRM USR2 XCPU XFSZ VTALRM \
	    PROF IO PWR STKFLT RTMIN RTMIN+5 RTMAX; do
		printf 'old output\n' > out.jsonl
		rm -f feed
		# Every other one through a named temporary file.
		n=$((n + 1)) named=
		[ $((n % 2)) -eq 1 ] || named=1
		NSDEDUP_NO_TMPFILE=$named signal_midrun "$sig" -o out.jsonl
		echo "SIG$sig (NSDEDUP_NO_TMPFILE=$named): status $status: $stderr"
		expect_eq "$status" $((128 + $(kill -l "$sig")))
		expect_eq "$stderr" ""
		[ ! -s sig.out ]
		expect_eq "$(cat out.jsonl)" "old output"
		check_unchanged
	done
}

@test "SIGINT on standard output: status 130, nothing committed" {
	env --help 2>&1 | grep -q default-signal ||
	    skip "env has no --default-signal"
	make_index
	signal_midrun INT
	expect_eq "$status" 130
	expect_eq "$stderr" ""
	check_unchanged
}

@test "an ignored SIGINT, SIGHUP or SIGUSR1 stays ignored (nohup, background jobs)" {
	[ -d /proc/self/fd ] || skip "no /proc/PID/fd to follow the run"
	make_index
	"$NSDEDUP" --db ref.db a.jsonl > /dev/null
	"$NSDEDUP" --db ref.db big.jsonl > want.out
	mkfifo feed
	# trap '' makes them ignored in the job, as nohup does SIGHUP.
	(trap '' INT HUP USR1; exec "$NSDEDUP" --db db -o out.jsonl feed) \
	    2> sig.err 3>&- &
	pid=$!
	feed_open "$pid"
	head -n 500 big.jsonl >&8
	wait_begun
	kill -INT "$pid"
	kill -HUP "$pid"
	kill -USR1 "$pid"
	tail -n +501 big.jsonl >&8
	exec 8>&-
	rc=0
	wait "$pid" || rc=$?
	expect_eq "$rc" 0
	[ ! -s sig.err ]
	cmp out.jsonl want.out
	same_dump <("$NSD_INDEX_DUMP" db) <("$NSD_INDEX_DUMP" ref.db)
}

@test "a closed pipe with a long input: status 141, nothing committed" {
	make_index
	# shellcheck disable=SC2016
	run --separate-stderr bash -c \
	    'set -o pipefail; "$NSDEDUP" --db db big.jsonl | head -c 100 > /dev/null'
	expect_eq "$status" 141
	expect_eq "$stderr" ""
	check_unchanged
}

@test "standard output on /dev/full with a long input: status 4, nothing committed" {
	[ -w /dev/full ] || skip "no /dev/full"
	make_index
	# shellcheck disable=SC2016
	run --separate-stderr bash -c '"$NSDEDUP" --db db big.jsonl > /dev/full'
	expect_eq "$status" 4
	expect_eq "$stderr" \
	    "nsdedup: standard output: write error: No space left on device"
	check_unchanged
}

@test "an input file unlinked while it is read: the run goes on and commits" {
	[ -d /proc/self/fd ] || skip "no /proc/PID/fd to follow the run"
	make_index
	mkdir ref
	copy_index pre/db ref
	"$NSDEDUP" --db ref/db big.jsonl > want.out
	"$NSD_INDEX_DUMP" ref/db > post.dump
	cp big.jsonl gone.jsonl
	# The run blocks on its output, a FIFO not read yet, mid-file.
	mkfifo out
	"$NSDEDUP" --db db gone.jsonl > out 2> run.err 3>&- &
	pid=$!
	exec 9< out
	wait_open "$pid" "$PWD/gone.jsonl"
	rm gone.jsonl
	cat <&9 > got.out
	exec 9<&-
	rc=0
	wait "$pid" || rc=$?
	expect_eq "$rc" 0
	[ ! -s run.err ]
	cmp got.out want.out
	same_dump <("$NSD_INDEX_DUMP" db) post.dump
}

@test "a FIFO whose writer dies mid-record: end of input, the cut record is bad" {
	[ -d /proc/self/fd ] || skip "no /proc/PID/fd to follow the run"
	make_index
	head -n 200 big.jsonl > part.jsonl
	mkdir ref
	copy_index pre/db ref
	"$NSDEDUP" --db ref/db part.jsonl > want.out
	mkfifo feed
	"$NSDEDUP" --db db feed > got.out 2> run.err 3>&- &
	pid=$!
	# A writer that dies (SIGKILL) after 200 records and half a line:
	# the last process that holds the FIFO open for writing.
	feed_open "$pid"
	{ cat part.jsonl; sed -n 201p big.jsonl | head -c 40; } >&8
	sleep 60 3>&- &
	writer=$!
	exec 8>&-
	sleep 0.2
	# Still waiting for more input.
	kill -0 "$pid"
	kill -KILL "$writer"
	wait "$writer" 2> /dev/null || true
	rc=0
	wait "$pid" || rc=$?
	# Nothing tells a dead writer from one that is done: what was read
	# is the input, and its cut last line is a bad record, passed on.
	expect_eq "$rc" 1
	expect_eq "$(cat run.err)" \
	    "nsdedup: feed:201: invalid JSON: unterminated string at byte 41"
	cmp <(head -n 200 got.out) want.out
	expect_eq "$(wc -l < got.out)" 201
	same_dump <("$NSD_INDEX_DUMP" db) <("$NSD_INDEX_DUMP" ref/db)
}

@test "fiu: reading the input fails mid-run: status 3, nothing committed" {
	need fiu
	[ -d /proc/self/fd ] || skip "no /proc/PID/fd to follow the run"
	make_index
	mkfifo feed
	"$FIU_RUN" -x -f "$PWD/ctl" "${fiu_nsdedup[@]}" --db db feed > got.out \
	    2> run.err 3>&- &
	pid=$!
	feed_open "$pid"
	head -n 500 big.jsonl >&8
	wait_begun
	"$FIU_CTRL" -f "$PWD/ctl" -c "enable name=posix/io/rw/read,failinfo=5" \
	    "$pid"
	tail -n +501 big.jsonl >&8 2> /dev/null || true
	exec 8>&-
	rc=0
	wait "$pid" || rc=$?
	expect_eq "$rc" 3
	expect_eq "$(cat run.err)" "nsdedup: feed: Input/output error"
	check_unchanged
}

# Run the command given as the unprivileged user nobody (65534), in
# $shared_dir, a directory that user may reach; skip when root cannot
# switch.
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

need_nobody() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to switch users"
	command -v setpriv > /dev/null || skip "no setpriv to drop root"
	as_nobody "$NSDEDUP" --version > /dev/null 2>&1 ||
	    skip "the unprivileged user cannot run $NSDEDUP"
	shared_dir=$(mktemp -d "${TMPDIR:-/tmp}/nsd-signals.XXXXXX")
	chmod 755 "$shared_dir"
}

@test "-o into a read-only directory (as a user): status 4, nothing committed" {
	need_nobody
	cd "$shared_dir"
	cp "$BATS_TEST_TMPDIR"/a.jsonl "$BATS_TEST_TMPDIR"/big.jsonl .
	mkdir idx ro
	chown 65534:65534 idx
	chmod 555 ro
	as_nobody "$NSDEDUP" --db idx/db a.jsonl > /dev/null
	"$NSD_INDEX_DUMP" idx/db > pre.dump
	run --separate-stderr as_nobody "$NSDEDUP" --db idx/db -o ro/out.jsonl \
	    big.jsonl
	cd "$BATS_TEST_TMPDIR"
	expect_eq "$status" 4
	expect_eq "$stderr" "nsdedup: ro/out.jsonl: cannot create a temporary file: Permission denied"
	[ -z "$output" ]
	expect_eq "$(ls -A "$shared_dir"/ro)" ""
	same_dump <("$NSD_INDEX_DUMP" "$shared_dir"/idx/db) "$shared_dir"/pre.dump
	[ ! -e "$shared_dir"/idx/db.new ]
	rm -rf "$shared_dir"
}

# --- What nsdedup creates ---

@test "the index and its files get the modes the umask allows" {
	for mask in 077 022 002; do
		rm -f db db.ids db.log db.lock
		(umask "$mask" && "$NSDEDUP" --db db a.jsonl > /dev/null)
		want=$(printf '%o' $((0666 & ~8#$mask)))
		for f in db db.ids db.log db.lock; do
			echo "umask $mask: $f: $(stat -c %a "$f")"
			expect_eq "$(stat -c %a "$f")" "$want"
		done
	done
	# A table that grows keeps its mode, whatever the umask is then.
	rm -f db db.ids db.log db.lock
	(umask 077 && "$NSDEDUP" --db db a.jsonl > /dev/null)
	(umask 000 && "$NSDEDUP" --db db big.jsonl > /dev/null)
	[ "$(stat -c %s db)" -gt $((8192 + 4096 * 16)) ]
	for f in db db.ids db.log db.lock; do
		expect_eq "$(stat -c %a "$f")" 600
	done
}

# Plant at db$1 a symbolic link to the file victim (which holds a line of
# text, its copy kept in victim.orig).
plant() {
	printf 'not to be written\n' > victim
	cp victim victim.orig
	rm -f "db$1"
	ln -s victim "db$1"
}

# The victim is as it was, and no file named nothere was made.
victim_safe() {
	cmp victim victim.orig
	[ ! -e nothere ]
}

@test "a symbolic link planted at db.ids before the index is made is replaced" {
	plant .ids
	run_nsd --db db a.jsonl
	expect_eq "$status" 0
	expect_eq "$stderr" ""
	victim_safe
	[ -f db.ids ] && [ ! -L db.ids ]
	run_nsd --db db --db-verify
	expect_eq "$status" 0
}

@test "a symbolic link planted at db.ids of an index is refused" {
	make_index
	plant .ids
	run_nsd --db db big.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" "nsdedup: db.ids: is a symbolic link, which nsdedup does not follow there; remove it"
	[ -z "$output" ]
	victim_safe
	[ -L db.ids ]
	cp pre/db.ids db.ids
	check_unchanged
}

@test "a symbolic link planted at db.log is refused, made or not" {
	plant .log
	run_nsd --db db a.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" "nsdedup: db.log: is a symbolic link, which nsdedup does not follow there; remove it"
	[ -z "$output" ]
	victim_safe
	rm db.log
	rm -f db db.ids db.lock
	make_index
	plant .log
	run_nsd --db db big.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" "nsdedup: db.log: is a symbolic link, which nsdedup does not follow there; remove it"
	victim_safe
	cp pre/db.log db.log
	check_unchanged
}

@test "a symbolic link planted at db.lock is refused, and a dangling one too" {
	plant .lock
	run_nsd --db db a.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" "nsdedup: db.lock: is a symbolic link, which nsdedup does not follow there; remove it"
	victim_safe
	[ ! -e db ]
	ln -sf nothere db.lock
	run_nsd --db db a.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" "nsdedup: db.lock: is a symbolic link, which nsdedup does not follow there; remove it"
	victim_safe
	[ ! -e db ]
	# A reader that would make the missing lock file does not follow one
	# either.
	rm db.lock
	make_index
	ln -sf nothere db.lock
	run_nsd --db db --no-update a.jsonl
	expect_eq "$status" 7
	victim_safe
}

@test "a symbolic link planted at db.new is removed, never followed" {
	# When the index is made.
	plant .new
	run_nsd --db db a.jsonl
	expect_eq "$status" 0
	expect_eq "$stderr" ""
	victim_safe
	[ ! -e db.new ] && [ ! -L db.new ]
	# When the table grows (the link is planted again once the run has
	# opened the index, which removes what a killed rebuild left).
	rm -f db db.ids db.log db.lock
	make_index
	[ -d /proc/self/fd ] || skip "no /proc/PID/fd to follow the run"
	mkfifo feed
	"$NSDEDUP" --db db feed > grown.out 2> grow.err 3>&- &
	pid=$!
	feed_open "$pid"
	head -n 10 big.jsonl >&8
	wait_begun
	ln -s victim db.new
	tail -n +11 big.jsonl >&8
	exec 8>&-
	rc=0
	wait "$pid" || rc=$?
	expect_eq "$rc" 0
	[ ! -s grow.err ]
	[ "$(stat -c %s db)" -gt $((8192 + 4096 * 16)) ]
	victim_safe
	[ ! -L db.new ]
	run_nsd --db db --db-verify
	expect_eq "$status" 0
}

@test "a symbolic link planted at a dangling name: db.new and db.ids when made" {
	ln -s nothere db.new
	ln -s nothere2 db.ids
	run_nsd --db db a.jsonl
	expect_eq "$status" 0
	[ ! -e nothere ] && [ ! -e nothere2 ]
	[ ! -L db.ids ] && [ ! -L db.new ]
}
