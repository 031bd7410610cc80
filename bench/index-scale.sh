#!/usr/bin/env bash
#
# bench/index-scale.sh: the persistent index at scale.  Builds an index of
# 10^8 fingerprints (20 million simulated records of 5) with
# bench/nsd-index-scale, then measures nsdedup --db against it.
#
# The daily cycle: K days, each a fresh 100 MB corpus of
# bench/nsd-gencorpus, run in sequence with nsdedup --annotate --db on one
# copy of the big index, which evolves through the folds of its log into
# the stage, the sweep that moves the stage into the table, and the growth
# that the big index (built at 74.5% load) starts at once; and the same
# corpora in sequence on an index that starts empty.  Each run starts with
# a cold page cache (dropped; this needs root); then the whole cycle again
# on a fresh copy, with the index's files and the corpus read into the
# cache before each run, which tells the cost of the disk from the cost of
# the index's work.  Per day: wall, user and system seconds, what the run
# read from the disk and wrote, its peak RssAnon (sampled every 0.02 s) and
# what --db-info says changed.  Also the cost of a run that adds 1,000
# records and of its commit alone.
#
# Then the same for -m simhash: an index of 10^7 simulated SimHash records
# (nsd-index-scale -m simhash, a fifth of them near-copies it must find)
# for the candidates each lookup compares and the rate as it fills, single
# runs against it and against an empty one, and its daily cycle.  The
# results replace the "Index at scale" section of the report (appended
# when it has none); the rest of the report is kept.
#
# Then -m minhash: an index of 10^7 simulated MinHash records
# (nsd-index-scale -m minhash: band keys and group records with
# signatures as the method makes them, a fifth of the records
# near-copies), the bytes of all its files (PATH, PATH.ids, PATH.log,
# PATH.stage) per original as it fills, and nsdedup -m minhash over the
# first --runs corpora in memory, against an empty index and against a
# copy of the big one.  Its results replace their own section, "MinHash
# index at scale", likewise.  With --minhash-only, only this part runs
# (--minhash-records 100M gives the figure at 10^8 records).
#
# It takes about 10 minutes and 12 GB in $TMPDIR, and the -m minhash part
# a few minutes more and 13 GB at 10^7 records (130 GB at 10^8); the
# indexes are deleted at the end.  make bench runs it after bench/run.sh (make bench
# BENCH_FLAGS=--no-scale leaves it out); make bench-scale runs it alone,
# with BENCH_SCALE_FLAGS.  Run it from the top of the build tree:
#
#     bench/index-scale.sh [--records 20M] [--fps 5] [--commit-every 1M]
#                          [--simhash-records 10M] [--runs 3] [--builds 3]
#                          [--days 8] [--simhash-days 4] [--day-size 100M]
#                          [--minhash-records 10M] [--minhash-only]
#                          [--seed 1] [--out bench/RESULTS.md]
#
# Environment:
#     NSDEDUP          the program under test (default ./src/nsdedup)
#     NSD_INDEX_SCALE  the index builder (default ./bench/nsd-index-scale)
#     GENCORPUS        the corpus generator (default ./bench/nsd-gencorpus)
#     GNU_TIME         GNU time, for each run's CPU time and I/O (default
#                      /usr/bin/time)
#     TMPDIR           where the indexes and corpora go (default /tmp)
#
# Needs bash, GNU coreutils, GNU time and pgrep; uses strace and perf when
# installed; drops the page cache when it may (root), and otherwise says
# that the "cold" runs were not.  Exits 0 when every command ran (whether
# or not the targets were met), 1 when a command failed, 2 on a usage
# error.

# The report's Markdown puts commands in backquotes inside single quotes.
# shellcheck disable=SC2016

set -euo pipefail

prog=bench/index-scale.sh
records=20M
sim_records=10M
mh_records=10M
minhash_only=0
fps=5
every=1M
runs=3
builds=3
days=8
sim_days=4
day_size=100M
seed=1
out=bench/RESULTS.md
# The targets.
mh_bytes_limit=600
mh_db_target=80
rss_limit_kib=$((64 << 10))
bytes_per_fp_limit=24
cycle_target=60
begin_mark='<!-- index-scale: begin -->'
end_mark='<!-- index-scale: end -->'
mh_begin_mark='<!-- index-scale-minhash: begin -->'
mh_end_mark='<!-- index-scale-minhash: end -->'

usage() {
	cat <<EOF
usage: $prog [--records N] [--fps N] [--commit-every N]
                          [--simhash-records N] [--runs N] [--builds N]
                          [--days N] [--simhash-days N] [--day-size SIZE]
                          [--minhash-records N] [--minhash-only]
                          [--seed N] [--out FILE]

  --records N       simulated records in the big index, K/M suffixes
                    (powers of 1000; default 20M)
  --fps N           fingerprints per simulated record (default 5)
  --commit-every N  commit the big index every N records (default 1M)
  --simhash-records N
                    simulated SimHash records in the big -m simhash index
                    (default 10M)
  --runs N          timed runs of the 1,000-record and the single -m
                    simhash and -m minhash measurements (default 3)
  --builds N        times each big index is built, for the medians of its
                    slices; the last one is measured (default 3)
  --days N          days of the daily cycle (default 8)
  --simhash-days N  days of the -m simhash daily cycle (default 4)
  --day-size SIZE   the corpus of a day, K/M/G suffixes (powers of 1024,
                    as nsd-gencorpus --size; default 100M)
  --minhash-records N
                    simulated records in the big -m minhash index
                    (default 10M)
  --minhash-only    run only the -m minhash part, and replace only its
                    section of the report
  --seed N          seed of the simulated records (default 1)
  --out FILE        the report whose "Index at scale" section is replaced
                    (default bench/RESULTS.md)
EOF
}

# shellcheck source=bench/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

while [ $# -gt 0 ]; do
	case $1 in
	--records|--fps|--commit-every|--simhash-records|--runs|--builds|\
	--days|--simhash-days|--day-size|--minhash-records|--seed|--out)
		[ $# -ge 2 ] || usage_error "option '$1' needs a value"
		opt=$1 val=$2
		shift 2 ;;
	--records=*|--fps=*|--commit-every=*|--simhash-records=*|--runs=*|\
	--builds=*|--days=*|--simhash-days=*|--day-size=*|\
	--minhash-records=*|--seed=*|--out=*)
		opt=${1%%=*} val=${1#*=}
		shift ;;
	--minhash-only)
		minhash_only=1
		shift
		continue ;;
	-h|--help)
		usage; exit 0 ;;
	*)
		usage_error "unknown argument '$1'" ;;
	esac
	case $opt in
	--records) records=$val ;;
	--simhash-records) sim_records=$val ;;
	--minhash-records) mh_records=$val ;;
	--fps) fps=$val ;;
	--commit-every) every=$val ;;
	--runs) runs=$val ;;
	--builds) builds=$val ;;
	--days) days=$val ;;
	--simhash-days) sim_days=$val ;;
	--day-size) day_size=$val ;;
	--seed) seed=$val ;;
	--out) out=$val ;;
	esac
done

# A count with an optional K/M/G suffix (powers of 1000).
to_count() {
	local n=${1%[KMGkmg]}
	case $1 in
	*[Kk]) echo $((n * 1000)) ;;
	*[Mm]) echo $((n * 1000000)) ;;
	*[Gg]) echo $((n * 1000000000)) ;;
	*) echo "$n" ;;
	esac
}

count_re='^[1-9][0-9]*[KMGkmg]?$'
[[ $records =~ $count_re ]] || usage_error "invalid --records '$records'"
[[ $sim_records =~ $count_re ]] ||
	usage_error "invalid --simhash-records '$sim_records'"
[[ $mh_records =~ $count_re ]] ||
	usage_error "invalid --minhash-records '$mh_records'"
[[ $every =~ $count_re ]] || usage_error "invalid --commit-every '$every'"
[[ $fps =~ ^[1-9][0-9]?$ ]] || usage_error "invalid --fps '$fps'"
[[ $runs =~ ^[1-9][0-9]*$ ]] || usage_error "invalid --runs '$runs'"
[[ $builds =~ ^[1-9][0-9]*$ ]] || usage_error "invalid --builds '$builds'"
[[ $days =~ ^[1-9][0-9]*$ ]] || usage_error "invalid --days '$days'"
[[ $sim_days =~ ^[1-9][0-9]*$ ]] ||
	usage_error "invalid --simhash-days '$sim_days'"
[[ $day_size =~ ^[1-9][0-9]*[KMG]?$ ]] ||
	usage_error "invalid --day-size '$day_size'"
[[ $seed =~ ^[0-9]+$ ]] || usage_error "invalid --seed '$seed'"
[ -n "$out" ] || usage_error "empty --out"
nrec=$(to_count "$records")
nsim=$(to_count "$sim_records")
nmh=$(to_count "$mh_records")
nevery=$(to_count "$every")
nfp=$((nrec * fps))
day_bytes=$(to_bytes "$day_size")
[ "$day_bytes" -ge 65536 ] || usage_error "--day-size under 64K"
# The corpora: one a day, the first --runs also for the single -m simhash
# runs.
ncorpora=$days
[ "$sim_days" -le "$ncorpora" ] || ncorpora=$sim_days
[ "$runs" -le "$ncorpora" ] || ncorpora=$runs

NSDEDUP=${NSDEDUP:-./src/nsdedup}
NSD_INDEX_SCALE=${NSD_INDEX_SCALE:-./bench/nsd-index-scale}
GENCORPUS=${GENCORPUS:-./bench/nsd-gencorpus}
GNU_TIME=${GNU_TIME:-/usr/bin/time}
tmproot=${TMPDIR:-/tmp}
for p in "$NSDEDUP" "$NSD_INDEX_SCALE" "$GENCORPUS" "$GNU_TIME"; do
	[ -x "$p" ] ||
		die "$p: not an executable (see the environment in $prog)"
done
"$NSDEDUP" --version >/dev/null 2>&1 || die "$NSDEDUP --version failed"
"$GNU_TIME" -f '%U %S %I %O' -o /dev/null true 2>/dev/null ||
	die "$GNU_TIME: not GNU time (-f FORMAT -o FILE failed)"
command -v pgrep >/dev/null 2>&1 || die "pgrep: not found"

