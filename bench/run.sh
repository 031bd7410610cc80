#!/usr/bin/env bash
#
# bench/run.sh: time nsdedup against cat and jq on a generated news corpus
# (and on the shared evaluation corpora when they are there), in memory and
# with a fresh persistent index (--db), with both fingerprint methods
# (nshash and -m simhash), measure its peak memory at two input sizes, and
# write the results as Markdown.  Then, unless --no-scale, it
# runs bench/index-scale.sh (the index at 10^8 fingerprints: several
# minutes, about 3 GB in $TMPDIR), which adds its own section to the report;
# with --no-scale the report keeps the section it had.  make bench runs this
# script; make bench BENCH_FLAGS=--no-scale leaves the scale part out, and
# make bench-scale runs only that part.
#
# With --baseline PROGRAM or --baseline-rev REV (a git revision, built here
# with the build tree's configure options), the nsdedup commands on the
# generated corpus are also timed with that program, a run of one and a run
# of the other in turn, and the report says whether this nsdedup keeps at
# least 95% of the baseline's throughput: the check that a change which is
# not meant to touch speed (hardening, a refactoring) did not.
#
# Run it from the top of the build tree:
#
#     bench/run.sh [--size 1G] [--runs 5] [--seed 1] [--out bench/RESULTS.md]
#                  [--keep-corpus] [--no-scale]
#                  [--baseline PROGRAM | --baseline-rev REV]
#
# Environment:
#     NSDEDUP          the program under test (default ./src/nsdedup)
#     GENCORPUS        the corpus generator (default ./bench/nsd-gencorpus;
#                      built from bench/gencorpus.c into the temporary
#                      directory when missing)
#     NSD_INDEX_SCALE  the index builder for bench/index-scale.sh (default
#                      ./bench/nsd-index-scale)
#     NSD_SHARED_DATA  folder of *.jsonl.gz corpora (default: shared/data
#                      beside the source tree); skipped when absent
#     TMPDIR           where the corpus and scratch files go (default /tmp);
#                      $TMPDIR/bench/corpus-SEED-SIZE.jsonl is reused when
#                      present (delete it after changing gencorpus.c),
#                      and written there with --keep-corpus
#     NSD_BENCH_NO_HYPERFINE=1, NSD_BENCH_NO_TIME=1
#                      use the fallbacks (a date +%s.%N loop; VmHWM read
#                      from /proc) even when hyperfine or /usr/bin/time exist
#     NSD_BENCH_NO_STRACE=1
#                      leave out the --db run's syscall times even when
#                      strace exists (LeakSanitizer cannot run under it)
#
# Needs bash, jq and GNU coreutils; uses hyperfine and /usr/bin/time when
# installed.  Exits 0 when every command ran (whether or not the targets
# were met), 1 when a command failed, 2 on a usage error.

# The report's Markdown puts commands in backquotes inside single quotes.
# shellcheck disable=SC2016

set -euo pipefail

prog=bench/run.sh
size=1G
runs=5
seed=1
out=bench/RESULTS.md
keep=0
scale=1
baseline=
baseline_rev=
baseline_flag=

usage() {
	cat <<EOF
usage: $prog [--size SIZE] [--runs N] [--seed N] [--out FILE] [--keep-corpus]
                    [--no-scale] [--baseline PROGRAM | --baseline-rev REV]

  --size SIZE     corpus size for nsd-gencorpus, K/M/G suffixes (default 1G)
  --runs N        timed runs per command (default 5)
  --seed N        corpus seed (default 1)
  --out FILE      where to write the Markdown report (default bench/RESULTS.md)
  --keep-corpus   keep the corpus as \$TMPDIR/bench/corpus-SEED-SIZE.jsonl
  --no-scale      leave out bench/index-scale.sh (the index at 10^8
                  fingerprints), keeping the report's section of it
  --baseline PROGRAM
                  also time PROGRAM, an earlier nsdedup, in turn with this
                  one, and check that this one keeps 95% of its throughput
  --baseline-rev REV
                  the same, with the baseline built from git revision REV
                  of the source tree (with this build's configure options)
EOF
}

# shellcheck source=bench/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

while [ $# -gt 0 ]; do
	case $1 in
	--size|--runs|--seed|--out|--baseline|--baseline-rev)
		[ $# -ge 2 ] || usage_error "option '$1' needs a value"
		opt=$1 val=$2
		shift 2 ;;
	--size=*|--runs=*|--seed=*|--out=*|--baseline=*|--baseline-rev=*)
		opt=${1%%=*} val=${1#*=}
		shift ;;
	--keep-corpus)
		keep=1; shift; continue ;;
	--no-scale)
		scale=0; shift; continue ;;
	-h|--help)
		usage; exit 0 ;;
	*)
		usage_error "unknown argument '$1'" ;;
	esac
	case $opt in
	--size) size=$val ;;
	--runs) runs=$val ;;
	--seed) seed=$val ;;
	--out) out=$val ;;
	--baseline) baseline=$val baseline_flag=" --baseline $val" ;;
	--baseline-rev) baseline_rev=$val baseline_flag=" --baseline-rev $val" ;;
	esac
done

