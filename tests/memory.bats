#!/usr/bin/env bats
# The run's own memory stays bounded: an in-memory index (no --db) that
# outgrows 8 MiB moves into an unlinked file in $TMPDIR, and gives the
# same output as one kept in memory, which is what happens, with a
# message, when no file can be made there.

load helpers

# Records of 12 random words: with -m simhash, 10 index entries each.
# Every tenth repeats an earlier text, so that there are duplicates.
# $1 records into $2, made once per file.
make_records() {
	[ -s "$2" ] && return 0
	awk -v n="$1" 'BEGIN {
		srand(7)
		for (i = 1; i <= n; i++) {
			if (i % 10 == 0) {
				t = text[int(rand() * (i - 1)) + 1]
			} else {
				t = ""
				for (j = 0; j < 12; j++)
					t = t sprintf(" w%d", int(rand() * 100000))
			}
			text[i] = t
			printf "{\"id\":%d,\"text\":\"%s\"}\n", i, t
		}
	}' > "$2"
}

# The value of field $1 (a number of MiB) in the --stats line
# "index N entries, N groups, X MiB of memory (Y MiB at peak), Z MiB
# mapped" of $2: memory, peak or mapped.
index_mib() {
	sed -n 's/^nsdedup: index .* \([0-9.]*\) MiB of memory (\([0-9.]*\) MiB at peak), \([0-9.]*\) MiB mapped$/\1 \2 \3/p' <<< "$2" |
	    awk -v f="$1" '{ print f == "memory" ? $1 : f == "peak" ? $2 : $3 }'
}

@test "an index past 8 MiB moves into a file in TMPDIR: same output, less memory" {
	make_records 60000 "$BATS_FILE_TMPDIR/60k.jsonl"
	mkdir spill
	TMPDIR=$PWD/spill nsd_to spilled -m simhash --stats \
	    "$BATS_FILE_TMPDIR/60k.jsonl"
	[ "$status" -eq 0 ]
	[ "$(grep -c '"is_dup":true' spilled)" -ge 5000 ]
	[[ "$stderr" == *"nsdedup: index       540000 entries, 54000 groups, "* ]]
	[[ "$stderr" != *"stayed in memory"* ]]
	# The table (16 MiB) is in the file; what is left in memory is the
	# groups, the ids with each group's sketch (128 bytes: 7 MiB here)
	# and, at the peak, the 8 MiB table the file's replaced.
	mapped=$(index_mib mapped "$stderr")
	peak=$(index_mib peak "$stderr")
	awk -v m="$mapped" -v p="$peak" 'BEGIN { exit !(m >= 16 && p < 20) }'
	# Unlinked as it was made: nothing is left in TMPDIR.
	[ -z "$(ls -A spill)" ]

	TMPDIR=$PWD/spill nsd_to out -m simhash "$BATS_FILE_TMPDIR/60k.jsonl"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	same_file out spilled
}

@test "no file can be made in TMPDIR: the index stays in memory, and says why" {
	make_records 60000 "$BATS_FILE_TMPDIR/60k.jsonl"
	TMPDIR=$PWD/spill "$NSDEDUP" -m simhash "$BATS_FILE_TMPDIR/60k.jsonl" > spilled
	TMPDIR=$PWD/missing nsd_to out -m simhash --stats \
	    "$BATS_FILE_TMPDIR/60k.jsonl"
	[ "$status" -eq 0 ]
	same_file out spilled
	expect_eq "${stderr%%$'\n'*}" "nsdedup: the index outgrew 8 MiB of memory and could not move into a file: $PWD/missing: No such file or directory; it stayed in memory"
	expect_eq "$(index_mib mapped "$stderr")" 0.0
	awk -v m="$(index_mib memory "$stderr")" 'BEGIN { exit !(m >= 16) }'
	# --quiet leaves the message out.
	TMPDIR=$PWD/missing nsd_to out -q -m simhash \
	    "$BATS_FILE_TMPDIR/60k.jsonl"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	same_file out spilled
}

# RssAnon of process $1 in KiB.
rss_anon() {
	awk '$1 == "RssAnon:" { print $2 }' "/proc/$1/status"
}

# Runs -m simhash over $1 records with TMPDIR=$2, the input through a
# FIFO held open until every record is out, and prints the run's RssAnon
# then, in KiB: the index holds them all. One job, so that few batches
# are in flight: at about 100 bytes a record, a batch holds some 10,000
# records and their features and sketches, and at -j2 the batches alone
# take about 28 MiB, which would leave the index's share a thin margin.
anon_at_end() {
	make_records "$1" "$BATS_FILE_TMPDIR/$1.jsonl"
	rm -f feed
	mkfifo feed
	TMPDIR=$2 "$NSDEDUP" -j1 -m simhash feed > out 2> err &
	pid=$!
	feed_open "$pid"
	cat "$BATS_FILE_TMPDIR/$1.jsonl" >&8
	wait_lines out "$1" >&2
	rss_anon "$pid"
	exec 8>&-
	wait "$pid"
}

@test "a run whose index takes 64 MiB or more holds under 40 MiB of anonymous memory" {
	[ -r /proc/self/status ] || skip "no /proc/PID/status to read RssAnon"
	grep -q '^RssAnon:' /proc/self/status || skip "no RssAnon in /proc"
	# ASan's shadow and its quarantine of freed blocks are anonymous too.
	no_sanitizer "whose own memory RssAnon would count"
	mkdir spill
	kib=$(anon_at_end 200000 "$PWD/spill")
	[ ! -s err ]
	echo "RssAnon with the file: $kib KiB"
	# Each of the table, the groups and the ids (with each group's
	# sketch) is anonymous up to 8 MiB, then moves into a file.
	[ "$kib" -lt $((40 << 10)) ]
	# The file was mapped from TMPDIR, and is already unlinked.
	[ -z "$(ls -A spill)" ]
	# The same run without a file does take the memory: the test can fail.
	kib=$(anon_at_end 200000 "$PWD/missing")
	echo "RssAnon without: $kib KiB"
	[ "$kib" -ge $((64 << 10)) ]
}
