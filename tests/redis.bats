#!/usr/bin/env bats
# The shared index on Redis (--db redis://HOST:PORT[,HOST:PORT...][/NS]):
# the same output as a local index file, on one server and on a cluster of
# three masters, over two runs; keys spread over every master; namespaces
# apart; two runs at once keep each group's original once between them;
# slots moved during a run (MOVED, and ASK while half moved), a master
# killed mid-run, connections dropped mid-run; a server that cannot be
# reached, or stops answering; --ttl; a namespace made with other
# parameters, refused in an index file's words; --db-info and --db-verify
# of a namespace, whole or damaged.
#
# The servers are real ones, started by the tests on loopback ports
# (tests/redis-servers.bash): one server and one cluster for the whole
# file, each test in namespaces of its own, and a server or cluster of its
# own for a test that moves slots, kills or stops a node. The tests that
# need something to have happened during a run (a race, a redirection, a
# reconnection) check that it did in the counts of --stats. Every test
# skips without redis-server, or when nsdedup was built without hiredis
# (need redis).

load helpers
load redis-servers

: "${GENCORPUS:?run the tests through make check}"

# A run that hangs fails the test (teardown still stops every server); the
# longest test takes about 40 s on a loaded machine, and a sanitizer build
# takes several times as long.
: "${BATS_TEST_TIMEOUT:=600}"

# corpus.jsonl: 3000 records (about 11 MB), every seventh without an id
# (its similar_id is then a group number), about a fifth of them reposts
# of a recent one. part1.jsonl is its first 2000; part2.jsonl the other
# 1000, then exact copies of the first 40 with ids again-... (none for the
# records without one): run 2 finds records of run 1.
#
# The server and the cluster: SINGLE_PORT, and CLUSTER (a directory, see
# redis-servers.bash).
setup_file() {
	# Without a server, or a program built without hiredis, each test
	# skips in setup (bats 1.8 cannot skip from here).
	[ -n "${REDIS_SERVER-}" ] && [ -n "${NSD_HIREDIS-}" ] || return 0
	cd "$BATS_FILE_TMPDIR" || return 1
	"$GENCORPUS" --records 3000 --seed 11 |
	    awk 'NR % 7 == 0 { sub(/"id":"[^"]*",/, "") } { print }' \
	    > corpus.jsonl
	head -n 2000 corpus.jsonl > part1.jsonl
	{
		tail -n +2001 corpus.jsonl
		head -n 40 corpus.jsonl | sed 's/^{"id":"g-/{"id":"again-/'
	} > part2.jsonl
	redis_single_start "$BATS_FILE_TMPDIR/single"
	# shellcheck disable=SC2154  # set by redis_single_start
	export SINGLE_PORT=$redis_port
	redis_cluster_start "$BATS_FILE_TMPDIR/cluster" 3 0 2000
	export CLUSTER=$BATS_FILE_TMPDIR/cluster
}

teardown_file() {
	redis_stop_all "$BATS_FILE_TMPDIR/redis.pids"
}

setup() {
	need redis-server
	need redis
	cd "$BATS_TEST_TMPDIR" || return 1
	ln -s "$BATS_FILE_TMPDIR/part1.jsonl" "$BATS_FILE_TMPDIR/part2.jsonl" .
}

teardown() {
	redis_stop_all "$BATS_TEST_TMPDIR/redis.pids"
}

# Fail unless a run went well: status 0, nothing on stderr.
ran_clean() {
	expect_eq "$status" 0
	expect_eq "$stderr" ""
}

# Fail unless the stderr of a run with --stats (file $1) has nothing but
# the statistics.
stats_only() {
	if grep -v -E '^nsdedup: [a-z]+ +[0-9]' "$1"; then
		echo "(on the stderr of a run with --stats)"
		return 1
	fi
}

# The count before the words $2 on the redis line of the statistics in
# file $1 (the stderr of a run with --stats): how many MOVED, ASK,
# retried, reconnects, conflicts, groups gave way.
redis_stat() {
	local n

	n=$(sed -n "s/^nsdedup: redis .* \([0-9][0-9]*\) $2[;,]*\( .*\)*$/\1/p" "$1")
	if [ -z "$n" ]; then
		echo "no count of $2 in the statistics:" >&2
		cat "$1" >&2
		return 1
	fi
	printf '%s\n' "$n"
}

# The URL of namespace $1 on the single server.
single_url() {
	printf 'redis://127.0.0.1:%s/%s' "$SINGLE_PORT" "$1"
}

# For each method, run part1.jsonl then part2.jsonl with the options
# $2... against a local index file, then against namespace $1-METHOD of
# the URL made by function url_of; the outputs must be the same, byte for
# byte.
same_as_file() {
	local ns=$1 m url

	shift
	for m in nshash simhash minhash; do
		"$NSDEDUP" -m "$m" --db "file-$m" "$@" part1.jsonl > want1
		"$NSDEDUP" -m "$m" --db "file-$m" "$@" part2.jsonl > want2
		check_data "$@"
		url=$(url_of "$ns-$m")
		nsd_to got1 -m "$m" --db "$url" "$@" part1.jsonl
		ran_clean
		same_file got1 want1
		nsd_to got2 -m "$m" --db "$url" "$@" part2.jsonl
		ran_clean
		same_file got2 want2
	done
}

# Fail unless want1 and want2 (written with the options $1...) test what
# same_as_file means to: records of run 1 found in run 2, and group
# numbers.
check_data() {
	local max1

	if [ "$1" = --drop-dups ]; then
		[ "$(wc -l < want2)" -lt 1040 ]
		[ "$(grep -c '"id":"again-000000001"' want2)" -eq 0 ]
		return
	fi
	grep -q '"id":"again-000000001",.*"similar_id":"g-000000001","is_dup":true}$' want2
	# Run 2 opens groups of its own, numbered after run 1's.
	max1=$(sed -n 's/.*"similar_id":\([0-9]*\),"is_dup":false}$/\1/p' \
	    want1 | sort -n | tail -n 1)
	[ "$max1" -gt 0 ]
	sed -n 's/.*"similar_id":\([0-9]*\),"is_dup":false}$/\1/p' want2 |
	    awk -v max1="$max1" '$1 > max1 { n++ } END { exit !(n > 0) }'
}

# --- The same output as a local index ---

@test "one server: --annotate prints what a local index prints, over two runs" {
	url_of() { single_url "$1"; }
	same_as_file ann --annotate
}

@test "one server: --drop-dups keeps what a local index keeps, over two runs" {
	url_of() { single_url "$1"; }
	same_as_file drop --drop-dups
}

@test "a cluster: --annotate prints what a local index prints, over two runs" {
	url_of() { redis_cluster_url "$CLUSTER" "$1"; }
	same_as_file ann --annotate
}

@test "a cluster: --drop-dups keeps what a local index keeps, over two runs" {
	url_of() { redis_cluster_url "$CLUSTER" "$1"; }
	same_as_file drop --drop-dups
}

@test "a cluster: the keys have no hash tags, every master holds some" {
	nsd_to out -m nshash --db "$(redis_cluster_url "$CLUSTER" spread)" \
	    part1.jsonl
	ran_clean
	masters=$(redis_cluster_masters "$CLUSTER")
	expect_eq "$(printf '%s\n' "$masters" | wc -l)" 3
	for port in $masters; do
		n=$(redis_keys "$port" spread | wc -l)
		echo "master $port holds $n keys"
		[ "$n" -gt 100 ]
		[ "$(redis_cli "$port" DBSIZE)" -gt 0 ]
	done
	# None has braces (a hash tag would keep a run's keys on one master).
	for port in $masters; do
		expect_eq "$(redis_keys "$port" spread | grep -c -F -e '{' -e '}')" 0
	done
}

@test "a namespace is its own index: another on the same server knows nothing of it" {
	"$NSDEDUP" part1.jsonl > want1
	nsd_to got1 --db "$(single_url one)" part1.jsonl
	ran_clean
	nsd_to got2 --db "$(single_url two)" part1.jsonl
	ran_clean
	same_file got1 want1
	same_file got2 want1
	# And the first, run again, finds every record.
	nsd_to got3 --db "$(single_url one)" part1.jsonl
	ran_clean
	[ "$(grep -c '"is_dup":false}$' got3)" -eq 0 ]
	[ "$(wc -l < got3)" -eq 2000 ]
}