[[ $size =~ ^[0-9]+[KMGkmg]?$ ]] || usage_error "invalid --size '$size'"
[[ $runs =~ ^[1-9][0-9]*$ ]] || usage_error "invalid --runs '$runs'"
[[ $seed =~ ^[0-9]+$ ]] || usage_error "invalid --seed '$seed'"
[ -n "$out" ] || usage_error "empty --out"
[ -z "$baseline" ] || [ -z "$baseline_rev" ] ||
	usage_error "--baseline and --baseline-rev exclude each other"

# Bytes in a size with an optional K/M/G suffix (powers of 1024).
to_bytes() {
	local n=${1%[KMGkmg]}
	case $1 in
	*[Kk]) echo $((n << 10)) ;;
	*[Mm]) echo $((n << 20)) ;;
	*[Gg]) echo $((n << 30)) ;;
	*) echo "$n" ;;
	esac
}

size_bytes=$(to_bytes "$size")
[ "$size_bytes" -gt 0 ] || usage_error "invalid --size '$size'"

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src_top=$(dirname "$script_dir")
NSDEDUP=${NSDEDUP:-./src/nsdedup}
GENCORPUS=${GENCORPUS:-./bench/nsd-gencorpus}
NSD_SHARED_DATA=${NSD_SHARED_DATA:-$src_top/../shared/data}
tmproot=${TMPDIR:-/tmp}

command -v jq >/dev/null 2>&1 ||
	die "jq not found: it is the reference the benchmark compares against"
[ -x "$NSDEDUP" ] || die "$NSDEDUP: not an executable (set NSDEDUP)"
"$NSDEDUP" --version >/dev/null 2>&1 || die "$NSDEDUP --version failed"

use_hyperfine=0
if [ -z "${NSD_BENCH_NO_HYPERFINE:-}" ] && command -v hyperfine >/dev/null 2>&1
then
	use_hyperfine=1
fi
use_time=0
if [ -z "${NSD_BENCH_NO_TIME:-}" ] && [ -x /usr/bin/time ]; then
	use_time=1
fi

