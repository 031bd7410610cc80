#!/usr/bin/env bash
#
# bench/run.sh: time nsdedup against cat, wc -l, jq -c . and an awk exact
# dedup on a generated news corpus, and write the results as Markdown.
#
# The report leads with one table, a row per command: the four references,
# then nsdedup --annotate for each fingerprint method (nshash, -m simhash,
# -m minhash), in memory and with a fresh persistent index (--db), at -j1
# and -j2, reading the corpus from a file and from a pipe (cat FILE |
# nsdedup): median wall seconds, MB/s, throughput relative to jq -c . and
# to awk '!seen[$0]++', user and system seconds, and for nsdedup its peak
# anonymous memory (RssAnon, sampled every 10 ms during the one untimed
# run that also checks the command).  Below it, the targets, each with its
# figure and MET or NOT MET (among them minhash's throughput as a share of
# nshash's in the same run); the table and the targets are also printed at
# the end.  Then the machine, what each method found (duplicates,
# candidates per lookup, the index), where the CPU time goes by stage
# (bench/profile.sh under perf, for each method at -j1; said to be missing
# when perf cannot sample), and the shared evaluation corpora, with each
# method, when they are there.  Every command runs once untimed, then
# --runs times, every row alike since each target compares several; at 1G
# that is about twenty minutes on two cores, the index at scale aside.
#
# A section between the lines <!-- analysis: begin --> and <!-- analysis:
# end --> at the end of the report, written by hand (why the figures are
# what they are, what was tried), is kept as it is, and so are the
# sections that bench/redis.sh and bench/year.sh write.
#
# Then the real-text corpus, when the shared evaluation corpora are there
# (said to be skipped when not): the five *.jsonl.gz of $NSD_SHARED_DATA
# through nsd-repost, which adds labelled near and exact copies, round after
# round, each with its own seed and its ids prefixed "rN:", until it holds
# --real-size bytes (the corpora hold about 140 MB of text, so a 1 GB
# corpus repeats them, in a new order and with new copies each round); and
# its English and its Chinese records (nsd-repost's "lang") apart.  Its
# table has cat, jq -c . and the awk dedup on each of the three, each
# method at -j1 and -j2 on the whole (in memory, from the file) and at -j1
# on each language; its targets are measured there, and, against a
# baseline, whether the output is byte for byte the baseline's, every
# method, --explain included.  Its profile is taken per language, each
# method at -j1, so that a language's regression shows.
#
# Unless --no-scale, it then runs bench/index-scale.sh (the index at 10^8
# fingerprints: several minutes, about 3 GB in $TMPDIR), which writes its
# own sections of the report (the index at scale, and MinHash's) between
# their markers; with --no-scale the report keeps the sections it had.  make bench runs this script; make
# bench BENCH_FLAGS=--no-scale leaves the scale part out, and make
# bench-scale runs only that part.
#
# With --baseline PROGRAM or --baseline-rev REV (a git revision, built here
# with the build tree's configure options), the nsdedup commands at the
# default number of jobs reading the corpus file (each method, in memory
# and with --db) are also timed with that program, a run of one and a run
# of the other in turn, and the report says whether this nsdedup keeps at
# least 95% of the baseline's throughput: the check that a change which is
# not meant to touch speed (hardening, a refactoring) did not.  A baseline
# that refuses -m minhash on empty input (one from before it) is compared
# on nshash and simhash alone, and the report says so.
#
# Run it from the top of the build tree:
#
#     bench/run.sh [--size 1G] [--runs 5] [--seed 1] [--out bench/RESULTS.md]
#                  [--real-size 1G] [--keep-corpus] [--no-scale]
#                  [--baseline PROGRAM | --baseline-rev REV]
#
# Environment:
#     NSDEDUP          the program under test (default ./src/nsdedup)
#     GENCORPUS        the corpus generator (default ./bench/nsd-gencorpus;
#                      built from bench/gencorpus.c into the temporary
#                      directory when missing)
#     NSD_INDEX_SCALE  the index builder for bench/index-scale.sh (default
#                      ./bench/nsd-index-scale)
#     NSD_REPOST       the repost generator for the real-text corpus
#                      (default ./bench/nsd-repost)
#     NSD_SHARED_DATA  folder of *.jsonl.gz corpora (default: shared/data
#                      beside the source tree); skipped when absent
#     TMPDIR           where the corpus and scratch files go (default /tmp);
#                      $TMPDIR/bench/corpus-SEED-SIZE.jsonl is reused when
#                      present (delete it after changing gencorpus.c),
#                      and written there with --keep-corpus; so is the
#                      real-text corpus, as real-SEED-SIZE.jsonl
#     NSD_BENCH_NO_HYPERFINE=1, NSD_BENCH_NO_TIME=1
#                      use the fallbacks even when hyperfine or
#                      /usr/bin/time exist: a bash loop timed with
#                      date +%s.%N, its user and system seconds from
#                      /usr/bin/time or else not measured
#     NSD_BENCH_NO_STRACE=1
#                      leave out the --db run's syscall times even when
#                      strace exists (LeakSanitizer cannot run under it)
#     NSD_BENCH_NO_PERF=1
#                      leave out the profile even when perf exists
#
# Needs bash, jq (the one on $PATH), awk and GNU coreutils; uses hyperfine,
# /usr/bin/time, strace and perf when installed.  Exits 0 when every
# command ran (whether or not the targets were met), 1 when a command
# failed, 2 on a usage error.

# The report's Markdown puts commands in backquotes inside single quotes.
# shellcheck disable=SC2016

set -euo pipefail

prog=bench/run.sh
size=1G
real_size=1G
runs=5
seed=1
out=bench/RESULTS.md
keep=0
scale=1
baseline=
baseline_rev=
baseline_flag=
# The jobs of the table's rows; the second is the default on two cores.
jobs_lo=1
jobs_hi=2
# The fingerprint methods, each in every part of the report.
methods=(nshash simhash minhash)
usage() {
	cat <<EOF
usage: $prog [--size SIZE] [--runs N] [--seed N] [--out FILE] [--keep-corpus]
                    [--no-scale] [--baseline PROGRAM | --baseline-rev REV]

  --size SIZE     corpus size for nsd-gencorpus, K/M/G suffixes (default 1G)
  --runs N        timed runs per command (default 5)
  --seed N        corpus seed (default 1)
  --out FILE      where to write the Markdown report (default bench/RESULTS.md)
  --real-size SIZE
                  size of the real-text corpus made from the shared
                  corpora with nsd-repost (default 1G)
  --keep-corpus   keep the corpus as \$TMPDIR/bench/corpus-SEED-SIZE.jsonl
                  (and the real-text one as real-SEED-SIZE.jsonl)
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
	--size|--real-size|--runs|--seed|--out|--baseline|--baseline-rev)
		[ $# -ge 2 ] || usage_error "option '$1' needs a value"
		opt=$1 val=$2
		shift 2 ;;
	--size=*|--real-size=*|--runs=*|--seed=*|--out=*|--baseline=*|\
	--baseline-rev=*)
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
	--real-size) real_size=$val ;;
	--runs) runs=$val ;;
	--seed) seed=$val ;;
	--out) out=$val ;;
	--baseline) baseline=$val baseline_flag=" --baseline $val" ;;
	--baseline-rev)
		baseline_rev=$val baseline_flag=" --baseline-rev $val" ;;
	esac
done

[[ $size =~ ^[0-9]+[KMGkmg]?$ ]] || usage_error "invalid --size '$size'"
if ! [[ $real_size =~ ^[0-9]+[KMGkmg]?$ ]] ||
    [ "$(to_bytes "$real_size")" -eq 0 ]; then
	usage_error "invalid --real-size '$real_size'"