# Room: the big table and one copy, each with its id file, the copy's
# PATH.next (twice the table) and stage, the corpora and the pieces.
slots=4096
while [ $((slots * 75)) -lt $((nfp * 100)) ]; do
	slots=$((slots * 2))
done
need_kib=$(( (slots * 16 * 4 + slots * 4 + nrec * 64 +
    ncorpora * day_bytes + (600 << 20)) >> 10 ))
# The -m minhash part: its big index (about 500 bytes a record, and its
# table twice over while a growth rebuilds it) and one copy, and its
# corpora.
mh_need_kib=$(( (nmh * 1280 + runs * day_bytes + (600 << 20)) >> 10 ))
if [ "$minhash_only" = 1 ] || [ "$mh_need_kib" -gt "$need_kib" ]; then
	need_kib=$mh_need_kib
fi
avail_kib=$(df -Pk "$tmproot" | awk 'NR == 2 { print $4 }')
[ "$avail_kib" -ge "$need_kib" ] ||
	die "$tmproot has $((avail_kib >> 10)) MiB free," \
	    "needs $((need_kib >> 10)) MiB (set TMPDIR)"

load_start=$(cut -d ' ' -f 1-3 /proc/loadavg)
script_t0=$(date +%s)
tmp=$(mktemp -d "$tmproot/nsdedup-scale.XXXXXX")
sampler=
cleanup() {
	[ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

freeze_programs "$tmp" NSDEDUP NSD_INDEX_SCALE
nsd_version=$("$NSDEDUP" --version 2>&1 | head -n 1)
nsd_sum=$(sha256sum <"$NSDEDUP" | cut -c 1-16)

use_perf=0
if command -v perf >/dev/null 2>&1 &&
    perf stat -e page-faults true >/dev/null 2>&1; then
	use_perf=1
fi
use_strace=0
if command -v strace >/dev/null 2>&1 && strace -o /dev/null true 2>/dev/null
then
	use_strace=1
fi
# Whether the page cache can be dropped before a cold run, and if not why.
cold_ok=0
cold_why=
if [ ! -w /proc/sys/vm/drop_caches ]; then
	cold_why="/proc/sys/vm/drop_caches is not writable"
	[ "$(id -u)" = 0 ] || cold_why="not root, $cold_why"
elif ! (echo 1 >/proc/sys/vm/drop_caches) 2>/dev/null; then
	cold_why="writing /proc/sys/vm/drop_caches failed"
else
	cold_ok=1
fi

# Start sampling the RssAnon of process $1 every $sample_every s into file
# $2 (one KiB figure a line) until it exits; the sampler's pid goes to
# $sampler.  With $3 set, $1 is a wrapper (perf stat, GNU time) and its
# child is sampled.  The status file is read in one go and matched in the
# shell, with no program started for a sample, often enough for a run over
# a day's corpus, which can take under a second.
sample_every=0.02
sample_start() {
	local pid=$1 file=$2 wrapped=${3:-0}
	: >"$file"
	(
		p=
		[ "$wrapped" = 1 ] || p=$pid
		re='RssAnon:[[:space:]]+([0-9]+)'
		while [ -r "/proc/$pid/status" ]; do
			if [ -z "$p" ]; then
				p=$(pgrep -P "$pid" | head -n 1) || true
			fi
			if [ -n "$p" ] && st=$(<"/proc/$p/status") &&
			    [[ $st =~ $re ]]; then
				echo "${BASH_REMATCH[1]}" >>"$file"
			fi
			sleep "$sample_every"
		done
	) 2>/dev/null &
	sampler=$!
}

# Wait for the sampler, which sees a moment later that its process is gone
# (so a timed run takes its end time before).
sample_stop() {
	wait "$sampler" 2>/dev/null || true
	sampler=
}

# The largest figure in the sample files given (0 when they are empty).
sample_max() {
	cat "$@" | awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { print m }'
}

sample_count() {
	cat "$@" | awk 'END { print NR }'
}

now() {
	date +%s.%N
}

elapsed() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f\n", b - a }'
}

# The entries committed in the index at $1: in the table, the stage and
# the log.
fingerprints() {
	"$NSDEDUP" --db "$1" --db-info |
	    awk '/^entries:/ { printf "%.0f\n", $2 + $6 + $10 }'
}

# The records the log of the index at $1 takes before it is folded.
log_limit() {
	"$NSDEDUP" --db "$1" --db-info |
	    sed -n 's/^log:.*folded into the stage at \([0-9]*\)).*/\1/p'
}

# The --db-info of the index at $1, without the directory of the
# temporary files.
db_info() {
	local info
	info=$("$NSDEDUP" --db "$1" --db-info 2>&1) ||
		die "nsdedup --db $1 --db-info failed: $info"
	printf '%s\n' "${info//"$tmp/"/}"
}

# Remove an index and its companion files.
rm_index() {
	rm -f "$1" "$1.ids" "$1.log" "$1.lock" "$1.stage" "$1.next" \
	    "$1.new" "$1.stage.new" "$1.filter" "$1.filter.new" "$1.undo" \
	    "$1.times" "$1.times.new"
}

# Copy the index at $1 to $2 (the stage, the growing table, the key
# filter and what undo keeps too when there are), holes kept, and sync,
# untimed: a copy leaves dirty pages that would otherwise be written back
# inside the timed run that follows.
copy_index() {
	local s
	rm_index "$2"
	for s in '' .ids .log .stage .next .filter .undo .times; do
		[ ! -e "$1$s" ] || cp --sparse=always "$1$s" "$2$s"
	done
	sync
}

# The state of the index at $1 from --db-info, on one line: its slots; the
# entries in the table, the stage and the log; the log's records and its
# limit; the stage's build (0: none); the sweep's position and how much of
# the hash space it covered since the last fold (percent); and while it
# grows, PATH.next's slots and how far round the growth sweep is (percent).
# All 0 when there is no index.
ix_state() {
	if [ ! -e "$1" ]; then
		echo 0 0 0 0 0 0 0 0 0 0 0
		return
	fi
	"$NSDEDUP" --db "$1" --db-info | awk '
	    /^entries:/ { t = $2; s = $6; l = $10 }
	    /^load:/ { n = $4 }
	    /^log:/ { r = $2; lim = $NF; sub(/\)$/, "", lim) }
	    /^stage:/ && $2 != "none" {
		b = $0; sub(/.*\(build /, "", b); sub(/[^0-9].*/, "", b) }
	    /^sweep:/ { c = $3; d = $8 }
	    /^growing:/ { ns = $3; g = $(NF - 8) }
	    END { printf "%.0f %.0f %.0f %.0f %.0f %.0f %.0f %.1f %.1f %.0f " \
		"%.1f\n", n, t, s, l, r, lim, b, c, d, ns, g }'
}

# What changed between the states (of ix_state) in files $1 and $2, in
# words.
ix_events() {
	cat "$1" "$2" | awk '
	function p2(n,   k) {
		for (k = 0; n > 1; k++)
			n /= 2
		return "2^" k
	}
	function short(n) {
		if (n >= 1e6)
			return sprintf("%.2fM", n / 1e6)
		if (n >= 1e4)
			return sprintf("%.0fk", n / 1e3)
		return sprintf("%.0f", n)
	}
	function add(s) {
		e = e (e == "" ? "" : "; ") s
	}
	NR == 1 { split($0, b); next }
	{
		split($0, a)
		if (b[1] == 0)
			add("created, " p2(a[1]) " slots")
		else if (a[1] != b[1])
			add("grown to " p2(a[1]) " slots")
		if (a[7] > b[7] + 1)
			add("folded " a[7] - b[7] " times, stage " short(a[3]))
		else if (a[7] != b[7])
			add("folded, stage " short(a[3]))
		else if (a[5] < b[5] && a[1] == b[1])
			add("log emptied")
		if (a[10] > 0 && b[10] != a[10])
			add("growth to " p2(a[10]) " started, " a[11] "% round")
		else if (a[10] > 0)
			add("growth " b[11] " to " a[11] "% round")
		if (b[1] > 0 && a[8] != b[8])
			add("sweep " b[8] " to " a[8] "%")
		add("log " short(a[5]) " of " short(a[6]))
		print e
	}'
}

# Medians over the builds of each column of each slice line, for files
# $tmp/$1-1.. (as many columns each as the builder prints), into $tmp/$1.
median_slices() {
	paste -d ' ' "$tmp/$1"-[0-9]* | awk -v k="$builds" '{
	nc = NF / k
	for (c = 1; c <= nc; c++) {
		n = 0
		for (b = 0; b < k; b++)
			v[++n] = $(b * nc + c)
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
				t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
			}
		m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		printf "%s%s", m, c < nc ? " " : "\n"
	}
	}' >"$tmp/$1"
}

# "MET" when $1 >= $2, else "NOT MET".
status() {
	if awk -v x="$1" -v y="$2" 'BEGIN { exit !(x >= y) }'; then
		echo MET
	else
		echo "NOT MET"
	fi
}

# --- MinHash: band keys and signatures at 10^7 records --------------------

# The corpora d1 to d<runs>, where the daily cycle did not make them.
mh_corpora() {
	local i
	for ((i = 1; i <= runs; i++)); do
		[ ! -f "$tmp/d$i.jsonl" ] || continue
		"$GENCORPUS" --seed $((2000 + i)) --size "$day_size" \
		    >"$tmp/d$i.jsonl" 2>/dev/null ||
			die "corpus generation failed"
	done
	sync
}

# One timed run of nsdedup -m minhash --annotate over the corpus $2, with
# nsdedup's other options after them; its seconds go to $tmp/mtimes-$1.
mtimed() {
	local w=$1 c=$2 t0 t1 st=0
	shift 2
	t0=$(now)
	"$NSDEDUP" -m minhash --annotate "$@" "$c" >/dev/null \
	    2>"$tmp/mstats" || st=$?
	t1=$(now)
	[ "$st" -eq 0 ] ||
		die "nsdedup -m minhash $* $c failed:" \
		    "$(tail -n 1 "$tmp/mstats")"
	elapsed "$t0" "$t1" >>"$tmp/mtimes-$w"
}

# The size of file $1 in bytes, 0 when there is none.
size_of() {
	if [ -e "$1" ]; then
		stat -c %s "$1"
	else
		echo 0
	fi
}