tmp=$(mktemp -d "$tmproot/nsdedup-bench.XXXXXX")
cleanup() {
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The copy is timed; the results name the program as given.
nsd_shown=$NSDEDUP
freeze_programs "$tmp" NSDEDUP
nsd_version=$("$NSDEDUP" --version 2>&1 | head -n 1)
nsd_sum=$(sha256sum <"$NSDEDUP" | cut -c 1-16)
nsd_mtime=$(date -u -r "$NSDEDUP" '+%Y-%m-%d %H:%M:%S UTC')

# The baseline: the program given, or one built from a git revision of the
# source tree, configured as this build tree was (config.status --config).
baseline_shown=
if [ -n "$baseline_rev" ]; then
	command -v git >/dev/null 2>&1 || die "--baseline-rev needs git"
	# A tree inside another checkout (make distcheck's) is not one.
	git_top=$(git -C "$src_top" rev-parse --show-toplevel 2>/dev/null) ||
		git_top=
	if [ -z "$git_top" ] ||
	    [ "$(cd "$git_top" && pwd -P)" != "$(cd "$src_top" && pwd -P)" ]
	then
		die "--baseline-rev: $src_top is not a git checkout"
	fi
	rev_id=$(git -C "$src_top" rev-parse --verify -q \
	    "$baseline_rev^{commit}") ||
		die "--baseline-rev: '$baseline_rev' is not a revision of $src_top"
	note "building the baseline from $baseline_rev ($rev_id)"
	mkdir "$tmp/baseline"
	git -C "$src_top" archive "$rev_id" | tar -x -C "$tmp/baseline" ||
		die "cannot extract $baseline_rev from $src_top"
	config_args=
	[ ! -x ./config.status ] || config_args=$(./config.status --config)
	(
		cd "$tmp/baseline" &&
		autoreconf -fi &&
		eval "./configure $config_args" &&
		make src/nsdedup
	) >"$tmp/baseline.log" 2>&1 || {
		tail -n 20 "$tmp/baseline.log" >&2
		die "building the baseline from $baseline_rev failed"
	}
	baseline=$tmp/baseline/src/nsdedup
	baseline_shown="built from git revision $baseline_rev ($(git -C \
	    "$src_top" log -1 --format='%h, "%s"' "$rev_id"))"
	baseline_shown="$baseline_shown with configure $config_args"
elif [ -n "$baseline" ]; then
	[ -x "$baseline" ] || die "$baseline: not an executable (--baseline)"
	baseline_shown=$baseline
	freeze_programs "$tmp" baseline
fi
if [ -n "$baseline" ]; then
	"$baseline" --version >/dev/null 2>&1 ||
		die "$baseline --version failed"
	baseline_version=$("$baseline" --version 2>&1 | head -n 1)
	baseline_sum=$(sha256sum <"$baseline" | cut -c 1-16)
fi

# The corpus generator: the one given, or built from source if missing.
if [ ! -x "$GENCORPUS" ]; then
	[ -f "$script_dir/gencorpus.c" ] ||
		die "$GENCORPUS: not found, and no gencorpus.c to build it from"
	note "building $GENCORPUS from $script_dir/gencorpus.c"
	"${CC:-cc}" -O2 -o "$tmp/nsd-gencorpus" "$script_dir/gencorpus.c" ||
		die "could not build the corpus generator"
	GENCORPUS=$tmp/nsd-gencorpus
fi

# Generate (or reuse) a corpus of the given size; prints its path.
corpus() {
	local sz=$1 cache="$tmproot/bench/corpus-$seed-$1.jsonl" path
	if [ -s "$cache" ]; then
		note "reusing $cache"
		echo "$cache"
		return
	fi
	if [ "$keep" = 1 ]; then
		mkdir -p "$tmproot/bench"
		path=$cache
	else
		path=$tmp/corpus-$seed-$sz.jsonl
	fi
	note "generating $sz corpus (seed $seed)"
	"$GENCORPUS" --seed "$seed" --size "$sz" --verbose >"$path.part" \
	    2>"$tmp/gen-$sz.log" || {
		cat "$tmp/gen-$sz.log" >&2
		rm -f "$path.part"
		die "corpus generation failed"
	}
	mv "$path.part" "$path"
	# Else the first fdatasync of a --db run would write the corpus out.
	sync
	echo "$path"
}

# Time a shell command $runs times.  Sets T_MEDIAN (wall seconds), T_USER
# and T_SYS (mean user and system CPU seconds, or "n/a").  The command is
# run once first, untimed, as a check and to warm the page cache; a failure
# there or in a timed run stops the benchmark.  With allow1 set, exit
# status 1 (bad records passed through) is accepted and reported in T_NOTE.
# A prepare command, when given, runs untimed before each run.
time_cmd() {
	local cmd=$1 allow1=${2:-0} prep=${3:-} st=0 i json="$tmp/hf.json"
	T_NOTE=
	note "timing: $cmd"
	[ -z "$prep" ] || sh -c "$prep" || die "command failed: $prep"
	sh -c "$cmd" 2>"$tmp/err" || st=$?
	if [ "$st" -ne 0 ]; then
		if [ "$allow1" = 1 ] && [ "$st" -eq 1 ]; then
			T_NOTE="exit 1: $(tail -n 1 "$tmp/err")"
		else
			tail -n 5 "$tmp/err" >&2
			die "command failed (exit $st): $cmd"
		fi
	fi
	if [ "$use_hyperfine" = 1 ]; then
		local ign=()
		[ -z "$T_NOTE" ] || ign=(--ignore-failure)
		[ -z "$prep" ] || ign+=(--prepare "$prep")
		hyperfine --runs "$runs" --style none "${ign[@]}" \
		    --export-json "$json" -- "$cmd" >"$tmp/hf.log" 2>&1 || {
			cat "$tmp/hf.log" >&2
			die "command failed under hyperfine: $cmd"
		}
		T_MEDIAN=$(jq '.results[0].times[]' "$json" | median)
		T_USER=$(jq '.results[0].user' "$json" |
		    awk '{ printf "%.3f\n", $1 }')
		T_SYS=$(jq '.results[0].system' "$json" |
		    awk '{ printf "%.3f\n", $1 }')
	else
		# Status 1 is accepted in the timed runs if the first run had it.
		local seen1=0
		[ -z "$T_NOTE" ] || seen1=1
		: >"$tmp/times"
		for ((i = 0; i < runs; i++)); do
			time_once "$cmd" "$prep" "$tmp/times" "$seen1"
		done
		T_MEDIAN=$(awk '{ print $1 }' "$tmp/times" | median)
		T_USER=n/a
		T_SYS=n/a
	fi
}

# One timed run of a shell command, after an untimed prepare command when
# given; appends "wall user sys" seconds to file $3 (user and sys "n/a"
# without hyperfine).  Exit status 1 is accepted when allow1 ($4) is set.
time_once() {
	local cmd=$1 prep=$2 to=$3 allow1=${4:-0} json="$tmp/hf1.json" t0 t1
	local st=0
	if [ "$use_hyperfine" = 1 ]; then
		local opts=()
		[ "$allow1" = 0 ] || opts=(--ignore-failure)
		[ -z "$prep" ] || opts+=(--prepare "$prep")
		hyperfine --runs 1 --style none "${opts[@]}" \
		    --export-json "$json" -- "$cmd" >"$tmp/hf.log" 2>&1 || {
			cat "$tmp/hf.log" >&2
			die "command failed under hyperfine: $cmd"
		}
		jq -r '.results[0] | "\(.times[0]) \(.user) \(.system)"' \
		    "$json" >>"$to"
	else
		[ -z "$prep" ] || sh -c "$prep" || die "command failed: $prep"
		t0=$(date +%s.%N)
		sh -c "$cmd" 2>/dev/null || st=$?
		t1=$(date +%s.%N)
		[ "$st" -eq 0 ] || { [ "$allow1" = 1 ] && [ "$st" -eq 1 ]; } ||
			die "command failed (exit $st): $cmd"
		awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a, "n/a n/a" }' \
		    >>"$to"
	fi
}

