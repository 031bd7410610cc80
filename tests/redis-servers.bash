# redis-servers.bash: Redis servers and clusters for tests/redis.bats,
# started by the tests themselves on loopback ports and always stopped.
#
# A server runs in the foreground of a background job (--daemonize no),
# with nothing saved (--save '', --appendonly no) and its log, pid and
# cluster configuration in a directory of its own under the test's (or
# the file's) scratch directory. Its port is picked free: a base derived
# from the shell's pid, then the next port that neither a listening
# socket nor (for a cluster node) its bus port, ten thousand above, is
# using; a server that still cannot bind it (someone else took the port
# meanwhile) is started again on another.
#
# Every process started here, and every one a test hands to redis_track
# (a run of nsdedup in the background, a feeder, redis-cli --cluster
# reshard), is listed in redis.pids in BATS_TEST_TMPDIR (in a test) or in
# BATS_FILE_TMPDIR (in setup_file); redis_stop_all kills those of a list,
# and waits until they are gone. Every wait is bounded, and a wait that
# runs out fails with a message saying what never happened.
#
# Needs REDIS_SERVER and REDIS_CLI (from make check; a test without them
# skips through need redis-server in setup).

# How long a server may take to answer its first PING, and a cluster to
# agree on its slots after it is made, resharded or has failed over.
REDIS_PING_WAIT=10
REDIS_CLUSTER_WAIT=60

# The next port to try, and how many times a server that finds its port
# taken is started again on another before the test fails.
redis_next_port=$((20000 + ($$ % 3000) * 10))
REDIS_PORT_TRIES=50

# The list of processes the current scope (a test, or the file) started.
redis_pid_list() {
	printf '%s/redis.pids' "${BATS_TEST_TMPDIR:-$BATS_FILE_TMPDIR}"
}

# Kill process $1 at the end of the current test (or, from setup_file, of
# the file), unless it is gone by then.
redis_track() {
	printf '%s\n' "$1" >> "$(redis_pid_list)"
}

