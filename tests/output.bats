#!/usr/bin/env bats
# -o: a temporary file renamed into place only when the run succeeds,
# unnamed while it is written where the file system allows, and otherwise
# named after the run's pid, so that the next run removes what a killed one
# left.

load helpers

# Wait (60 seconds at most) until process $1 has its -o temporary file
# open in the current directory, and print where its descriptor points:
# "DIR/#INODE (deleted)" for an unnamed file, "DIR/.nsdedup-PID-XXXXXX"
# for a named one.
wait_output_fd() {
	local f l dir

	dir=$(pwd -P)
	for _ in $(seq 1200); do
		for f in /proc/"$1"/fd/*; do
			l=$(readlink "$f") || continue
			case $l in
			"$dir/#"*" (deleted)"|"$dir/.nsdedup-"*)
				printf '%s\n' "$l"
				return 0 ;;
			esac
		done
		sleep 0.05
	done
	echo "process $1 never opened its temporary file" >&2
	return 1
}

# Start nsdedup -o out.jsonl with the FIFO feed as its input and the
# environment given as arguments (NAME=VALUE...), feed it one record and
# wait until its temporary file is open; sets pid and fdlink.
start_o_run() {
	[ -d /proc/self/fd ] || skip "no /proc/PID/fd to follow the run"
	rm -f feed
	mkfifo feed
	# fd 3 belongs to bats: keep it away from the background process.
	env "$@" "$NSDEDUP" -o out.jsonl feed 2> run.err 3>&- &
	pid=$!
	feed_open "$pid"
	printf '{"text":"x"}\n' >&8
	fdlink=$(wait_output_fd "$pid")
}

# Send signal $1 to a run with -o, through an unnamed temporary file and
# through a named one: it must end with status $2, silently, leaving no
# temporary file and the old output as it was.
kill_o_run() {
	local sig=$1 want=$2 named

	for named in "" 1; do
		printf 'old\n' > out.jsonl
		start_o_run NSDEDUP_NO_TMPFILE="$named"
		kill -"$sig" "$pid"
		status=0
		wait "$pid" || status=$?
		exec 8>&-
		echo "NSDEDUP_NO_TMPFILE=$named: $fdlink: status $status"
		expect_eq "$status" "$want"
		expect_eq "$(cat run.err)" ""
		expect_eq "$(cat out.jsonl)" "old"
		expect_eq "$(temp_files)" ""
	done
}

@test "-o writes the output file and nothing to stdout" {
	printf '{"id":1,"text":"%s"}\n' "$(sentence 1)" > in.jsonl
	run_nsd -o out.jsonl in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	grep -q '"similar_id":1,"is_dup":false}$' out.jsonl
	expect_eq "$(temp_files)" ""
}

@test "-o may name the input file, as with sort -o" {
	printf '{"id":1,"text":"%s"}\n' "$(sentence 1)" > in.jsonl
	run_nsd --output=in.jsonl in.jsonl
	[ "$status" -eq 0 ]
	grep -q '"similar_id":1,"is_dup":false}$' in.jsonl
}

@test "-o leaves the old file alone when the run fails" {
	printf 'old contents\n' > out.jsonl
	printf '{"text":"x"}\njunk\n' > in.jsonl
	run_nsd --on-error=fail -o out.jsonl in.jsonl
	[ "$status" -eq 5 ]
	[ "$(cat out.jsonl)" = "old contents" ]
	expect_eq "$(temp_files)" ""
	run_nsd -o out.jsonl in.jsonl missing.jsonl
	[ "$status" -eq 3 ]
	[ "$(cat out.jsonl)" = "old contents" ]
}

@test "-o still replaces the file when some records were bad (status 1)" {
	printf '{"text":"x"}\njunk\n' > in.jsonl
	run_nsd -o out.jsonl in.jsonl
	[ "$status" -eq 1 ]
	[ "$(wc -l < out.jsonl)" -eq 2 ]
}

@test "-o into a missing directory is an output error" {
	printf '{"text":"x"}\n' > in.jsonl
	run_nsd -o no/such/dir/out.jsonl in.jsonl
	[ "$status" -eq 4 ]
	[[ "$stderr" == "nsdedup: no/such/dir/out.jsonl: cannot create a temporary file: No such file or directory" ]]
}

@test "-o gives the file the mode that the umask allows" {
	printf '{"text":"x"}\n' > in.jsonl
	(umask 027 && "$NSDEDUP" -o out.jsonl in.jsonl)
	[ "$(stat -c %a out.jsonl)" = "640" ]
}

@test "SIGTERM during a run removes the temporary file and keeps the old output" {
	kill_o_run TERM 143
}

@test "SIGKILL during a run with -o leaves no file, where the file system has unnamed files" {
	need python3
	"$PYTHON3" -c 'import os
os.close(os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600))' 2> /dev/null ||
		skip "no O_TMPFILE on this file system"
	printf 'old\n' > out.jsonl
	start_o_run
	kill -KILL "$pid"
	[[ $fdlink == "$(pwd -P)/#"*" (deleted)" ]]
	status=0
	wait "$pid" || status=$?
	exec 8>&-
	[ "$status" -eq 137 ]
	[ "$(cat out.jsonl)" = "old" ]
	expect_eq "$(temp_files)" ""
}

@test "-o: a named temporary file a killed run left is removed by the next run, a live run's never" {
	printf 'old\n' > out.jsonl
	start_o_run NSDEDUP_NO_TMPFILE=1
	[[ $fdlink == "$(pwd -P)/.nsdedup-$pid-"?????? ]]
	kill -KILL "$pid"
	status=0
	wait "$pid" || status=$?
	exec 8>&-
	[ "$status" -eq 137 ]
	[ "$(cat out.jsonl)" = "old" ]
	left=$(temp_files)
	expect_eq "$left" "${fdlink##*/}"
	# What stays: a file of a live process (this shell), a directory and
	# a symbolic link, and a name of another form.
	printf 'live\n' > ".nsdedup-$$-abcdef"
	mkdir ".nsdedup-$pid-dir123"
	ln -s out.jsonl ".nsdedup-$pid-link12"
	printf 'other\n' > ".nsdedup-$pid-toolong"
	printf 'other\n' > .nsdedup-Ab12Cd
	if [ "$(id -u)" -eq 0 ]; then
		# Another user's file.
		printf 'theirs\n' > ".nsdedup-$pid-theirs"
		chown 65534 ".nsdedup-$pid-theirs"
	fi
	# A run in another directory leaves this one alone.
	mkdir sub
	printf '{"text":"x"}\n' > in.jsonl
	run_nsd -o sub/out.jsonl in.jsonl
	[ "$status" -eq 0 ]
	[ -e "$left" ]
	run_nsd -o out.jsonl in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	grep -q '"similar_id":1' out.jsonl
	[ ! -e "$left" ]
	[ "$(cat ".nsdedup-$$-abcdef")" = live ]
	[ -d ".nsdedup-$pid-dir123" ]
	[ -L ".nsdedup-$pid-link12" ]
	[ -e ".nsdedup-$pid-toolong" ] && [ -e .nsdedup-Ab12Cd ]
	[ "$(id -u)" -ne 0 ] || [ -e ".nsdedup-$pid-theirs" ]
}

