#!/usr/bin/env bash
#
# bench/redis.sh: the index shared through Redis, against the index file.
# Starts a single Redis server and a Redis Cluster of three masters on
# loopback ports of this machine (client and servers share its cores),
# generates a corpus with bench/nsd-gencorpus, and times nsdedup over it
# with each method and each index: an index file, the single server, the
# cluster, each run on an empty index (the file removed, the servers
# flushed); cat and jq -c . over the same corpus in the same rounds, since
# absolute times drift on a shared machine. Each round runs every command
# once, in turn; the report gives the medians. Per run it also takes the
# client's CPU time (GNU time) and the servers' (INFO cpu), and after the
# last run of each Redis index, the keys and the memory the servers use
# for them (used_memory against the flushed servers'), per key and per
# record. Then what the shapes of command an index could use cost the
# single server per key (GET, SET NX GET, MGET, HSET of many fields, a
# script that claims many fields), sent by redis-cli --pipe.
#
# The results replace the "Shared index on Redis" section of the report
# (appended when it has none); bench/run.sh keeps the section when it
# rewrites the report. make bench runs it after bench/run.sh; make
# bench-redis runs it alone, with BENCH_REDIS_FLAGS. Run it from the top of
# the build tree:
#
#     bench/redis.sh [--records N] [--runs N] [--seed N] [--out FILE]
#
# Environment:
#     NSDEDUP       the program under test (default ./src/nsdedup)
#     GENCORPUS     the corpus generator (default ./bench/nsd-gencorpus)
#     REDIS_SERVER  redis-server (default: from PATH)
#     REDIS_CLI     redis-cli (default: beside REDIS_SERVER, or from PATH)
#     GNU_TIME      GNU time (default /usr/bin/time)
#     TMPDIR        where the corpus, the index file and the servers' files
#                   go (default /tmp)
#
# Exits 0 when every command ran (whether or not the target was met), 1
# when one failed or a server would not start, 2 on a usage error.

# The report's Markdown puts commands in backquotes inside single quotes.
# shellcheck disable=SC2016

set -euo pipefail

prog=bench/redis.sh
records=100000
runs=5
seed=1
out=bench/RESULTS.md
target_rps=100000
begin_mark='<!-- redis: begin -->'
end_mark='<!-- redis: end -->'

usage() {
	cat <<EOF
usage: $prog [--records N] [--runs N] [--seed N] [--out FILE]

  --records N   records in the corpus (default 100000)
  --runs N      rounds; the report gives the medians (default 5)
  --seed N      the corpus generator's seed (default 1)
  --out FILE    the report whose "Shared index on Redis" section is
                replaced (default bench/RESULTS.md)
EOF
}

# shellcheck source=bench/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

while [ $# -gt 0 ]; do
	case $1 in
	--records|--runs|--seed|--out)
		[ $# -ge 2 ] || usage_error "option '$1' needs a value"
		opt=$1 val=$2
		shift 2 ;;
	--records=*|--runs=*|--seed=*|--out=*)
		opt=${1%%=*} val=${1#*=}
		shift ;;
	-h|--help)
		usage; exit 0 ;;
	*)
		usage_error "unknown option '$1'" ;;
	esac
	case $opt in
	--records) records=$val ;;
	--runs) runs=$val ;;
	--seed) seed=$val ;;
	--out) out=$val ;;
	esac
done
[[ $records =~ ^[1-9][0-9]*$ ]] || usage_error "invalid --records '$records'"
[[ $runs =~ ^[1-9][0-9]*$ ]] || usage_error "invalid --runs '$runs'"
[[ $seed =~ ^[0-9]+$ ]] || usage_error "invalid --seed '$seed'"
[ -n "$out" ] || usage_error "empty --out"

NSDEDUP=${NSDEDUP:-./src/nsdedup}
GENCORPUS=${GENCORPUS:-./bench/nsd-gencorpus}
GNU_TIME=${GNU_TIME:-/usr/bin/time}
REDIS_SERVER=${REDIS_SERVER:-$(command -v redis-server || true)}
[ -n "$REDIS_SERVER" ] ||
	die "redis-server not found (Debian package redis-server)"