# Build the big -m minhash index, time nsdedup -m minhash against it, and
# replace the report's "MinHash index at scale" section.
minhash_part() {
	local mbig=$tmp/big-minhash.nsd mempty=$tmp/empty-minhash.nsd
	local mcopy=$tmp/copy-minhash.nsd i w c slice t0 t1 header groups
	local keys all per per_rec s bytes status_bytes status_db
	local -A size med mbps pct

	mh_corpora
	slice=$((nmh / 10 > 0 ? nmh / 10 : 1))
	rm_index "$mbig"
	note "building $mbig: $nmh MinHash records"
	t0=$(now)
	"$NSD_INDEX_SCALE" -m minhash -n "$nmh" -s "$slice" -c "$nevery" \
	    -S "$seed" "$mbig" >"$tmp/mbuild.log" 2>"$tmp/build.err" || {
		cat "$tmp/build.err" >&2
		die "building the MinHash index failed"
	}
	t1=$(now)
	tail -n 3 "$tmp/mbuild.log" >&2
	header=$(head -n 1 "$tmp/mbuild.log" | sed 's/^# //')
	grep -v '^#' "$tmp/mbuild.log" >"$tmp/mslices"
	groups=$(sed -n 's/^# total .* \([0-9]*\) groups;.*/\1/p' \
	    "$tmp/mbuild.log")
	keys=$(fingerprints "$mbig")
	all=0
	for s in table ids log stage next filter undo times; do
		if [ "$s" = table ]; then
			size[$s]=$(size_of "$mbig")
		else
			size[$s]=$(size_of "$mbig.$s")
		fi
		all=$((all + size[$s]))
	done
	per=$(awk -v a="$all" -v g="$groups" 'BEGIN { printf "%.1f", a / g }')
	per_rec=$(awk -v a="$all" -v n="$nmh" 'BEGIN { printf "%.1f", a / n }')
	db_info "$mbig" >"$tmp/mdb-info"

	# In memory, against an empty index, against a fresh copy of the big
	# one, each run over the same corpus, its file read first.
	note "timing -m minhash runs in memory, against an empty index and" \
	    "against the big one"
	for w in memory empty big; do
		: >"$tmp/mtimes-$w"
	done
	for ((i = 1; i <= runs; i++)); do
		c=$tmp/d$i.jsonl
		cat "$c" >/dev/null
		mtimed memory "$c"
		rm_index "$mempty"
		mtimed empty "$c" --db "$mempty"
		copy_index "$mbig" "$mcopy"
		mtimed big "$c" --db "$mcopy"
		rm_index "$mcopy"
	done
	rm_index "$mempty"
	rm_index "$mbig"
	bytes=$(stat -c %s "$tmp/d1.jsonl")
	for w in memory empty big; do
		med[$w]=$(median <"$tmp/mtimes-$w")
		mbps[$w]=$(awk -v b="$bytes" -v s="${med[$w]}" \
		    'BEGIN { printf "%.1f\n", b / s / 1e6 }')
		pct[$w]=$(awk -v a="${med[memory]}" -v b="${med[$w]}" \
		    'BEGIN { printf "%.0f\n", 100 * a / b }')
	done
	status_bytes=$(status "$mh_bytes_limit" "$per")
	status_db=$(status "$(awk -v a="${pct[empty]}" -v b="${pct[big]}" \
	    'BEGIN { print (a < b ? a : b) }')" "$mh_db_target")

	{
		printf '%s\n' "$mh_begin_mark"
		printf '## MinHash index at scale\n\n'
		printf 'Written by `bench/index-scale.sh --minhash-only '
		printf -- '--minhash-records %s --runs %s --day-size %s ' \
		    "$mh_records" "$runs" "$day_size"
		printf -- '--commit-every %s --seed %s` (the whole of ' \
		    "$every" "$seed"
		printf '`bench/index-scale.sh` writes it too) on %s; %s; ' \
		    "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(uname -srm)"
		printf 'CPU: %s, %s cores; %s (sha256 %s); index in %s; load ' \
		    "$(awk -F': *' '/^model name/ { print $2; exit }' \
		    /proc/cpuinfo 2>/dev/null || echo unknown)" "$(nproc)" \
		    "$nsd_version" "$nsd_sum" "$tmproot"
		printf 'average (1, 5, 15 min) at the end: %s.\n\n' \
		    "$(cut -d ' ' -f 1-3 /proc/loadavg)"
		printf '`nsd-index-scale -m minhash -n %s -s %s -c %s -S %s ' \
		    "$nmh" "$slice" "$nevery" "$seed"
		printf 'big-minhash.nsd` (%s s): %s. Per slice: the band keys ' \
		    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }')" \
		    "$header"
		printf 'entered, the rate (growth included), the candidates '
		printf 'each lookup compared, the near-copies found, and the '
		printf 'bytes of all the index'"'"'s files per original (group) '
		printf 'when the slice was committed:\n\n'
		printf '| records | band keys | records/s | candidates per '
		printf 'lookup | near-copies found | bytes per original |\n'
		printf '|---:|---:|---:|---:|---:|---:|\n'
		awk '{ printf "| %d | %d | %.0f | %s | %d of %d | %s |\n",
		    $1, $2, $4, $10, $12, $11, $13 }' "$tmp/mslices"
		printf '\nAt the end, %s originals of %s records, %s band keys ' \
		    "$groups" "$nmh" "$keys"
		printf '(%s per original): the table (PATH) %s bytes, the group ' \
		    "$(awk -v k="$keys" -v g="$groups" \
		    'BEGIN { printf "%.2f", k / g }')" "${size[table]}"
		printf 'records (PATH.ids) %s, the log %s, the stage %s, ' \
		    "${size[ids]}" "${size[log]}" "${size[stage]}"
		printf 'PATH.next %s, the key filter %s, PATH.undo %s, ' \
		    "${size[next]}" "${size[filter]}" "${size[undo]}"
		printf 'PATH.times %s: ' "${size[times]}"
		printf '%s bytes in all, **%s per original** ' "$all" "$per"
		printf '(%s per record).\n\n' "$per_rec"
		printf '`nsdedup --db-info big-minhash.nsd`:\n\n```\n'
		cat "$tmp/mdb-info"
		printf '```\n\n'
		printf '`nsdedup -m minhash --annotate` over the corpora d1 to '
		printf 'd%s (%s bytes each, `nsd-gencorpus --size %s`), median ' \
		    "$runs" "$bytes" "$day_size"
		printf 'of %s runs, each file read first:\n\n' "$runs"
		printf '| run | seconds | MB/s | of in memory |\n'
		printf '|---|---:|---:|---:|\n'
		printf '| in memory | %s | %s | 100%% |\n' "${med[memory]}" \
		    "${mbps[memory]}"
		printf '| `--db empty.nsd` (a fresh index each run) | %s | %s ' \
		    "${med[empty]}" "${mbps[empty]}"
		printf '| %s%% |\n' "${pct[empty]}"
		printf '| `--db copy-of-big.nsd` (a fresh copy each run) | %s ' \
		    "${med[big]}"
		printf '| %s | %s%% |\n\n' "${mbps[big]}" "${pct[big]}"
		printf '| target | measured | status |\n|---|---|---|\n'
		printf '| all files <= %s bytes per original | %s at %s ' \
		    "$mh_bytes_limit" "$per" "$nmh"
		printf 'records | %s |\n' "$status_bytes"
		printf '| `--db` >= %s%% of the in-memory throughput | ' \
		    "$mh_db_target"
		printf '%s%% against an empty index, %s%% against the big one ' \
		    "${pct[empty]}" "${pct[big]}"
		printf '| %s |\n\n' "$status_db"
		printf '%s\n' "$mh_end_mark"
	} >"$tmp/mh-section"
	sed -i 's/[[:space:]]*$//' "$tmp/mh-section"
	replace_section "$mh_begin_mark" "$mh_end_mark" "$tmp/mh-section" \
	    "$out"
	note "wrote the MinHash section of $out"
}

if [ "$minhash_only" = 1 ]; then
	minhash_part
	exit 0
fi

# --- The big index -------------------------------------------------------

big=$tmp/big.nsd
perf_build=()
[ "$use_perf" = 0 ] || perf_build=(perf stat -x ';' -o "$tmp/perf-build"
    -e 'task-clock,page-faults,major-faults,context-switches' --)
: >"$tmp/rss-build"
: >"$tmp/build-times"
for ((b = 1; b <= builds; b++)); do
	rm_index "$big"
	note "building $big ($b of $builds): $nrec records of $fps fingerprints"
	t0=$(now)
	"${perf_build[@]}" "$NSD_INDEX_SCALE" -n "$nrec" -f "$fps" \
	    -c "$nevery" -S "$seed" "$big" >"$tmp/build-$b.log" \
	    2>"$tmp/build.err" &
	build_pid=$!
	sample_start "$build_pid" "$tmp/rss-build-$b" "$use_perf"
	st=0
	wait "$build_pid" || st=$?
	t1=$(now)
	sample_stop
	[ "$st" -eq 0 ] || {
		cat "$tmp/build.err" >&2
		die "building the index failed"
	}
	elapsed "$t0" "$t1" >>"$tmp/build-times"
	cat "$tmp/rss-build-$b" >>"$tmp/rss-build"
	grep -v '^#' "$tmp/build-$b.log" >"$tmp/slices-$b"
	tail -n 2 "$tmp/build-$b.log" >&2
done
build_s=$(median <"$tmp/build-times")
# The last build's log, for its totals; the slices are medians.
cp "$tmp/build-$builds.log" "$tmp/build.log"
median_slices slices

# The slices: records fps seconds rec/s fp/s grows grow_s commit_s rss_kib.
nslices=$(wc -l <"$tmp/slices")
[ "$nslices" -ge 2 ] || die "fewer than two slices: raise --records"
final_fps=$(awk '{ v = $2 } END { print v }' "$tmp/slices")
# Rates of slice $1: as measured (growth included), and growth set aside.
slice_rate_at() {
	awk -v f="$fps" -v k="$1" '{ n = $1 - p; p = $1 }
	    NR == k { printf "%.0f %.0f\n", n * f / $3,
		($3 > $7 ? n * f / ($3 - $7) : 0) }' "$tmp/slices"
}
read -r first_fps first_fps_steady _ < <(slice_rate_at 1)
read -r last_fps last_fps_steady _ < <(slice_rate_at "$nslices")
ratio_grown=$(awk -v a="$last_fps" -v b="$first_fps" \
    'BEGIN { printf "%.2f\n", a / b }')