@test "SIGUSR2 ends a run with -o: status 140, no file left, the old output kept" {
	kill_o_run USR2 140
}

@test "SIGUSR1 does not end a run with -o: a progress line, and the run commits" {
	printf 'old\n' > out.jsonl
	start_o_run
	kill -USR1 "$pid"
	for _ in $(seq 1200); do
		[ -s run.err ] && break
		sleep 0.05
	done
	exec 8>&-
	status=0
	wait "$pid" || status=$?
	expect_eq "$status" 0
	[[ $(cat run.err) =~ ^"nsdedup: "[01]" records, 0 duplicates, "[0-9.]+" MB, "[0-9.]+" MB/s"$ ]]
	expect_eq "$(cat out.jsonl)" '{"text":"x","similar_id":1,"is_dup":false}'
	expect_eq "$(temp_files)" ""
}

@test "--progress=always draws on stderr and never touches stdout" {
	printf '{"id":1,"text":"%s"}\n' "$(sentence 1)" > in.jsonl
	run_nsd --progress=always in.jsonl
	[ "$status" -eq 0 ]
	[[ "$output" == '{"id":1,'* ]]
	[ "${#lines[@]}" -eq 1 ]
}

@test "--progress=never and --quiet keep stderr empty" {
	printf '{"id":1,"text":"%s"}\n' "$(sentence 1)" > in.jsonl
	run_nsd --progress=never in.jsonl
	[ -z "$stderr" ]
	run_nsd -q --progress=always in.jsonl
	[ -z "$stderr" ]
}