# Time the same shell command with this nsdedup and with the baseline
# ($NSDEDUP in it replaced by $baseline), $runs runs each.  The runs take
# turns, in the order ABBA ABBA..., so that a machine whose speed drifts
# during the benchmark (shared machines do) slows both alike, and neither
# always runs right after the other has filled the caches.  Each command
# runs once untimed first.  Sets P_MED_A and P_MED_B (median wall seconds)
# and P_USR_A and P_USR_B (median user CPU seconds, or "n/a").
time_pair() {
	local a=$1 prep=${2:-} b c i
	b=${a//"$(q "$NSDEDUP")"/"$(q "$baseline")"}
	note "timing in turn with the baseline: $a"
	for c in "$a" "$b"; do
		[ -z "$prep" ] || sh -c "$prep" || die "command failed: $prep"
		sh -c "$c" 2>"$tmp/err" || {
			tail -n 5 "$tmp/err" >&2
			die "command failed: $c"
		}
	done
	: >"$tmp/pair-a"
	: >"$tmp/pair-b"
	for ((i = 0; i < runs; i++)); do
		if [ $((i % 2)) = 0 ]; then
			time_once "$a" "$prep" "$tmp/pair-a"
			time_once "$b" "$prep" "$tmp/pair-b"
		else
			time_once "$b" "$prep" "$tmp/pair-b"
			time_once "$a" "$prep" "$tmp/pair-a"
		fi
	done
	P_MED_A=$(awk '{ print $1 }' "$tmp/pair-a" | median)
	P_MED_B=$(awk '{ print $1 }' "$tmp/pair-b" | median)
	if [ "$use_hyperfine" = 1 ]; then
		P_USR_A=$(awk '{ print $2 }' "$tmp/pair-a" | median)
		P_USR_B=$(awk '{ print $2 }' "$tmp/pair-b" | median)
	else
		P_USR_A=n/a
		P_USR_B=n/a
	fi
}

# MB/s (10^6 bytes per second) for a byte count and seconds.
mbps() {
	awk -v b="$1" -v s="$2" 'BEGIN {
		if (s > 0) printf "%.1f\n", b / s / 1e6; else print "inf" }'
}

# Run "nsdedup --annotate --stats FILE" once; sets RSS_KIB (peak resident
# set in KiB), INDEX_KIB (the in-memory index's peak memory, from --stats)
# and DUPS (records annotated "is_dup":true).
measure_rss() {
	local f=$1 st=0 fifo="$tmp/annotate.fifo" hwm=0 v pid gpid
	rm -f "$fifo"
	mkfifo "$fifo"
	grep -c '"is_dup":true' <"$fifo" >"$tmp/dups" &
	gpid=$!
	if [ "$use_time" = 1 ]; then
		/usr/bin/time -f %M -o "$tmp/rss" \
		    "$NSDEDUP" --annotate --stats "$f" >"$fifo" 2>"$tmp/err" ||
		    st=$?
		hwm=$(tail -n 1 "$tmp/rss")
	else
		"$NSDEDUP" --annotate --stats "$f" >"$fifo" 2>"$tmp/err" &
		pid=$!
		while kill -0 "$pid" 2>/dev/null; do
			v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" \
			    2>/dev/null || true)
			[ -z "$v" ] || hwm=$v
			sleep 0.02
		done
		wait "$pid" || st=$?
	fi
	wait "$gpid" || true
	[ "$st" -eq 0 ] || {
		tail -n 5 "$tmp/err" >&2
		die "nsdedup --annotate $f failed (exit $st)"
	}
	RSS_KIB=$hwm
	# The index line's "(N MiB at peak)", rehashing included.
	INDEX_KIB=$(awk '/^nsdedup: index / {
	    for (i = 1; i + 2 < NF; i++)
		if ($(i + 1) == "MiB" && $(i + 2) == "at") {
			v = $i; sub(/^\(/, "", v)
		}
	    printf "%d\n", v * 1024 }' "$tmp/err")
	DUPS=$(cat "$tmp/dups")
}

q() {
	printf '%q' "$1"
}

# Machine and tool facts.
load_start=$(cut -d ' ' -f 1-3 /proc/loadavg)
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo \
    2>/dev/null || true)
cpu_model=${cpu_model:-unknown}
mem_gib=$(awk '/^MemTotal:/ { printf "%.1f GiB\n", $2 / 1048576 }' \
    /proc/meminfo 2>/dev/null || echo unknown)
cflags=
if [ -f config.log ]; then
	cflags=$(sed -n "s/^CFLAGS='\\(.*\\)'\$/\\1/p" config.log | head -n 1)
fi

# The generated corpus, and a small one for the memory comparison.
big=$(corpus "$size")
big_bytes=$(stat -c %s "$big")
if [ "$size_bytes" -gt $((100 << 20)) ]; then
	small_size=100M
else
	small_size=$(( (size_bytes / 10 + 1048575) >> 20 ))M
fi
small=$(corpus "$small_size")
small_bytes=$(stat -c %s "$small")

# "R records, D reposts" from a generator log, or "n/a" for a reused corpus.
gen_counts() {
	sed -n 's/^[^:]*: \([0-9]* records, [0-9]* reposts\),.*/\1/p' \
	    "$tmp/gen-$1.log" 2>/dev/null | grep . || echo n/a
}
reposts() {
	gen_counts "$1" | awk '{ print ($3 == "" ? "n/a" : $3) }'
}