ratio_steady=$(awk -v a="$last_fps_steady" -v b="$first_fps_steady" \
    'BEGIN { printf "%.2f\n", a / b }')
grow_total=$(awk '{ s += $7 } END { printf "%.1f\n", s }' "$tmp/slices")
commit_max=$(awk '$8 > m { m = $8 } END { printf "%.3f\n", m }' \
    "$tmp/slices")
rss_build_int=$(awk '/peak RssAnon/ { print $(NF - 1) }' "$tmp/build.log")
rss_build_ext=$(sample_max "$tmp/rss-build")
rss_build_n=$(sample_count "$tmp/rss-build")
table_bytes=$(stat -c %s "$big")
big_log_limit=$(log_limit "$big")
ids_bytes=$(stat -c %s "$big.ids")
bpf_table=$(awk -v s="$table_bytes" -v n="$final_fps" \
    'BEGIN { printf "%.2f\n", s / n }')
bpf_ids=$(awk -v s="$ids_bytes" -v n="$final_fps" \
    'BEGIN { printf "%.2f\n", s / n }')
bpf_all=$(awk -v s="$((table_bytes + ids_bytes))" -v n="$final_fps" \
    'BEGIN { printf "%.2f\n", s / n }')
db_info "$big" >"$tmp/db-info"
ids_committed=$(sed -n 's/^file size:.*(\([0-9]*\) committed).*/\1/p' \
    "$tmp/db-info")
ids_committed=${ids_committed:-0}
load=$(awk -v n="$final_fps" -v s="$((table_bytes - 8192))" \
    'BEGIN { printf "%.1f\n", 100 * n / (s / 16) }')
build_perf=
if [ -s "$tmp/perf-build" ]; then
	build_perf=$(awk -F';' '
	    $3 ~ /^(page-faults|major-faults|context-switches)$/ {
		printf "%s%s %s", sep, $1, $3; sep = ", " }' "$tmp/perf-build")
fi
big_entries=$(fingerprints "$big")

# --- Corpora --------------------------------------------------------------

# Records of seeds the big index has not seen: 1,000-record pieces for the
# commit runs, and a corpus a day, d1 to dN, of seeds 2001 to 200N.
note "generating corpora"
piece_runs=$((runs + 1 + (use_strace ? runs : 0)))
"$GENCORPUS" --seed 1001 --size $(((piece_runs + 2) * 4))M \
    >"$tmp/pieces.jsonl" 2>/dev/null || die "corpus generation failed"
split -l 1000 -d -a 3 "$tmp/pieces.jsonl" "$tmp/piece-"
rm -f "$tmp/pieces.jsonl"
n_pieces=$(find "$tmp" -name 'piece-*' | wc -l)
[ "$n_pieces" -gt "$piece_runs" ] ||
	die "only $n_pieces pieces of 1000 records, $piece_runs needed"
for ((i = 1; i <= ncorpora; i++)); do
	"$GENCORPUS" --seed $((2000 + i)) --size "$day_size" \
	    >"$tmp/d$i.jsonl" 2>/dev/null || die "corpus generation failed"
done
# Every sync of the runs would otherwise write the new corpora too.
sync
# Sets $piece to the next unused piece.
piece_n=0
next_piece() {
	printf -v piece '%s/piece-%03d' "$tmp" "$piece_n"
	piece_n=$((piece_n + 1))
}

# --- The daily cycle ------------------------------------------------------

# One run of nsdedup --annotate --db $1 over the corpus $2 in cache mode $3
# (cold: the page cache dropped first, when it may be; warm: the index's
# files and the corpus read first), with nsdedup's other options after
# them.  Appends to file $4 "wall user sys read_kib written_kib rss_kib
# corpus_bytes", to $4.ev what changed in the index, to $4.state its state
# after the run (and before it, when $4.state is empty), and its RssAnon
# samples to $4.rss.
day_run() {
	local ix=$1 c=$2 mode=$3 log=$4 pid st=0 t0 t1 f u s i o
	shift 4
	ix_state "$ix" >"$tmp/state-before"
	[ -s "$log.state" ] || cat "$tmp/state-before" >>"$log.state"
	sync
	if [ "$mode" = warm ]; then
		for f in "$ix" "$ix.ids" "$ix.log" "$ix.stage" "$ix.next" \
		    "$ix.filter" "$c"; do
			[ ! -e "$f" ] || cat "$f" >/dev/null
		done
	elif [ "$cold_ok" = 1 ]; then
		echo 3 >/proc/sys/vm/drop_caches
	fi
	t0=$(now)
	"$GNU_TIME" -f '%U %S %I %O' -o "$tmp/time-run" "$NSDEDUP" "$@" \
	    --annotate --db "$ix" "$c" >/dev/null 2>"$tmp/run.err" &
	pid=$!
	sample_start "$pid" "$tmp/rss-run" 1
	wait "$pid" || st=$?
	t1=$(now)
	sample_stop
	[ "$st" -eq 0 ] ||
		die "nsdedup $* --annotate --db $ix $c failed (exit $st):" \
		    "$(tail -n 1 "$tmp/run.err")"
	ix_state "$ix" >"$tmp/state-after"
	cat "$tmp/state-after" >>"$log.state"
	ix_events "$tmp/state-before" "$tmp/state-after" >>"$log.ev"
	read -r u s i o < <(tail -n 1 "$tmp/time-run")
	# GNU time counts blocks of 512 bytes.
	printf '%s %s %s %s %s %s %s\n' "$(elapsed "$t0" "$t1")" "$u" "$s" \
	    $((i / 2)) $((o / 2)) "$(sample_max "$tmp/rss-run")" \
	    "$(stat -c %s "$c")" >>"$log"
	cat "$tmp/rss-run" >>"$log.rss"
}

# The daily cycle $1: days 1 to $3 in sequence, the corpus d<day> each, on a
# copy of the index at $2 and on an index that starts empty, in cache mode
# $4 (cold or warm), with nsdedup's other options after them.  Writes
# $tmp/cyc-$1.big and $tmp/cyc-$1.empty (see day_run), and the copy's
# --db-info after the last day to $tmp/cyc-$1.info.
run_cycle() {
	local name=$1 src=$2 n=$3 mode=$4 i f cix eix
	cix=$tmp/copy-$(basename "$src")
	eix=$tmp/empty-$(basename "$src")
	shift 4
	note "daily cycle $name: $n days, $mode, on a copy of $src" \
	    "and on an empty index"
	for f in "$tmp/cyc-$name".{big,empty}; do
		: >"$f"
		: >"$f.ev"
		: >"$f.state"
		: >"$f.rss"
	done
	copy_index "$src" "$cix"
	rm_index "$eix"
	for ((i = 1; i <= n; i++)); do
		f=$tmp/cyc-$name
		day_run "$cix" "$tmp/d$i.jsonl" "$mode" "$f.big" "$@"
		day_run "$eix" "$tmp/d$i.jsonl" "$mode" "$f.empty" "$@"
		note "day $i: $(tail -n 1 "$f.big" | cut -d ' ' -f 1) s" \
		    "($(tail -n 1 "$f.big.ev")), empty index" \
		    "$(tail -n 1 "$f.empty" | cut -d ' ' -f 1) s"
	done
	db_info "$cix" >"$tmp/cyc-$name.info"
	rm_index "$cix"
	rm_index "$eix"
}

# The totals of cycle $1, as C[$1.KEY]: days, bytes, big_s, empty_s, pct
# (the big index's throughput against the empty one's, percent), big_mbps,
# empty_mbps, big_cpu, empty_cpu (user+sys s), big_read, big_written,
# empty_read, empty_written (MiB), rss_big, rss_empty (KiB), max_day,
# max_s, med_s and max_x (the big index's longest day, and against its
# median day).
declare -A C
cycle_totals() {
	local k v
	while read -r k v; do
		C[$1.$k]=$v
	done < <(paste -d ' ' "$tmp/cyc-$1.big" "$tmp/cyc-$1.empty" | awk '
	    { w[NR] = $1; bs += $1; es += $8; bc += $2 + $3; ec += $9 + $10
	      br += $4; bw += $5; er += $11; ew += $12; by += $7
	      if ($6 > rb) rb = $6
	      if ($13 > re) re = $13
	      if ($1 > mx) { mx = $1; md = NR } }
	    END {
		n = NR
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && w[j - 1] > w[j]; j--) {
				t = w[j]; w[j] = w[j - 1]; w[j - 1] = t
			}
		m = n % 2 ? w[(n + 1) / 2] : (w[n / 2] + w[n / 2 + 1]) / 2
		printf "days %d\nbytes %.0f\n", n, by
		printf "big_s %.2f\nempty_s %.2f\n", bs, es
		printf "pct %.0f\n", 100 * es / bs
		printf "big_mbps %.1f\nempty_mbps %.1f\n", by / bs / 1e6,
		    by / es / 1e6
		printf "big_cpu %.2f\nempty_cpu %.2f\n", bc, ec
		printf "big_read %.0f\nbig_written %.0f\n", br / 1024,
		    bw / 1024
		printf "empty_read %.0f\nempty_written %.0f\n", er / 1024,
		    ew / 1024
		printf "rss_big %d\nrss_empty %d\n", rb, re
		printf "max_day %d\nmax_s %.2f\nmed_s %.2f\nmax_x %.1f\n",
		    md, mx, m, mx / m
	    }')
}

# The Markdown table of cycle $1, a row a day.
cycle_table() {
	printf '| day | MB | big s | user+sys s | read MiB | written MiB '
	printf '| empty s | user+sys s | ratio | events: big index '
	printf '| events: empty index | RssAnon peak: big, empty |\n'
	printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|\n'
	paste "$tmp/cyc-$1.big" "$tmp/cyc-$1.empty" "$tmp/cyc-$1.big.ev" \
	    "$tmp/cyc-$1.empty.ev" | awk -F '\t' '{
		split($1, b, " "); split($2, e, " ")
		printf "| %d | %.1f | %.2f | %.2f | %.0f | %.0f | %.2f " \
		    "| %.2f | %.0f%% | %s | %s | %.1f, %.1f MiB |\n", NR,
		    b[7] / 1e6, b[1], b[2] + b[3], b[4] / 1024, b[5] / 1024,
		    e[1], e[2] + e[3], 100 * e[1] / b[1], $3, $4,
		    b[6] / 1024, e[6] / 1024 }'
}