REDIS_CLI=${REDIS_CLI:-$(dirname "$REDIS_SERVER")/redis-cli}
[ -x "$REDIS_CLI" ] || REDIS_CLI=$(command -v redis-cli || true)
for p in "$NSDEDUP" "$GENCORPUS" "$GNU_TIME" "$REDIS_SERVER" "$REDIS_CLI"; do
	[ -x "$p" ] ||
		die "$p: not an executable (see the environment in $prog)"
done
command -v jq >/dev/null 2>&1 || die "jq: not found"
# Built without hiredis, a redis:// index is a usage error (2); with it, an
# unreachable one is exit status 7.
status=0
"$NSDEDUP" -q --db redis://127.0.0.1:1 /dev/null >/dev/null 2>&1 || status=$?
[ "$status" != 2 ] ||
	die "$NSDEDUP has no redis:// index (configure found no hiredis)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nsd-bench-redis.XXXXXX")
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
freeze_programs "$tmp" NSDEDUP GENCORPUS

# A free loopback port from $1 up.
free_port() {
	local p=$1
	while "$REDIS_CLI" -p "$p" ping >/dev/null 2>&1 ||
	    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do
		p=$((p + 1))
	done
	echo "$p"
}

# Start a server on port $1 with the options after it; wait until it
# answers (10 s at most).
start_server() {
	local port=$1 i
	shift
	mkdir -p "$tmp/$port"
	(cd "$tmp/$port" && exec "$REDIS_SERVER" --port "$port" \
	    --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
	    --logfile "$tmp/$port/log" "$@") &
	pids+=($!)
	for i in $(seq 100); do
		"$REDIS_CLI" -p "$port" ping >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	die "redis-server on port $port did not start: $(tail -3 "$tmp/$port/log")"
}

single=$(free_port 7380)
start_server "$single"
masters=()
p=$((single + 1))
for i in 1 2 3; do
	p=$(free_port "$p")
	start_server "$p" --cluster-enabled yes --cluster-config-file nodes.conf
	masters+=("$p")
	p=$((p + 1))
done
"$REDIS_CLI" --cluster create "${masters[@]/#/127.0.0.1:}" \
    --cluster-replicas 0 --cluster-yes >"$tmp/create.log" 2>&1 ||
	die "redis-cli --cluster create failed: $(tail -3 "$tmp/create.log")"
for i in $(seq 300); do
	ok=0
	for m in "${masters[@]}"; do
		"$REDIS_CLI" -p "$m" cluster info 2>/dev/null |
		    grep -q '^cluster_state:ok' && ok=$((ok + 1))
	done
	[ "$ok" -lt 3 ] || break
	[ "$i" -lt 300 ] || die "the cluster did not come up within 30 s"
	sleep 0.1
done
note "single server on port $single; cluster on ports ${masters[*]}"

corpus=$tmp/corpus.jsonl
"$GENCORPUS" --seed "$seed" --records "$records" >"$corpus"
bytes=$(stat -c %s "$corpus")
note "corpus: $records records, $((bytes >> 20)) MiB"

# The ports of an index: the single server's, or the masters'.
ports_of() {
	case $1 in
	single) echo "$single" ;;
	cluster) echo "${masters[*]}" ;;
	esac
}

url_of() {
	case $1 in
	file) echo "$tmp/index.nsd" ;;
	single) echo "redis://127.0.0.1:$single/bench" ;;
	cluster) echo "redis://127.0.0.1:${masters[0]},127.0.0.1:${masters[1]}/bench" ;;
	esac
}

# Sum of a numeric INFO field (or of the user and system CPU) over ports.
info_sum() {
	local field=$1 p
	shift
	for p in "$@"; do
		"$REDIS_CLI" -p "$p" info all | tr -d '\r'
	done | awk -F: -v f="$field" '
	    f == "cpu" && ($1 == "used_cpu_user" || $1 == "used_cpu_sys") {
		s += $2 }
	    $1 == f { s += $2 }
	    END { printf "%.6f\n", s }'
}

keys_sum() {
	local p n=0
	for p in "$@"; do
		n=$((n + $("$REDIS_CLI" -p "$p" dbsize)))
	done
	echo "$n"
}

