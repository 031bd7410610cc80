#!/usr/bin/env bats
# Closed standard descriptors, as cron and daemons may start a program:
# nsdedup opens /dev/null on each of 0, 1 and 2 that is closed before it
# opens anything, so that no file of its own (the index's, the lock, the
# -o output) takes the number and receives records or messages. Reading a
# closed standard input is an input error, writing records to a closed
# standard output an output error that commits nothing, and a closed
# standard error loses the messages alone.

load helpers

: "${NSD_INDEX_DUMP:?run the tests through make check}"

# day1.jsonl makes the index; day2.jsonl is the run over it, whose output
# and index are known from runs with every descriptor open: want-db.out and
# post.dump (pre.dump before the run), and want-mem.out without --db.
setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	head -n 20 "$TOP_SRCDIR/examples/news.jsonl" > day1.jsonl
	tail -n 20 "$TOP_SRCDIR/examples/news.jsonl" > day2.jsonl
	mkdir pre
	"$NSDEDUP" --db pre/db day1.jsonl > /dev/null
	"$NSD_INDEX_DUMP" pre/db > pre.dump
	mkdir post
	copy_index pre/db post
	"$NSDEDUP" --db post/db day2.jsonl > want-db.out
	"$NSD_INDEX_DUMP" post/db > post.dump
	"$NSDEDUP" day2.jsonl > want-mem.out
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	cp "$BATS_FILE_TMPDIR"/*.jsonl "$BATS_FILE_TMPDIR"/*.out \
	    "$BATS_FILE_TMPDIR"/*.dump .
}

# The index db as day1.jsonl left it.
fresh_index() {
	remove_index db
	rm -f db.lock
	copy_index "$BATS_FILE_TMPDIR"/pre/db .
}

# Run nsdedup with the arguments given and each standard descriptor named
# in $1 (some of 0, 1 and 2, or - for none) closed; the others are
# /dev/null (standard input), out.std and err.std. bats' run cannot
# capture a closed stream, so this sets only status.
run_closed() {
	local closed=$1

	shift
	rm -f out.std err.std
	status=0
	(
		exec < /dev/null > out.std 2> err.std 3>&-
		case $closed in *0*) exec <&- ;; esac
		case $closed in *1*) exec >&- ;; esac
		case $closed in *2*) exec 2>&- ;; esac
		exec "$NSDEDUP" "$@"
	) || status=$?
}

# Fail unless index db is as dump file $1 says, passes --db-verify, and
# its lock file is still empty.
index_is() {
	same_dump <("$NSD_INDEX_DUMP" db) "$1"
	run_nsd --db db --db-verify
	expect_eq "$status" 0
	expect_eq "$stderr" ""
	[[ "$output" == *"verified:      no problems found"* ]]
	expect_eq "$(stat -c %s db.lock)" 0
}

@test "closed standard descriptors, each combination, with and without --db, -o and --stats" {
	local closed db o stats args want rc out
	for closed in 0 1 2 01 02 12 012; do
	for db in "" --db; do
	for o in "" -o; do
	for stats in "" --stats; do
		args=() want=0
		if [ -n "$db" ]; then
			fresh_index
			args+=(--db db)
		fi
		rm -f out.jsonl
		[ -z "$o" ] || args+=(-o out.jsonl)
		[ -z "$stats" ] || args+=(--stats)
		# Records to a closed standard output: an output error.
		[ -n "$o" ] || [[ $closed != *1* ]] || want=4
		run_closed "$closed" "${args[@]}" day2.jsonl
		rc=$status
		echo "closed $closed, ${args[*]}: status $rc"
		expect_eq "$rc" "$want"
		out='want-mem.out'
		if [ -n "$db" ]; then
			out='want-db.out'
			# Nothing committed by a failed run.
			if [ "$want" -eq 0 ]; then
				index_is post.dump
			else
				index_is pre.dump
			fi
		fi
		if [ -n "$o" ]; then
			cmp out.jsonl "$out"
		else
			[ ! -e out.jsonl ]
		fi
		if [[ $closed != *1* ]] && [ -n "$o" ]; then
			[ ! -s out.std ]
		elif [[ $closed != *1* ]]; then
			cmp out.std "$out"
		fi
		if [[ $closed != *2* ]]; then
			if [ "$want" -eq 4 ]; then
				expect_eq "$(head -n 1 err.std)" \
				    "nsdedup: standard output: write error: Bad file descriptor"
			fi
			if [ -n "$stats" ]; then
				grep -qx 'nsdedup: records     20' err.std
			else
				expect_eq "$(grep -vc 'write error' err.std)" 0
			fi
		fi
		expect_eq "$(temp_files)" ""
	done
	done
	done
	done
}

@test "the issue's day-over-day run with every descriptor closed leaves a sound index" {
	fresh_index
	run_closed 012 --db db day2.jsonl
	expect_eq "$status" 4
	index_is pre.dump
	# Only standard output closed: its records never reach the lock file.
	run_closed 1 --db db day2.jsonl
	expect_eq "$status" 4
	index_is pre.dump
	run_closed 02 --db db day2.jsonl
	expect_eq "$status" 0
	index_is post.dump
	cmp out.std want-db.out
}

@test "a closed standard input read as the input: status 3, nothing committed" {
	fresh_index
	for operand in "" -; do
		run_closed 0 --db db $operand
		expect_eq "$status" 3
		expect_eq "$(cat err.std)" \
		    "nsdedup: (standard input): Bad file descriptor"
		[ ! -s out.std ]
		index_is pre.dump
	done
	# With standard error closed too, the status alone.
	run_closed 02 --db db
	expect_eq "$status" 3
	index_is pre.dump
	# The other inputs are read; standard input is not one of them.
	run_closed 0 --db db day2.jsonl
	expect_eq "$status" 0
	index_is post.dump
}

@test "-o /dev/null with standard output closed is the device; -o /dev/stdout is standard output" {
	[ -e /dev/stdout ] || skip "no /dev/stdout"
	fresh_index
	run_closed 1 --db db -o /dev/null day2.jsonl
	expect_eq "$status" 0
	[ ! -s err.std ]
	index_is post.dump
	fresh_index
	run_closed 1 --db db -o /dev/stdout day2.jsonl
	expect_eq "$status" 4
	expect_eq "$(cat err.std)" \
	    "nsdedup: standard output: write error: Bad file descriptor"
	index_is pre.dump
}

@test "fiu: /dev/null cannot be opened for a closed descriptor: status 3 or 4, nothing opened" {
	need fiu
	local fail='enable name=posix/io/oc/open,failinfo=13'
	run_fiu() {
		local closed=$1

		shift
		rm -f err.std
		status=0
		(
			exec < /dev/null > /dev/null 2> err.std 3>&-
			case $closed in *0*) exec <&- ;; esac
			case $closed in *1*) exec >&- ;; esac
			exec "$FIU_RUN" -x -c "$fail" "${fiu_nsdedup[@]}" "$@"
		) || status=$?
	}
	run_fiu 0 --db db day2.jsonl
	expect_eq "$status" 3
	expect_eq "$(cat err.std)" "nsdedup: standard input is closed, and /dev/null cannot be opened in its place: Permission denied"
	run_fiu 1 --db db -o out.jsonl day2.jsonl
	expect_eq "$status" 4
	expect_eq "$(cat err.std)" "nsdedup: standard output is closed, and /dev/null cannot be opened in its place: Permission denied"
	[ ! -e db ] && [ ! -e db.lock ] && [ ! -e out.jsonl ]
	expect_eq "$(temp_files)" ""
}