# The totals of cycle $1 in words.
cycle_words() {
	local c=$1
	printf 'Over the %s days (%s MB), the big index took %s s ' \
	    "${C[$c.days]}" "$(awk -v b="${C[$c.bytes]}" \
	    'BEGIN { printf "%.1f", b / 1e6 }')" "${C[$c.big_s]}"
	printf '(%s MB/s), the empty one %s s (%s MB/s): ' \
	    "${C[$c.big_mbps]}" "${C[$c.empty_s]}" "${C[$c.empty_mbps]}"
	printf '**%s%%** of the empty index'"'"'s throughput. ' \
	    "${C[$c.pct]}"
	printf 'CPU (user+sys): %s s and %s s; ' "${C[$c.big_cpu]}" \
	    "${C[$c.empty_cpu]}"
	printf 'read from the disk: %s and %s MiB; written: %s and %s ' \
	    "${C[$c.big_read]}" "${C[$c.empty_read]}" \
	    "${C[$c.big_written]}" "${C[$c.empty_written]}"
	printf 'MiB. The longest day of the big index, day %s, took ' \
	    "${C[$c.max_day]}"
	printf '%s s, %sx the median day'"'"'s %s s.\n\n' "${C[$c.max_s]}" \
	    "${C[$c.max_x]}" "${C[$c.med_s]}"
}

# What the states of the big index over cycle $1 say: the days that
# folded, and where the growth got to.
cycle_story() {
	awk '
	function p2(n,   k) {
		for (k = 0; n > 1; k++)
			n /= 2
		return "2^" k
	}
	NR == 1 { split($0, s); s0 = $0; g0 = $10 > 0 ? $11 : 0; next }
	{
		d = NR - 1
		split($0, a)
		if (a[7] != s[7])
			folds = folds (folds == "" ? "" : ", ") d
		if (a[1] != s[1])
			grown = grown (grown == "" ? "" : ", ") d " (to " \
			    p2(a[1]) " slots)"
		if (a[10] > 0 && s[10] == 0)
			started = d
		split($0, s)
	}
	END {
		n = NR - 1
		if (folds == "")
			printf "No run folded. "
		else if (folds ~ /,/)
			printf "Runs folded on days %s. ", folds
		else
			printf "A run folded on day %s. ", folds
		if (grown != "")
			printf "The table grew on day %s. ", grown
		if (s[10] > 0) {
			if (started != "")
				g0 = 0
			how = "was under way at the start"
			days = n
			if (started != "") {
				how = "started on day " started
				days = n - started + 1
			}
			printf "The growth to %s slots %s, and was %.1f%% of " \
			    "the way round after the last day", p2(s[10]), how,
			    s[11]
			r = (s[11] - g0) / days
			if (r > 0)
				printf " (%.2f%% a day: at this rate it " \
				    "goes round in about %.0f days more)",
				    r, (100 - s[11]) / r
			printf ". "
		} else if (grown == "") {
			printf "The index did not grow. "
		}
	}' "$tmp/cyc-$1.big.state"
}

note "the daily cycle against the big index, cold then warm"
run_cycle cold "$big" "$days" cold
run_cycle warm "$big" "$days" warm
cycle_totals cold
cycle_totals warm

# --- A run that adds 1,000 records ----------------------------------------

# One run of nsdedup --db on a piece, once untimed first (page cache).
note "timing runs of 1,000 new records against the big index"
next_piece
"$NSDEDUP" --db "$big" "$piece" >/dev/null ||
	die "nsdedup --db $big failed"
: >"$tmp/times-a"
: >"$tmp/rss-a"
for ((i = 0; i < runs; i++)); do
	next_piece
	p=$piece
	t0=$(now)
	"$NSDEDUP" --db "$big" --stats "$p" >/dev/null 2>"$tmp/stats-a" &
	pid=$!
	sample_start "$pid" "$tmp/rss-a.$i"
	st=0
	wait "$pid" || st=$?
	t1=$(now)
	sample_stop
	[ "$st" -eq 0 ] || die "nsdedup --db $big $p failed (exit $st)"
	elapsed "$t0" "$t1" >>"$tmp/times-a"
	cat "$tmp/rss-a.$i" >>"$tmp/rss-a"
done
run_a=$(median <"$tmp/times-a")
rss_a=$(sample_max "$tmp/rss-a")

# The commit alone: the syncs and header writes strace sees, summed, and
# the begin apart.
commit_a=n/a
begin_a=n/a
inserted_a=n/a
if [ "$use_strace" = 1 ]; then
	: >"$tmp/commit-a"
	: >"$tmp/begin-a"
	: >"$tmp/inserted-a"
	for ((i = 0; i < runs; i++)); do
		next_piece
		p=$piece
		f0=$(fingerprints "$big")
		strace -f -T -s 8 -o "$tmp/strace" \
		    -e trace=msync,fdatasync,fsync,pwrite64 \
		    "$NSDEDUP" --db "$big" "$p" >/dev/null ||
			die "nsdedup --db $big $p under strace failed"
		# Begin is every call up to the sync that follows the first
		# header write ("pending"); the commit is every call after
		# it (the log written and synced, the ids and what the sweep
		# wrote of the tables synced, the header written and synced).
		awk '/<[0-9.]+>$/ {
			t = $NF; gsub(/[<>]/, "", t)
			if (!begun) {
				b += t
				if (hdr && /f(data)?sync\(/) begun = 1
				if (/NSDINDEX/) hdr = 1
				next
			}
			s += t
		    }
		    END { printf "%.4f %.4f\n", s, b }' "$tmp/strace" \
		    >"$tmp/strace-sum"
		read -r c b <"$tmp/strace-sum"
		echo $(($(fingerprints "$big") - f0)) >>"$tmp/inserted-a"
		echo "$c" >>"$tmp/commit-a"
		echo "$b" >>"$tmp/begin-a"
		cp "$tmp/strace" "$tmp/strace-last"
	done
	commit_a=$(median <"$tmp/commit-a")
	begin_a=$(median <"$tmp/begin-a")
	inserted_a=$(median <"$tmp/inserted-a" | cut -d. -f1)
fi
rm_index "$big"

# --- SimHash: the block tables at 10^7 records ---------------------------

sbig=$tmp/big-simhash.nsd
declare -A smed scand smbps
sim_slice=$(( nsim / 10 > 0 ? nsim / 10 : 1 ))
: >"$tmp/sbuild-times"
for ((b = 1; b <= builds; b++)); do
	rm_index "$sbig"
	note "building $sbig ($b of $builds): $nsim SimHash records"
	t0=$(now)
	"$NSD_INDEX_SCALE" -m simhash -n "$nsim" -s "$sim_slice" \
	    -c "$nevery" -S "$seed" "$sbig" >"$tmp/sbuild-$b.log" \
	    2>"$tmp/build.err" || {
		cat "$tmp/build.err" >&2
		die "building the SimHash index failed"
	}
	t1=$(now)
	elapsed "$t0" "$t1" >>"$tmp/sbuild-times"
	grep -v '^#' "$tmp/sbuild-$b.log" >"$tmp/sslices-$b"
	tail -n 2 "$tmp/sbuild-$b.log" >&2
done
sbuild_s=$(median <"$tmp/sbuild-times")
median_slices sslices
cp "$tmp/sbuild-$builds.log" "$tmp/sbuild.log"
s_header=$(head -n 1 "$tmp/sbuild.log" | sed 's/^# //')
# Slices: records entries s rec/s rec/s grows grow_s commit_s rss cand
# copies found.  First and last: the rate with growth set aside, and the
# candidates per lookup.
read -r s_first_rate s_first_cand < <(awk 'NR == 1 {
    printf "%.0f %s\n", $1 / ($3 - $7), $10 }' "$tmp/sslices")
read -r s_last_rate s_last_cand s_last_n < <(awk '{ n = $1 - p; p = $1
    r = n / ($3 - $7); c = $10; e = $1 }
    END { printf "%.0f %s %s\n", r, c, e }' "$tmp/sslices")
s_ratio=$(awk -v a="$s_last_rate" -v b="$s_first_rate" \
    'BEGIN { printf "%.2f\n", a / b }')
s_copies=$(awk '{ c += $11; f += $12 } END { printf "%d of %d\n", f, c }' \
    "$tmp/sslices")
s_entries=$(awk '{ v = $2 } END { print v }' "$tmp/sslices")
s_table_bytes=$(stat -c %s "$sbig")
sbig_log_limit=$(log_limit "$sbig")
s_ids_bytes=$(stat -c %s "$sbig.ids")
db_info "$sbig" >"$tmp/sdb-info"

# nsdedup -m simhash --db over the corpora d1.., against the big index and
# an empty one; --stats gives the candidates per lookup.  Updating runs
# work on a fresh copy of the big index each (synced before the run,
# untimed), so that no run meets the corpora of the runs before it; the
# --no-update runs only look up, in the big index and in an empty one.
# The page cache is as the build and the copy left it.
note "timing -m simhash runs against the big index and an empty one"
sempty=$tmp/empty-simhash.nsd
scopy=$tmp/copy-simhash.nsd
: >"$tmp/rss-s"
# One timed run: $1 the label, the rest nsdedup's arguments before the
# corpus $2.
stimed() {
	local w=$1 c=$2 t0 t1 pid st=0
	shift 2
	t0=$(now)
	"$NSDEDUP" -m simhash --annotate --stats "$@" "$c" >/dev/null \
	    2>"$tmp/sstats" &
	pid=$!
	sample_start "$pid" "$tmp/rss-run"
	wait "$pid" || st=$?
	t1=$(now)
	sample_stop
	[ "$st" -eq 0 ] ||
		die "nsdedup -m simhash $* $c failed:" \
		    "$(tail -n 1 "$tmp/sstats")"
	elapsed "$t0" "$t1" >>"$tmp/stimes-$w"
	cat "$tmp/rss-run" >>"$tmp/rss-s"
	awk '/^nsdedup: candidates/ { print $3 }' "$tmp/sstats" \
	    >>"$tmp/scand-$w"
}
for w in empty big empty-ro big-ro; do
	: >"$tmp/stimes-$w"
	: >"$tmp/scand-$w"