# Empty an index: remove the file, or flush the servers.
empty_index() {
	local p
	case $1 in
	file) rm -f "$tmp/index.nsd" "$tmp"/index.nsd.* ;;
	*)
		for p in $(ports_of "$1"); do
			"$REDIS_CLI" -p "$p" flushall >/dev/null
		done ;;
	esac
}

methods=(nshash simhash minhash)
indexes=(file single cluster)
declare -A wall user server keys mem base cmds trips
# One run of nsdedup -m $1 on index $2, recorded under "$1 $2".
run_nsdedup() {
	local m=$1 ix=$2 t0 t1 s0=0 s1=0 cpu
	# shellcheck disable=SC2046
	empty_index "$ix"
	if [ "$ix" != file ]; then
		# shellcheck disable=SC2046
		base[$m $ix]=$(info_sum used_memory $(ports_of "$ix"))
		# shellcheck disable=SC2046
		s0=$(info_sum cpu $(ports_of "$ix"))
	fi
	t0=$(date +%s.%N)
	"$GNU_TIME" -f '%U %S' -o "$tmp/time" "$NSDEDUP" -q --stats -m "$m" \
	    --db "$(url_of "$ix")" "$corpus" >/dev/null 2>"$tmp/stats" ||
		die "nsdedup -m $m --db $(url_of "$ix") failed"
	t1=$(date +%s.%N)
	cpu=$(awk '{ print $1 + $2 }' "$tmp/time")
	wall[$m $ix]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') "
	user[$m $ix]+="$cpu "
	if [ "$ix" != file ]; then
		# shellcheck disable=SC2046
		s1=$(info_sum cpu $(ports_of "$ix"))
		server[$m $ix]+="$(awk -v a="$s0" -v b="$s1" \
		    'BEGIN { print b - a }') "
		# shellcheck disable=SC2046
		keys[$m $ix]=$(keys_sum $(ports_of "$ix"))
		# shellcheck disable=SC2046
		mem[$m $ix]=$(info_sum used_memory $(ports_of "$ix"))
		# --stats: "redis N masters, C commands in T round trips; ..."
		cmds[$m $ix]=$(sed -n 's/.* \([0-9]*\) commands in.*/\1/p' \
		    "$tmp/stats")
		trips[$m $ix]=$(sed -n 's/.* \([0-9]*\) round trips.*/\1/p' \
		    "$tmp/stats")
		[ -n "${cmds[$m $ix]}" ] ||
			die "no command count in nsdedup --stats"
	fi
}

time_cmd() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}

cat_s=() jq_s=()
for r in $(seq "$runs"); do
	note "round $r of $runs"
	cat_s+=("$(time_cmd cat "$corpus")")
	jq_s+=("$(time_cmd jq -c . "$corpus")")
	for m in "${methods[@]}"; do
		for ix in "${indexes[@]}"; do
			run_nsdedup "$m" "$ix"
		done
	done
done

med() {
	# shellcheck disable=SC2048,SC2086
	printf '%s\n' $* | median
}

# What the shapes of command an index could use cost the single server,
# per key: as many keys as the nshash runs stored, each shape's commands
# sent by redis-cli --pipe, the server's CPU time taken around them.
cost_keys=${keys[nshash single]}
awk -v n="$cost_keys" -v seed="$seed" 'BEGIN { srand(seed)
    for (i = 0; i < n; i++)
	printf "%08x%08x\n", int(rand() * 4294967296),
	    int(rand() * 4294967296) }' >"$tmp/keys"