# Timings on the generated corpus; the --db run starts from no index.
names=(cat jq annotate db drop simhash simhash_db)
declare -A CMD PREP MED USR SYS
db=$tmp/x.nsd
CMD[cat]="cat $(q "$big") > /dev/null"
CMD[jq]="jq -c . $(q "$big") > /dev/null"
CMD[annotate]="$(q "$NSDEDUP") --annotate $(q "$big") > /dev/null"
CMD[db]="$(q "$NSDEDUP") --annotate --db $(q "$db") $(q "$big") > /dev/null"
PREP[db]="rm -f $(q "$db") $(q "$db.ids") $(q "$db.log") $(q "$db.lock")"
CMD[drop]="$(q "$NSDEDUP") --drop-dups $(q "$big") > /dev/null"
CMD[simhash]="$(q "$NSDEDUP") -m simhash --annotate $(q "$big") > /dev/null"
CMD[simhash_db]="$(q "$NSDEDUP") -m simhash --annotate --db $(q "$db") $(q "$big") > /dev/null"
PREP[simhash_db]=${PREP[db]}
for n in "${names[@]}"; do
	time_cmd "${CMD[$n]}" 0 "${PREP[$n]:-}"
	MED[$n]=$T_MEDIAN
	USR[$n]=$T_USER
	SYS[$n]=$T_SYS
done

# The same nsdedup commands with the baseline, in turn with this nsdedup.
pair_names=(annotate db drop simhash simhash_db)
declare -A PAIR_A PAIR_B PUSR_A PUSR_B
if [ -n "$baseline" ]; then
	for n in "${pair_names[@]}"; do
		time_pair "${CMD[$n]}" "${PREP[$n]:-}"
		PAIR_A[$n]=$P_MED_A
		PAIR_B[$n]=$P_MED_B
		PUSR_A[$n]=$P_USR_A
		PUSR_B[$n]=$P_USR_B
	done
fi

# What the --db run leaves: one more run, with --stats and the syncs timed.
sh -c "${PREP[db]}"
"$NSDEDUP" --annotate --stats --db "$db" "$big" >/dev/null 2>"$tmp/db-stats" ||
	die "nsdedup --db failed"
db_stats=$(awk '/^nsdedup: index / { sub(/,$/, "", $6)
    printf "%s %s %s %s", $3, $4, $5, $6 }' "$tmp/db-stats")
db_stats="$db_stats; $(stat -c %s "$db") bytes in x.nsd"
db_stats="$db_stats and $(stat -c %s "$db.ids") in x.nsd.ids"
if [ -z "${NSD_BENCH_NO_STRACE:-}" ] && command -v strace >/dev/null 2>&1
then
	sh -c "${PREP[db]}"
	strace -f -T -o "$tmp/db-strace" \
	    -e trace=msync,fdatasync,fsync,rename,fallocate \
	    "$NSDEDUP" --annotate --db "$db" "$big" >/dev/null ||
		die "nsdedup --db under strace failed"
	db_stats="$db_stats; its $(grep -c ' = ' "$tmp/db-strace") "
	db_stats="${db_stats}msync, fdatasync, fsync, fallocate and rename "
	db_stats="${db_stats}calls took $(awk '/ = / { t = $NF
	    gsub(/[<>]/, "", t); s += t } END { printf "%.3f", s }' \
	    "$tmp/db-strace") s in all (\`strace -T\`)"
fi
sh -c "${PREP[db]}"

# What -m simhash finds, and how many entries each lookup compares.
"$NSDEDUP" -m simhash --annotate --stats "$big" 2>"$tmp/simhash-stats" |
    grep -c '"is_dup":true' >"$tmp/simhash-dups" || true
grep -q '^nsdedup: records' "$tmp/simhash-stats" ||
	die "nsdedup -m simhash --stats failed: $(tail -n 1 "$tmp/simhash-stats")"
simhash_dups=$(cat "$tmp/simhash-dups")
simhash_cand=$(awk '/^nsdedup: candidates/ { print $3 }' "$tmp/simhash-stats")
simhash_index=$(awk '/^nsdedup: index / { sub(/,$/, "", $6)
    printf "%s %s %s %s", $3, $4, $5, $6 }' "$tmp/simhash-stats")

# Peak memory at two sizes.
note "measuring memory"
measure_rss "$small"
rss_small=$RSS_KIB
index_small=$INDEX_KIB
dups_small=$DUPS
measure_rss "$big"
rss_big=$RSS_KIB
index_big=$INDEX_KIB
dups_big=$DUPS
# The target sets the in-memory index aside: what is left is the process's
# own memory (buffers, code, libraries), which must stay flat.
own_small=$((rss_small - index_small))
own_big=$((rss_big - index_big))