done
# The read-only empty index: made by a run over no records, kept aside.
rm_index "$sempty"
"$NSDEDUP" -m simhash --db "$sempty" /dev/null ||
	die "nsdedup -m simhash --db $sempty /dev/null failed"
copy_index "$sempty" "$sempty.keep"
s_big_entries=$(fingerprints "$sbig")
: >"$tmp/sinserted"
for ((i = 1; i <= runs; i++)); do
	c=$tmp/d$i.jsonl
	cat "$c" >/dev/null
	rm_index "$sempty"
	stimed empty "$c" --db "$sempty"
	copy_index "$sbig" "$scopy"
	stimed big "$c" --db "$scopy"
	echo $(($(fingerprints "$scopy") - s_big_entries)) >>"$tmp/sinserted"
	rm_index "$scopy"
	copy_index "$sempty.keep" "$sempty"
	stimed empty-ro "$c" --db "$sempty" --no-update
	stimed big-ro "$c" --db "$sbig" --no-update
done
for w in empty big empty-ro big-ro; do
	smed[$w]=$(median <"$tmp/stimes-$w")
	scand[$w]=$(median <"$tmp/scand-$w")
	smbps[$w]=$(awk -v b="$(stat -c %s "$tmp/d1.jsonl")" \
	    -v s="${smed[$w]}" 'BEGIN { printf "%.1f\n", b / s / 1e6 }')
done
s_ratio_b=$(awk -v a="${smed[empty]}" -v b="${smed[big]}" \
    'BEGIN { printf "%.2f\n", a / b }')
s_ratio_ro=$(awk -v a="${smed[empty-ro]}" -v b="${smed[big-ro]}" \
    'BEGIN { printf "%.2f\n", a / b }')
s_inserted=$(median <"$tmp/sinserted" | cut -d. -f1)
# One more updating run, untimed: the bytes it wrote (the kernel counts a
# page of a mapping as written when the page is first dirtied).
copy_index "$sbig" "$scopy"
"$GNU_TIME" -f %O -o "$tmp/swritten" "$NSDEDUP" -m simhash --annotate \
    --db "$scopy" "$tmp/d1.jsonl" >/dev/null 2>&1 ||
	die "nsdedup -m simhash --db $scopy $tmp/d1.jsonl failed"
s_written=$(($(tail -n 1 "$tmp/swritten") * 512))
rm_index "$scopy"
rm_index "$sempty"
rm_index "$sempty.keep"

note "the -m simhash daily cycle, cold then warm"
run_cycle scold "$sbig" "$sim_days" cold -m simhash
run_cycle swarm "$sbig" "$sim_days" warm -m simhash
cycle_totals scold
cycle_totals swarm
rm_index "$sbig"

# --- Targets and the report -----------------------------------------------

t_build=$(status "$final_fps" "$nfp")
[ "$nfp" -ge 100000000 ] || t_build="$t_build (the target is 10^8)"
t_rate=$(status "$ratio_steady" 0.5)
# RssAnon: every nsdedup run, and the builds apart.
rss_files=("$tmp/rss-a" "$tmp/rss-s")
for c in cold warm scold swarm; do
	rss_files+=("$tmp/cyc-$c.big.rss" "$tmp/cyc-$c.empty.rss")
done
rss_runs=$(sample_max "${rss_files[@]}")
rss_runs_n=$(sample_count "${rss_files[@]}")
rss_all=$rss_runs
[ "$rss_build_ext" -le "$rss_all" ] || rss_all=$rss_build_ext
[ "${rss_build_int:-0}" -le "$rss_all" ] || rss_all=$rss_build_int
t_rss=$(status "$rss_limit_kib" "$((rss_all + 1))")
t_rss_runs=$(status "$rss_limit_kib" "$((rss_runs + 1))")
t_bpf=$(status "$bytes_per_fp_limit" "$bpf_table")
t_commit=$(status 1 "$run_a")
if [ "$commit_a" != n/a ]; then
	t_commit=$(status 1 "$commit_a")
fi
t_cycle=$(status "${C[cold.pct]}" "$cycle_target")
t_scycle=$(status "${C[scold.pct]}" 50)
# How the big index's size reads in the target.
if [ "$big_entries" = 100000000 ]; then
	big_label='10^8'
else
	big_label=$big_entries
fi
cold_note=
if [ "$cold_ok" = 0 ]; then
	cold_note=" (not cold: $cold_why)"
	t_cycle="$t_cycle, but not cold"
	t_scycle="$t_scycle, but not cold"
fi
[ "$nfp" -ge 100000000 ] || t_cycle="$t_cycle (the target is at 10^8)"

# The events of day $2 of cycle $1, for the big index.
day_events() {
	sed -n "${2}p" "$tmp/cyc-$1.big.ev"
}

# The analysis, from the figures: what the rate, the commit and the daily
# cycle depend on.
analysis() {
	local x
	# Slices: the one after the last doubling, and the last one.
	awk -v f="$fps" 'function slots(n,   s) {
		for (s = 4096; s * 75 < n * 100; s *= 2)
			;
		return s }
	    { n[NR] = $1 - p; p = $1; fp[NR] = $2; s[NR] = $3; g[NR] = $7
	      if ($6 > 0) lastgrow = NR }
	    END {
		k = NR; j = lastgrow + 1
		for (i = 1; i <= k; i++) {
			r[i] = n[i] * f / (s[i] - g[i])
			a[i] = (fp[i] - n[i] * f / 2) / slots(fp[i])
		}
		printf "A lookup of a fingerprint that is not there reads "
		printf "buckets of 4 slots (64 bytes, one cache line) from "
		printf "its home bucket to the first that has an empty slot, "
		printf "and the claim that follows starts where it stopped; "
		printf "the fuller the table, the more buckets are full and "
		printf "the more lines each miss reads, at random places of "
		printf "a table far larger than the caches. In the last slice "
		printf "the load averaged %.1f%%. ", 100 * a[k]
		if (j > 1 && j < k) {
			m = "The slice just after the last growth (slice %d,"
			m = m " a table of %d MiB as in the last slice, load"
			m = m " %.1f%%) ran at %.0f fingerprints/s"
			m = m " without growth, %.2fx the first slice"
			m = m "'"'"'s %.0f, against %.2fx for the last slice:"
			m = m " at equal table size the rate falls with the"
			m = m " load, and the size"
			m = m " of the table costs %s."
			printf m, j, slots(fp[j]) * 16 / 1048576, 100 * a[j],
			    r[j], r[j] / r[1], r[1], r[k] / r[1],
			    (r[j] / r[1] > 0.8 ? "little" : "more")
		}
		printf "\n\n"
	    }' "$tmp/slices"
	if [ "$inserted_a" != n/a ]; then
		printf 'A run adds its new fingerprints to the log (PATH.log, '
		printf '16 bytes each); the sweep moves the stage'"'"'s '
		printf 'entries homed in a stretch of the hash space into the '
		printf 'table, the stretch in proportion to what the run adds, '
		printf 'and while the index grows it copies the table'"'"'s '
		printf 'entries homed there into PATH.next; the commit syncs '
		printf 'the log, the id file and the pages the sweep wrote, '
		printf 'then writes the header. The 1,000-record runs '
		printf 'added %s ' "$inserted_a"
		printf 'fingerprints each, %s bytes of log, and their commit ' \
		    "$((inserted_a * 16))"
		printf 'took %s s.\n\n' "$commit_a"
	fi
	printf 'The daily cycle, cold against warm: over the %s days the ' \
	    "$days"
	printf 'big index took %s s cold and %s s warm, the empty index ' \
	    "${C[cold.big_s]}" "${C[warm.big_s]}"
	printf '%s s and %s s. ' "${C[cold.empty_s]}" "${C[warm.empty_s]}"
	x=$(awk -v a="${C[cold.big_s]}" -v b="${C[warm.big_s]}" \
	    -v d="$days" 'BEGIN { printf "%.2f s, %.2f s a day", a - b,
	    (a - b) / d }')
	if [ "$cold_ok" = 1 ]; then
		printf 'The disk cost the big index %s: a cold run read ' "$x"
		printf '%s MiB from the disk on average, for a table of ' \
		    "$(awk -v r="${C[cold.big_read]}" -v d="$days" \
		    'BEGIN { printf "%.0f", r / d }')"
		printf '%s MiB that a thread reads in order at open while ' \
		    "$((table_bytes >> 20))"
		printf 'the lookups go on (src/warm.c). '
	else
		printf 'The cache could not be dropped (%s), so the ' \
		    "$cold_why"
		printf 'difference, %s, is not the disk'"'"'s. ' "$x"
	fi
	printf 'Warm, the index'"'"'s own work cost %s s over the %s days ' \
	    "$(awk -v a="${C[warm.big_s]}" -v b="${C[warm.empty_s]}" \
	    'BEGIN { printf "%.2f", a - b }')" "$days"
	printf '(the big index at %s%% of the empty index'"'"'s ' \
	    "${C[warm.pct]}"
	printf 'throughput, against %s%% cold), with %s s of CPU ' \
	    "${C[cold.pct]}" "${C[warm.big_cpu]}"
	printf '(user+sys) against %s s; a run wrote %s MiB on average, ' \
	    "${C[warm.empty_cpu]}" "$(awk -v w="${C[warm.big_written]}" \
	    -v d="$days" 'BEGIN { printf "%.0f", w / d }')"
	printf 'against %s MiB for the empty index: the log and the ' \
	    "$(awk -v w="${C[warm.empty_written]}" -v d="$days" \
	    'BEGIN { printf "%.0f", w / d }')"
	printf 'ids, the stretch of the table the sweep wrote, while the '
	printf 'index grows the stretch it copied into PATH.next, and the '
	printf 'stage a fold wrote. '
	printf 'The log is folded into the stage at %s records. ' \
	    "$big_log_limit"
	cycle_story cold
	printf '\n\n'
}

cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo \
    2>/dev/null || true)