# --- Two runs at once ---

# in.jsonl: 700 unrelated records, record i followed by i % 5 copies of
# it with ids i-c1, i-c2 ...; the odd copies begin with "Reposted. ". Its
# groups are the same whatever the order (which race checks).
copies() {
	"$GENCORPUS" --records 700 --seed 21 --dup-rate 0 |
	    awk '{
		print
		for (j = 1; j <= NR % 5; j++) {
			l = $0
			sub(/"id":"[^"]*"/, "\"id\":\"" NR "-c" j "\"", l)
			if (j % 2)
				sub(/"text":"/, "\"text\":\"Reposted. ", l)
			print l
		}
	    }' > in.jsonl
}

# Standard input's lines in an order drawn from seed $1.
shuffled() {
	awk -v s="$1" 'BEGIN { srand(s) } { print rand() "\t" $0 }' |
	    sort -k 1,1 | cut -f 2-
}

# id, similar_id and is_dup of each line of an annotated output $1 (ids
# are strings here).
triples() {
	awk '!match($0, /"similar_id":"[^"]*","is_dup":(true|false)[}]$/) {
		print "line " NR " is not annotated"
		next
	}
	{
		t = substr($0, RSTART + 14, RLENGTH - 15)
		sub(/","is_dup":/, " ", t)
	}
	!match($0, /^[{]"id":"[^"]*"/) {
		print "line " NR " has no id"
		next
	}
	{ print substr($0, 8, RLENGTH - 8), t }' "$1"
}

# The groups of an annotated output $1, whatever their order: each
# group's ids, sorted, one group a line.
partition() {
	triples "$1" | sort -k 2,2 -k 1,1 |
	    awk '$2 != g { if (NR > 1) print l; g = $2; l = $1; next }
		{ l = l " " $1 } END { print l }' | sort
}

# Two runs of -m $1 at once on the shared cluster, in namespace $4, over
# in.jsonl in the orders of seeds $2 and $3, with --ttl. Fails if a run
# fails, misses a record or leaves a key without an expiry; writes what they made of the groups that is wrong, if
# anything, to problems-$4, and sets raced to whether they raced.
race() {
	local m=$1 ns=$4 url pa pb sa sb

	shuffled "$2" < in.jsonl > a.jsonl
	shuffled "$3" < in.jsonl > b.jsonl
	# The groups, as one run makes them, in any of the orders.
	"$NSDEDUP" -m "$m" in.jsonl > one.jsonl
	"$NSDEDUP" -m "$m" a.jsonl > one-a.jsonl
	"$NSDEDUP" -m "$m" b.jsonl > one-b.jsonl
	same_file <(partition one-a.jsonl) <(partition one.jsonl)
	same_file <(partition one-b.jsonl) <(partition one.jsonl)
	triples one.jsonl | cut -d ' ' -f 1,2 > groups.txt
	[ "$(cut -d ' ' -f 2 groups.txt | sort -u | wc -l)" -lt 1000 ]
	url=$(redis_cluster_url "$CLUSTER" "$ns")
	timeout 100 "$NSDEDUP" --stats --ttl 1d -m "$m" --db "$url" a.jsonl \
	    > out-a 2> err-a 3>&- &
	pa=$!
	redis_track "$pa"
	timeout 100 "$NSDEDUP" --stats --ttl 1d -m "$m" --db "$url" b.jsonl \
	    > out-b 2> err-b 3>&- &
	pb=$!
	redis_track "$pb"
	sa=0
	wait "$pa" || sa=$?
	sb=0
	wait "$pb" || sb=$?
	expect_eq "$sa $sb" "0 0"
	stats_only err-a
	stats_only err-b
	# --ttl: every key expires, the arbitrations' among them.
	# shellcheck disable=SC2046  # the ports, words
	expect_eq "$(keys_forever "$ns" $(cluster_ports))" ""
	# They raced: each found claims of the other's in its way, and some
	# of its groups gave way to the other's.
	grep -h 'redis ' err-a err-b
	raced=0
	if [ $(($(redis_stat err-a conflicts) +
	    $(redis_stat err-b conflicts))) -gt 0 ] &&
	    [ $(($(redis_stat err-a 'groups gave way') +
	    $(redis_stat err-b 'groups gave way'))) -gt 0 ]; then
		raced=1
	fi
	# Every record, in the order it came.
	same_file <(triples out-a | cut -d ' ' -f 1) \
	    <(sed 's/^{"id":"\([^"]*\)".*/\1/' a.jsonl)
	same_file <(triples out-b | cut -d ' ' -f 1) \
	    <(sed 's/^{"id":"\([^"]*\)".*/\1/' b.jsonl)
	# Between them, each group has one original (the record its
	# similar_id names), and each duplicate names one of its group.
	{ triples out-a | sed 's/^/a /'; triples out-b | sed 's/^/b /'; } |
	    awk 'FILENAME == "groups.txt" { g[$1] = $2; all[$2]; next }
		NF != 4 || !($2 in g) || !($3 in g) {
			print "not a record of in.jsonl: " $0; next
		}
		{ seen[g[$2]] = seen[g[$2]] "\n  run " $0 }
		g[$3] != g[$2] {
			print $2 " is put with " $3 ", of another group"
		}
		$4 == "false" && $3 != $2 {
			print $2 " is an original named " $3
		}
		$4 == "false" { n[g[$2]]++ }
		END {
			for (k in all)
				if (n[k] != 1)
					print "the group of " k " has " n[k] + 0 \
					    " originals:" seen[k]
		}' groups.txt - > "problems-$ns"
}

@test "two runs at once on a cluster keep each group's original once between them" {
	copies
	[ "$(wc -l < in.jsonl)" -eq 2100 ]
	failed=
	for round in "nshash 1 2" "nshash 3 4" "nshash 5 6" "nshash 7 8" \
	    "nshash 9 10" "simhash 1 2" "minhash 1 2"; do
		# shellcheck disable=SC2086  # words
		set -- $round
		# Whether two runs started together overlap is up to the
		# scheduler: a round that did not race (on a loaded machine,
		# one run may be done before the other has begun) is run
		# again, in a namespace of its own, a few times at most.
		for try in 1 2 3 4 5; do
			ns=twice-$1-$2-$try
			race "$1" "$2" "$3" "$ns"
			if [ -s "problems-$ns" ]; then
				echo "-m $1, orders $2 and $3:"
				head -n 30 "problems-$ns"
				failed=1
			fi
			[ "$raced" -eq 0 ] || break
			echo "-m $1, orders $2 and $3: no race, try $try"
		done
		[ "$raced" -eq 1 ]
	done
	[ -z "$failed" ]
}

# --- Resharding and failing over during a run ---

# Write file $1 to stdout $2 lines at a time, $3 seconds apart, touching
# fed-N after chunk N (counted from 1). With $4, the second half waits
# (60 seconds at most) until file $4 exists.
trickle() {
	local file=$1 n=$2 pause=$3 gate=${4-} total i=0

	total=$((($(wc -l < "$file") + n - 1) / n))
	while [ "$i" -lt "$total" ]; do
		if [ -n "$gate" ] && [ "$i" -eq $((total / 2)) ]; then
			for _ in $(seq 600); do
				[ -e "$gate" ] && break
				sleep 0.1
			done
		fi
		sed -n "$((i * n + 1)),$(((i + 1) * n))p" "$file"
		i=$((i + 1))
		touch "fed-$i"
		sleep "$pause"
	done
}