# The lines of words on standard input as Redis commands (RESP).
resp() {
	awk '{ printf "*%d\r\n", NF
	    for (i = 1; i <= NF; i++) printf "$%d\r\n%s\r\n", length($i), $i }'
}
# The keys 40 at a time, those of a group sharing a hash tag (their first
# two hex digits), each group as one line: TAG KEY...
by_tag() {
	sort "$tmp/keys" | awk '{ t = substr($1, 1, 2)
	    if (t != tag || n == 40) { if (n) print line; line = t; n = 0 }
	    tag = t; line = line " " $1; n++ } END { if (n) print line }'
}
# Put if absent, for every field of one hash, answering the holders.
claim_script='local old = redis.call("HMGET", KEYS[1], unpack(ARGV, 2))
local new = {}
for i = 2, #ARGV do
	if not old[i - 1] then
		new[#new + 1] = ARGV[i]; new[#new + 1] = ARGV[1]
	end
end
if #new > 0 then redis.call("HSET", KEYS[1], unpack(new)) end
return old'
claim_sha=$("$REDIS_CLI" -p "$single" script load "$claim_script")
declare -A cost
# Run the commands of file $2 as shape $1 (after a flush, unless $3 is
# keep), and record the server's CPU time per key.
cost_of() {
	local s0 s1
	[ "${3:-}" = keep ] || "$REDIS_CLI" -p "$single" flushall >/dev/null
	s0=$(info_sum cpu "$single")
	"$REDIS_CLI" -p "$single" --pipe <"$2" >"$tmp/pipe.log" 2>&1 ||
		die "redis-cli --pipe ($1) failed: $(tail -2 "$tmp/pipe.log")"
	s1=$(info_sum cpu "$single")
	cost[$1]=$(awk -v a="$s0" -v b="$s1" -v n="$cost_keys" \
	    'BEGIN { printf "%.2f", (b - a) / n * 1e6 }')
}
awk '{ print "GET bench:f:" $1 }' "$tmp/keys" | resp >"$tmp/get"
awk '{ print "SET bench:f:" $1 " 12345 NX GET" }' "$tmp/keys" |
    resp >"$tmp/claim"
by_tag | awk '{ printf "MGET"
    for (i = 2; i <= NF; i++) printf " bench:f:{%s}%s", $1, $i
    print "" }' | resp >"$tmp/mget"
by_tag | awk '{ printf "HSET bench:h:{%s}", $1
    for (i = 2; i <= NF; i++) printf " %s 12345", $i; print "" }' |
    resp >"$tmp/hset"
by_tag | awk -v sha="$claim_sha" '{ printf "EVALSHA %s 1 bench:h:{%s} 12345",
    sha, $1; for (i = 2; i <= NF; i++) printf " %s", $i; print "" }' |
    resp >"$tmp/script"
note "the cost of a command: $cost_keys keys"
cost_of get-absent "$tmp/get"
cost_of claim "$tmp/claim"
cost_of get-held "$tmp/get" keep
cost_of mget "$tmp/mget"
cost_of hset "$tmp/hset"
cost_of script "$tmp/script"
"$REDIS_CLI" -p "$single" flushall >/dev/null

rps() {
	awk -v n="$records" -v s="$1" 'BEGIN { printf "%.0f", n / s }'
}

cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
redis_version=$("$REDIS_SERVER" --version | sed 's/.*v=\([^ ]*\).*/\1/')
cat_med=$(med "${cat_s[@]}")
jq_med=$(med "${jq_s[@]}")
cluster_rps=$(rps "$(med "${wall[nshash cluster]}")")