fi
[[ $runs =~ ^[1-9][0-9]*$ ]] || usage_error "invalid --runs '$runs'"
[[ $seed =~ ^[0-9]+$ ]] || usage_error "invalid --seed '$seed'"
[ -n "$out" ] || usage_error "empty --out"
[ -z "$baseline" ] || [ -z "$baseline_rev" ] ||
	usage_error "--baseline and --baseline-rev exclude each other"

size_bytes=$(to_bytes "$size")
[ "$size_bytes" -gt 0 ] || usage_error "invalid --size '$size'"

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src_top=$(dirname "$script_dir")
NSDEDUP=${NSDEDUP:-./src/nsdedup}
GENCORPUS=${GENCORPUS:-./bench/nsd-gencorpus}
NSD_REPOST=${NSD_REPOST:-./bench/nsd-repost}
NSD_SHARED_DATA=${NSD_SHARED_DATA:-$src_top/../shared/data}
tmproot=${TMPDIR:-/tmp}

command -v jq >/dev/null 2>&1 ||
	die "jq not found: it is the reference the benchmark compares against"
[ -x "$NSDEDUP" ] || die "$NSDEDUP: not an executable (set NSDEDUP)"
"$NSDEDUP" --version >/dev/null 2>&1 || die "$NSDEDUP --version failed"
# Whether nsdedup $1 knows -m minhash: it runs on empty input.
has_minhash() {
	"$1" -m minhash --annotate </dev/null >/dev/null 2>&1
}
has_minhash "$NSDEDUP" ||
	die "$NSDEDUP: -m minhash fails on empty input (an older nsdedup?)"

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
		die "--baseline-rev: '$baseline_rev' is not a revision of" \
		    "$src_top"
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
	baseline_minhash=1
	if ! has_minhash "$baseline"; then
		baseline_minhash=0
		note "the baseline has no -m minhash; minhash is not compared"
	fi
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
# run once first, untimed, as a check and to warm the page cache, unless
# $4 says that the caller has done so; a failure there or in a timed run
# stops the benchmark.  With allow1 set, exit status 1 (bad records passed
# through) is accepted and reported in T_NOTE.  A prepare command, when
# given, runs untimed before each run.
time_cmd() {
	local cmd=$1 allow1=${2:-0} prep=${3:-} checked=${4:-0} st=0 i
	local json="$tmp/hf.json"
	T_NOTE=
	note "timing: $cmd"
	if [ "$checked" = 0 ]; then
		[ -z "$prep" ] || sh -c "$prep" || die "command failed: $prep"
		sh -c "$cmd" 2>"$tmp/err" || st=$?
	fi
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
		# Status 1 is accepted in the timed runs if the first run had
		# it.
		local seen1=0
		[ -z "$T_NOTE" ] || seen1=1
		: >"$tmp/times"
		for ((i = 0; i < runs; i++)); do
			time_once "$cmd" "$prep" "$tmp/times" "$seen1"
		done
		T_MEDIAN=$(awk '{ print $1 }' "$tmp/times" | median)
		T_USER=$(mean_col 2 "$tmp/times")
		T_SYS=$(mean_col 3 "$tmp/times")
	fi
}

# The mean of column $1 of file $2, three decimals, or "n/a" when the
# column is not numbers.
mean_col() {
	awk -v c="$1" '$c !~ /^[0-9.]+$/ { bad = 1 } { s += $c }
	    END { if (bad || NR == 0) print "n/a"
		else printf "%.3f\n", s / NR }' "$2"
}

# One timed run of a shell command, after an untimed prepare command when
# given; appends "wall user sys" seconds to file $3 (without hyperfine,
# user and sys from /usr/bin/time, or "n/a").  Exit status 1 is accepted
# when allow1 ($4) is set.
time_once() {
	local cmd=$1 prep=$2 to=$3 allow1=${4:-0} json="$tmp/hf1.json" t0 t1
	local st=0 cpu="n/a n/a"
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
		return
	fi
	[ -z "$prep" ] || sh -c "$prep" || die "command failed: $prep"
	t0=$(date +%s.%N)
	if [ "$use_time" = 1 ]; then
		/usr/bin/time -f '%U %S' -o "$tmp/cpu" sh -c "$cmd" \
		    2>/dev/null || st=$?
	else
		sh -c "$cmd" 2>/dev/null || st=$?
	fi
	t1=$(date +%s.%N)
	[ "$st" -eq 0 ] || { [ "$allow1" = 1 ] && [ "$st" -eq 1 ]; } ||
		die "command failed (exit $st): $cmd"
	[ "$use_time" = 0 ] || cpu=$(tail -n 1 "$tmp/cpu")
	awk -v a="$t0" -v b="$t1" -v c="$cpu" \
	    'BEGIN { print b - a, c }' >>"$to"
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
	if awk '$2 !~ /^[0-9.]+$/ { exit 1 }' "$tmp/pair-a" "$tmp/pair-b"
	then
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

# $1 / $2 with two decimals: a throughput ratio from two times, the
# reference's first.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (b > 0) printf "%.2f\n", a / b; else print "inf" }'
}

# MET when figure $1 >= $2, else NOT MET.
met() {
	if awk -v x="$1" -v y="$2" 'BEGIN { exit !(x >= y) }'; then
		echo MET
	else
		echo "NOT MET"
	fi
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
# gawk knows --version, mawk -W version, busybox neither.
awk_version=$(awk --version 2>/dev/null | head -n 1) || true
[ -n "$awk_version" ] ||
	awk_version=$(awk -W version 2>&1 | head -n 1) || true
awk_version="${awk_version:-unknown} ($(readlink -f "$(command -v awk)"))"

# The generated corpus.
big=$(corpus "$size")
big_bytes=$(stat -c %s "$big")

# "R records, D reposts" from a generator log, or "n/a" for a reused corpus.
gen_counts() {
	sed -n 's/^[^:]*: \([0-9]* records, [0-9]* reposts\),.*/\1/p' \
	    "$tmp/gen-$1.log" 2>/dev/null | grep . || echo n/a
}
reposts() {
	gen_counts "$1" | awk '{ print ($3 == "" ? "n/a" : $3) }'
}

# The table's rows.  The references first; then nsdedup's, one per method,
# index (in memory or --db), jobs and input (the file, or a pipe from cat),
# named METHOD-jJOBS-mem|db-file|pipe.  A --db run starts from no index.
declare -A CMD PREP MED USR SYS METHOD JOBS DB INPUT RSS RSSN
db=$tmp/x.nsd
db_files="$db $db.ids $db.log $db.lock $db.stage $db.next $db.filter $db.undo $db.times"
# shellcheck disable=SC2086  # the words of $db_files
db_rm=$(printf '%q ' $db_files)
db_rm="rm -f ${db_rm% }"
ref_rows=(cat wc jq awk)
# The shell command of reference $1 (cat, wc, jq or awk) reading file $2.
ref_cmd() {
	local f
	f=$(q "$2")
	case $1 in
	cat) echo "cat $f > /dev/null" ;;
	wc) echo "wc -l $f > /dev/null" ;;
	jq) echo "jq -c . $f > /dev/null" ;;
	awk) echo "awk '!seen[\$0]++' $f > /dev/null" ;;
	esac
}
for r in "${ref_rows[@]}"; do
	CMD[$r]=$(ref_cmd "$r" "$big")
done
nsd_rows=()
for m in "${methods[@]}"; do
	for d in mem db; do
		for j in "$jobs_lo" "$jobs_hi"; do
			for i in file pipe; do
				r=$m-j$j-$d-$i
				nsd_rows+=("$r")
				METHOD[$r]=$m JOBS[$r]=$j DB[$r]=$d INPUT[$r]=$i
			done
		done
	done
done