# The number of slots the master on port $2 of cluster $1 serves.
slots_of() {
	redis_cli "$2" CLUSTER NODES | tr -d '\r' | awk -v me="$(redis_node_id "$2")" '
		$1 == me {
			for (i = 9; i <= NF; i++) {
				if ($i ~ /^\[/)
					continue
				n = split($i, r, "-")
				s += n == 1 ? 1 : r[2] - r[1] + 1
			}
		}
		END { print s + 0 }'
}

@test "a live resharding during a run loses no decision" {
	redis_cluster_start cluster 3 0 2000
	for m in nshash simhash; do
		"$NSDEDUP" -m "$m" --db "file-$m" part1.jsonl > want1
		"$NSDEDUP" -m "$m" --db "file-$m" part2.jsonl > want2
		url=$(redis_cluster_url cluster "moved-$m")
		nsd_to got1 -m "$m" --db "$url" part1.jsonl
		ran_clean
		same_file got1 want1
		# Run 2 reads part2.jsonl 60 records at a time; 2000 slots,
		# and their keys, move from one master to another meanwhile.
		# shellcheck disable=SC2046  # ports, one a line
		set -- $(redis_cluster_masters cluster)
		if [ "$m" = nshash ]; then
			from=$1 to=$2
		else
			from=$2 to=$3
		fi
		before=$(slots_of cluster "$to")
		rm -f feed fed-* resharded
		mkfifo feed
		timeout 100 "$NSDEDUP" --stats -m "$m" --db "$url" feed \
		    > got2 2> got2.err 3>&- &
		pid=$!
		redis_track "$pid"
		trickle part2.jsonl 60 0.25 resharded > feed 3>&- &
		redis_track $!
		wait_lines got2 60
		redis_alive "$pid"
		timeout 60 "$REDIS_CLI" --cluster reshard "127.0.0.1:$from" \
		    --cluster-from "$(redis_node_id "$from")" \
		    --cluster-to "$(redis_node_id "$to")" \
		    --cluster-slots 2000 --cluster-yes \
		    < /dev/null > reshard.log 2>&1 ||
		    { tail -n 20 reshard.log; false; }
		# The run was not over before the slots had moved.
		redis_alive "$pid"
		touch resharded
		status=0
		wait "$pid" || status=$?
		expect_eq "$status" 0
		stats_only got2.err
		same_file got2 want2
		# The run met slots that had moved.
		grep 'redis ' got2.err
		[ $(($(redis_stat got2.err MOVED) + $(redis_stat got2.err ASK))) -gt 0 ]
		redis_cluster_wait cluster
		expect_eq "$(slots_of cluster "$to")" $((before + 2000))
	done
}

@test "slots half migrated during a run: ASK is followed, no decision lost" {
	redis_cluster_start cluster 3 0 2000
	"$NSDEDUP" --db file part1.jsonl > want1
	"$NSDEDUP" --db file part2.jsonl > want2
	url=$(redis_cluster_url cluster ask)
	nsd_to got1 --db "$url" part1.jsonl
	ran_clean
	same_file got1 want1
	# Master a is giving master b the slots of one key in 20 of its own,
	# and has given it those keys (but the other keys of their slots).
	# shellcheck disable=SC2046  # ports, one a line
	set -- $(redis_cluster_masters cluster)
	a=$1 b=$2
	redis_keys "$a" ask | awk 'NR % 20 == 1' > moving.txt
	sed 's/^/CLUSTER KEYSLOT /' moving.txt | redis_cli "$a" |
	    sort -u -n > slots.txt
	[ "$(wc -l < slots.txt)" -gt 100 ]
	sed "s/.*/CLUSTER SETSLOT & IMPORTING $(redis_node_id "$a")/" \
	    slots.txt | redis_cli "$b" > replies.txt
	expect_eq "$(sort -u replies.txt)" OK
	sed "s/.*/CLUSTER SETSLOT & MIGRATING $(redis_node_id "$b")/" \
	    slots.txt | redis_cli "$a" > replies.txt
	expect_eq "$(sort -u replies.txt)" OK
	sed "s/.*/MIGRATE 127.0.0.1 $b & 0 5000/" moving.txt |
	    redis_cli "$a" > replies.txt
	expect_eq "$(sort -u replies.txt)" OK
	# Run 2 reads keys on either side, and claims new ones on b.
	nsd_to got2 --stats --db "$url" part2.jsonl
	expect_eq "$status" 0
	stats_only got2.err
	same_file got2 want2
	grep 'redis ' got2.err
	[ "$(redis_stat got2.err ASK)" -gt 0 ]
	# The slots are still half moved: b has the keys a gave it, for a
	# client that says ASKING.
	expect_eq "$(sed 's/.*/ASKING\nEXISTS &/' moving.txt |
	    redis_cli "$b" | grep -c -x 1)" "$(wc -l < moving.txt)"
}