@test "a closed pipe ends the run quietly, like other filters" {
	# sentence straight to the file rather than through $(...): a
	# subshell for each of 20000 records took a minute.
	for i in $(seq 1 20000); do
		printf '{"id":%d,"text":"' "$i"
		sentence "$i"
		printf '"}\n'
	done > in.jsonl
	run bash -c 'set -o pipefail; "$NSDEDUP" in.jsonl | head -n 1 > /dev/null'
	# Killed by SIGPIPE (141), with nothing said on stderr.
	[ "$status" -eq 141 ]
	[ -z "$output" ]
}

@test "-o onto a device writes to it and leaves it a device" {
	# Private device nodes, so that a regression cannot replace /dev/null.
	mknod null c 1 3 2>/dev/null && mknod full c 1 7 2>/dev/null ||
	    skip "cannot make device nodes here"
	printf '{"text":"x"}\n' > in.jsonl
	run_nsd -o null in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ -c null ]
	run_nsd -o full in.jsonl
	[ "$status" -eq 4 ]
	[ "$stderr" = "nsdedup: full: write error: No space left on device" ]
	[ -c full ]
}

@test "-o through a symbolic link replaces the file it points to" {
	printf 'old\n' > target.jsonl
	ln -s target.jsonl link.jsonl
	printf '{"text":"x"}\n' > in.jsonl
	run_nsd -o link.jsonl in.jsonl
	[ "$status" -eq 0 ]
	[ -L link.jsonl ]
	grep -q '"similar_id":1' target.jsonl
}

@test "-o keeps the mode of the file it replaces" {
	printf 'old\n' > private.jsonl
	chmod 600 private.jsonl
	printf '{"text":"x"}\n' > in.jsonl
	run_nsd -o private.jsonl in.jsonl
	[ "$status" -eq 0 ]
	[ "$(stat -c %a private.jsonl)" = "600" ]
}

@test "-o onto a FIFO writes through it" {
	mkfifo out.fifo
	cat out.fifo > got.jsonl &
	reader=$!
	printf '{"text":"x"}\n' > in.jsonl
	run_nsd -o out.fifo in.jsonl
	wait "$reader"
	[ "$status" -eq 0 ]
	[ -p out.fifo ]
	grep -q '"similar_id":1' got.jsonl
}

@test "-o through a dangling symbolic link creates the file it names" {
	mkdir sub
	ln -s ../made.jsonl sub/link.jsonl
	printf '{"text":"x"}\n' > in.jsonl
	run_nsd -o sub/link.jsonl in.jsonl
	[ "$status" -eq 0 ]
	[ -L sub/link.jsonl ]
	grep -q '"similar_id":1' made.jsonl
}

@test "-o never carries set-uid bits over to the new file" {
	printf 'old\n' > prog.jsonl
	chmod 4755 prog.jsonl
	printf '{"text":"x"}\n' > in.jsonl
	run_nsd -o prog.jsonl in.jsonl
	[ "$status" -eq 0 ]
	[ "$(stat -c %a prog.jsonl)" = "755" ]
}

@test "-o naming our own standard output appends as the shell set it up" {
	[ -e /dev/stdout ] || skip "no /dev/stdout"
	printf 'earlier line\n' > log.jsonl
	printf '{"text":"x"}\n' > in.jsonl
	run --separate-stderr bash -c '"$NSDEDUP" -o /dev/stdout in.jsonl >> log.jsonl'
	[ "$status" -eq 0 ]
	[ "$(head -n 1 log.jsonl)" = "earlier line" ]
	[ "$(wc -l < log.jsonl)" -eq 2 ]
}