# The arguments of nsdedup in row $1, into the array argv; with $2 set,
# without -j (the default number of jobs).
row_argv() {
	local r=$1 nojobs=${2:-0}
	argv=()
	[ "${METHOD[$r]}" = nshash ] || argv+=(-m "${METHOD[$r]}")
	argv+=(--annotate)
	[ "$nojobs" = 1 ] || argv+=("-j${JOBS[$r]}")
	[ "${DB[$r]}" = mem ] || argv+=(--db "$db")
}

# The shell command of nsdedup row $1 (with $2 set: without -j).
row_cmd() {
	local c
	row_argv "$@"
	c="$(q "$NSDEDUP") $(printf '%q ' "${argv[@]}")"
	if [ "${INPUT[$1]}" = pipe ]; then
		echo "cat $(q "$big") | $c> /dev/null"
	else
		echo "$c$(q "$big") > /dev/null"
	fi
}

for r in "${nsd_rows[@]}"; do
	CMD[$r]=$(row_cmd "$r")
	[ "${DB[$r]}" = mem ] || PREP[$r]=$db_rm
done

# Row $1 in words, e.g. "simhash -j2 --db, from a pipe".
row_label() {
	local r=$1 s
	s="${METHOD[$r]} -j${JOBS[$r]}"
	[ "${DB[$r]}" = mem ] || s="$s --db"
	if [ "${INPUT[$r]}" = pipe ]; then
		echo "$s, from a pipe"
	else
		echo "$s, from a file"
	fi
}