@test "a master killed mid-run: its replica takes over, and no record is lost" {
	redis_cluster_start cluster 3 1 1000
	"$GENCORPUS" --records 2000 --seed 13 > in.jsonl
	url=$(redis_cluster_url cluster failover)
	# The master that hands out the group numbers.
	victim=$(redis_cluster_master_of cluster failover:next)
	[ -n "$victim" ]
	mkfifo feed
	timeout 100 "$NSDEDUP" --stats -m nshash --annotate --db "$url" feed \
	    > out 2> err 3>&- &
	pid=$!
	redis_track "$pid"
	# The second half of the input waits for the kill: the run goes on
	# after it.
	trickle in.jsonl 100 0.25 killed > feed 3>&- &
	redis_track $!
	wait_lines out 200
	redis_alive "$pid"
	kill -KILL "$(redis_cluster_pid cluster "$victim")"
	[ ! -e fed-20 ]
	touch killed
	status=0
	wait "$pid" || status=$?
	expect_eq "$status" 0
	stats_only err
	# It lost its connection to the master, and went on.
	grep 'redis ' err
	[ $(($(redis_stat err reconnects) + $(redis_stat err retried))) -gt 0 ]
	# Every record, in the order it came.
	same_file <(sed 's/^{"id":"\([^"]*\)".*/\1/' out) \
	    <(sed 's/^{"id":"\([^"]*\)".*/\1/' in.jsonl)
	# An original names itself; a duplicate, a record before it.
	problems=$(triples out | awk '
		NF != 3 { print "not annotated: " $0; next }
		$3 == "false" && $2 != $1 { print $1 " is an original named " $2 }
		$3 == "true" && !($2 in seen) {
			print $1 " is a duplicate of " $2 ", not a record before it"
		}
		{ seen[$1] }')
	if [ -n "$problems" ]; then
		printf '%s\n' "$problems" | head -n 20
		false
	fi
	# It did find duplicates, after the kill as before.
	[ "$(tail -n 500 out | grep -c '"is_dup":true}$')" -gt 20 ]
	# The replica took over.
	redis_cluster_wait cluster
	masters=$(redis_cluster_masters cluster)
	expect_eq "$(printf '%s\n' "$masters" | wc -l)" 3
	[ "$(printf '%s\n' "$masters" | grep -c -x "$victim")" -eq 0 ]
}

@test "with replicas, group numbers are used once every replica has them" {
	local master replicas

	redis_cluster_start cluster 3 1 2000
	"$NSDEDUP" part1.jsonl > want
	url=$(redis_cluster_url cluster waited)
	master=$(redis_cluster_master_of cluster waited:next)
	[ -n "$master" ]
	nsd_to got --db "$url" part1.jsonl
	ran_clean
	same_file got want
	# The master of the counter was asked for its replicas, and waited
	# for them, once for each block of numbers the run took.
	[ "$(redis_calls "$master" wait)" -ge 1 ]
	[ "$(redis_calls "$master" wait)" -eq "$(redis_calls "$master" incrby)" ]
	# Replicas that no longer answer acknowledge nothing: the run takes
	# no number and ends, saying why.
	replicas=$(redis_cluster_replicas cluster)
	expect_eq "$(printf '%s\n' "$replicas" | wc -l)" 3
	for port in $replicas; do
		kill -STOP "$(redis_cluster_pid cluster "$port")"
	done
	url=$(redis_cluster_url cluster unwaited)
	master=$(redis_cluster_master_of cluster unwaited:next)
	NSDEDUP_REDIS_WAIT=1 NSDEDUP_REDIS_RETRY=2 \
	    nsd_to got --db "$url" part1.jsonl
	for port in $replicas; do
		kill -CONT "$(redis_cluster_pid cluster "$port")"
	done
	expect_eq "$status" 7
	[ ! -s got ]
	expect_eq "$stderr" "nsdedup: $url: 127.0.0.1:$master: 0 of its 1 replicas acknowledged unwaited:next within 500 ms (gave up after 2.0 s)"
}

@test "connections lost mid-run are made again, and no decision is lost" {
	"$NSDEDUP" --db file part1.jsonl > want
	mkfifo feed
	timeout 100 "$NSDEDUP" --stats --db "$(single_url lost)" feed \
	    > got 2> got.err 3>&- &
	pid=$!
	redis_track "$pid"
	# The second half of the input (from record 1001) waits until the
	# second drop: the run is not over before it.
	trickle part1.jsonl 100 0.2 dropped > feed 3>&- &
	redis_track $!
	# The server drops every client but the one asking, twice.
	for n in 300 1000; do
		wait_lines got "$n"
		[ "$(redis_cli "$SINGLE_PORT" CLIENT KILL TYPE normal SKIPME yes)" -ge 1 ]
	done
	touch dropped
	status=0
	wait "$pid" || status=$?
	expect_eq "$status" 0
	stats_only got.err
	same_file got want
	grep 'redis ' got.err
	[ "$(redis_stat got.err reconnects)" -ge 2 ]
}

# --- Statistics ---

@test "--stats counts the server's work for a redis:// index, and only then" {
	head -n 50 part1.jsonl > in.jsonl
	nsd_to out --stats --db "$(single_url stats)" in.jsonl
	expect_eq "$status" 0
	stats_only out.err
	[[ "$(grep '^nsdedup: redis ' out.err)" == "nsdedup: redis "*" 1 master, "*" commands in "*" round trips; 0 MOVED, 0 ASK, 0 retried, 0 reconnects; 0 conflicts, 0 groups gave way" ]]
	# Without one (a few times: what it must not print would come from
	# memory that nothing set).
	for i in 1 2 3 4 5; do
		nsd_to out --stats in.jsonl
		expect_eq "$status" 0
		stats_only out.err
		expect_eq "$(grep -c '^nsdedup: redis ' out.err)" 0
		nsd_to out --stats --db "file-$i" in.jsonl
		expect_eq "$status" 0
		expect_eq "$(grep -c '^nsdedup: redis ' out.err)" 0
	done
}

# --- Errors ---

@test "a server that stops answering mid-run: status 7 once the retries are spent" {
	redis_single_start stopped
	port=$redis_port
	server=$(cat stopped/pid)
	url=redis://127.0.0.1:$port/stop
	mkfifo feed
	NSDEDUP_REDIS_WAIT=0.5 NSDEDUP_REDIS_RETRY=2 timeout 60 \
	    "$NSDEDUP" --db "$url" -o out.jsonl feed > stdout 2> stderr 3>&- &
	pid=$!
	redis_track "$pid"
	# The second half of the input waits until the server has stopped:
	# the run is not over before.
	trickle part1.jsonl 100 0.2 stopped > feed 3>&- &
	redis_track $!
	# Once the run has written to the server, the server stops.
	for _ in $(seq 600); do
		[ -e fed-3 ] && [ "$(redis_cli "$port" DBSIZE)" -gt 0 ] && break
		sleep 0.1
	done
	[ "$(redis_cli "$port" DBSIZE)" -gt 0 ]
	kill -STOP "$server"
	touch stopped
	status=0
	wait "$pid" || status=$?
	kill -CONT "$server"
	# Not 124: the run ended of itself.
	expect_eq "$status" 7
	[ ! -s stdout ]
	stderr=$(cat stderr)
	echo "stderr: $stderr"
	[[ "$stderr" == "nsdedup: $url: "* ]]
	[ ! -e out.jsonl ]
	# shellcheck disable=SC2010
	expect_eq "$(temp_files)" ""
}

@test "a server that cannot be reached: status 7, naming the URL, and no output" {
	redis_port_used 1 && skip "something listens on port 1"
	record 1 "$(sentence 1)" > in.jsonl
	run_nsd --db redis://127.0.0.1:1/ns in.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: "*"redis://127.0.0.1:1"* ]]
	[[ "$stderr" == *[Cc]onnect* ]]
	run_nsd --db redis://127.0.0.1:1/ns -o out.jsonl in.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: "*"redis://127.0.0.1:1"* ]]
	[[ "$stderr" == *[Cc]onnect* ]]
	# shellcheck disable=SC2010
	expect_eq "$(ls -A | grep -v -e '^separate-stderr-' -e '^part[12].jsonl$')" \
	    in.jsonl
}

# The TTL of each key of namespace $1 on the single server, one a line.
ttls() {
	redis_keys "$SINGLE_PORT" "$1" | sed 's/^/TTL /' |
	    redis_cli "$SINGLE_PORT" | tr -d '\r'
}

# Each key of namespace $1 on the servers on ports $2... that has no
# expiry (a cluster's keys are found on the master that holds them), one
# a line; "none" when the namespace has no key at all.
keys_forever() {
	local ns=$1 port

	shift
	for port in "$@"; do
		redis_keys "$port" "$ns" | tr -d '\r' > "forever-$port"
		sed 's/^/PTTL /' "forever-$port" | redis_cli "$port" |
		    tr -d '\r' | paste -d ' ' "forever-$port" -
	done | awk '$2 == -1 { print $1 } END { if (NR == 0) print "none" }'
}

# The ports of the shared cluster's nodes.
cluster_ports() {
	cat "$CLUSTER/ports"
}

@test "--ttl gives every key a time to live, on one server and on a cluster" {
	local where url ports m

	for where in single cluster; do
		for m in nshash simhash minhash; do
			if [ "$where" = single ]; then
				url=$(single_url "ttl-$m")
				ports=$SINGLE_PORT
			else
				url=$(redis_cluster_url "$CLUSTER" "ttl-$m")
				ports=$(cluster_ports)
			fi
			# A run that opens the groups, one that adds to them
			# and hands group numbers back, one that fails part
			# way (its run's key deleted), and one read-only.
			nsd_to out -m "$m" --ttl 1000 --db "$url" part1.jsonl
			ran_clean
			nsd_to out -m "$m" --ttl 1000 --db "$url" part2.jsonl
			ran_clean
			run_nsd -m "$m" --ttl 1000 --db "$url" -o /dev/full \
			    part2.jsonl
			expect_eq "$status" 4
			nsd_to out -m "$m" --ttl 1000 --no-update --db "$url" \
			    part1.jsonl
			ran_clean
			# shellcheck disable=SC2086  # the ports, words
			expect_eq "$(keys_forever "ttl-$m" $ports)" ""
		done
		# Every kind of key is there to have been looked at.
		# shellcheck disable=SC2086
		for port in $ports; do redis_keys "$port" ttl-nshash; done |
		    sed 's/^ttl-nshash:\([a-z]*\).*/\1/' | sort -u |
		    tr '\n' ' ' > kinds
		expect_eq "$(cat kinds)" "f g next params run "
	done
	# A run killed leaves its lease, which ends. Its input is a FIFO
	# that this shell holds open (fd 8) until the run is killed, so that
	# the run is still reading when it dies; a feeder that slept instead
	# would hold the test until it woke, since wait waits for the whole
	# pipeline.
	url=$(single_url ttl-killed)
	mkfifo feed
	"$NSDEDUP" --ttl 1000 --db "$url" < feed > /dev/null 2>&1 3>&- &
	pid=$!
	redis_track "$pid"
	exec 8> feed
	head -n 100 part1.jsonl >&8
	for _ in $(seq 300); do
		redis_keys "$SINGLE_PORT" ttl-killed | grep -q ':f:' && break
		sleep 0.1
	done
	kill -9 "$pid"
	wait "$pid" || true
	exec 8>&-
	redis_keys "$SINGLE_PORT" ttl-killed | grep -q ':run:'
	expect_eq "$(keys_forever ttl-killed "$SINGLE_PORT")" ""
	# Without --ttl, every key stays.
	nsd_to out --db "$(single_url keep)" part1.jsonl
	ran_clean
	ttls keep > ttls.txt
	[ "$(wc -l < ttls.txt)" -gt 1000 ]
	expect_eq "$(sort -u ttls.txt)" -1
}

@test "--ttl on a namespace whose keys stay: its parameters and counter stay too" {
	local url

	# Made without --ttl: a run with it writes keys that expire, but
	# the parameters and the group counter outlive the keys that stay.
	url=$(single_url ttl-mixed)
	nsd_to out --db "$url" part1.jsonl
	ran_clean
	nsd_to out --ttl 1000 --db "$url" part2.jsonl
	ran_clean
	ttls ttl-mixed > ttls.txt
	grep -q '^-1$' ttls.txt
	awk '$1 > 900 { n++ } END { exit !(n > 100) }' ttls.txt
	expect_eq "$(redis_cli "$SINGLE_PORT" TTL ttl-mixed:params)" -1
	expect_eq "$(redis_cli "$SINGLE_PORT" TTL ttl-mixed:next)" -1
	# Made with --ttl: a run without it makes them stay from then on.
	url=$(single_url ttl-then-not)
	nsd_to out --ttl 1000 --db "$url" part1.jsonl
	ran_clean
	[ "$(redis_cli "$SINGLE_PORT" TTL ttl-then-not:params)" -gt 900 ]
	[ "$(redis_cli "$SINGLE_PORT" TTL ttl-then-not:next)" -gt 900 ]
	nsd_to out --db "$url" part2.jsonl
	ran_clean
	expect_eq "$(redis_cli "$SINGLE_PORT" TTL ttl-then-not:params)" -1
	expect_eq "$(redis_cli "$SINGLE_PORT" TTL ttl-then-not:next)" -1
	# And a longer --ttl makes them live longer, a shorter one not
	# shorter.
	url=$(single_url ttl-longer)
	nsd_to out --ttl 1000 --db "$url" part1.jsonl
	ran_clean
	nsd_to out --ttl 5000 --db "$url" part2.jsonl
	ran_clean
	[ "$(redis_cli "$SINGLE_PORT" TTL ttl-longer:params)" -gt 4900 ]
	nsd_to out --ttl 100 --db "$url" part2.jsonl
	ran_clean
	[ "$(redis_cli "$SINGLE_PORT" TTL ttl-longer:params)" -gt 4900 ]
	[ "$(redis_cli "$SINGLE_PORT" TTL ttl-longer:next)" -gt 4900 ]
}

# An index file takes --ttl too, as its window (tests/window.bats).
@test "--ttl without an index is a usage error" {
	record 1 "$(sentence 1)" > in.jsonl
	run_nsd --ttl 100 in.jsonl
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: "*"--ttl"* ]]
	[[ "$stderr" == *"Try 'nsdedup --help' for more information." ]]
}

@test "a namespace made before sketches is used, its matches unconfirmed" {
	url=$(single_url presketch)
	nsd_to out --db "$(single_url sketched)" /dev/null
	ran_clean
	# NS:params as nsdedup wrote it before groups kept sketches.
	params=$(redis_cli "$SINGLE_PORT" GET sketched:params)
	[[ "$params" == *" sketch=192" ]]
	redis_cli "$SINGLE_PORT" SET presketch:params "${params% sketch=192}" \
	    > /dev/null
	record a "$(prose 1 12) $BACKGROUND" > in.jsonl
	record b "$(prose 2 12) $BACKGROUND" >> in.jsonl
	# Confirmed, b is no copy; unconfirmed, its shared sentences make it
	# one, and --explain has no figures to give.
	nsd_to out --db "$(single_url sketched)" --explain in.jsonl
	ran_clean
	expect_eq "$(groups_of "$(cat out)")" "a a
b b"
	nsd_to out --db "$url" --explain in.jsonl
	ran_clean
	expect_eq "$(groups_of "$(cat out)")" "a a
b a"
	grep -q '"exact":false}}$' out
	expect_eq "$(redis_cli "$SINGLE_PORT" GET presketch:params)" \
	    "${params% sketch=192}"
}

@test "a namespace made with other parameters is refused, and left as it was" {
	url=$(single_url params)
	nsd_to out -m nshash --db "$url" part1.jsonl
	ran_clean
	keys=$(redis_keys "$SINGLE_PORT" params | wc -l)
	[ "$keys" -gt 0 ]
	"$NSDEDUP" -m nshash --db file.nsd part1.jsonl > /dev/null
	for opts in "-m simhash" "-m minhash" "--sentences 3" \
	    "--min-length 10"; do
		# shellcheck disable=SC2086
		run_nsd $opts --db "$url" part2.jsonl
		echo "$opts: $stderr"
		[ "$status" -eq 7 ]
		[ -z "$output" ]
		# The words of an index file's refusal: one rule for both.
		mine=$stderr
		# shellcheck disable=SC2086
		run_nsd $opts --db file.nsd part2.jsonl
		[ "$status" -eq 7 ]
		expect_eq "${mine#"nsdedup: $url: "}" \
		    "${stderr#nsdedup: *file.nsd: }"
		[[ "$mine" == "nsdedup: $url: the index was made with "* ]]
	done
	expect_eq "$(redis_keys "$SINGLE_PORT" params | wc -l)" "$keys"
	# The same parameters spelled out are no difference.
	nsd_to out -m nshash --sentences 5 --min-length 30 --db "$url" \
	    part2.jsonl
	ran_clean
}

@test "every mismatch of parameters is refused in an index file's words" {
	local m opts url n=0 file

	head -n 40 part1.jsonl > small.jsonl
	while IFS='|' read -r m opts; do
		n=$((n + 1))
		url=$(single_url "words-$n")
		rm -f words.nsd words.nsd.*
		"$NSDEDUP" -m "$m" --db words.nsd small.jsonl > /dev/null
		nsd_to out -m "$m" --db "$url" small.jsonl
		ran_clean
		keys=$(redis_keys "$SINGLE_PORT" "words-$n")
		# shellcheck disable=SC2086  # the options, split
		nsd_to out -m "$m" $opts --db words.nsd part2.jsonl
		expect_eq "$status" 7
		file=$stderr
		# shellcheck disable=SC2086
		nsd_to out -m "$m" $opts --db "$url" part2.jsonl
		expect_eq "$status" 7
		[ ! -s out ]
		expect_eq "$stderr" "${file/#nsdedup: words.nsd:/nsdedup: $url:}"
		[[ "$stderr" == "nsdedup: $url: the index was made with"* ]]
		expect_eq "$(redis_keys "$SINGLE_PORT" "words-$n")" "$keys"
	done <<-'EOF'
	nshash|-m simhash
	nshash|--sentences 3
	nshash|--compat=nshash
	simhash|-m nshash
	simhash|--distance 4
	simhash|--min-features 9
	minhash|--threshold 0.7
	minhash|--shingle 3
	EOF
	# A namespace never made, as an index file never made.
	"$NSDEDUP" --no-update --db never.nsd small.jsonl 2> file.err &&
	    false
	nsd_to out --no-update --db "$(single_url never-made)" small.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" \
	    "$(sed "s|^nsdedup: never.nsd:|nsdedup: $(single_url never-made):|" file.err)"
	expect_eq "$stderr" "nsdedup: $(single_url never-made): no such index"
}

@test "parameters of another shape: the method first, then what is wrong, in an index file's words" {
	local url params tables

	url=$(single_url shapes)
	head -n 40 part1.jsonl > small.jsonl
	nsd_to out -m simhash --db "$url" small.jsonl
	ran_clean
	params=$(redis_cli "$SINGLE_PORT" GET shapes:params)
	tables=$(sed -n 's/.* tables=\([0-9]*\) .*/\1/p' <<< "$params")
	[ "$tables" -gt 1 ]
	# A word missing: the method differs all the same, and says so.
	redis_cli "$SINGLE_PORT" SET shapes:params \
	    "${params/ min_features=8/}" > /dev/null
	nsd_to out -m nshash --db "$url" small.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" \
	    "nsdedup: $url: the index was made with --method simhash, not nshash"
	nsd_to out -m simhash --db "$url" small.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" \
	    "nsdedup: $url: damaged: shapes:params: no min_features (try --db-verify)"
	# A method name longer than any nsdedup knows is still a method.
	redis_cli "$SINGLE_PORT" SET shapes:params \
	    "${params/method=simhash/method=simhash-of-a-later-nsdedup}" \
	    > /dev/null
	nsd_to out -m simhash --db "$url" small.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" "nsdedup: $url: the index was made with --method simhash-of-a-later-nsdedup, not simhash"
	# Other block tables than the parameters choose.
	redis_cli "$SINGLE_PORT" SET shapes:params \
	    "${params/ tables=$tables / tables=99 }" > /dev/null
	nsd_to out -m simhash --db "$url" small.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" "nsdedup: $url: the index keeps 99 block tables, not the $tables its parameters choose: it was made by another version of nsdedup"
	# A newer format.
	redis_cli "$SINGLE_PORT" SET shapes:params \
	    "${params/#nsdedup-redis 1 /nsdedup-redis 2 }" > /dev/null
	nsd_to out -m simhash --db "$url" small.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" "nsdedup: $url: index format version 2 is newer than this nsdedup reads (1); use a newer nsdedup"
	# Not an nsdedup index at all, a string or a hash, as a file that is
	# not one.
	head -c 100000 part1.jsonl > notindex
	"$NSDEDUP" --db notindex small.jsonl 2> file.err && false
	expect_eq "$(cat file.err)" "nsdedup: notindex: not an nsdedup index"
	redis_cli "$SINGLE_PORT" SET shapes:params "hello" > /dev/null
	nsd_to out -m simhash --db "$url" small.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" "nsdedup: $url: not an nsdedup index"
	redis_cli "$SINGLE_PORT" DEL shapes:params > /dev/null
	redis_cli "$SINGLE_PORT" HSET shapes:params a b > /dev/null
	nsd_to out -m simhash --db "$url" small.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" "nsdedup: $url: not an nsdedup index"
	expect_eq "$(redis_cli "$SINGLE_PORT" HGETALL shapes:params)" "a
b"
}

@test "the contract of every index holds on one server and on a cluster" {
	run "$UNIT_TESTS/index_contract_test" "$(single_url contract)" \
	    "$(redis_cluster_url "$CLUSTER" contract)"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"1..20"* ]]
	[[ "$output" != *"not ok"* ]]
}