{
	printf '%s\n' "$begin_mark"
	printf '## Shared index on Redis\n\n'
	printf 'Written by `bench/redis.sh --records %s --runs %s --seed %s`' \
	    "$records" "$runs" "$seed"
	printf ' on %s.\n\n' "$(date -u +%Y-%m-%d)"
	printf -- '- Machine: %s, %s cores online, %s\n' "$cpu_model" \
	    "$(nproc)" "$(uname -srm)"
	printf -- '- Redis %s: one server, and a cluster of three masters' \
	    "$redis_version"
	printf ' without replicas, on loopback ports of the same machine: the'
	printf ' client and the servers share its cores.\n'
	printf -- '- Corpus: `nsd-gencorpus --seed %s --records %s`, %s MiB' \
	    "$seed" "$records" "$((bytes >> 20))"
	printf ' (%s bytes a record).\n' "$((bytes / records))"
	printf -- '- Each command: `nsdedup -q -m METHOD --db INDEX corpus`'
	printf ' on an empty index (file removed, servers flushed), at the'
	printf ' default -j; medians of %s rounds, each round running every' \
	    "$runs"
	printf ' command once in turn.\n'
	printf -- '- Client CPU: user and system time of nsdedup. Server CPU:'
	printf ' used_cpu_user and used_cpu_sys of every server, summed.'
	printf ' Commands and round trips: what `--stats` counted, per'
	printf ' record.'
	printf ' Server memory: used_memory after the last run against the'
	printf ' flushed servers'"'"', per key and per record.\n\n'
	printf '| command | s | records/s | vs cat | vs jq |\n'
	printf '|---|---:|---:|---:|---:|\n'
	printf '| `cat` | %.3f | %s | 1.00 | |\n' "$cat_med" "$(rps "$cat_med")"
	printf '| `jq -c .` | %.3f | %s | | 1.00 |\n' "$jq_med" \
	    "$(rps "$jq_med")"
	printf '\n'
	printf '| method | index | s | records/s | vs file | client CPU s |'
	printf ' server CPU s | commands/record | round trips/1000 records |'
	printf ' keys | server bytes/key | server bytes/record |\n'
	printf '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
	for m in "${methods[@]}"; do
		f=$(med "${wall[$m file]}")
		for ix in "${indexes[@]}"; do
			w=$(med "${wall[$m $ix]}")
			printf '| %s | %s | %.3f | %s | %.2f | %.2f |' "$m" "$ix" \
			    "$w" "$(rps "$w")" \
			    "$(awk -v a="$f" -v b="$w" 'BEGIN { print a / b }')" \
			    "$(med "${user[$m $ix]}")"
			if [ "$ix" = file ]; then
				printf ' | | | | | |\n'
				continue
			fi
			used=$(awk -v a="${mem[$m $ix]}" -v b="${base[$m $ix]}" \
			    'BEGIN { print a - b }')
			printf ' %.2f | %.2f | %.2f | %s | %.0f | %.0f |\n' \
			    "$(med "${server[$m $ix]}")" \
			    "$(awk -v c="${cmds[$m $ix]}" -v n="$records" \
			    'BEGIN { print c / n }')" \
			    "$(awk -v t="${trips[$m $ix]}" -v n="$records" \
			    'BEGIN { print 1000 * t / n }')" "${keys[$m $ix]}" \
			    "$(awk -v u="$used" -v k="${keys[$m $ix]}" \
			    'BEGIN { print k ? u / k : 0 }')" \
			    "$(awk -v u="$used" -v n="$records" \
			    'BEGIN { print u / n }')"
		done
	done
	printf '\n### What a command costs the server\n\n'
	printf 'The single server'"'"'s CPU time per key, for %s keys (as many' \
	    "$cost_keys"
	printf ' as the nshash runs stored), each shape sent by `redis-cli'
	printf ' --pipe`; in groups of up to 40 keys that share a hash tag'
	printf ' where the shape takes several:\n\n'
	printf '| shape | us/key |\n|---|---:|\n'
	printf '| `GET` of a key no one holds (a read today) | %s |\n' \
	    "${cost[get-absent]}"
	printf '| `GET` of a key held | %s |\n' "${cost[get-held]}"
	printf '| `SET key group NX GET` of a new key (a claim today) | %s |\n' \
	    "${cost[claim]}"
	printf '| `MGET` of 40 keys | %s |\n' "${cost[mget]}"
	printf '| `HSET` of 40 new fields of one hash | %s |\n' "${cost[hset]}"
	printf '| a script: `HMGET` then `HSET` of the absent, 40 fields |'
	printf ' %s |\n' "${cost[script]}"
	printf '\n### Target\n\n'
	if [ "$cluster_rps" -ge "$target_rps" ]; then verdict=MET; else
		verdict='NOT MET'; fi
	printf -- '- nshash against the 3-master cluster, at least %s' \
	    "$target_rps"
	printf ' records/s: %s records/s: **%s**\n\n' "$cluster_rps" \
	    "$verdict"
	printf '%s\n' "$end_mark"
} >"$tmp/section"

replace_section "$begin_mark" "$end_mark" "$tmp/section" "$out"
note "wrote $out"
sed -n "/^## Shared index on Redis/,/^$end_mark/p" "$out"