# Whether process $1 is running: it exists and is not a zombie.
redis_alive() {
	local state

	[ -r "/proc/$1/stat" ] || return 1
	state=$(sed 's/^.*) \(.\).*/\1/' "/proc/$1/stat" 2> /dev/null) ||
	    return 1
	[ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# Wait up to $1 tenths of a second until none of the processes $2... runs;
# fails if one still does.
redis_wait_gone() {
	local tenths=$1 p left

	shift
	for _ in $(seq "$tenths"); do
		left=
		for p in "$@"; do
			if redis_alive "$p"; then
				left=1
				break
			fi
		done
		[ -n "$left" ] || return 0
		sleep 0.1
	done
	return 1
}

# Process $1 and every process under it, children after their parents.
redis_tree() {
	local pid=$1 child

	echo "$pid"
	for child in $(ps -o pid= --ppid "$pid" 2> /dev/null); do
		redis_tree "$child"
	done
}

# Kill every process of list $1 (a file of pids, one a line) and every
# process under one of them (a redis-server's fork, a feeder's sleep):
# SIGTERM, then SIGKILL for what is left after 5 seconds; fails, naming
# them, if any is still there 5 seconds later. The list is then emptied.
redis_stop_all() {
	local list=$1 p pids=() left=()

	[ -s "$list" ] || return 0
	while read -r p; do
		[ -n "$p" ] || continue
		redis_alive "$p" || continue
		# shellcheck disable=SC2207  # pids, one a line
		pids+=($(redis_tree "$p"))
	done < "$list"
	: > "$list"
	[ "${#pids[@]}" -gt 0 ] || return 0
	kill -TERM "${pids[@]}" 2> /dev/null || true
	if ! redis_wait_gone 50 "${pids[@]}"; then
		kill -KILL "${pids[@]}" 2> /dev/null || true
		if ! redis_wait_gone 50 "${pids[@]}"; then
			for p in "${pids[@]}"; do
				redis_alive "$p" && left+=("$p")
			done
			echo "redis_stop_all: processes ${left[*]} would not die"
			return 1
		fi
	fi
}

# redis-cli to the server on loopback port $1, at most 10 seconds a call.
redis_cli() {
	local port=$1

	shift
	timeout 10 "$REDIS_CLI" -h 127.0.0.1 -p "$port" "$@"
}

# Whether loopback TCP port $1 has a listening socket (IPv4 or IPv6).
redis_port_used() {
	local hex

	hex=$(printf ':%04X ' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2> /dev/null |
	    awk -v p="$hex" '$4 == "0A" && index($2 " ", p) { f = 1 }
		END { exit !f }'
}

# The next port from redis_next_port on that is free, and its bus port
# (ten thousand above) too; in $redis_port.
redis_pick_port() {
	local tries=0

	while :; do
		if [ "$redis_next_port" -gt 55000 ]; then
			redis_next_port=20000
		fi
		redis_port=$redis_next_port
		redis_next_port=$((redis_next_port + 1))
		if ! redis_port_used "$redis_port" &&
		    ! redis_port_used $((redis_port + 10000)); then
			return 0
		fi
		tries=$((tries + 1))
		if [ "$tries" -ge 1000 ]; then
			echo "redis_pick_port: no free port from 20000 to 55000"
			return 1
		fi
	done
}

# Start a redis-server with its files in the new directory $1, on a free
# loopback port, with the server options $2...; wait until it answers.
# Sets redis_port; the server's pid is in $1/pid, its port in $1/port and
# its log in $1/log.
redis_start() {
	local dir=$1 try pid rc

	shift
	mkdir -p "$dir"
	# The server resolves its log's path in its --dir.
	dir=$(cd "$dir" && pwd) || return 1
	for try in $(seq "$REDIS_PORT_TRIES"); do
		redis_pick_port || return 1
		: > "$dir/log"
		# fd 3 is bats's: a server holding it would keep bats waiting.
		"$REDIS_SERVER" --port "$redis_port" --bind 127.0.0.1 \
		    --save '' --appendonly no --daemonize no \
		    --dir "$dir" --logfile "$dir/log" "$@" \
		    < /dev/null > /dev/null 2>&1 3>&- &
		pid=$!
		redis_track "$pid"
		rc=0
		redis_wait_ping "$pid" "$redis_port" || rc=$?
		if [ "$rc" -eq 0 ]; then
			printf '%s\n' "$pid" > "$dir/pid"
			printf '%s\n' "$redis_port" > "$dir/port"
			return 0
		fi
		if [ "$rc" -eq 2 ]; then
			echo "redis-server on port $redis_port did not answer" \
			    "within $REDIS_PING_WAIT seconds; its log:"
			tail -n 20 "$dir/log"
			return 1
		fi
		if ! grep -q 'Address already in use' "$dir/log"; then
			echo "redis-server $* on port $redis_port exited;" \
			    "its log:"
			tail -n 20 "$dir/log"
			return 1
		fi
		# Someone else took the port: try the next one.
	done
	echo "redis_start: no port would do after $try tries"
	return 1
}

# Wait until the server of pid $1 answers PING on port $2, as that process
# (not another server on the same port): 0; 1 at once if it exits, 2 if it
# does not answer within REDIS_PING_WAIT seconds.
redis_wait_ping() {
	local pid=$1 port=$2 end

	end=$((SECONDS + REDIS_PING_WAIT))
	while [ "$SECONDS" -lt "$end" ]; do
		redis_alive "$pid" || return 1
		if [ "$(redis_cli "$port" PING 2> /dev/null)" = PONG ] &&
		    redis_cli "$port" INFO server 2> /dev/null |
		    grep -q "^process_id:$pid"$'\r'; then
			return 0
		fi
		sleep 0.1
	done
	return 2
}

# Start a single server (no cluster) in directory $1; sets redis_port.
redis_single_start() {
	redis_start "$1"
}

# Make a cluster in directory $1 of $2 masters, each with $3 replicas,
# whose nodes time out after $4 milliseconds (default 2000): start the
# nodes (in $1/node-N, N from 1, which $1/node-PORT links to), join them
# with redis-cli --cluster create, and wait until every node agrees and
# every replica is in sync. The nodes' ports are in $1/ports, one a line,
# in the order they were started (redis-cli decides which are masters).
# A replica may take over at once, whatever its replication offset
# (--cluster-replica-validity-factor 0), and syncs without a delay.
redis_cluster_start() {
	local dir=$1 masters=$2 replicas=$3 timeout_ms=${4:-2000}
	local n i addrs=() out

	n=$((masters * (1 + replicas)))
	mkdir -p "$dir"
	: > "$dir/ports"
	for i in $(seq "$n"); do
		redis_start "$dir/node-$i" --cluster-enabled yes \
		    --cluster-config-file nodes.conf \
		    --cluster-node-timeout "$timeout_ms" \
		    --cluster-replica-validity-factor 0 \
		    --repl-diskless-sync yes --repl-diskless-sync-delay 0 ||
		    return 1
		ln -s "node-$i" "$dir/node-$redis_port"
		printf '%s\n' "$redis_port" >> "$dir/ports"
		addrs+=("127.0.0.1:$redis_port")
	done
	if ! out=$(timeout "$REDIS_CLUSTER_WAIT" "$REDIS_CLI" --cluster create \
	    "${addrs[@]}" --cluster-replicas "$replicas" --cluster-yes \
	    < /dev/null 2>&1); then
		echo "redis-cli --cluster create failed:"
		printf '%s\n' "$out" | tail -n 20
		for i in $(seq "$n"); do
			echo "node-$i knows:"
			redis_cli "$(cat "$dir/node-$i/port")" CLUSTER NODES \
			    2>&1 | cut -c1-120
			echo "node-$i log:"
			tail -n 8 "$dir/node-$i/log"
		done
		return 1
	fi
	redis_cluster_wait "$dir"
}

# The ports of cluster $1's nodes that are running.
redis_cluster_live() {
	local port

	while read -r port; do
		redis_alive "$(cat "$1/node-$port/pid")" && echo "$port"
	done < "$1/ports"
}

# What node $1 knows of the cluster, one node a line, sorted, the same on
# every node that agrees: id, role, failed or not, master, slots (and
# slots being migrated or imported, which only their two nodes list).
redis_cluster_view() {
	redis_cli "$1" CLUSTER NODES 2> /dev/null | tr -d '\r' | awk '
		NF >= 8 {
			role = $3 ~ /master/ ? "master" : "replica"
			fail = $3 ~ /(^|,)fail(,|$)/ ? "fail" : "up"
			line = $1 " " role " " fail " " $4
			for (i = 9; i <= NF; i++)
				line = line " " $i
			print line
		}' | sort
}

# Whether cluster $1 is settled: every running node says cluster_state:ok,
# knows every node and all 16384 slots, and sees the cluster as the others
# do; every running replica's link to its master is up.
redis_cluster_settled() {
	local dir=$1 port first='' view n

	n=$(wc -l < "$dir/ports")
	for port in $(redis_cluster_live "$dir"); do
		redis_cli "$port" CLUSTER INFO 2> /dev/null | tr -d '\r' |
		    awk -v n="$n" -F: '
			$1 == "cluster_state" && $2 == "ok" { ok++ }
			$1 == "cluster_slots_assigned" && $2 == 16384 { ok++ }
			$1 == "cluster_known_nodes" && $2 == n { ok++ }
			END { exit ok != 3 }' || return 1
		view=$(redis_cluster_view "$port")
		[ -n "$view" ] || return 1
		if [ -z "$first" ]; then
			first=$view
		elif [ "$view" != "$first" ]; then
			return 1
		fi
		if redis_cli "$port" INFO replication 2> /dev/null |
		    grep -q '^role:slave'; then
			redis_cli "$port" INFO replication 2> /dev/null |
			    grep -q '^master_link_status:up' || return 1
		fi
	done
	[ -n "$first" ]
}

# Wait until cluster $1 is settled ($2 seconds at most, by default
# REDIS_CLUSTER_WAIT); fails with what each node says when it is not.
redis_cluster_wait() {
	local dir=$1 limit=${2:-$REDIS_CLUSTER_WAIT} port end

	end=$((SECONDS + limit))
	while [ "$SECONDS" -lt "$end" ]; do
		redis_cluster_settled "$dir" && return 0
		sleep 0.1
	done
	echo "the cluster in $dir did not settle within $limit seconds:"
	for port in $(redis_cluster_live "$dir"); do
		echo "node $port:"
		redis_cli "$port" CLUSTER INFO 2> /dev/null | tr -d '\r' |
		    grep -e '^cluster_state' -e '^cluster_known_nodes' \
		    -e '^cluster_slots_assigned'
		redis_cli "$port" CLUSTER NODES 2> /dev/null | tr -d '\r' |
		    cut -d ' ' -f 2,3,9-
	done
	return 1
}

# The ports of cluster $1's running masters, as a running node sees them,
# in order.
redis_cluster_masters() {
	local port

	port=$(redis_cluster_live "$1" | head -n 1)
	redis_cli "$port" CLUSTER NODES | tr -d '\r' |
	    awk '$3 ~ /master/ && $3 !~ /fail/ {
		sub(/^[^:]*:/, "", $2); sub(/@.*/, "", $2); print $2 }' |
	    sort -n
}

# The ports of cluster $1's running replicas, as a running node sees them.
redis_cluster_replicas() {
	local port

	port=$(redis_cluster_live "$1" | head -n 1)
	redis_cli "$port" CLUSTER NODES | tr -d '\r' |
	    awk '$3 ~ /slave/ && $3 !~ /fail/ {
		sub(/^[^:]*:/, "", $2); sub(/@.*/, "", $2); print $2 }' |
	    sort -n
}

# How many times the server on port $1 ran command $2 (lower case).
redis_calls() {
	redis_cli "$1" INFO commandstats | tr -d '\r' |
	    sed -n "s/^cmdstat_$2:calls=\([0-9]*\),.*/\1/p" | grep . ||
	    echo 0
}

# The port of the master of cluster $1 that serves key $2.
redis_cluster_master_of() {
	local port slot

	port=$(redis_cluster_live "$1" | head -n 1)
	slot=$(redis_cli "$port" CLUSTER KEYSLOT "$2" | tr -d '\r')
	redis_cli "$port" CLUSTER NODES | tr -d '\r' | awk -v s="$slot" '
		$3 ~ /master/ && $3 !~ /fail/ {
			for (i = 9; i <= NF; i++) {
				n = split($i, r, "-")
				if (r[1] ~ /^\[/)
					continue
				if (n == 1)
					r[2] = r[1]
				if (s + 0 >= r[1] + 0 && s + 0 <= r[2] + 0) {
					sub(/^[^:]*:/, "", $2)
					sub(/@.*/, "", $2)
					print $2
				}
			}
		}'
}

# The node id of the server on port $1.
redis_node_id() {
	redis_cli "$1" CLUSTER MYID | tr -d '\r'
}

# The pid of the server of cluster $1 on port $2.
redis_cluster_pid() {
	cat "$1/node-$2/pid"
}

# The URL of namespace $2 on cluster $1, every node a seed.
redis_cluster_url() {
	local seeds

	seeds=$(sed 's/^/127.0.0.1:/' "$1/ports" | paste -s -d ,)
	printf 'redis://%s/%s' "$seeds" "$2"
}

# The keys of namespace $2 on the server on port $1 (on a cluster node,
# only the keys that node holds), sorted. KEYS, in one round trip: the
# servers are the tests' own, and small.
redis_keys() {
	redis_cli "$1" KEYS "$2:*" | sort
}