# --- --db-info and --db-verify of a namespace ---

# The value on the line of label $1 of --db-info's output in file $2.
info_line() {
	sed -n "s/^$1: *//p" "$2"
}

# How many writes the server on port $1 has taken since it started: with
# nothing saved, its count of changes since the last save.
writes_on() {
	redis_cli "$1" INFO persistence | tr -d '\r' |
	    sed -n 's/^rdb_changes_since_last_save://p'
}

@test "--db-info and --db-verify describe a namespace as a file's, and write nothing" {
	local m url labels keys sketch

	head -n 200 part1.jsonl > small.jsonl
	labels='index format parameters groups fingerprints arbitrations runs keys ttl servers sketches'
	for m in nshash simhash minhash; do
		url=$(single_url "info-$m")
		"$NSDEDUP" -m "$m" --db "file-$m" small.jsonl > /dev/null
		"$NSDEDUP" --db "file-$m" --db-info > file-info
		nsd_to out -m "$m" --db "$url" small.jsonl
		ran_clean
		writes=$(writes_on "$SINGLE_PORT")
		nsd_to info --db "$url" --db-info
		ran_clean
		cat info
		expect_eq "$(sed 's/:.*//' info | paste -s -d ' ')" "$labels"
		expect_eq "$(info_line index info)" "$url"
		expect_eq "$(info_line format info)" \
		    "nsdedup-redis 1 (info-$m:params)"
		# The parameters in the words of a file's.
		expect_eq "$(info_line parameters info)" \
		    "$(info_line parameters file-info)"
		expect_eq "$(info_line sketches info)" \
		    "$(info_line sketches file-info)"
		# MinHash's groups keep only the numbers of a sketch.
		sketch=192
		[ "$m" != minhash ] || sketch=64
		expect_eq "$(info_line sketches info)" \
		    "$sketch bytes a group (matches are confirmed)"
		[[ "$(redis_cli "$SINGLE_PORT" GET "info-$m:params")" == *" sketch=$sketch" ]]
		# One run from one host numbers its groups as a file does.
		groups=$(info_line groups file-info)
		expect_eq "$(info_line groups info)" "$groups numbered (info-$m:next), $groups records (info-$m:g:N), 0 given way to another"
		keys=$(redis_keys "$SINGLE_PORT" "info-$m")
		expect_eq "$(info_line keys info)" \
		    "$(printf '%s\n' "$keys" | wc -l) under info-$m:, 0 of them not nsdedup's"
		if [ "$m" = simhash ]; then
			[[ "$(info_line fingerprints info)" == *" entries in $(grep -c ":s:" <<< "$keys") SimHash block values (info-$m:s:TABLE:HEX)" ]]
		else
			expect_eq "$(info_line fingerprints info)" \
			    "$(grep -c ":f:" <<< "$keys") keys (info-$m:f:HEX)"
		fi
		expect_eq "$(info_line runs info)" \
		    "1 done, 0 running (info-$m:run:TOKEN)"
		expect_eq "$(info_line ttl info)" "none: no key expires"
		expect_eq "$(info_line servers info)" \
		    "1 master, a single server: 127.0.0.1:$SINGLE_PORT"
		# --db-verify: the same, and that it found nothing wrong.
		nsd_to verify --db "$url" --db-verify
		ran_clean
		expect_eq "$(cat verify)" "$(cat info)
verified:      no problems found"
		expect_eq "$(writes_on "$SINGLE_PORT")" "$writes"
		expect_eq "$(redis_keys "$SINGLE_PORT" "info-$m")" "$keys"
	done
}