# The shared evaluation corpora.
shared_rows=()
if [ -d "$NSD_SHARED_DATA" ]; then
	NSD_SHARED_DATA=$(cd "$NSD_SHARED_DATA" && pwd)
	for gz in "$NSD_SHARED_DATA"/*.jsonl.gz; do
		[ -e "$gz" ] || continue
		base=$(basename "$gz" .gz)
		f=$tmp/$base
		note "decompressing $base"
		gzip -dc "$gz" >"$f" || die "cannot decompress $gz"
		fb=$(stat -c %s "$f")
		recs=$(grep -c . "$f" || true)
		time_cmd "jq -c . $(q "$f") > /dev/null"
		sj=$T_MEDIAN
		time_cmd "$(q "$NSDEDUP") -m simhash --annotate $(q "$f") > /dev/null" 1
		ss=$T_MEDIAN
		time_cmd "$(q "$NSDEDUP") --annotate $(q "$f") > /dev/null" 1
		sn=$T_MEDIAN
		nnote=$T_NOTE
		st=0
		dups=$("$NSDEDUP" --annotate "$f" 2>/dev/null |
		    grep -c '"is_dup":true') || st=$?
		# grep exits 1 when it counts nothing; nsdedup may exit 1 on
		# bad records.
		[ "$st" -le 1 ] || die "counting duplicates in $base failed"
		dups=${dups:-0}
		st=0
		sdups=$("$NSDEDUP" -m simhash --annotate "$f" 2>/dev/null |
		    grep -c '"is_dup":true') || st=$?
		[ "$st" -le 1 ] || die "counting duplicates in $base failed"
		sdups=${sdups:-0}
		mb=$(awk -v b="$fb" 'BEGIN { printf "%.1f", b / 1e6 }')
		ratio=$(awk -v a="$sj" -v b="$sn" \
		    'BEGIN { printf "%.1fx", a / b }')
		row="| $base | $recs | $mb | $sj | $(mbps "$fb" "$sj") | $sn"
		row="$row | $(mbps "$fb" "$sn") | $ratio | $dups | $ss"
		row="$row | $(mbps "$fb" "$ss") | $(awk -v a="$sj" -v b="$ss" \
		    'BEGIN { printf "%.1fx", a / b }') | $sdups |"
		shared_rows+=("$row${nnote:+ $nnote |}")
		rm -f "$f"
	done
else
	note "no shared corpora at $NSD_SHARED_DATA; skipping them"
fi

# Targets.
mb_annotate=$(mbps "$big_bytes" "${MED[annotate]}")
ratio_jq=$(awk -v a="${MED[jq]}" -v b="${MED[annotate]}" \
    'BEGIN { printf "%.2f\n", a / b }')
own_growth_kib=$((own_big - own_small))
met() {
	if awk -v x="$1" -v y="$2" 'BEGIN { exit !(x >= y) }'; then
		echo MET
	else
		echo "NOT MET"
	fi
}
t_speed=$(met "$mb_annotate" 300)
mb_db=$(mbps "$big_bytes" "${MED[db]}")
ratio_db=$(awk -v a="${MED[annotate]}" -v b="${MED[db]}" \
    'BEGIN { printf "%.2f\n", a / b }')
t_db=$(met "$ratio_db" 0.8)
t_ratio=$(met "$ratio_jq" 4)
mb_simhash=$(mbps "$big_bytes" "${MED[simhash]}")
ratio_simhash=$(awk -v a="${MED[jq]}" -v b="${MED[simhash]}" \
    'BEGIN { printf "%.2f\n", a / b }')
t_simhash=$(met "$mb_simhash" 150)
t_simhash_jq=$(met "$ratio_simhash" 2)
ratio_simhash_db=$(awk -v a="${MED[simhash]}" -v b="${MED[simhash_db]}" \
    'BEGIN { printf "%.2f\n", a / b }')
# Against the baseline: this nsdedup's throughput as a share of the
# baseline's (baseline seconds / these seconds), and the lowest share.
declare -A SHARE
share_min=
if [ -n "$baseline" ]; then
	for n in "${pair_names[@]}"; do
		SHARE[$n]=$(awk -v a="${PAIR_A[$n]}" -v b="${PAIR_B[$n]}" \
		    'BEGIN { printf "%.3f\n", b / a }')
		if [ -z "$share_min" ] || awk -v x="${SHARE[$n]}" \
		    -v y="$share_min" 'BEGIN { exit !(x < y) }'; then
			share_min=${SHARE[$n]}
			share_min_name=$n
		fi
	done
	t_baseline=$(met "$share_min" 0.95)
fi
if [ "$own_small" -le 16384 ] && [ "$own_big" -le 16384 ]; then
	t_mem=MET
else
	t_mem="NOT MET"
fi
signed_mib() {
	awk -v k="$1" 'BEGIN { printf "%+.1f MiB\n", k / 1024 }' |
	    sed 's/^[-+]0\.0 /0.0 /'
}
if [ "${USR[annotate]}" = n/a ]; then
	cpu_annotate="CPU not measured"
else
	cpu_annotate="user ${USR[annotate]} s, sys ${SYS[annotate]} s"
fi
size_note=
if [ "$big_bytes" -lt $((1 << 30)) ] && [ "$size_bytes" -lt $((1 << 30)) ]
then
	size_note=" (measured over $size; the target is stated for 1 GB)"
fi

if [ "$use_hyperfine" = 1 ]; then
	timer="hyperfine $(hyperfine --version | awk '{ print $2 }'):"
	timer="$timer \`hyperfine --runs $runs --style none --export-json"
	timer="$timer FILE -- 'COMMAND'\`, after one untimed run"
else
	timer="a bash loop of $runs runs timed with \`date +%s.%N\`,"
	timer="$timer after one untimed run"
fi
if [ "$use_time" = 1 ]; then
	rsstool="\`/usr/bin/time -f %M\`"
else
	rsstool="VmHWM polled from /proc/PID/status"
fi

# Command $1 of CMD as the report shows it, with the paths named.
shown_cmd() {
	local c=${CMD[$1]//"$big"/\$CORPUS}
	c=${c//"$(q "$NSDEDUP")"/\$NSDEDUP}
	echo "${c//"$(q "$db")"/\$TMP/x.nsd}"
}

# The report, written beside its destination and renamed into place.
mkdir -p "$(dirname "$out")"
{
	printf '# nsdedup benchmark results\n\n'
	printf 'Written by `bench/run.sh --size %s --runs %s --seed %s%s`.\n\n' \
	    "$size" "$runs" "$seed" "$baseline_flag"
	printf '## Machine\n\n'
	printf -- '- Date: %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
	printf -- '- System: %s\n' "$(uname -srm)"
	printf -- '- CPU: %s, %s cores online\n' "$cpu_model" "$(nproc)"
	printf -- '- Memory: %s\n' "$mem_gib"
	printf -- '- Load average (1, 5, 15 min) at the start: %s, at the end: %s\n' \
	    "$load_start" "$(cut -d ' ' -f 1-3 /proc/loadavg)"
	printf -- '- nsdedup: `%s`, `$NSDEDUP` = %s (built %s, sha256 %s...)' \
	    "$nsd_version" "$nsd_shown" "$nsd_mtime" "$nsd_sum"
	if [ "$NSDEDUP" != "$nsd_shown" ]; then
		printf ', copied at the start and the copy timed'
	fi
	printf '\n'
	[ -z "$cflags" ] || printf -- '- Built with CFLAGS: `%s`\n' "$cflags"
	printf -- '- jq: %s\n' "$(jq --version 2>&1)"
	printf -- '- Timing: %s; median of the runs.\n' "$timer"
	printf -- '- MB/s: input bytes / median wall seconds / 10^6; '
	printf 'user and sys are mean CPU seconds per run.\n\n'

	printf '## Generated corpus\n\n'
	printf '`%s --seed %s --size %s > $CORPUS`: %s bytes, %s.\n\n' \
	    "$GENCORPUS" "$seed" "$size" "$big_bytes" "$(gen_counts "$size")"
	printf '| command | median s | MB/s | user s | sys s |\n'
	printf '|---|---:|---:|---:|---:|\n'
	for n in "${names[@]}"; do
		printf '| `%s` | %s | %s | %s | %s |\n' \
		    "$(shown_cmd "$n")" "${MED[$n]}" \
		    "$(mbps "$big_bytes" "${MED[$n]}")" "${USR[$n]}" \
		    "${SYS[$n]}"
	done
	printf '\nnsdedup --annotate is %sx as fast as `jq -c .`; ' "$ratio_jq"
	printf 'nsdedup --drop-dups is %sx; ' "$(awk -v a="${MED[jq]}" \
	    -v b="${MED[drop]}" 'BEGIN { printf "%.2f", a / b }')"
	printf 'nsdedup -m simhash --annotate is %sx, and with --db ' \
	    "$ratio_simhash"
	printf '(a fresh index each run) at %s of its in-memory ' \
	    "$ratio_simhash_db"
	printf 'throughput.\n\n'
	printf 'The `-m simhash` run (defaults: --distance 3, block tables '
	printf 'of the fingerprint'"'"'s bits) found %s duplicates ' \
	    "$simhash_dups"
	printf 'where the corpus has %s reposts (nshash: %s); each lookup ' \
	    "$(reposts "$size")" "$dups_big"
	printf 'compared %s entries on average (`--stats`); its index: %s.' \
	    "$simhash_cand" "$simhash_index"
	printf ' bench/QUALITY.md scores what each method finds against '
	printf 'the generator'"'"'s ground truth.\n\n'
	printf 'The `--db` run starts from no index each time: '
	printf '`rm -f $TMP/x.nsd $TMP/x.nsd.ids $TMP/x.nsd.log $TMP/x.nsd.lock` before it '
	printf '(hyperfine `--prepare`), so it creates the index, grows '
	printf 'its table as it fills, and commits once at the end; it '
	printf 'runs at %s of the in-memory run'"'"'s throughput. ' "$ratio_db"
	printf 'The index it leaves: %s.\n\n' "$db_stats"

	if [ -n "$baseline" ]; then
		printf '## Against a baseline\n\n'
		printf 'Baseline: `%s`, %s (sha256 %s...).\n\n' \
		    "$baseline_version" "$baseline_shown" "$baseline_sum"
		printf 'Each nsdedup command above, timed again with this '
		printf 'nsdedup and with the baseline in its place, in turn: '
		printf '%s runs of each, in the order ABBA ABBA..., each run ' \
		    "$runs"
		printf 'on its own (`hyperfine --runs 1` or the fallback loop), '
		printf 'after one untimed run of each. The share is this '
		printf 'nsdedup'"'"'s throughput as a part of the baseline'"'"'s '
		printf '(baseline median / this median); user s is the median '
		printf 'of the runs'"'"' user CPU seconds.\n\n'
		printf '| command | this median s | baseline median s | share '
		printf '| this user s | baseline user s |\n'
		printf '|---|---:|---:|---:|---:|---:|\n'
		for n in "${pair_names[@]}"; do
			printf '| `%s` | %s | %s | %s | %s | %s |\n' \
			    "$(shown_cmd "$n")" \
			    "${PAIR_A[$n]}" "${PAIR_B[$n]}" "${SHARE[$n]}" \
			    "${PUSR_A[$n]}" "${PUSR_B[$n]}"
		done
		printf '\n'
	fi

	printf '## Memory\n\n'
	printf 'Peak resident set of '
	printf '`$NSDEDUP --annotate --stats $CORPUS > /dev/null`'
	printf ', measured with %s; the index column is the in-memory ' "$rsstool"
	printf 'index at its peak as `--stats` reports it (table, groups and '
	printf 'ids, with both tables while the table doubles), and '
	printf 'the last column is what is left: the process'"'"'s own memory.\n\n'
	printf '| input | bytes | max RSS | index | RSS less index '
	printf '| duplicates found | reposts written |\n'
	printf '|---|---:|---:|---:|---:|---:|---:|\n'
	printf '| %s corpus | %s | %s | %s | %s | %s | %s |\n' "$small_size" \
	    "$small_bytes" "$(mib "$rss_small")" "$(mib "$index_small")" \
	    "$(mib "$own_small")" "$dups_small" "$(reposts "$small_size")"
	printf '| %s corpus | %s | %s | %s | %s | %s | %s |\n\n' "$size" \
	    "$big_bytes" "$(mib "$rss_big")" "$(mib "$index_big")" \
	    "$(mib "$own_big")" "$dups_big" "$(reposts "$size")"
	printf 'The %s corpus is the first %s bytes of the %s one ' \
	    "$small_size" "$small_bytes" "$size"
	printf '(same seed).\n\n'

	printf '## Shared corpora\n\n'
	if [ ${#shared_rows[@]} -eq 0 ]; then
		printf 'Not measured: no corpora at %s.\n\n' "$NSD_SHARED_DATA"
	else
		printf 'Each `%s/*.jsonl.gz`, decompressed once; ' \
		    "$NSD_SHARED_DATA"
		printf 'commands `jq -c . FILE > /dev/null`, '
		printf '`nsdedup --annotate FILE > /dev/null` and '
		printf '`nsdedup -m simhash --annotate FILE > /dev/null`; '
		printf 'duplicates counted with `nsdedup [-m simhash] --annotate '
		printf "FILE | grep -c '\"is_dup\":true'\`. bench/QUALITY.md "
		printf 'compares what the two methods find.\n\n'
		printf '| corpus | records | MB | jq s | jq MB/s '
		printf '| nsdedup s | nsdedup MB/s | vs jq | duplicates '
		printf '| simhash s | simhash MB/s | vs jq | simhash duplicates |\n'
		printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
		printf '%s\n' "${shared_rows[@]}"
		printf '\n'
	fi

	printf '## Targets\n\n'
	printf '| target | figure | status |\n|---|---|---|\n'
	printf '| nsdedup --annotate >= 300 MB/s on one core | %s MB/s ' \
	    "$mb_annotate"
	printf '(wall %s s; %s)%s | %s |\n' "${MED[annotate]}" \
	    "$cpu_annotate" "$size_note" "$t_speed"
	printf '| nsdedup --annotate >= 4x jq -c . | %sx (jq %s s) | %s |\n' \
	    "$ratio_jq" "${MED[jq]}" "$t_ratio"
	printf '| nsdedup -m simhash --annotate >= 150 MB/s on one core '
	printf '| %s MB/s (wall %s s; user %s s, sys %s s)%s | %s |\n' \
	    "$mb_simhash" "${MED[simhash]}" "${USR[simhash]}" \
	    "${SYS[simhash]}" "$size_note" "$t_simhash"
	printf '| nsdedup -m simhash --annotate >= 2x jq -c . in the same '
	printf 'run | %sx | %s |\n' "$ratio_simhash" "$t_simhash_jq"
	printf '| with --db (fresh index), >= 80%% of the in-memory '
	printf 'throughput | %s (%s MB/s, wall %s s; in memory %s MB/s)%s ' \
	    "$ratio_db" "$mb_db" "${MED[db]}" "$mb_annotate" "$size_note"
	printf '| %s |\n' "$t_db"
	printf '| memory flat within 16 MiB over 1 GB, index aside | '
	printf '%s at %s, %s at %s' "$(mib "$own_small")" "$small_size" \
	    "$(mib "$own_big")" "$size"
	printf ' (growth %s; with the index %s and %s)%s | %s |\n' \
	    "$(signed_mib "$own_growth_kib")" "$(mib "$rss_small")" \
	    "$(mib "$rss_big")" "$size_note" "$t_mem"
	if [ -n "$baseline" ]; then
		printf '| throughput >= 95%% of the baseline'"'"'s, every '
		printf 'command | lowest share %s (%s) | %s |\n' \
		    "$share_min" "$share_min_name" "$t_baseline"
	fi
	# bench/index-scale.sh's section, kept until it writes a new one.
	if [ -f "$out" ]; then
		sed -n '/^<!-- index-scale: begin -->$/,/^<!-- index-scale: end/p' \
		    "$out" | sed '1s/^/\n/'
	fi
} >"$out.tmp"
mv "$out.tmp" "$out"
note "wrote $out"
sed -n '/^## Targets/,/^<!--/{/^<!--/!p}' "$out"

if [ "$scale" = 1 ]; then
	NSDEDUP=$NSDEDUP GENCORPUS=$GENCORPUS \
	    "$BASH" "$script_dir/index-scale.sh" --out "$out" ||
		die "bench/index-scale.sh failed"
fi