# A shell command as the report shows it: the paths named, the output
# redirection left out, and | escaped for a Markdown table when $2 is set.
shown() {
	local c=$1
	c=${c//"$(q "$big")"/\$CORPUS}
	c=${c//"$big"/\$CORPUS}
	c=${c//"$(q "$NSDEDUP")"/\$NSDEDUP}
	c=${c//"$(q "$db")"/\$TMP/x.nsd}
	c=${c% > /dev/null}
	[ -z "${2:-}" ] || c=${c//|/\\|}
	echo "$c"
}

# The untimed run of nsdedup row $1 that checks it, warms the page cache
# and samples its anonymous memory: sets RSS[$1] (the largest RssAnon, in
# KiB) and RSSN[$1] (the samples taken).
sampled_run() {
	local r=$1 pid st=0 s
	note "checking, RssAnon sampled: ${CMD[$r]}"
	[ -z "${PREP[$r]:-}" ] || sh -c "${PREP[$r]}" ||
		die "command failed: ${PREP[$r]}"
	row_argv "$r"
	if [ "${INPUT[$r]}" = pipe ]; then
		# $! is the last process of the pipeline: nsdedup.
		# shellcheck disable=SC2002
		cat "$big" | "$NSDEDUP" "${argv[@]}" >/dev/null 2>"$tmp/err" &
	else
		"$NSDEDUP" "${argv[@]}" "$big" >/dev/null 2>"$tmp/err" &
	fi
	pid=$!
	s=$(rss_anon_sample "$pid")
	wait "$pid" || st=$?
	[ "$st" -eq 0 ] || {
		tail -n 5 "$tmp/err" >&2
		die "command failed (exit $st): ${CMD[$r]}"
	}
	RSS[$r]=${s% *}
	RSSN[$r]=${s#* }
}

for r in "${ref_rows[@]}"; do
	time_cmd "${CMD[$r]}"
	MED[$r]=$T_MEDIAN USR[$r]=$T_USER SYS[$r]=$T_SYS
done
for r in "${nsd_rows[@]}"; do
	sampled_run "$r"
	time_cmd "${CMD[$r]}" 0 "${PREP[$r]:-}" 1
	MED[$r]=$T_MEDIAN USR[$r]=$T_USER SYS[$r]=$T_SYS
done

# With the baseline, in turn: the rows reading the file at the default
# number of jobs (no -j, which an older nsdedup may not know), of each
# method the baseline has.
pair_rows=()
declare -A PAIR_CMD PAIR_A PAIR_B PUSR_A PUSR_B
if [ -n "$baseline" ]; then
	for m in "${methods[@]}"; do
		[ "$m" != minhash ] || [ "$baseline_minhash" = 1 ] || continue
		pair_rows+=("$m-j$jobs_hi-mem-file" "$m-j$jobs_hi-db-file")
	done
	for r in "${pair_rows[@]}"; do
		PAIR_CMD[$r]=$(row_cmd "$r" 1)
		time_pair "${PAIR_CMD[$r]}" "${PREP[$r]:-}"
		PAIR_A[$r]=$P_MED_A PAIR_B[$r]=$P_MED_B
		PUSR_A[$r]=$P_USR_A PUSR_B[$r]=$P_USR_B
	done
fi

# Compressed inputs: the corpus compressed with gzip (pigz, when it is
# there, makes the same format faster) and with zstd, read by nsdedup
# itself and through zcat or zstd -dc in a pipe, at the default jobs.
comp_rows=() comp_missing=()
declare -A COMP_PIPE COMP_SELF COMP_PIPE_CMD COMP_SELF_CMD COMP_BYTES \
    COMP_EXT COMP_UNPACK
comp_built=$("$NSDEDUP" --version | sed -n 's/^compressed inputs: //p')
for fmt in gzip zstd; do
	case $fmt in
	gzip) pack="gzip -6 -c" unpack="zcat" ext=gz
	      ! command -v pigz >/dev/null 2>&1 || pack="pigz -6 -c" ;;
	zstd) pack="zstd -q -3 -T0 -c" unpack="zstd -dc" ext=zst ;;
	esac
	if [[ ", $comp_built," != *", $fmt"[\ ,]* ]]; then
		comp_missing+=("$fmt: this nsdedup is built without it")
		continue
	fi
	if ! command -v "${pack%% *}" >/dev/null 2>&1 ||
	    ! command -v "${unpack%% *}" >/dev/null 2>&1; then
		comp_missing+=("$fmt: ${pack%% *} or ${unpack%% *} is missing")
		continue
	fi
	f=$big.$ext
	note "compressing the corpus: $pack"
	sh -c "$pack $(q "$big") > $(q "$f")" || die "$pack failed"
	COMP_BYTES[$fmt]=$(stat -c %s "$f")
	COMP_EXT[$fmt]=$ext COMP_UNPACK[$fmt]=$unpack
	COMP_PIPE_CMD[$fmt]="$unpack $(q "$f") | $(q "$NSDEDUP") --annotate \
> /dev/null"
	COMP_SELF_CMD[$fmt]="$(q "$NSDEDUP") --annotate $(q "$f") > /dev/null"
	time_cmd "${COMP_PIPE_CMD[$fmt]}"
	COMP_PIPE[$fmt]=$T_MEDIAN
	time_cmd "${COMP_SELF_CMD[$fmt]}"
	COMP_SELF[$fmt]=$T_MEDIAN
	comp_rows+=("$fmt")
	rm -f "$f"
done

# What each method finds, and its in-memory index (--stats).
declare -A DUPS INDEX INDEX_PEAK CAND
for m in "${methods[@]}"; do
	"$NSDEDUP" -m "$m" --annotate --stats "$big" >/dev/null \
	    2>"$tmp/$m-stats" ||
		die "nsdedup -m $m --stats failed: $(tail -n 1 "$tmp/$m-stats")"
	DUPS[$m]=$(awk '/^nsdedup: duplicates/ { print $3 }' "$tmp/$m-stats")
	INDEX[$m]=$(awk '/^nsdedup: index / { sub(/,$/, "", $6)
	    printf "%s %s %s %s", $3, $4, $5, $6 }' "$tmp/$m-stats")
	# The index line's "(N MiB at peak)", rehashing included.
	INDEX_PEAK[$m]=$(awk '/^nsdedup: index / {
	    for (i = 1; i + 2 < NF; i++)
		if ($(i + 1) == "MiB" && $(i + 2) == "at") {
			v = $i; sub(/^\(/, "", v)
		}
	    print v " MiB" }' "$tmp/$m-stats")
	CAND[$m]=$(awk '/^nsdedup: candidates/ { print $3 }' "$tmp/$m-stats")
done

# What the --db run leaves: one more run, with --stats and the syncs timed.
sh -c "$db_rm"
"$NSDEDUP" --annotate --stats --db "$db" "$big" >/dev/null 2>"$tmp/db-stats" ||
	die "nsdedup --db failed"
db_stats=$(awk '/^nsdedup: index / { sub(/,$/, "", $6)
    printf "%s %s %s %s", $3, $4, $5, $6 }' "$tmp/db-stats")
db_stats="$db_stats; $(stat -c %s "$db") bytes in x.nsd"
db_stats="$db_stats and $(stat -c %s "$db.ids") in x.nsd.ids"
if [ -z "${NSD_BENCH_NO_STRACE:-}" ] && command -v strace >/dev/null 2>&1
then
	sh -c "$db_rm"
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
sh -c "$db_rm"

# Where the time goes: bench/profile.sh for each method at -j1.  PROFILE
# holds its table rows, or PROFILE_MISSING why there are none.
declare -A PROFILE PROFILE_MISSING
for m in "${methods[@]}"; do
	if [ -n "${NSD_BENCH_NO_PERF:-}" ]; then
		PROFILE_MISSING[$m]="not taken: NSD_BENCH_NO_PERF is set"
		continue
	fi
	note "profiling: nsdedup -m $m --annotate -j$jobs_lo \$CORPUS"
	st=0
	NSDEDUP=$NSDEDUP "$BASH" "$script_dir/profile.sh" -- -m "$m" \
	    --annotate "-j$jobs_lo" "$big" >"$tmp/profile-$m" \
	    2>"$tmp/profile-$m.err" || st=$?
	case $st in
	0) PROFILE[$m]=$(cat "$tmp/profile-$m") ;;
	3) PROFILE_MISSING[$m]="not taken: perf is missing or cannot sample"
	   PROFILE_MISSING[$m]+=" here ($(tail -n 1 "$tmp/profile-$m.err"))"
	   note "${PROFILE_MISSING[$m]}" ;;
	*) tail -n 5 "$tmp/profile-$m.err" >&2
	   die "bench/profile.sh failed (exit $st) for -m $m" ;;
	esac
done

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
		mb=$(awk -v b="$fb" 'BEGIN { printf "%.1f", b / 1e6 }')
		row="| $base | $recs | $mb | $sj | $(mbps "$fb" "$sj") |"
		# Each method's seconds, MB/s, throughput over jq's and
		# duplicates; the first note of an exit 1 last.
		snote=
		for m in "${methods[@]}"; do
			margs=(--annotate)
			[ "$m" = nshash ] || margs=(-m "$m" --annotate)
			time_cmd "$(q "$NSDEDUP") ${margs[*]} $(q "$f") \
> /dev/null" 1
			[ -n "$snote" ] || snote=$T_NOTE
			st=0
			dups=$("$NSDEDUP" "${margs[@]}" "$f" 2>/dev/null |
			    grep -c '"is_dup":true') || st=$?
			# grep exits 1 when it counts nothing; nsdedup may
			# exit 1 on bad records.
			[ "$st" -le 1 ] ||
				die "counting duplicates in $base failed (-m $m)"
			row="$row $T_MEDIAN | $(mbps "$fb" "$T_MEDIAN")"
			row="$row | $(ratio "$sj" "$T_MEDIAN")x | ${dups:-0} |"
		done
		shared_rows+=("$row${snote:+ $snote |}")
		rm -f "$f"
	done
else
	note "no shared corpora at $NSD_SHARED_DATA; skipping them"
fi

# The real-text corpus (see the top): made, or reused from $TMPDIR/bench,
# when the shared corpora are there; REAL_MISSING says why not otherwise.
real_rows=() REAL_MISSING=
declare -A REAL_FILE REAL_BYTES REAL_MED REAL_CMD
real_texts=(all en zh)
real_gz=()
if [ -d "$NSD_SHARED_DATA" ]; then
	for gz in "$NSD_SHARED_DATA"/*.jsonl.gz; do
		[ ! -e "$gz" ] || real_gz+=("$gz")
	done
fi
if [ ${#real_gz[@]} -eq 0 ]; then
	REAL_MISSING="no corpora at $NSD_SHARED_DATA"
elif [ ! -x "$NSD_REPOST" ]; then
	REAL_MISSING="$NSD_REPOST is not an executable (set NSD_REPOST)"
fi
[ -z "$REAL_MISSING" ] || note "no real-text corpus: $REAL_MISSING"

# Write the real-text corpus of real_size bytes to $1: the shared corpora
# through nsd-repost, round by round, the last one cut at a line's end.
real_corpus_write() {
	local path=$1 want round=0 have=0 n
	want=$(to_bytes "$real_size")
	: >"$path"
	gzip -dc "${real_gz[@]}" >"$tmp/shared.jsonl" ||
		die "cannot decompress the shared corpora"
	while [ "$have" -lt "$want" ]; do
		round=$((round + 1))
		# Whole, then cut: a reader that stops early would fail the
		# writers of the pipeline with SIGPIPE.
		"$NSD_REPOST" --seed $((seed * 1000 + round)) --verbose \
		    "$tmp/shared.jsonl" >"$tmp/round.jsonl" \
		    2>>"$tmp/repost.log" ||
			die "nsd-repost failed: $(tail -n 1 "$tmp/repost.log")"
		LC_ALL=C awk -v need=$((want - have)) -v r="$round" '
		    substr($0, 1, 7) == "{\"id\":\"" {
			$0 = "{\"id\":\"r" r ":" substr($0, 8)
		    }
		    { print; n += length($0) + 1; if (n >= need) exit }' \
		    "$tmp/round.jsonl" >>"$path" || die "cannot write $path"
		rm -f "$tmp/round.jsonl"
		n=$(stat -c %s "$path")
		[ "$n" -gt "$have" ] || die "nsd-repost wrote nothing"
		have=$n
	done
	rm -f "$tmp/shared.jsonl"
	REAL_ROUNDS=$round
}

if [ -z "$REAL_MISSING" ]; then
	cache="$tmproot/bench/real-$seed-$real_size.jsonl"
	REAL_ROUNDS=
	if [ -s "$cache" ]; then
		note "reusing $cache"
		REAL_FILE[all]=$cache
	else
		REAL_FILE[all]=$tmp/real-$seed-$real_size.jsonl
		if [ "$keep" = 1 ]; then
			mkdir -p "$tmproot/bench"
			REAL_FILE[all]=$cache
		fi
		note "making the $real_size real-text corpus with nsd-repost"
		real_corpus_write "${REAL_FILE[all]}.part"
		mv "${REAL_FILE[all]}.part" "${REAL_FILE[all]}"
	fi
	REAL_FILE[en]=$tmp/real-en.jsonl REAL_FILE[zh]=$tmp/real-zh.jsonl
	grep -F '"lang":"en"}' "${REAL_FILE[all]}" >"${REAL_FILE[en]}" || true
	grep -vF '"lang":"en"}' "${REAL_FILE[all]}" >"${REAL_FILE[zh]}" || true
	sync
	for t in "${real_texts[@]}"; do
		REAL_BYTES[$t]=$(stat -c %s "${REAL_FILE[$t]}")
		[ "${REAL_BYTES[$t]}" -gt 0 ] ||
			die "the real-text corpus has no $t records"
		f=$(q "${REAL_FILE[$t]}")
		# The references on each text; nsdedup at -j1 on each, and at
		# -j2 on the whole.
		for r in cat jq awk; do
			real_rows+=("$t-$r")
			REAL_CMD[$t-$r]=$(ref_cmd "$r" "${REAL_FILE[$t]}")
		done
		for m in "${methods[@]}"; do
			margs=(--annotate)
			[ "$m" = nshash ] || margs=(-m "$m" --annotate)
			for j in "$jobs_lo" "$jobs_hi"; do
				[ "$t" = all ] || [ "$j" = "$jobs_lo" ] || continue
				r=$t-$m-j$j
				real_rows+=("$r")
				REAL_CMD[$r]="$(q "$NSDEDUP") ${margs[*]} -j$j $f \
> /dev/null"
			done
		done
	done
	for r in "${real_rows[@]}"; do
		time_cmd "${REAL_CMD[$r]}"
		REAL_MED[$r]=$T_MEDIAN
	done
fi

# Against the baseline, on the real text: the output byte for byte the
# same, every method, with --explain and without; REAL_SAME lists what
# differs ("" when nothing does).
REAL_SAME=unchecked
if [ -z "$REAL_MISSING" ] && [ -n "$baseline" ]; then
	REAL_SAME=
	for m in "${methods[@]}"; do
		[ "$m" != minhash ] || [ "$baseline_minhash" = 1 ] || continue
		for x in '' --explain; do
			note "comparing the output with the baseline's: -m $m $x"
			"$NSDEDUP" -m "$m" --annotate ${x:+"$x"} "${REAL_FILE[all]}" \
			    >"$tmp/out-a" 2>/dev/null ||
				die "nsdedup -m $m $x failed on the real text"
			"$baseline" -m "$m" --annotate ${x:+"$x"} "${REAL_FILE[all]}" \
			    >"$tmp/out-b" 2>/dev/null ||
				die "the baseline -m $m $x failed on the real text"
			cmp -s "$tmp/out-a" "$tmp/out-b" ||
				REAL_SAME="$REAL_SAME${REAL_SAME:+, }-m $m $x"
		done
	done
	rm -f "$tmp/out-a" "$tmp/out-b"
fi

# Where the time goes per language: bench/profile.sh for each method at
# -j1 on the English and the Chinese records, into PROFILE[TEXT-METHOD].
for t in en zh; do
	[ -z "$REAL_MISSING" ] || break
	for m in "${methods[@]}"; do
		[ -z "${PROFILE_MISSING[$m]:-}" ] || continue
		note "profiling: nsdedup -m $m --annotate -j$jobs_lo (real $t)"
		NSDEDUP=$NSDEDUP "$BASH" "$script_dir/profile.sh" -- -m "$m" \
		    --annotate "-j$jobs_lo" "${REAL_FILE[$t]}" \
		    >"$tmp/profile-$t-$m" 2>"$tmp/profile-$t-$m.err" || {
			tail -n 5 "$tmp/profile-$t-$m.err" >&2
			die "bench/profile.sh failed for -m $m on the $t text"
		}
		PROFILE[$t-$m]=$(cat "$tmp/profile-$t-$m")
	done
done

# The table's ratios: each row's throughput over jq's and over awk's.
declare -A XJQ XAWK
for r in "${ref_rows[@]}" "${nsd_rows[@]}"; do
	XJQ[$r]=$(ratio "${MED[jq]}" "${MED[$r]}")
	XAWK[$r]=$(ratio "${MED[awk]}" "${MED[$r]}")
done

# The targets.  TARGETS holds the report's lines, "- TARGET: FIGURE —
# STATUS".
targets=()
target() {
	targets+=("- $1: $2 — $3")
}
nf=nshash-j$jobs_hi-mem-file
sf=simhash-j$jobs_hi-mem-file
mf=minhash-j$jobs_hi-mem-file
if [ "$(nproc)" = "$jobs_hi" ]; then
	jobs_note="at the default jobs (-j$jobs_hi here)"
else
	jobs_note="at -j$jobs_hi (the default here would be -j$(nproc))"
fi
target "nshash --annotate $jobs_note, from a file, ≥ 12× \`jq -c .\`" "${XJQ[$nf]}× ($(mbps "$big_bytes" "${MED[$nf]}") MB/s,\
 jq $(mbps "$big_bytes" "${MED[jq]}") MB/s)" "$(met "${XJQ[$nf]}" 12)"
target "nshash --annotate $jobs_note, from a file, ≥ 3× the awk\
 exact dedup" "${XAWK[$nf]}× (awk $(mbps "$big_bytes" \
"${MED[awk]}") MB/s)" "$(met "${XAWK[$nf]}" 3)"
target "simhash --annotate $jobs_note, from a file, ≥ 10×\
 \`jq -c .\`" "${XJQ[$sf]}× ($(mbps "$big_bytes" "${MED[$sf]}") MB/s)" \
    "$(met "${XJQ[$sf]}" 10)"
# minhash's throughput as a share of nshash's (nshash seconds / minhash
# seconds), three decimals, the verdict from the figure shown.
mh_share=$(awk -v a="${MED[$nf]}" -v b="${MED[$mf]}" \
    'BEGIN { if (b > 0) printf "%.3f\n", a / b; else print "inf" }')
target "minhash --annotate $jobs_note, from a file, ≥ 70% of nshash's\
 throughput (same run)" "share $mh_share ($(mbps "$big_bytes" \
"${MED[$mf]}") MB/s, nshash $(mbps "$big_bytes" "${MED[$nf]}") MB/s)" \
    "$(met "$mh_share" 0.70)"
for m in "${methods[@]}"; do
	lo=$m-j$jobs_lo-mem-file hi=$m-j$jobs_hi-mem-file
	x=$(ratio "${MED[$lo]}" "${MED[$hi]}")
	target "$m -j$jobs_hi ≥ 1.8× the -j$jobs_lo throughput (in memory,\
 from a file)" "$x× ($(mbps "$big_bytes" "${MED[$hi]}") MB/s against\
 $(mbps "$big_bytes" "${MED[$lo]}"))" "$(met "$x" 1.8)"
done
# From a pipe: its throughput as a share of the file's, per configuration.
pipe_fig='' pipe_min='' pipe_min_label=''
for r in "${nsd_rows[@]}"; do
	[ "${INPUT[$r]}" = file ] || continue
	p=${r%-file}-pipe
	x=$(ratio "${MED[$r]}" "${MED[$p]}")
	l=$(row_label "$r")
	l=${l%, from a file}
	pipe_fig="$pipe_fig${pipe_fig:+, }$l $x"
	if [ -z "$pipe_min" ] ||
	    awk -v x="$x" -v y="$pipe_min" 'BEGIN { exit !(x < y) }'; then
		pipe_min=$x pipe_min_label=$l
	fi
done
target "from a pipe within 10% of from a file, every nsdedup configuration\
 (pipe throughput / file throughput ≥ 0.90)" "lowest $pipe_min\
 ($pipe_min_label); $pipe_fig" "$(met "$pipe_min" 0.90)"
# Peak RssAnon: every nsdedup row under 64 MiB.
rss_max=0 rss_max_label='' rss_over=() rss_unsampled=0
for r in "${nsd_rows[@]}"; do
	if [ "${RSSN[$r]}" = 0 ]; then
		rss_unsampled=$((rss_unsampled + 1))
		continue
	fi
	if [ "${RSS[$r]}" -gt "$rss_max" ] || [ -z "$rss_max_label" ]; then
		rss_max=${RSS[$r]} rss_max_label=$(row_label "$r")
	fi
	[ "${RSS[$r]}" -lt $((64 << 10)) ] ||
		rss_over+=("$(row_label "$r") $(mib "${RSS[$r]}")")
done
rss_fig="largest $(mib "$rss_max") ($rss_max_label)"
if [ ${#rss_over[@]} -gt 0 ]; then
	rss_fig="$rss_fig; ${#rss_over[@]} of ${#nsd_rows[@]} rows at 64 MiB"
	rss_fig="$rss_fig or more: $(printf '%s; ' "${rss_over[@]}")"
	rss_fig=${rss_fig%; }
	t_rss="NOT MET"
else
	t_rss=MET
fi
if [ "$rss_unsampled" -gt 0 ]; then
	rss_fig="$rss_fig; rows that ended before a first sample:"
	rss_fig="$rss_fig $rss_unsampled"
	[ -n "$rss_max_label" ] || t_rss="not measured"
fi
target "peak RssAnon under 64 MiB, every nsdedup row" "$rss_fig" "$t_rss"
# Against the baseline: this nsdedup's throughput as a share of the
# baseline's (baseline seconds / these seconds), and the lowest share.
declare -A SHARE
share_min=
if [ -n "$baseline" ]; then
	for r in "${pair_rows[@]}"; do
		SHARE[$r]=$(awk -v a="${PAIR_A[$r]}" -v b="${PAIR_B[$r]}" \
		    'BEGIN { printf "%.3f\n", b / a }')
		if [ -z "$share_min" ] || awk -v x="${SHARE[$r]}" \
		    -v y="$share_min" 'BEGIN { exit !(x < y) }'; then
			share_min=${SHARE[$r]}
			share_min_label=$(row_label "$r")
		fi
	done
	target "throughput ≥ 95% of the baseline's, every command compared" \
	    "lowest share $share_min (${share_min_label/ -j$jobs_hi/})" \
	    "$(met "$share_min" 0.95)"
fi
if [ -n "$baseline" ]; then
	target "uncompressed throughput ≥ 97% of the baseline's, every\
 command compared" "lowest share $share_min" "$(met "$share_min" 0.97)"
fi
for fmt in "${comp_rows[@]}"; do
	x=$(ratio "${COMP_PIPE[$fmt]}" "${COMP_SELF[$fmt]}")
	target "\`nsdedup F.jsonl.${COMP_EXT[$fmt]}\` at least as fast as\
 \`${COMP_UNPACK[$fmt]} F.jsonl.${COMP_EXT[$fmt]} | nsdedup\` (default\
 jobs)" "$x× ($(mbps "$big_bytes" \
"${COMP_SELF[$fmt]}") MB/s of decompressed records, against $(mbps \
"$big_bytes" "${COMP_PIPE[$fmt]}"))" "$(met "$x" 1.0)"
done
for m in "${comp_missing[@]}"; do
	target "compressed input, $m" "not measured" "not measured"
done
# The real text's: nsdedup against the references on the whole, English
# at -j1 against figures of its own, minhash against nshash, and the
# output against the baseline's.
real_mbps() {
	mbps "${REAL_BYTES[$1]}" "${REAL_MED[$2]}"
}
if [ -z "$REAL_MISSING" ]; then
	rn=all-nshash-j$jobs_hi rm=all-minhash-j$jobs_hi
	x=$(ratio "${REAL_MED[all-jq]}" "${REAL_MED[$rn]}")
	target "real text: nshash --annotate $jobs_note, from a file, ≥ 12×\
 \`jq -c .\`" "$x× ($(real_mbps all "$rn") MB/s, jq $(real_mbps all \
all-jq) MB/s)" "$(met "$x" 12)"
	x=$(ratio "${REAL_MED[all-awk]}" "${REAL_MED[$rn]}")
	target "real text: nshash --annotate $jobs_note, from a file, ≥ 3× the\
 awk exact dedup" "$x× (awk $(real_mbps all all-awk) MB/s)" "$(met "$x" 3)"
	for mt in nshash:350 simhash:300 minhash:200; do
		m=${mt%:*} want=${mt#*:}
		x=$(real_mbps en "en-$m-j$jobs_lo")
		target "real text, English records: $m --annotate -j$jobs_lo ≥\
 $want MB/s" "$x MB/s (awk $(real_mbps en en-awk) MB/s)" \
		    "$(met "$x" "$want")"
	done
	x=$(awk -v a="${REAL_MED[$rn]}" -v b="${REAL_MED[$rm]}" \
	    'BEGIN { if (b > 0) printf "%.3f\n", a / b; else print "inf" }')
	target "real text: minhash --annotate $jobs_note ≥ 70% of nshash's\
 throughput (same run)" "share $x ($(real_mbps all "$rm") MB/s, nshash\
 $(real_mbps all "$rn") MB/s)" "$(met "$x" 0.70)"
	if [ "$REAL_SAME" = "" ]; then
		target "real text: output byte for byte the baseline's, every\
 method compared, --explain included" "the same" MET
	elif [ "$REAL_SAME" != unchecked ]; then
		target "real text: output byte for byte the baseline's, every\
 method compared, --explain included" "differs: $REAL_SAME" "NOT MET"
	fi
else
	target "real text ($REAL_MISSING)" "not measured" "not measured"
fi
size_note=
if [ "$big_bytes" -lt $((1 << 30)) ] && [ "$size_bytes" -lt $((1 << 30)) ]
then
	size_note="Measured over $size; the targets are stated for 1 GB."
fi

if [ "$use_hyperfine" = 1 ]; then
	timer="hyperfine $(hyperfine --version | awk '{ print $2 }'):"
	timer="$timer \`hyperfine --runs $runs --style none --export-json"
	timer="$timer FILE [--prepare CMD] -- 'COMMAND'\`"
	cputool="hyperfine"
else
	timer="a bash loop of $runs runs timed with \`date +%s.%N\`"
	if [ "$use_time" = 1 ]; then
		cputool="\`/usr/bin/time -f '%U %S'\`"
	else
		cputool="not measured (n/a)"
	fi
fi

# The main table, in Markdown.
main_table() {
	local r rss
	printf '| command | median s | MB/s | ×jq | ×awk | user s | sys s '
	printf '| peak RssAnon |\n'
	printf '|---|---:|---:|---:|---:|---:|---:|---:|\n'
	for r in "${ref_rows[@]}" "${nsd_rows[@]}"; do
		rss=
		if [ -n "${RSSN[$r]:-}" ]; then
			rss=$(mib "${RSS[$r]}")
			[ "${RSSN[$r]}" != 0 ] || rss="n/a (no sample)"
		fi
		printf '| `%s` | %s | %s | %s | %s | %s | %s | %s |\n' \
		    "$(shown "${CMD[$r]}" 1)" "${MED[$r]}" \
		    "$(mbps "$big_bytes" "${MED[$r]}")" "${XJQ[$r]}" \
		    "${XAWK[$r]}" "${USR[$r]}" "${SYS[$r]}" "$rss"
	done
}

# The profiles of the methods named after $1 (the text's prefix of their
# files: "" for the generated corpus, "en-" or "zh-") side by side: stage,
# then CPU s and share for each.
profile_table() {
	local m pre=$1 files=()
	shift
	printf '| stage |'
	for m in "$@"; do
		printf ' %s CPU s | %s share |' "$m" "$m"
		files+=("$tmp/profile-$pre$m")
	done
	printf '\n|---|'
	for m in "$@"; do
		printf -- '---:|---:|'
	done
	printf '\n'
	# The files list the same stages in the same order.
	awk -F' *\\| *' '{ st[FNR] = $2; row[FNR] = row[FNR] " | " $3 " | " $4 }
	    FNR > n { n = FNR }
	    END { for (i = 1; i <= n; i++) printf "| %s%s |\n", st[i], row[i] }' \
	    "${files[@]}"
}

# A real-text command as the report shows it: the files named.
real_shown() {
	local c=$1 t
	for t in en zh all; do
		c=${c//"$(q "${REAL_FILE[$t]}")"/\$REAL_${t^^}}
	done
	c=${c//\$REAL_ALL/\$REAL}
	c=${c//"$(q "$NSDEDUP")"/\$NSDEDUP}
	echo "${c% > /dev/null}"
}

# The report's section on the real text: how it was made, its table, and
# the profile per language.
real_section() {
	local t r p m
	printf '`$REAL` is %s bytes of real news: ' "${REAL_BYTES[all]}"
	if [ -n "$REAL_ROUNDS" ]; then
		printf '%s round%s of `gzip -dc $NSD_SHARED_DATA/*.jsonl.gz | ' \
		    "$REAL_ROUNDS" "$([ "$REAL_ROUNDS" = 1 ] || echo s)"
		printf '%s --seed %s000+ROUND` ' "$NSD_REPOST" "$seed"
		printf '(the ids prefixed `rROUND:`), the last cut at a line'"'"'s '
		printf 'end, '
	else
		printf 'reused from %s, which an earlier run with ' \
		    "${REAL_FILE[all]}"
		printf -- '--keep-corpus made in rounds of nsd-repost as the '
		printf 'top of bench/run.sh says: '
	fi
	printf '%s records, %s of them copies made by nsd-repost (an id ' \
	    "$(wc -l <"${REAL_FILE[all]}")" \
	    "$(grep -c '^{"id":"[^"]*#r[0-9]*",' "${REAL_FILE[all]}")"
	printf 'ending `#rN`); past the first round, a record repeats one '
	printf 'of an earlier round or is a near-copy of one. `$REAL_EN` '
	printf 'holds its English '
	printf 'records (%s bytes) and `$REAL_ZH` its Chinese ones (%s bytes), ' \
	    "${REAL_BYTES[en]}" "${REAL_BYTES[zh]}"
	printf 'by the `lang` nsd-repost gives them. Median wall seconds of '
	printf '%s runs after one untimed run, in memory, from the file; ' \
	    "$runs"
	printf '×jq and ×awk against `jq -c .` and `awk '"'"'!seen[$0]++'"'"'` '
	printf 'on the same text.\n\n'
	printf '| text | command | median s | MB/s | ×jq | ×awk |\n'
	printf '|---|---|---:|---:|---:|---:|\n'
	for r in "${real_rows[@]}"; do
		t=${r%%-*}
		printf '| %s | `%s` | %s | %s | %s | %s |\n' "$t" \
		    "$(real_shown "${REAL_CMD[$r]}" | sed 's/|/\\|/g')" \
		    "${REAL_MED[$r]}" "$(real_mbps "$t" "$r")" \
		    "$(ratio "${REAL_MED[$t-jq]}" "${REAL_MED[$r]}")" \
		    "$(ratio "${REAL_MED[$t-awk]}" "${REAL_MED[$r]}")"
	done
	printf '\n'
	for t in en zh; do
		p=()
		for m in "${methods[@]}"; do
			[ -z "${PROFILE[$t-$m]:-}" ] || p+=("$m")
		done
		[ ${#p[@]} -gt 0 ] || continue
		printf 'Where the time goes on `$REAL_%s`, each method at -j%s, ' \
		    "${t^^}" "$jobs_lo"
		printf 'by stage as above:\n\n'
		profile_table "$t-" "${p[@]}"
		printf '\n'
	done
}

# The report, written beside its destination and renamed into place.
mkdir -p "$(dirname "$out")"
{
	printf '# nsdedup benchmark results\n\n'
	printf 'Written by `bench/run.sh --size %s --runs %s --seed %s%s`' \
	    "$size" "$runs" "$seed" "$baseline_flag"
	printf ' on %s; the machine is described below.\n\n' \
	    "$(date -u '+%Y-%m-%d %H:%M UTC')"

	printf '## Throughput\n\n'
	printf 'Each command reads `$CORPUS`, %s bytes of generated news ' \
	    "$big_bytes"
	printf '(%s; see "The corpus and what was found"), ' \
	    "$(gen_counts "$size")"
	printf 'from the file or from a pipe (`cat $CORPUS |`), and writes '
	printf 'to /dev/null; a `--db` command starts from no index each run '
	printf '(`%s` before it). ' "$(shown "$db_rm")"
	printf 'Median wall seconds of %s runs, after one untimed run; ' "$runs"
	printf 'MB/s is input bytes / median / 10^6; ×jq and ×awk are the '
	printf 'throughput over that of `jq -c .` and of '
	printf '`awk '"'"'!seen[$0]++'"'"'` (their median / this median); '
	printf 'user and sys are mean CPU seconds per run, of the whole '
	printf 'pipeline for a pipe. Peak RssAnon is nsdedup'"'"'s '
	printf 'anonymous resident memory, the largest of the samples of '
	printf '/proc/PID/status taken every 10 ms during the untimed run '
	printf '(sampled, so a shorter peak can be missed).\n\n'
	main_table
	printf '\n## Targets\n\n'
	printf '%s\n' "${targets[@]}"
	[ -z "$size_note" ] || printf '\n%s\n' "$size_note"
	printf '\n'

	printf '## Machine\n\n'
	printf -- '- System: %s\n' "$(uname -srm)"
	printf -- '- CPU: %s, %s cores online\n' "$cpu_model" "$(nproc)"
	printf -- '- Memory: %s\n' "$mem_gib"
	printf -- '- Load average (1, 5, 15 min) at the start: %s, ' \
	    "$load_start"
	printf 'at the end: %s\n' "$(cut -d ' ' -f 1-3 /proc/loadavg)"
	printf -- '- nsdedup: `%s`, `$NSDEDUP` = %s (built %s, sha256 %s...)' \
	    "$nsd_version" "$nsd_shown" "$nsd_mtime" "$nsd_sum"
	if [ "$NSDEDUP" != "$nsd_shown" ]; then
		printf ', copied at the start and the copy timed'
	fi
	printf '\n'
	[ -z "$cflags" ] || printf -- '- Built with CFLAGS: `%s`\n' "$cflags"
	printf -- '- jq: %s; awk: %s\n' "$(jq --version 2>&1)" "$awk_version"
	printf -- '- Timing: %s; the median of the runs. ' "$timer"
	printf 'User and sys: %s.\n\n' "$cputool"

	printf '## The corpus and what was found\n\n'
	printf '`%s --seed %s --size %s > $CORPUS`: %s bytes, %s.\n\n' \
	    "$GENCORPUS" "$seed" "$size" "$big_bytes" "$(gen_counts "$size")"
	printf -- '- nshash (`$NSDEDUP --annotate --stats $CORPUS`) found %s ' \
	    "${DUPS[nshash]}"
	printf 'duplicates where the corpus has %s reposts; its in-memory ' \
	    "$(reposts "$size")"
	printf 'index: %s, %s at its peak.\n' "${INDEX[nshash]}" \
	    "${INDEX_PEAK[nshash]}"
	printf -- '- simhash (defaults: --distance 3, block tables of the '
	printf 'fingerprint'"'"'s bits) found %s duplicates; each lookup ' \
	    "${DUPS[simhash]}"
	printf 'compared %s entries on average; its index: %s, %s at its ' \
	    "${CAND[simhash]}" "${INDEX[simhash]}" "${INDEX_PEAK[simhash]}"
	printf 'peak.\n'
	printf -- '- minhash (defaults: --threshold 0.5, LSH bands of the '
	printf 'signature'"'"'s 128 bins) found %s duplicates; each lookup ' \
	    "${DUPS[minhash]}"
	printf 'found %s candidate groups on average; its index: %s, %s at ' \
	    "${CAND[minhash]}" "${INDEX[minhash]}" "${INDEX_PEAK[minhash]}"
	printf 'its peak.\n'
	printf -- '- The index a `--db` run leaves: %s.\n\n' "$db_stats"
	printf 'A `--db` index is mapped from its file, so it is not in '
	printf 'the RssAnon column; an in-memory one is. '
	printf 'bench/QUALITY.md scores what each method finds against the '
	printf 'generator'"'"'s ground truth.\n\n'

	if [ -n "$baseline" ]; then
		printf '## Against a baseline\n\n'
		printf 'Baseline: `%s`, %s (sha256 %s...).\n\n' \
		    "$baseline_version" "$baseline_shown" "$baseline_sum"
		printf 'The nsdedup commands at the default number of jobs '
		printf '(no `-j`) reading the file, timed with this nsdedup '
		printf 'and with the baseline in its place, in turn: '
		printf '%s runs of each, in the order ABBA ABBA..., each run ' \
		    "$runs"
		printf 'on its own (`hyperfine --runs 1` or the fallback '
		printf 'loop), after one untimed run of each. The share is '
		printf 'this nsdedup'"'"'s throughput as a part of the '
		printf 'baseline'"'"'s '
		printf '(baseline median / this median); user s is the median '
		printf 'of the runs'"'"' user CPU seconds.'
		if [ "$baseline_minhash" = 0 ]; then
			printf ' The baseline has no `-m minhash` (it fails '
			printf 'with it on empty input): minhash is not '
			printf 'compared.'
		fi
		printf '\n\n'
		printf '| command | this median s | baseline median s | share '
		printf '| this user s | baseline user s |\n'
		printf '|---|---:|---:|---:|---:|---:|\n'
		for r in "${pair_rows[@]}"; do
			printf '| `%s` | %s | %s | %s | %s | %s |\n' \
			    "$(shown "${PAIR_CMD[$r]}" 1)" \
			    "${PAIR_A[$r]}" "${PAIR_B[$r]}" "${SHARE[$r]}" \
			    "${PUSR_A[$r]}" "${PUSR_B[$r]}"
		done
		printf '\n'
	fi

	printf '## Compressed inputs\n\n'
	if [ ${#comp_rows[@]} -eq 0 ]; then
		printf 'Not measured: %s.\n\n' "${comp_missing[*]}"
	else
		printf '`$CORPUS` compressed, then read by nsdedup itself '
		printf '(it decompresses on a thread of its own) and through '
		printf 'the decompressor in a pipe, at the default jobs; '
		printf 'median wall seconds of %s runs, MB/s of ' "$runs"
		printf 'decompressed bytes. Uncompressed, from the file: '
		printf '%s s (%s MB/s).\n\n' "${MED[$nf]}" \
		    "$(mbps "$big_bytes" "${MED[$nf]}")"
		printf '| format | compressed bytes | command | median s '
		printf '| MB/s | over the pipe |\n'
		printf '|---|---:|---|---:|---:|---:|\n'
		for fmt in "${comp_rows[@]}"; do
			printf '| %s | %s | `%s` | %s | %s | |\n' "$fmt" \
			    "${COMP_BYTES[$fmt]}" \
			    "$(shown "${COMP_PIPE_CMD[$fmt]}" 1)" \
			    "${COMP_PIPE[$fmt]}" \
			    "$(mbps "$big_bytes" "${COMP_PIPE[$fmt]}")"
			printf '| %s | %s | `%s` | %s | %s | %s× |\n' "$fmt" \
			    "${COMP_BYTES[$fmt]}" \
			    "$(shown "${COMP_SELF_CMD[$fmt]}" 1)" \
			    "${COMP_SELF[$fmt]}" \
			    "$(mbps "$big_bytes" "${COMP_SELF[$fmt]}")" \
			    "$(ratio "${COMP_PIPE[$fmt]}" "${COMP_SELF[$fmt]}")"
		done
		[ ${#comp_missing[@]} -eq 0 ] ||
			printf '\nNot measured: %s.\n' "${comp_missing[*]}"
		printf '\n'
	fi

	printf '## Where the time goes\n\n'
	printf 'CPU seconds by stage of `$NSDEDUP [-m simhash|minhash] '
	printf -- '--annotate '
	printf -- '-j%s $CORPUS > /dev/null`, from bench/profile.sh: ' \
	    "$jobs_lo"
	printf '`perf record -e cpu-clock` with DWARF call chains, each '
	printf 'sample charged to the stage of the innermost function on '
	printf 'its chain that has one (frame: reading and cutting lines; '
	printf 'scan: JSON and TSV syntax; decode: escapes; normalize; '
	printf 'split: sentences or features; hash; index; write; wait: '
	printf 'threads waiting; other). A run under perf is slower than '
	printf 'the timed ones; the shares are what to compare.\n\n'
	profiled=()
	for m in "${methods[@]}"; do
		[ -z "${PROFILE[$m]:-}" ] || profiled+=("$m")
	done
	[ ${#profiled[@]} -eq 0 ] || profile_table "" "${profiled[@]}"
	[ ${#profiled[@]} -eq 0 ] || [ ${#profiled[@]} -eq ${#methods[@]} ] ||
		printf '\n'
	for m in "${methods[@]}"; do
		[ -n "${PROFILE[$m]:-}" ] ||
			printf -- '- %s: %s.\n' "$m" "${PROFILE_MISSING[$m]}"
	done
	printf '\n'

	printf '## Shared corpora\n\n'
	if [ ${#shared_rows[@]} -eq 0 ]; then
		printf 'Not measured: no corpora at %s.\n\n' "$NSD_SHARED_DATA"
	else
		printf 'Each `%s/*.jsonl.gz`, decompressed once; ' \
		    "$NSD_SHARED_DATA"
		printf 'commands `jq -c . FILE > /dev/null`, '
		printf '`nsdedup --annotate FILE > /dev/null`, '
		printf '`nsdedup -m simhash --annotate FILE > /dev/null` and '
		printf '`nsdedup -m minhash --annotate FILE > /dev/null` '
		printf '(default jobs); '
		printf 'duplicates counted with `nsdedup [-m simhash|minhash] '
		printf -- "--annotate FILE | grep -c '\"is_dup\":true'\`. "
		printf 'bench/QUALITY.md '
		printf 'compares what the three methods find.\n\n'
		printf '| corpus | records | MB | jq s | jq MB/s |'
		for m in "${methods[@]}"; do
			printf ' %s s | %s MB/s | vs jq | %s duplicates |' \
			    "$m" "$m" "$m"
		done
		printf '\n|---|---:|---:|---:|---:|'
		for m in "${methods[@]}"; do
			printf -- '---:|---:|---:|---:|'
		done
		printf '\n'
		printf '%s\n' "${shared_rows[@]}"
		printf '\n'
	fi

	printf '## Real text\n\n'
	if [ -n "$REAL_MISSING" ]; then
		printf 'Not measured: %s.\n\n' "$REAL_MISSING"
	else
		real_section
	fi

	# bench/index-scale.sh's section, kept until it writes a new one, and
	# the analysis written by hand below it, kept until it is rewritten.
	if [ -f "$out" ]; then
		sed -n '/^<!-- index-scale: begin -->$/,'\
'/^<!-- index-scale: end/p' "$out"
		# Its MinHash section, which --minhash-only writes alone.
		sed -n '/^<!-- index-scale-minhash: begin -->$/,'\
'/^<!-- index-scale-minhash: end/p' "$out"
		# bench/redis.sh's section, likewise.
		sed -n '/^<!-- redis: begin -->$/,'\
'/^<!-- redis: end/p' "$out"
		# bench/year.sh's section, likewise.
		sed -n '/^<!-- year: begin -->$/,'\
'/^<!-- year: end/p' "$out"
		sed -n '/^<!-- analysis: begin -->$/,'\
'/^<!-- analysis: end/p' "$out" >"$tmp/analysis"
		if [ -s "$tmp/analysis" ]; then
			printf '\n'
			cat "$tmp/analysis"
		fi
	fi
} >"$out.tmp"
mv "$out.tmp" "$out"
note "wrote $out"

if [ "$scale" = 1 ]; then
	NSDEDUP=$NSDEDUP GENCORPUS=$GENCORPUS \
	    "$BASH" "$script_dir/index-scale.sh" --out "$out" ||
		die "bench/index-scale.sh failed"
fi

# The table and the targets, last.
printf '\n'
sed -n '/^## Throughput$/,/^## Machine$/{/^## Machine$/!p}' "$out"