@test "--db-info and --db-verify of a namespace on a cluster: every master" {
	local url port n=0

	url=$(redis_cluster_url "$CLUSTER" cinfo)
	head -n 200 part1.jsonl > small.jsonl
	nsd_to out -m simhash --db "$url" small.jsonl
	ran_clean
	for port in $(redis_cluster_masters "$CLUSTER"); do
		n=$((n + $(redis_keys "$port" cinfo | wc -l)))
	done
	nsd_to info --db "$url" --db-verify
	ran_clean
	expect_eq "$(info_line keys info)" "$n under cinfo:, 0 of them not nsdedup's"
	[[ "$(info_line servers info)" == "3 masters of a cluster: 127.0.0.1:"*", 127.0.0.1:"*", 127.0.0.1:"* ]]
	expect_eq "$(info_line verified info)" "no problems found"
}

@test "--db-info and --db-verify of a namespace that does not exist: status 7, and nothing made" {
	local opt url

	url=$(single_url never-there)
	for opt in --db-info --db-verify; do
		nsd_to out --db "$url" "$opt"
		expect_eq "$status" 7
		[ ! -s out ]
		expect_eq "$stderr" "nsdedup: $url: no such index"
	done
	expect_eq "$(redis_keys "$SINGLE_PORT" never-there)" ""
	# Nor one whose server cannot be reached.
	redis_pick_port
	port=$redis_port
	nsd_to out --db "redis://127.0.0.1:$port/x" --db-info
	expect_eq "$status" 7
	[ ! -s out ]
	[[ "$stderr" == "nsdedup: redis://127.0.0.1:$port/x: cannot use the index: "* ]]
}

# Fail unless --db-verify of URL $1 finds problems, each one of the lines
# $2... (in that order) and nothing else, with status 7 and the report on
# stdout.
verify_finds() {
	local url=$1 want

	shift
	nsd_to out --db "$url" --db-verify
	expect_eq "$status" 7
	want=$(printf "nsdedup: $url: %s\n" "$@")
	expect_eq "$stderr" "$want
nsdedup: $url: damaged: $# problem$([ $# -eq 1 ] || echo s) found"
	expect_eq "$(info_line index out)" "$url"
	! grep -q '^verified:' out
}