disk=$(df -P "$tmproot" | awk 'NR == 2 { print $1 }')
fstype=$(df -PT "$tmproot" | awk 'NR == 2 { print $2 }')
script_s=$(($(date +%s) - script_t0))

{
	printf '%s\n' "$begin_mark"
	printf '## Index at scale\n\n'
	printf 'Written by `bench/index-scale.sh --records %s --fps %s ' \
	    "$records" "$fps"
	printf -- '--commit-every %s --simhash-records %s --runs %s ' \
	    "$every" "$sim_records" "$runs"
	printf -- '--builds %s --days %s --simhash-days %s --day-size %s ' \
	    "$builds" "$days" "$sim_days" "$day_size"
	printf -- '--seed %s` ' "$seed"
	printf '(`make bench-scale`; `make bench` runs it after '
	printf '`bench/run.sh` unless `BENCH_FLAGS=--no-scale`), in %s ' \
	    "$((script_s / 60))"
	printf 'min %s s.\n\n' "$((script_s % 60))"
	printf -- '- Date: %s; %s; CPU: %s, %s cores; memory: %s\n' \
	    "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(uname -srm)" \
	    "${cpu_model:-unknown}" "$(nproc)" \
	    "$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' \
	    /proc/meminfo)"
	printf -- '- Index in %s (%s on %s)\n' "$tmproot" "$fstype" "$disk"
	printf -- '- Load average (1, 5, 15 min) at the start: %s, ' \
	    "$load_start"
	printf 'at the end: %s\n' "$(cut -d ' ' -f 1-3 /proc/loadavg)"
	printf -- '- nsdedup: `%s` (sha256 %s...)\n' "$nsd_version" "$nsd_sum"
	if [ "$cold_ok" = 1 ]; then
		printf -- '- Cold runs: `sync; echo 3 > '
		printf '/proc/sys/vm/drop_caches` before each. '
	else
		printf -- '- Cold runs: **not cold**: the page cache could '
		printf 'not be dropped (%s), so the runs called cold ' \
		    "$cold_why"
		printf 'found what the cache held (a warm cache, as far as '
		printf 'the runs before had read the files). '
	fi
	printf 'Warm runs: `sync`, then the index'"'"'s files and the '
	printf 'corpus read with `cat` before each.\n'
	printf -- '- Each cycle'"'"'s runs: wall time from `date +%%s.%%N`; '
	printf 'user and system time, and the blocks read from the disk '
	printf 'and written (`%%I`, `%%O`: a page of a mapping counts as '
	printf 'written when first dirtied), from GNU time.\n'
	printf -- '- RssAnon: sampled from /proc/PID/status every %s s by ' \
	    "$sample_every"
	printf 'the script (%s samples of nsdedup runs, %s of the builds), ' \
	    "$rss_runs_n" "$rss_build_n"
	printf 'and read by nsd-index-scale itself every 65,536 records '
	printf 'and after each growth.\n\n'

	printf '### Building the index\n\n'
	printf '`nsd-index-scale -n %s -f %s -c %s -S %s big.nsd`: ' \
	    "$nrec" "$fps" "$nevery" "$seed"
	printf 'simulated records of %s pseudo-random fingerprints, ' "$fps"
	printf 'decided in batches of 256 as the pipeline does (prefetch '
	printf 'every fingerprint of the batch, then per record: look each '
	printf 'up, `group_new` when none matched, claim each), a commit '
	printf 'every %s records. It took %s s in all, %s s of it growing ' \
	    "$nevery" "$build_s" "$grow_total"
	printf 'the table; the longest commit (of 1M records) took %s s.' \
	    "$commit_max"
	[ -z "$build_perf" ] || printf ' perf stat: %s.' "$build_perf"
	printf '\n\nThe builder is a bulk load: it stores into the table in '
	printf 'place, and rebuilds the table twice as large when it is '
	printf 'more than 3/4 full. Each row is a slice of records: the '
	printf 'rate counts growth (that rebuild, done inside a claim) but '
	printf 'not the commit at the end of the slice, which has its own '
	printf 'column; "without growth" sets the growth time aside. A '
	printf 'fingerprint is a lookup and a claim that inserts it.\n\n'
	printf '| records | fingerprints | load | s | records/s '
	printf '| fingerprints/s | without growth | growths | growth s '
	printf '| commit s | RssAnon |\n'
	printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
	awk -v f="$fps" 'function slots(n,   s) {
		for (s = 4096; s * 75 < n * 100; s *= 2)
			;
		return s }
	    { n = $1 - p; p = $1
	      printf "| %d | %d | %.1f%% | %.3f | %.0f | %.0f | %.0f | %d " \
		"| %.3f | %.3f | %d KiB |\n", $1, $2, 100 * $2 / slots($2),
		$3, n / $3, n * f / $3,
		($3 > $7 ? n * f / ($3 - $7) : 0), $6, $7, $8, $9 }' \
	    "$tmp/slices"
	printf '\nFiles at %s fingerprints (load %s%%): the table `big.nsd` ' \
	    "$final_fps" "$load"
	printf '%s bytes (%s bytes per fingerprint), the group records ' \
	    "$table_bytes" "$bpf_table"
	printf '`big.nsd.ids` %s bytes (%s per fingerprint: one group of ' \
	    "$ids_bytes" "$bpf_ids"
	printf 'about 32 bytes per record here, every record being new), '
	printf 'together %s bytes per fingerprint. Of `big.nsd.ids`, %s ' \
	    "$bpf_all" "$ids_committed"
	printf 'bytes are committed (%s per fingerprint); the rest is room ' \
	    "$(awk -v s="$ids_committed" -v n="$final_fps" \
	    'BEGIN { printf "%.2f", s / n }')"
	printf 'reserved ahead as the file grows. An updating run starts '
	printf 'to grow the index (into `big.nsd.next`, by the growth '
	printf 'sweep) once the table, the stage and the log hold more '
	printf 'than 5/8 of the slots, so the big index starts to grow '
	printf 'with the first run that adds to it.\n\n'
	printf '`nsdedup --db-info big.nsd`:\n\n```\n'
	cat "$tmp/db-info"
	printf '```\n\n'

	printf '### The daily cycle\n\n'
	printf 'Day N is the corpus `nsd-gencorpus --seed 200N --size %s` ' \
	    "$day_size"
	printf '(records the index has not seen), run with `nsdedup '
	printf -- '--annotate --db`: the days in sequence on one copy of '
	printf '`big.nsd` (synced after the copy, untimed), which evolves '
	printf 'through folds, sweeps and growth, and the same days in '
	printf 'sequence on an index that starts empty, a day on each in '
	printf 'turn. "Ratio" is the big index'"'"'s throughput against '
	printf 'the empty one'"'"'s (the empty index'"'"'s seconds over '
	printf 'the big one'"'"'s). The events are what `--db-info` says '
	printf 'changed: a fold (the stage'"'"'s build changed), the sweep'
	printf "'"'s position in the hash space, how far round the growth '
	printf 'sweep is, and the log'"'"'s records against its limit.\n\n'
	printf '#### Cold cache%s\n\n' "$cold_note"
	cycle_table cold
	printf '\n'
	cycle_words cold
	printf 'The longest day'"'"'s events: %s.\n\n' \
	    "$(day_events cold "${C[cold.max_day]}")"
	printf '#### Warm cache\n\n'
	cycle_table warm
	printf '\n'
	cycle_words warm
	printf '`nsdedup --db-info` of the copy after the cold cycle:\n\n'
	printf '```\n'
	cat "$tmp/cyc-cold.info"
	printf '```\n\n'

	printf '### A run that adds 1,000 records\n\n'
	printf 'On `big.nsd` as built (after the cycles, which worked on '
	printf 'copies), %s timed runs after one untimed run; median.\n\n' \
	    "$runs"
	printf '| measurement | median | RssAnon max |\n|---|---:|---:|\n'
	printf '| whole run `nsdedup --db big.nsd --stats PIECE` '
	printf '(1,000 new records) | %s s | %s |\n' "$run_a" "$(mib "$rss_a")"
	if [ "$commit_a" != n/a ]; then
		printf '| its commit alone (the log written and synced, the '
		printf 'ids and what the sweep wrote synced, the header '
		printf 'written and synced; `strace -T`) | %s s | |\n' \
		    "$commit_a"
		printf '| its begin (up to the "pending" header written '
		printf 'and synced; `strace -T`) | %s s | |\n' "$begin_a"
	fi
	printf '\n'
	if [ "$commit_a" != n/a ]; then
		printf 'The last strace of a 1,000-record run '
		printf '(`strace -T -e trace=msync,fdatasync,fsync,pwrite64`'
		printf '):\n\n```\n'
		cat "$tmp/strace-last"
		printf '```\n\n'
	fi

	printf '### Why\n\n'
	analysis

	printf '### SimHash at %s records\n\n' "$s_last_n"
	printf '`nsd-index-scale -m simhash -n %s -s %s -c %s -S %s ' \
	    "$nsim" "$sim_slice" "$nevery" "$seed"
	printf 'big-simhash.nsd` (%s builds, median of each slice): ' "$builds"
	printf '%s. Each record is one SimHash; a fifth of them are ' \
	    "$s_header"
	printf 'near-copies of one of the 1,024 records before, 1 to 3 '
	printf 'bits away, the rest pseudo-random. Each is looked up with '
	printf '`nsd_index_near` (every block table'"'"'s entries that agree '
	printf 'with it under the table'"'"'s mask are candidates, each '
	printf 'compared by popcount) and entered with `nsd_index_add` '
	printf '(into every table) unless it matched exactly. It took %s s. ' \
	    "$sbuild_s"
	printf 'Near-copies found: %s.\n\n' "$s_copies"
	printf '| records | entries | s | records/s | without growth '
	printf '| growths | growth s | commit s | candidates per lookup |\n'
	printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
	awk '{ n = $1 - p; p = $1
	    printf "| %d | %d | %.3f | %.0f | %.0f | %d | %.3f | %.3f | %s |\n",
		$1, $2, $3, n / $3, ($3 > $7 ? n / ($3 - $7) : 0), $6, $7,
		$8, $10 }' "$tmp/sslices"
	printf '\nFiles at %s entries: the table %s bytes, the ids %s ' \
	    "$s_entries" "$s_table_bytes" "$s_ids_bytes"
	printf 'bytes.\n\n'
	printf '`nsdedup --db-info big-simhash.nsd`:\n\n```\n'
	cat "$tmp/sdb-info"
	printf '```\n\n'
	printf 'Pseudo-random SimHashes are the best case for the block '
	printf 'tables: a table keyed by about 26 bits meets another '
	printf 'record by chance once in 2^26, so 10 tables at 10^7 give '
	printf 'about 1.5 candidates, plus the near-copies themselves. '
	printf 'SimHashes of real texts are not uniform: texts that share '
	printf 'vocabulary share bits, and meet more candidates. '
	printf '`nsdedup -m simhash --stats` over the corpora C (days 1 '
	printf 'to %s above: unrelated documents of `nsd-gencorpus` ' "$runs"
	printf 'share phrase frames but few content words, so their '
	printf 'SimHashes are nearly independent, as with news: see '
	printf 'QUALITY.md), against the big index and an empty one, '
	printf 'median of %s runs, the page cache as the build left it; ' \
	    "$runs"
	printf 'an updating run works on a fresh copy of the big index, '
	printf 'synced first (untimed), so that it meets no corpus of an '
	printf 'earlier run:\n\n'
	printf '| run | median wall s | MB/s | candidates per lookup |\n'
	printf '|---|---:|---:|---:|\n'
	printf '| `nsdedup -m simhash --annotate --db empty.nsd C` (fresh '
	printf 'index each run) | %s | %s | %s |\n' "${smed[empty]}" \
	    "${smbps[empty]}" "${scand[empty]}"
	printf '| `nsdedup -m simhash --annotate --db copy-of-big.nsd C` '
	printf '| %s | %s | %s |\n' "${smed[big]}" "${smbps[big]}" \
	    "${scand[big]}"
	printf '| `nsdedup -m simhash --annotate --db empty.nsd --no-update '
	printf 'C` | %s | %s | %s |\n' "${smed[empty-ro]}" \
	    "${smbps[empty-ro]}" "${scand[empty-ro]}"
	printf '| `nsdedup -m simhash --annotate --db big-simhash.nsd '
	printf -- '--no-update C` | %s | %s | %s |\n\n' "${smed[big-ro]}" \
	    "${smbps[big-ro]}" "${scand[big-ro]}"
	printf 'An updating run over C added %s entries (a record per ' \
	    "$s_inserted"
	printf 'new SimHash, standing for an entry in every block table) to '
	printf 'the log, not to the %s-byte table; one such run wrote ' \
	    "$s_table_bytes"
	printf '%s in all (`/usr/bin/time -f %%O`): the log, the ids, ' \
	    "$(mib "$((s_written / 1024))")"
	printf 'and what the sweep moved into the table or, while the '
	printf 'index grows, copied into PATH.next. '
	printf 'Format version 1 stored the entries into the table, at '
	printf 'random places, and its commit wrote back nearly the whole '
	printf 'table (measured on 2026-11-21: 2049 MiB written, 2.27 s a '
	printf 'run); version 2 merged a full log into the table by '
	printf 'writing the table whole (measured on 2026-11-21 on this '
	printf 'index: a merge took 14.7 s, a growth 17.4 s, and a whole '
	printf 'log cycle of updating runs kept 0.12x of the empty '
	printf 'index'"'"'s rate). Format 3 folds the log into the stage '
	printf 'when it holds %s records, and sweeps the stage into the ' \
	    "$sbig_log_limit"
	printf 'table a stretch at a time. '
	printf 'The runs that only look up '
	printf '(`--no-update`) keep %sx of the empty index'"'"'s rate. ' \
	    "$s_ratio_ro"
	printf 'In the build, as for nshash, the rate falls as the table '
	printf 'fills: each record is %s lookups and up to as many ' \
	    "$(sed -n 's/.* \([0-9]*\) block tables.*/\1/p' \
	    "$tmp/sbuild.log" | head -n 1)"
	printf 'inserts at random places of a table far larger than the '
	printf 'caches, and the probes grow longer with the load.\n\n'

	printf '#### The -m simhash daily cycle, cold cache%s\n\n' \
	    "$cold_note"
	printf 'As for nshash above, with `-m simhash`: days 1 to %s on ' \
	    "$sim_days"
	printf 'one copy of `big-simhash.nsd` and on an index that starts '
	printf 'empty.\n\n'
	cycle_table scold
	printf '\n'
	cycle_words scold
	printf '%s\n\n' "$(cycle_story scold)"
	printf '#### The -m simhash daily cycle, warm cache\n\n'
	cycle_table swarm
	printf '\n'
	cycle_words swarm
	printf '`nsdedup --db-info` of the copy after the cold cycle:\n\n'
	printf '```\n'
	cat "$tmp/cyc-scold.info"
	printf '```\n\n'

	printf '### Targets at scale\n\n'
	printf '| target | figure | status |\n|---|---|---|\n'
	printf '| an index of %s fingerprints builds | %s fingerprints ' \
	    "$nfp" "$final_fps"
	printf 'in %s s | %s |\n' "$build_s" "$t_build"
	printf '| lookup+insert at %s >= half of an empty index ' "$nfp"
	printf '(the build) | without growth: %s fingerprints/s in the last ' \
	    "$last_fps_steady"
	printf 'slice, %s in the first: %sx; with growth counted: %s ' \
	    "$first_fps_steady" "$ratio_steady" "$last_fps"
	printf 'and %s, %sx | %s |\n' "$first_fps" "$ratio_grown" "$t_rate"
	printf '| `--db` updating %s entries, cold, folds and growth ' \
	    "$big_label"
	printf 'included: the daily cycle (%s days) >= %s%% of the ' \
	    "$days" "$cycle_target"
	printf 'empty-index throughput | %s%% cold%s (warm: %s%%); ' \
	    "${C[cold.pct]}" "$cold_note" "${C[warm.pct]}"
	printf 'the longest day %sx the median | %s |\n' "${C[cold.max_x]}" \
	    "$t_cycle"
	printf '| RssAnon < 64 MiB (apart from what is mapped from the '
	printf 'index) for any input size | at most %s over the nsdedup ' \
	    "$(mib "$rss_runs")"
	printf 'runs (the daily cycles: %s, %s, %s and %s; ' \
	    "$(mib "${C[cold.rss_big]}")" "$(mib "${C[warm.rss_big]}")" \
	    "$(mib "${C[scold.rss_big]}")" "$(mib "${C[swarm.rss_big]}")"
	printf 'the 1,000-record runs: %s); builds: %s by sampling, %s ' \
	    "$(mib "$rss_a")" "$(mib "$rss_build_ext")" \
	    "$(mib "${rss_build_int:-0}")"
	printf 'read inside | %s |\n' "$t_rss"
	printf '| the file <= 24 bytes per fingerprint | table %s ' "$bpf_table"
	printf '(with `.ids` %s; its committed part only: %s) at load ' \
	    "$bpf_all" "$(awk -v s="$((table_bytes + ids_committed))" \
	    -v n="$final_fps" 'BEGIN { printf "%.2f", s / n }')"
	printf '%s%% | %s for the table |\n' "$load" "$t_bpf"
	printf '| commit of a 1,000-record run well under a second | '
	printf 'commit %s s, whole run %s s | %s |\n' "$commit_a" "$run_a" \
	    "$t_commit"
	printf '| simhash: candidates per lookup at %s records < 50 ' \
	    "$s_last_n"
	printf '| %s in the last slice (%s in the first); nsdedup over ' \
	    "$s_last_cand" "$s_first_cand"
	printf 'the corpora C: %s against the big index, %s ' \
	    "${scand[big]}" "${scand[empty]}"
	printf 'against an empty one | %s |\n' "$(status 50 "$(awk \
	    -v a="$s_last_cand" -v b="${scand[big]}" \
	    'BEGIN { print (a > b ? a : b) + 0.0001 }')")"
	printf '| simhash: nsdedup at %s records >= half of an empty ' \
	    "$s_last_n"
	printf 'index | updating, one run on a fresh copy: %s MB/s against ' \
	    "${smbps[big]}"
	printf 'the big index, %s against an empty one: %sx; ' \
	    "${smbps[empty]}" "$s_ratio_b"
	printf -- '--no-update: %s and %s MB/s, %sx | %s |\n' \
	    "${smbps[big-ro]}" "${smbps[empty-ro]}" "$s_ratio_ro" \
	    "$(status "$(awk -v b="$s_ratio_b" -v c="$s_ratio_ro" \
	    'BEGIN { print (c < b ? c : b) }')" 0.5)"
	printf '| simhash: the daily cycle (%s days), cold, folds and ' \
	    "$sim_days"
	printf 'growth included, >= half of an empty index | %s%% cold%s ' \
	    "${C[scold.pct]}" "$cold_note"
	printf '(warm: %s%%) | %s |\n' "${C[swarm.pct]}" "$t_scycle"
	printf '| simhash: lookup+add in a bulk load, in place (the build '
	printf 'above), at %s records against the first slice | ' \
	    "$s_last_n"
	printf 'without growth: %s records/s in the last slice, %s in ' \
	    "$s_last_rate" "$s_first_rate"
	printf 'the first: %sx | reported |\n\n' "$s_ratio"
	printf -- '- `--db` updating %s entries, cold, folds and growth ' \
	    "$big_label"
	printf 'included: %s%% of the empty-index throughput — %s ' \
	    "${C[cold.pct]}" "$(status "${C[cold.pct]}" "$cycle_target")"
	printf '(target %s%%)%s\n' "$cycle_target" "$cold_note"
	printf -- '- peak RssAnon over all runs: %s — %s (target < 64 MiB)' \
	    "$(mib "$rss_runs")" "$t_rss_runs"
	printf '\n\n'
	printf '%s\n' "$end_mark"
} >"$tmp/section"
# No line ends in blanks (sentences are printed each with a space after).
sed -i 's/[[:space:]]*$//' "$tmp/section"

replace_section "$begin_mark" "$end_mark" "$tmp/section" "$out"
note "wrote $out"
sed -n '/^### Targets at scale/,/^<!--/p' "$out"

minhash_part
sed -n '/^## MinHash index at scale/,/^<!--/p' "$out" | tail -n 6