@test "--db-verify finds a namespace damaged: a group, the parameters, the counter, a key, a chain" {
	local url ns=hurt params fp group next

	url=$(single_url "$ns")
	head -n 200 part1.jsonl > small.jsonl
	nsd_to out -m nshash --db "$url" small.jsonl
	ran_clean
	nsd_to out --db "$url" --db-verify
	ran_clean
	# A group whose record is gone, that fingerprints name.
	fp=$(redis_keys "$SINGLE_PORT" "$ns" | grep ":f:" | head -n 1)
	group=$(redis_cli "$SINGLE_PORT" GET "$fp")
	redis_cli "$SINGLE_PORT" DEL "$ns:g:$group" > /dev/null
	nsd_to out --db "$url" --db-verify
	cat out.err
	expect_eq "$status" 7
	grep -q -F -x "nsdedup: $url: $fp names group $group, which has no record ($ns:g:$group)" out.err
	expect_eq "$(tail -n 1 out.err)" \
	    "nsdedup: $url: damaged: $(grep -c 'which has no record' out.err) problem$([ "$(grep -c 'which has no record' out.err)" -eq 1 ] || echo s) found"
	redis_cli "$SINGLE_PORT" SET "$ns:g:$group" "g0000000000000001$(printf '%0192d' 0)" > /dev/null
	nsd_to out --db "$url" --db-verify
	ran_clean
	# Parameters that cannot be read: found, and refused by --db-info
	# and by a run in the same words.
	params=$(redis_cli "$SINGLE_PORT" GET "$ns:params")
	redis_cli "$SINGLE_PORT" SET "$ns:params" \
	    "${params/sentences=5/sentences=five}" > /dev/null
	verify_finds "$url" "$ns:params: 'five' is not a value of sentences"
	expect_eq "$(info_line parameters out)" "cannot be read ($ns:params)"
	nsd_to out --db "$url" --db-info
	expect_eq "$status" 7
	[ ! -s out ]
	expect_eq "$stderr" "nsdedup: $url: damaged: $ns:params: 'five' is not a value of sentences (try --db-verify)"
	nsd_to out --db "$url" small.jsonl
	expect_eq "$status" 7
	expect_eq "$stderr" "nsdedup: $url: damaged: $ns:params: 'five' is not a value of sentences (try --db-verify)"
	redis_cli "$SINGLE_PORT" SET "$ns:params" "$params" > /dev/null
	# A counter behind the groups: the next group would take a number
	# that one has.
	next=$(redis_cli "$SINGLE_PORT" GET "$ns:next")
	redis_cli "$SINGLE_PORT" SET "$ns:next" 1 > /dev/null
	nsd_to out --db "$url" --db-verify
	expect_eq "$status" 7
	[[ "$stderr" == "nsdedup: $url: $ns:"*" names group $next, past the counter $ns:next (1): a later group would take its number
nsdedup: $url: damaged: 1 problem found" ]]
	redis_cli "$SINGLE_PORT" SET "$ns:next" "$next" > /dev/null
	# A key nsdedup does not make, and one of its own with another value.
	redis_cli "$SINGLE_PORT" SET "$ns:stray" x > /dev/null
	verify_finds "$url" "$ns:stray is no key that nsdedup makes"
	redis_cli "$SINGLE_PORT" DEL "$ns:stray" > /dev/null
	redis_cli "$SINGLE_PORT" SET "$ns:run:00000000000000aa" running \
	    > /dev/null
	verify_finds "$url" \
	    "$ns:run:00000000000000aa says running, with no lease that ends"
	redis_cli "$SINGLE_PORT" DEL "$ns:run:00000000000000aa" > /dev/null
	# Groups that gave way: to a root, which is whole; in a chain, not.
	redis_cli "$SINGLE_PORT" SET "$ns:w:1" root > /dev/null
	redis_cli "$SINGLE_PORT" SET "$ns:w:2" @1 > /dev/null
	redis_cli "$SINGLE_PORT" SET "$ns:a:1:2" 2 > /dev/null
	redis_cli "$SINGLE_PORT" SET "$ns:g:2" @1 > /dev/null
	nsd_to out --db "$url" --db-verify
	ran_clean
	expect_eq "$(info_line groups out)" "$next numbered ($ns:next), $next records ($ns:g:N), 1 given way to another"
	expect_eq "$(info_line arbitrations out)" \
	    "1 between two groups ($ns:a:N:M), 2 stances ($ns:w:N)"
	redis_cli "$SINGLE_PORT" SET "$ns:g:3" @2 > /dev/null
	redis_cli "$SINGLE_PORT" SET "$ns:w:3" @2 > /dev/null
	verify_finds "$url" \
	    "$ns:g:3 gave way to group 2, which is no root ($ns:w:2 says @1)" \
	    "$ns:g:3 gave way to group 2, which gave way itself: a chain"
}

@test "--db-info says when keys expire; --db-verify misses nothing that expired" {
	local url ns=expiring fp group

	url=$(single_url "$ns")
	head -n 200 part1.jsonl > small.jsonl
	nsd_to out --ttl 1h --db "$url" small.jsonl
	ran_clean
	nsd_to out --db "$url" --db-info
	ran_clean
	[[ "$(info_line ttl out)" =~ ^[0-9]+" of the keys expire, the last in "(3599|3600)" s (--ttl)"$ ]]
	fp=$(redis_keys "$SINGLE_PORT" "$ns" | grep ":f:" | head -n 1)
	group=$(redis_cli "$SINGLE_PORT" GET "$fp")
	redis_cli "$SINGLE_PORT" DEL "$ns:g:$group" > /dev/null
	nsd_to out --db "$url" --db-verify
	ran_clean
}

# --- --no-update, keys, passwords, URLs ---

@test "--no-update prints what it prints with a local index, and writes nothing" {
	for m in nshash simhash minhash; do
		"$NSDEDUP" -m "$m" --db "file-$m" part1.jsonl > /dev/null
		"$NSDEDUP" -m "$m" --no-update --db "file-$m" part2.jsonl > want
		url=$(single_url "nu-$m")
		nsd_to out -m "$m" --db "$url" part1.jsonl
		ran_clean
		redis_keys "$SINGLE_PORT" "nu-$m" > keys-before
		nsd_to got -m "$m" --no-update --db "$url" part2.jsonl
		ran_clean
		same_file got want
		redis_keys "$SINGLE_PORT" "nu-$m" > keys-after
		same_file keys-after keys-before
	done
	# There is nothing to compare against in a namespace never made.
	nsd_to got --no-update --db "$(single_url never-made)" part1.jsonl
	expect_eq "$status" 7
	[ ! -s got ]
	expect_eq "$stderr" "nsdedup: $(single_url never-made): no such index"
	expect_eq "$(redis_keys "$SINGLE_PORT" never-made)" ""
}

@test "the keys are those the man page lists, under the namespace" {
	for m in nshash simhash minhash; do
		nsd_to out -m "$m" --db "$(single_url "layout-$m")" part1.jsonl
		ran_clean
		redis_keys "$SINGLE_PORT" "layout-$m" > keys
		[ "$(wc -l < keys)" -gt 1000 ]
		# NS:params, NS:next, NS:g:N, NS:run:TOKEN, and the
		# fingerprints of the method: NS:f:HEX, or SimHash's blocks
		# NS:s:TABLE:HEX.
		if [ "$m" = simhash ]; then fp='s:[0-9]+:[0-9a-f]{16}'; else
			fp='f:[0-9a-f]{16}'; fi
		if grep -Ev "^layout-$m:(params|next|g:[1-9][0-9]*|run:[0-9a-f]{16}|$fp)\$" keys; then
			echo "($m: keys outside the layout)"
			false
		fi
		grep -Eq "^layout-$m:$fp\$" keys
		grep -q "^layout-$m:params\$" keys
		# The run, done.
		run=$(grep "^layout-$m:run:" keys)
		expect_eq "$(redis_cli "$SINGLE_PORT" GET "$run")" "done"
		# As many group keys as groups: the originals.
		expect_eq "$(grep -c "^layout-$m:g:" keys)" \
		    "$(grep -c '"is_dup":false}$' out)"
		expect_eq "$(redis_cli "$SINGLE_PORT" GET "layout-$m:next")" \
		    "$(grep -c '"is_dup":false}$' out)"
	done
}

@test "a password from the URL or from REDISCLI_AUTH; a wrong one is refused and not shown" {
	redis_single_start "$BATS_TEST_TMPDIR/auth"
	port=$redis_port
	# Set once it answers: the harness pings without a password.
	redis_cli "$port" CONFIG SET requirepass 's3cret!x'
	nsd_to want --db file part1.jsonl
	nsd_to got --db "redis://:s3cret!x@127.0.0.1:$port/a" part1.jsonl
	ran_clean
	same_file got want
	REDISCLI_AUTH='s3cret!x' nsd_to got --db "redis://127.0.0.1:$port/b" \
	    part1.jsonl
	ran_clean
	same_file got want
	# A user and a password (Redis 6 ACL: the default user).
	nsd_to got --db "redis://default:s3cret!x@127.0.0.1:$port/c" \
	    part1.jsonl
	ran_clean
	# --db-info and --db-verify name the namespace without it, even in
	# its problems.
	redis_cli "$port" -a 's3cret!x' --no-auth-warning SET c:stray x \
	    > /dev/null
	nsd_to got --db "redis://default:s3cret!x@127.0.0.1:$port/c" \
	    --db-verify
	expect_eq "$status" 7
	expect_eq "$(sed -n 's/^index: *//p' got)" \
	    "redis://***@127.0.0.1:$port/c"
	expect_eq "$stderr" "nsdedup: redis://***@127.0.0.1:$port/c: c:stray is no key that nsdedup makes
nsdedup: redis://***@127.0.0.1:$port/c: damaged: 1 problem found"
	for url in "redis://:wrong@127.0.0.1:$port/d" \
	    "redis://127.0.0.1:$port/d"; do
		nsd_to got --db "$url" part1.jsonl
		expect_eq "$status" 7
		[ ! -s got ]
		[[ $stderr == "nsdedup: redis://"*"127.0.0.1:$port/d: cannot use the index: "* ]]
		[[ $stderr != *wrong* ]]
	done
	[[ $stderr == *NOAUTH* ]]
}

@test "the URL's password is out of /proc/PID/cmdline while the run goes on" {
	[ -d /proc/self/fd ] || skip "no /proc/PID/fd to follow the run"
	redis_single_start "$BATS_TEST_TMPDIR/auth"
	port=$redis_port
	redis_cli "$port" CONFIG SET requirepass 'hunter2-s3cret'
	nsd_to want --db file part1.jsonl
	n=0
	for form in "--db redis://default:" "--db=redis://:"; do
		n=$((n + 1))
		rm -f feed
		mkfifo feed
		# The URL as given, and as argv is to show it.
		url="${form#--db?}hunter2-s3cret@127.0.0.1:$port/argv-$n"
		shown="${form#--db?}*@127.0.0.1:$port/argv-$n"
		if [ "${form:4:1}" = = ]; then
			args=("--db=$url") shown="--db=$shown"
		else
			args=(--db "$url")
		fi
		"$NSDEDUP" "${args[@]}" feed > got 2> got.err 3>&- &
		pid=$!
		# Once it reads its input, it has connected and is alive.
		feed_open "$pid"
		tr '\0' '\n' < "/proc/$pid/cmdline" > cmdline
		cat part1.jsonl >&8
		exec 8>&-
		status=0
		wait "$pid" || status=$?
		echo "$form: $(tr '\n' ' ' < cmdline)"
		if grep -q hunter2 cmdline; then
			echo "the password is still in argv"
			false
		fi
		grep -qxF -- "$shown" cmdline
		grep -qxF feed cmdline
		stderr=$(cat got.err)
		ran_clean
		same_file got want
	done
}

@test "a URL that cannot be one is a usage error" {
	for url in "redis://127.0.0.1:$SINGLE_PORT/a/b" \
	    "redis://127.0.0.1:$SINGLE_PORT/a{b}" "redis:///ns" \
	    "redis://127.0.0.1:0/ns" "redis://127.0.0.1/ns" \
	    "redis://127.0.0.1:99999"; do
		nsd_to got --db "$url" part1.jsonl
		echo "$url: $stderr"
		expect_eq "$status" 2
		[ ! -s got ]
		[[ $stderr == "nsdedup: "* ]]
	done
	# --db-info and --db-verify take the URL as a run does.
	for action in --db-info --db-verify; do
		run_nsd "$action" --db "redis://127.0.0.1:$SINGLE_PORT/a/b"
		expect_eq "$status" 2
		[[ $stderr == "nsdedup: --db redis://127.0.0.1:$SINGLE_PORT/a/b: "* ]]
	done
	# A password in the URL is never repeated in a message.
	for url in "redis://u:s3cret@127.0.0.1:$SINGLE_PORT/a{b}" \
	    "redis://s3cret@127.0.0.1:$SINGLE_PORT/$(printf 'n%.0s' $(seq 200))" \
	    "redis://u:s3cret@/ns"; do
		nsd_to got --db "$url" part1.jsonl
		expect_eq "$status" 2
		[[ $stderr == "nsdedup: --db redis://***@"* ]]
		[[ $stderr != *s3cret* ]]
	done
	run_nsd --db-info --db "redis://u:s3cret@127.0.0.1:$SINGLE_PORT/a"
	expect_eq "$status" 7
	[[ $stderr == "nsdedup: redis://***@127.0.0.1:$SINGLE_PORT/a: "* ]]
	[[ $stderr != *s3cret* ]]
}

@test "--ttl: once the keys expired, the records are new again" {
	nsd_to first --ttl 1 --db "$(single_url expire)" part1.jsonl
	ran_clean
	# Wait (60 s at most) for the server to expire every key, the
	# parameters, the group counter and the run's among them.
	for i in $(seq 600); do
		[ -n "$(redis_keys "$SINGLE_PORT" expire)" ] || break
		sleep 0.1
	done
	expect_eq "$(redis_keys "$SINGLE_PORT" expire)" ""
	nsd_to again --ttl 1 --db "$(single_url expire)" part1.jsonl
	ran_clean
	# The same decisions, in a namespace made again.
	expect_eq "$(grep -c '"is_dup":true}$' again)" \
	    "$(grep -c '"is_dup":true}$' first)"
	[ "$(grep -c '"is_dup":true}$' first)" -gt 100 ]
}

@test "a run that fails part way, run again, writes what it would have written" {
	for m in nshash simhash minhash; do
		url=$(single_url "again-$m")
		nsd_to want -m "$m" --db "$(single_url "fresh-$m")" part1.jsonl
		ran_clean
		# The first batch is decided and written to the index, then
		# its output fails: exit status 4.
		run_nsd -m "$m" --db "$url" -o /dev/full part1.jsonl
		expect_eq "$status" 4
		[ "$(redis_keys "$SINGLE_PORT" "again-$m" | wc -l)" -gt 100 ]
		# The failed run said so: no key of its own is left.
		expect_eq "$(redis_keys "$SINGLE_PORT" "again-$m" |
		    grep -c ':run:')" 0
		nsd_to got -m "$m" --db "$url" part1.jsonl
		ran_clean
		# The same, but for the records without an id, which cannot
		# be known again: duplicates of themselves (of their group
		# number), where the first batch opened their groups.
		grep '^{"id":' got > got-ids
		grep '^{"id":' want > want-ids
		[ "$(wc -l < want-ids)" -gt 1500 ]
		same_file got-ids want-ids
		grep -v '^{"id":' got | grep -c '"is_dup":true}$' > dups
		[ "$(cat dups)" -gt 0 ]
		# Not its records' own duplicates, now that it is done.
		nsd_to got2 -m "$m" --db "$url" part1.jsonl
		ran_clean
		expect_eq "$(grep -c '"is_dup":false' got2)" 0
	done
}
