#!/usr/bin/env bash
#
# bench/index-scale.sh: the persistent index at scale.  Builds an index of
# 10^8 fingerprints (20 million simulated records of 5) with
# bench/nsd-index-scale, then measures nsdedup --db against it: the cost of
# a run that adds 1,000 records (and of its commit alone), and end-to-end
# throughput over a 100 MB corpus against that index and against an empty
# one.  The process's anonymous memory (RssAnon) is sampled every 0.1 s
# throughout.  Then the same for -m simhash: an index of 10^7 simulated
# SimHash records (nsd-index-scale -m simhash, a fifth of them near-copies
# it must find) for the candidates each lookup compares and the rate as
# it fills, and nsdedup -m simhash --db over 100 MB against it and against
# an empty one.  The results replace the "Index at scale" section of the
# report (appended when it has none); the rest of the report is kept.
#
# It takes several minutes and about 3 GB in $TMPDIR; the index is deleted
# at the end.  make bench runs it after bench/run.sh (make bench
# BENCH_FLAGS=--no-scale leaves it out); make bench-scale runs it alone,
# with BENCH_SCALE_FLAGS.  Run it from the top of the build tree:
#
#     bench/index-scale.sh [--records 20M] [--fps 5] [--commit-every 1M]
#                          [--simhash-records 10M] [--runs 3] [--builds 3]
#                          [--seed 1] [--out bench/RESULTS.md]
#
# Environment:
#     NSDEDUP          the program under test (default ./src/nsdedup)
#     NSD_INDEX_SCALE  the index builder (default ./bench/nsd-index-scale)
#     GENCORPUS        the corpus generator (default ./bench/nsd-gencorpus)
#     TMPDIR           where the index and corpora go (default /tmp)
#
# Needs bash and GNU coreutils; uses strace and perf when installed.
# Exits 0 when every command ran (whether or not the targets were met), 1
# when a command failed, 2 on a usage error.

# The report's Markdown puts commands in backquotes inside single quotes.
# shellcheck disable=SC2016

set -euo pipefail

prog=bench/index-scale.sh
records=20M
sim_records=10M
fps=5
every=1M
runs=3
builds=3
seed=1
out=bench/RESULTS.md
# The targets.
rss_limit_kib=$((64 << 10))
bytes_per_fp_limit=24
begin_mark='<!-- index-scale: begin -->'
end_mark='<!-- index-scale: end -->'

usage() {
	cat <<EOF
usage: $prog [--records N] [--fps N] [--commit-every N]
                          [--simhash-records N] [--runs N] [--builds N]
                          [--seed N] [--out FILE]

  --records N       simulated records in the big index, K/M suffixes
                    (powers of 1000; default 20M)
  --fps N           fingerprints per simulated record (default 5)
  --commit-every N  commit the big index every N records (default 1M)
  --simhash-records N
                    simulated SimHash records in the big -m simhash index
                    (default 10M)
  --runs N          timed nsdedup runs per measurement (default 3)
  --builds N        times the big index is built, for the medians of its
                    slices; the last one is measured (default 3)
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
	--seed|--out)
		[ $# -ge 2 ] || usage_error "option '$1' needs a value"
		opt=$1 val=$2
		shift 2 ;;
	--records=*|--fps=*|--commit-every=*|--simhash-records=*|--runs=*|\
	--builds=*|--seed=*|--out=*)
		opt=${1%%=*} val=${1#*=}
		shift ;;
	-h|--help)
		usage; exit 0 ;;
	*)
		usage_error "unknown argument '$1'" ;;
	esac
	case $opt in
	--records) records=$val ;;
	--simhash-records) sim_records=$val ;;
	--fps) fps=$val ;;
	--commit-every) every=$val ;;
	--runs) runs=$val ;;
	--builds) builds=$val ;;
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
[[ $every =~ $count_re ]] || usage_error "invalid --commit-every '$every'"
[[ $fps =~ ^[1-9][0-9]?$ ]] || usage_error "invalid --fps '$fps'"
[[ $runs =~ ^[1-9][0-9]*$ ]] || usage_error "invalid --runs '$runs'"
[[ $builds =~ ^[1-9][0-9]*$ ]] || usage_error "invalid --builds '$builds'"
[[ $seed =~ ^[0-9]+$ ]] || usage_error "invalid --seed '$seed'"
[ -n "$out" ] || usage_error "empty --out"
nrec=$(to_count "$records")
nsim=$(to_count "$sim_records")
nevery=$(to_count "$every")
nfp=$((nrec * fps))

NSDEDUP=${NSDEDUP:-./src/nsdedup}
NSD_INDEX_SCALE=${NSD_INDEX_SCALE:-./bench/nsd-index-scale}
GENCORPUS=${GENCORPUS:-./bench/nsd-gencorpus}
tmproot=${TMPDIR:-/tmp}
for p in "$NSDEDUP" "$NSD_INDEX_SCALE" "$GENCORPUS"; do
	[ -x "$p" ] || die "$p: not an executable (see the environment in $prog)"
done
"$NSDEDUP" --version >/dev/null 2>&1 || die "$NSDEDUP --version failed"

# Room: the table at its final size and the one it doubled from (both
# exist while it grows), the id file, and the corpora.
slots=4096
while [ $((slots * 75)) -lt $((nfp * 100)) ]; do
	slots=$((slots * 2))
done
need_kib=$(( (slots * 16 * 3 / 2 + nrec * 32 + (600 << 20)) >> 10 ))
avail_kib=$(df -Pk "$tmproot" | awk 'NR == 2 { print $4 }')
[ "$avail_kib" -ge "$need_kib" ] ||
	die "$tmproot has $((avail_kib >> 10)) MiB free, needs $((need_kib >> 10)) MiB (set TMPDIR)"

load_start=$(cut -d ' ' -f 1-3 /proc/loadavg)
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

# Start sampling the RssAnon of process $1 every 0.1 s into file $2 (one
# KiB figure a line) until it exits; the sampler's pid goes to $sampler.
# With $3 set, $1 is a wrapper (perf stat) and its child is sampled.
sample_start() {
	local pid=$1 file=$2 wrapped=${3:-0}
	: >"$file"
	(
		while [ -r "/proc/$pid/status" ]; do
			p=$pid
			if [ "$wrapped" = 1 ]; then
				p=$(pgrep -P "$pid" | head -n 1) || true
			fi
			if [ -n "$p" ]; then
				awk '/^RssAnon:/ { print $2 }' \
				    "/proc/$p/status" 2>/dev/null >>"$file" ||
				    true
			fi
			sleep 0.1
		done
	) &
	sampler=$!
}

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

# The fingerprints committed in the index at $1.
fingerprints() {
	"$NSDEDUP" --db "$1" --db-info | awk '/^entries:/ { print $2 }'
}

# The records the log of the index at $1 takes before it is merged.
log_limit() {
	"$NSDEDUP" --db "$1" --db-info |
	    sed -n 's/^log:.*merged into the table at \([0-9]*\)).*/\1/p'
}

# Remove an index and its companion files.
rm_index() {
	rm -f "$1" "$1.ids" "$1.log" "$1.lock" "$1.new"
}

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
	sample_stop
	t1=$(now)
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
# Each column of each slice, the median over the builds.
paste -d ' ' "$tmp"/slices-[0-9]* | awk -v k="$builds" '{
	for (c = 1; c <= 9; c++) {
		n = 0
		for (b = 0; b < k; b++)
			v[++n] = $(b * 9 + c)
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
				t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
			}
		m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		printf "%s%s", m, c < 9 ? " " : "\n"
	}
}' >"$tmp/slices"

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
"$NSDEDUP" --db "$big" --db-info >"$tmp/db-info" 2>&1 ||
	die "nsdedup --db-info failed: $(cat "$tmp/db-info")"
ids_committed=$(sed -n 's/^file size:.*(\([0-9]*\) committed).*/\1/p' \
    "$tmp/db-info")
ids_committed=${ids_committed:-0}
load=$(awk -v n="$final_fps" -v s="$((table_bytes - 8192))" \
    'BEGIN { printf "%.1f\n", 100 * n / (s / 16) }')
build_perf=
if [ -s "$tmp/perf-build" ]; then
	build_perf=$(awk -F';' '$3 ~ /^(page-faults|major-faults|context-switches)$/ {
	    printf "%s%s %s", sep, $1, $3; sep = ", " }' "$tmp/perf-build")
fi

# --- Corpora --------------------------------------------------------------

# Records of seeds the big index has not seen: 1,000-record pieces for the
# commit runs, and one 100 MB corpus per timed run for the throughput.
note "generating corpora"
piece_runs=$((runs + 1 + (use_strace ? runs : 0)))
"$GENCORPUS" --seed 1001 --size $(((piece_runs + 2) * 4))M >"$tmp/pieces.jsonl" 2>/dev/null ||
	die "corpus generation failed"
split -l 1000 -d -a 3 "$tmp/pieces.jsonl" "$tmp/piece-"
rm -f "$tmp/pieces.jsonl"
n_pieces=$(find "$tmp" -name 'piece-*' | wc -l)
[ "$n_pieces" -gt "$piece_runs" ] ||
	die "only $n_pieces pieces of 1000 records, $piece_runs needed"
for ((i = 1; i <= runs; i++)); do
	"$GENCORPUS" --seed $((2000 + i)) --size 100M >"$tmp/c$i.jsonl" \
	    2>/dev/null || die "corpus generation failed"
done
corpus_bytes=$(stat -c %s "$tmp/c1.jsonl")
# Every fdatasync of the runs would otherwise write the new corpora too.
sync
# Sets $piece to the next unused piece.
piece_n=0
next_piece() {
	printf -v piece '%s/piece-%03d' "$tmp" "$piece_n"
	piece_n=$((piece_n + 1))
}

# --- (a) A run that adds 1,000 records ------------------------------------

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
	sample_stop
	t1=$(now)
	[ "$st" -eq 0 ] || die "nsdedup --db $big $p failed (exit $st)"
	elapsed "$t0" "$t1" >>"$tmp/times-a"
	cat "$tmp/rss-a.$i" >>"$tmp/rss-a"
done
run_a=$(median <"$tmp/times-a")
rss_a=$(sample_max "$tmp/rss-a")

# The commit alone: the syncs and header writes strace sees, summed, and
# the first header write (begin) apart.
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
		# Syscalls of the index's fds: begin is the first pwrite and
		# fdatasync (of a header); the commit is every call after
		# them (the log written and synced, the ids synced, the
		# header written and synced).
		awk '{ t = $NF; gsub(/[<>]/, "", t) }
		    NR > 2 { s += t; next }
		    { b += t }
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

# --- (b) Throughput over 100 MB: big index against an empty one ----------

# One timed run of "nsdedup --annotate --db INDEX CORPUS", RssAnon sampled;
# appends the wall seconds to $3 and the samples to $4.
timed_db_run() {
	local ix=$1 c=$2 times=$3 rss=$4 pid st=0 t0 t1 pf=()
	[ "$use_perf" = 0 ] || pf=(perf stat -x ';' -o "$tmp/perf-run"
	    -e 'task-clock,page-faults,major-faults' --)
	t0=$(now)
	"${pf[@]}" "$NSDEDUP" --annotate --db "$ix" "$c" >/dev/null &
	pid=$!
	sample_start "$pid" "$tmp/rss-run" "$use_perf"
	wait "$pid" || st=$?
	sample_stop
	t1=$(now)
	[ "$st" -eq 0 ] || die "nsdedup --annotate --db $ix $c failed"
	elapsed "$t0" "$t1" >>"$times"
	cat "$tmp/rss-run" >>"$rss"
	if [ -s "$tmp/perf-run" ]; then
		awk -F';' '$3 == "page-faults" { print $1 }' "$tmp/perf-run" \
		    >>"$times.faults"
		awk -F';' '$3 == "task-clock" { printf "%.4f\n", $1 / 1000 }' \
		    "$tmp/perf-run" >>"$times.cpu"
	fi
}

note "timing 100 MB runs against the big index and an empty one"
empty=$tmp/empty.nsd
: >"$tmp/times-big"
: >"$tmp/times-empty"
: >"$tmp/times-big.faults"
: >"$tmp/times-empty.faults"
: >"$tmp/times-big.cpu"
: >"$tmp/times-empty.cpu"
: >"$tmp/rss-big"
: >"$tmp/rss-empty"
# Untimed first runs: the corpora into the page cache.
for ((i = 1; i <= runs; i++)); do
	cat "$tmp/c$i.jsonl" >/dev/null
done
fps_before=$(fingerprints "$big")
for ((i = 1; i <= runs; i++)); do
	rm_index "$empty"
	timed_db_run "$empty" "$tmp/c$i.jsonl" "$tmp/times-empty" \
	    "$tmp/rss-empty"
	timed_db_run "$big" "$tmp/c$i.jsonl" "$tmp/times-big" "$tmp/rss-big"
done
fps_after=$(fingerprints "$big")
med_big=$(median <"$tmp/times-big")
med_empty=$(median <"$tmp/times-empty")
faults_big=n/a
faults_empty=n/a
cpu_big=n/a
cpu_empty=n/a
if [ -s "$tmp/times-big.faults" ]; then
	faults_big=$(median <"$tmp/times-big.faults" | cut -d. -f1)
	faults_empty=$(median <"$tmp/times-empty.faults" | cut -d. -f1)
	cpu_big=$(median <"$tmp/times-big.cpu")
	cpu_empty=$(median <"$tmp/times-empty.cpu")
fi
mbps_big=$(awk -v b="$corpus_bytes" -v s="$med_big" \
    'BEGIN { printf "%.1f\n", b / s / 1e6 }')
mbps_empty=$(awk -v b="$corpus_bytes" -v s="$med_empty" \
    'BEGIN { printf "%.1f\n", b / s / 1e6 }')
ratio_b=$(awk -v a="$med_empty" -v b="$med_big" \
    'BEGIN { printf "%.2f\n", a / b }')
rss_b=$(sample_max "$tmp/rss-big" "$tmp/rss-empty")
rss_b_n=$(sample_count "$tmp/rss-big" "$tmp/rss-empty")
rss_a_n=$(sample_count "$tmp/rss-a")

rm_index "$big"
rm_index "$empty"

# --- SimHash: the block tables at 10^7 records ---------------------------

# Medians over the builds of each column of each slice line, for files
# $tmp/sslices-1.. of $1 columns each, into $tmp/sslices.
median_slices() {
	paste -d ' ' "$tmp"/sslices-[0-9]* | awk -v k="$builds" -v nc="$1" '{
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
	}' >"$tmp/sslices"
}

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
median_slices 12
cp "$tmp/sbuild-$builds.log" "$tmp/sbuild.log"
s_header=$(head -n 1 "$tmp/sbuild.log" | sed 's/^# //')
# Slices: records entries s rec/s rec/s grows grow_s commit_s rss cand
# copies found.  First and last: the rate with growth set aside, and the
# candidates per lookup.
read -r s_first_rate s_first_cand < <(awk 'NR == 1 {
    printf "%.0f %s\n", $1 / ($3 - $7), $10 }' "$tmp/sslices")
read -r s_last_rate s_last_cand s_last_n < <(awk '{ n = $1 - p; p = $1
    r = n / ($3 - $7); c = $10; e = $1 } END { printf "%.0f %s %s\n", r, c, e }' \
    "$tmp/sslices")
s_ratio=$(awk -v a="$s_last_rate" -v b="$s_first_rate" \
    'BEGIN { printf "%.2f\n", a / b }')
s_copies=$(awk '{ c += $11; f += $12 } END { printf "%d of %d\n", f, c }' \
    "$tmp/sslices")
s_entries=$(awk '{ v = $2 } END { print v }' "$tmp/sslices")
s_table_bytes=$(stat -c %s "$sbig")
sbig_log_limit=$(log_limit "$sbig")
s_ids_bytes=$(stat -c %s "$sbig.ids")

# nsdedup -m simhash --db over the 100 MB corpora, against the big index
# and an empty one; --stats gives the candidates per lookup.  Updating
# runs work on a fresh copy of the big index each (synced before the run,
# untimed), so that no run meets the corpora of the runs before it; the
# --no-update runs only look up, in the big index and in an empty one.
note "timing 100 MB -m simhash runs against the big index and an empty one"
sempty=$tmp/empty-simhash.nsd
scopy=$tmp/copy-simhash.nsd
# One timed run: $1 the label, the rest nsdedup's arguments before the
# corpus $2.
stimed() {
	local w=$1 c=$2 t0 t1
	shift 2
	t0=$(now)
	"$NSDEDUP" -m simhash --annotate --stats "$@" "$c" >/dev/null \
	    2>"$tmp/sstats" ||
		die "nsdedup -m simhash $* $c failed: $(tail -n 1 "$tmp/sstats")"
	t1=$(now)
	elapsed "$t0" "$t1" >>"$tmp/stimes-$w"
	awk '/^nsdedup: candidates/ { print $3 }' "$tmp/sstats" \
	    >>"$tmp/scand-$w"
}
for w in empty big empty-ro big-ro; do
	: >"$tmp/stimes-$w"
	: >"$tmp/scand-$w"
done
# The read-only empty index: made by a run over no records.
rm_index "$sempty"
"$NSDEDUP" -m simhash --db "$sempty" /dev/null ||
	die "nsdedup -m simhash --db $sempty /dev/null failed"
cp "$sempty" "$sempty.keep"
cp "$sempty.ids" "$sempty.ids.keep"
cp "$sempty.log" "$sempty.log.keep"
s_big_entries=$(fingerprints "$sbig")
: >"$tmp/sinserted"
for ((i = 1; i <= runs; i++)); do
	c=$tmp/c$i.jsonl
	rm_index "$sempty"
	stimed empty "$c" --db "$sempty"
	rm_index "$scopy"
	cp --sparse=always "$sbig" "$scopy"
	cp --sparse=always "$sbig.ids" "$scopy.ids"
	cp "$sbig.log" "$scopy.log"
	sync
	stimed big "$c" --db "$scopy"
	echo $(($(fingerprints "$scopy") - s_big_entries)) >>"$tmp/sinserted"
	rm_index "$scopy"
	rm_index "$sempty"
	cp "$sempty.keep" "$sempty"
	cp "$sempty.ids.keep" "$sempty.ids"
	cp "$sempty.log.keep" "$sempty.log"
	stimed empty-ro "$c" --db "$sempty" --no-update
	stimed big-ro "$c" --db "$sbig" --no-update
done
for w in empty big empty-ro big-ro; do
	smed[$w]=$(median <"$tmp/stimes-$w")
	scand[$w]=$(median <"$tmp/scand-$w")
	smbps[$w]=$(awk -v b="$corpus_bytes" -v s="${smed[$w]}" \
	    'BEGIN { printf "%.1f\n", b / s / 1e6 }')
done
s_ratio_b=$(awk -v a="${smed[empty]}" -v b="${smed[big]}" \
    'BEGIN { printf "%.2f\n", a / b }')
s_ratio_ro=$(awk -v a="${smed[empty-ro]}" -v b="${smed[big-ro]}" \
    'BEGIN { printf "%.2f\n", a / b }')
s_inserted=$(median <"$tmp/sinserted" | cut -d. -f1)
# One more updating run, untimed: the bytes it wrote (the kernel counts a
# page of a mapping as written when the page is first dirtied).
rm_index "$scopy"
cp --sparse=always "$sbig" "$scopy"
cp --sparse=always "$sbig.ids" "$scopy.ids"
cp "$sbig.log" "$scopy.log"
sync
/usr/bin/time -f %O -o "$tmp/swritten" "$NSDEDUP" -m simhash --annotate \
    --db "$scopy" "$tmp/c1.jsonl" >/dev/null 2>&1 ||
	die "nsdedup -m simhash --db $scopy $tmp/c1.jsonl failed"
s_written=$(($(tail -n 1 "$tmp/swritten") * 512))
# The cycle of the log: updating runs over 100 MB corpora, one after
# another on one copy of the big index, until one fills the log and
# merges it into a table of the same size. The big index is near its
# maximum load, so the first full log grows the table instead; the cycle
# is then counted from the run after the growth.
note "timing updating -m simhash runs until one merges a full log"
log_records() {
	"$NSDEDUP" --db "$1" --db-info | awk '/^log:/ { print $2 }'
}
rm_index "$scopy"
cp --sparse=always "$sbig" "$scopy"
cp --sparse=always "$sbig.ids" "$scopy.ids"
cp "$sbig.log" "$scopy.log"
sync
s_cycle_times=
s_cycle_max=n/a
s_grow_run=
s_grow_time=n/a
s_grow_bytes=0
s_merge_run=
s_merge_bytes=0
cycle_bytes=0
cycle_s=0
for ((i = 1; i <= 12; i++)); do
	c=$tmp/m$i.jsonl
	[ -e "$c" ] || "$GENCORPUS" --seed $((3000 + i)) --size 100M >"$c" ||
		die "nsd-gencorpus failed"
	cat "$c" >/dev/null
	before=$(log_records "$scopy")
	size_before=$(stat -c %s "$scopy")
	t0=$(now)
	"$NSDEDUP" -m simhash --annotate --db "$scopy" "$c" >/dev/null ||
		die "nsdedup -m simhash --db $scopy $c failed"
	t1=$(now)
	t=$(elapsed "$t0" "$t1")
	s_cycle_times="$s_cycle_times${s_cycle_times:+, }$t"
	cycle_bytes=$((cycle_bytes + $(stat -c %s "$c")))
	rm -f "$c"
	cycle_s=$(awk -v a="$cycle_s" -v b="$t" 'BEGIN { print a + b }')
	[ "$(log_records "$scopy")" -lt "$before" ] || continue
	if [ "$(stat -c %s "$scopy")" -ne "$size_before" ]; then
		s_grow_run=$i
		s_grow_time=$t
		s_grow_bytes=$(stat -c %s "$scopy")
		cycle_bytes=0
		cycle_s=0
		continue
	fi
	s_merge_run=$i
	s_cycle_max=$t
	s_merge_bytes=$(stat -c %s "$scopy")
	break
done
rm -f "$tmp"/m[0-9]*.jsonl
s_cycle_mbps=n/a
s_cycle_ratio=0
s_floor=n/a
if [ -n "$s_merge_run" ]; then
	s_cycle_mbps=$(awk -v b="$cycle_bytes" -v s="$cycle_s" \
	    'BEGIN { printf "%.1f\n", b / s / 1e6 }')
	s_cycle_ratio=$(awk -v a="$s_cycle_mbps" -v b="${smbps[empty]}" \
	    'BEGIN { printf "%.2f\n", a / b }')
	# The floor of a rebuild on this machine: writing as many bytes
	# through the page cache to a new file on the same file system,
	# and syncing them.
	note "timing dd of $s_merge_bytes bytes, the rebuilt table's size"
	t0=$(now)
	dd if=/dev/zero of="$tmp/dd.out" bs=1M conv=fdatasync \
	    count=$((s_merge_bytes / 1048576)) 2>/dev/null ||
		die "dd into $tmp failed"
	s_floor=$(elapsed "$t0" "$(now)")
	rm -f "$tmp/dd.out"
fi
rm_index "$scopy"
rm_index "$sbig"
rm_index "$sempty"
rm -f "$sempty.keep" "$sempty.ids.keep" "$sempty.log.keep"

# --- Targets and the report -----------------------------------------------

status() {
	if awk -v x="$1" -v y="$2" 'BEGIN { exit !(x >= y) }'; then
		echo MET
	else
		echo "NOT MET"
	fi
}
t_build=$(status "$final_fps" "$nfp")
[ "$nfp" -ge 100000000 ] || t_build="$t_build (the target is 10^8)"
t_rate=$(status "$ratio_steady" 0.5)
rss_all=$(sample_max "$tmp/rss-build" "$tmp/rss-a" "$tmp/rss-big" \
    "$tmp/rss-empty")
[ "${rss_build_int:-0}" -le "$rss_all" ] || rss_all=$rss_build_int
t_rss=$(status "$rss_limit_kib" "$((rss_all + 1))")
t_bpf=$(status "$bytes_per_fp_limit" "$bpf_table")
t_commit=$(status 1 "$run_a")
if [ "$commit_a" != n/a ]; then
	t_commit=$(status 1 "$commit_a")
fi

# The analysis, from the figures: what the rate and the commit depend on.
analysis() {
	local x n_in
	# Slices: the one after the last doubling, and the last one.
	awk -v f="$fps" 'function slots(n,   s) {
		s = 4096
		while (s * 75 < n * 100) s *= s < 1048576 ? 8 : 2
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
			m = m " without growth, %.2fx the first slice'"'"'s %.0f,"
			m = m " against %.2fx for the last slice: at equal table"
			m = m " size the rate falls with the load, and the size"
			m = m " of the table costs %s."
			printf m, j, slots(fp[j]) * 16 / 1048576, 100 * a[j],
			    r[j], r[j] / r[1], r[1], r[k] / r[1],
			    (r[j] / r[1] > 0.8 ? "little" : "more")
		}
		printf "\n\n"
	    }' "$tmp/slices"
	if [ "$inserted_a" != n/a ]; then
		n_in=$inserted_a
		printf 'A run writes no page of the table: its new '
		printf 'fingerprints go to the log (PATH.log, 16 bytes each), '
		printf 'and its commit syncs the log and the id file and writes '
		printf 'the header. The 1,000-record runs added %s ' "$n_in"
		printf 'fingerprints each, %s bytes of log, and their commit ' \
		    "$((n_in * 16))"
		printf 'took %s s. ' "$commit_a"
	fi
	x=$(( (fps_after - fps_before) / runs ))
	printf 'A 100 MB run added about %s fingerprints to the big ' "$x"
	printf 'index (to its log, which takes up to %s before the ' \
	    "$big_log_limit"
	printf 'table is rebuilt with it); its wall time '
	if [ "$cpu_big" != n/a ]; then
		printf 'was %s s against %s s of CPU' "$med_big" "$cpu_big"
		printf ' (against the empty index: %s s and %s s)' \
		    "$med_empty" "$cpu_empty"
	else
		printf 'was %s s (%s s against the empty index)' "$med_big" \
		    "$med_empty"
	fi
	printf '.\n\n'
}

cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo \
    2>/dev/null || true)
disk=$(df -P "$tmproot" | awk 'NR == 2 { print $1 }')
fstype=$(df -PT "$tmproot" | awk 'NR == 2 { print $2 }')

{
	printf '%s\n' "$begin_mark"
	printf '## Index at scale\n\n'
	printf 'Written by `bench/index-scale.sh --records %s --fps %s ' \
	    "$records" "$fps"
	printf -- '--commit-every %s --runs %s --seed %s` ' "$every" "$runs" \
	    "$seed"
	printf '(`make bench-scale`; `make bench` runs it after '
	printf '`bench/run.sh` unless `BENCH_FLAGS=--no-scale`).\n\n'
	printf -- '- Date: %s; %s; CPU: %s, %s cores; memory: %s\n' \
	    "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(uname -srm)" \
	    "${cpu_model:-unknown}" "$(nproc)" \
	    "$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' \
	    /proc/meminfo)"
	printf -- '- Index in %s (%s on %s)\n' "$tmproot" "$fstype" "$disk"
	printf -- '- Load average (1, 5, 15 min) at the start: %s, at the end: %s\n' \
	    "$load_start" "$(cut -d ' ' -f 1-3 /proc/loadavg)"
	printf -- '- nsdedup: `%s` (sha256 %s...)\n' "$nsd_version" "$nsd_sum"
	printf -- '- RssAnon: sampled from /proc/PID/status every 0.1 s by the '
	printf 'script (%s samples in all), and read by nsd-index-scale ' \
	    "$((rss_build_n + rss_a_n + rss_b_n))"
	printf 'itself every 65,536 records and after each growth.\n\n'

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
	printf '\n\nEach row is a slice of records: the rate counts growth '
	printf '(the rebuild of the table, done inside a claim) but not the '
	printf 'commit at the end of the slice, which has its own column; '
	printf '"without growth" sets the growth time aside. A fingerprint '
	printf 'is a lookup and a claim that inserts it.\n\n'
	printf '| records | fingerprints | load | s | records/s '
	printf '| fingerprints/s | without growth | growths | growth s '
	printf '| commit s | RssAnon |\n'
	printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
	awk -v f="$fps" 'function slots(n,   s) {
		s = 4096
		while (s * 75 < n * 100) s *= s < 1048576 ? 8 : 2
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
	printf 'reserved ahead as the file grows.\n\n'
	printf '`nsdedup --db-info big.nsd`:\n\n```\n'
	cat "$tmp/db-info"
	printf '```\n\n'

	printf '### nsdedup against the big index\n\n'
	printf 'Each run adds records the index has not seen (other seeds '
	printf 'of `nsd-gencorpus`), so every run inserts; %s timed runs ' \
	    "$runs"
	printf 'each, after one untimed run; wall time from `date +%%s.%%N`; '
	printf 'median.\n\n'
	printf '| measurement | median | RssAnon max |\n|---|---:|---:|\n'
	printf '| whole run `nsdedup --db big.nsd --stats PIECE` '
	printf '(1,000 new records) | %s s | %s |\n' "$run_a" "$(mib "$rss_a")"
	if [ "$commit_a" != n/a ]; then
		printf '| its commit alone (msync and fdatasync of the table '
		printf 'and ids, header write and sync; `strace -T`) '
		printf '| %s s | |\n' "$commit_a"
		printf '| its first write (begin: "pending" header written '
		printf 'and synced; `strace -T`) | %s s | |\n' "$begin_a"
	fi
	printf '| `nsdedup --annotate --db empty.nsd C` (100 MB, fresh '
	printf 'index each run) | %s s, %s MB/s | %s |\n' "$med_empty" \
	    "$mbps_empty" "$(mib "$(sample_max "$tmp/rss-empty")")"
	printf '| `nsdedup --annotate --db big.nsd C` (the same corpora) '
	printf '| %s s, %s MB/s | %s |\n\n' "$med_big" "$mbps_big" \
	    "$(mib "$(sample_max "$tmp/rss-big")")"
	printf 'C is a %s-byte corpus (`nsd-gencorpus --seed 200N --size ' \
	    "$corpus_bytes"
	printf '100M`, N the run). The big index held %s fingerprints ' \
	    "$fps_before"
	printf 'before these runs and %s after. ' "$fps_after"
	if [ "$faults_big" != n/a ]; then
		printf 'Per run (perf stat, median): %s page faults and %s s ' \
		    "$faults_big" "$cpu_big"
		printf 'of CPU against the big index, %s and %s s against ' \
		    "$faults_empty" "$cpu_empty"
		printf 'the empty one.'
	fi
	printf '\n\n'
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
	printf 'Pseudo-random SimHashes are the best case for the block '
	printf 'tables: a table keyed by about 26 bits meets another '
	printf 'record by chance once in 2^26, so 10 tables at 10^7 give '
	printf 'about 1.5 candidates, plus the near-copies themselves. '
	printf 'SimHashes of real texts are not uniform: texts that share '
	printf 'vocabulary share bits, and meet more candidates. '
	printf '`nsdedup -m simhash --stats` over the 100 MB corpora C '
	printf 'of `nsd-gencorpus` text (unrelated documents share '
	printf 'phrase frames but few content words, so their SimHashes '
	printf 'are nearly independent, as with news: see '
	printf 'QUALITY.md), against the big index and an empty one; '
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
	printf '%s in all (`/usr/bin/time -f %%O`). ' \
	    "$(mib "$((s_written / 1024))")"
	printf 'Format version 1 stored them into the table, at random '
	printf 'places: each first store into a page cost a write fault (on '
	printf 'ext4 with large folios, one that walks the whole folio), and '
	printf 'the commit wrote back nearly the whole table (measured with '
	printf 'it on 2026-11-21: 2049 MiB written, 2.27 s a run). '
	printf 'The log is merged into the table when it holds %s ' \
	    "$sbig_log_limit"
	printf 'records, in one sequential pass that writes the whole table '
	printf 'anew. On one copy of the big index, updating runs over other '
	printf '100 MB corpora, one after another, took %s s. ' \
	    "$s_cycle_times"
	if [ -n "$s_grow_run" ]; then
		printf 'Run %s filled the log of the nearly full table, ' \
		    "$s_grow_run"
		printf 'which grew to %s bytes (%s s). ' "$s_grow_bytes" \
		    "$s_grow_time"
	fi
	if [ -n "$s_merge_run" ]; then
		printf 'Run %s filled the log%s and merged it into the ' \
		    "$s_merge_run" "${s_grow_run:+ again}"
		printf '%s-byte table (%s s); over the runs of that cycle ' \
		    "$s_merge_bytes" "$s_cycle_max"
		printf 'an updating run averages %s MB/s, %sx the empty ' \
		    "$s_cycle_mbps" "$s_cycle_ratio"
		printf 'index'"'"'s rate. Writing the table is the floor of '
		printf 'a rebuild: `dd` of as many bytes into a new file '
		printf 'beside it, with `conv=fdatasync`, took %s s in the ' \
		    "$s_floor"
		printf 'same run. Each cycle writes the table once for the '
		printf 'log'"'"'s worth of records, and the log is bounded '
		printf 'by memory (the loaded log is the RssAnon below), so a '
		printf 'larger table makes a dearer cycle. '
	else
		printf 'No run merged a full log into a table of the same '
		printf 'size within 12 runs. '
	fi
	printf 'The runs that only look up '
	printf '(`--no-update`) keep %sx of the empty index'"'"'s rate. ' \
	    "$s_ratio_ro"
	printf 'In the build, as for nshash, the rate falls as the table '
	printf 'fills: each record is %s lookups and up to as many ' \
	    "$(sed -n 's/.* \([0-9]*\) block tables.*/\1/p' \
	    "$tmp/sbuild.log" | head -n 1)"
	printf 'inserts at random places of a table far larger than the '
	printf 'caches, and the probes grow longer with the load.\n\n'

	printf '### Targets at scale\n\n'
	printf '| target | figure | status |\n|---|---|---|\n'
	printf '| an index of %s fingerprints builds | %s fingerprints ' \
	    "$nfp" "$final_fps"
	printf 'in %s s | %s |\n' "$build_s" "$t_build"
	printf '| lookup+insert at %s >= half of an empty index | ' "$nfp"
	printf 'without growth: %s fingerprints/s in the last slice, %s ' \
	    "$last_fps_steady" "$first_fps_steady"
	printf 'in the first: %sx; with growth counted: %s and %s, %sx ' \
	    "$ratio_steady" "$last_fps" "$first_fps" "$ratio_grown"
	printf '| %s |\n' "$t_rate"
	printf '| RssAnon < 64 MiB throughout | at most %s (build: %s by ' \
	    "$(mib "$rss_all")" "$(mib "$rss_build_ext")"
	printf 'sampling, %s read inside; nsdedup runs: %s and %s) | %s |\n' \
	    "$(mib "${rss_build_int:-0}")" "$(mib "$rss_a")" \
	    "$(mib "$rss_b")" "$t_rss"
	printf '| the file <= 24 bytes per fingerprint | table %s ' "$bpf_table"
	printf '(with `.ids` %s; its committed part only: %s) at load ' \
	    "$bpf_all" "$(awk -v s="$((table_bytes + ids_committed))" \
	    -v n="$final_fps" 'BEGIN { printf "%.2f", s / n }')"
	printf '%s%% | %s for the table |\n' "$load" "$t_bpf"
	printf '| commit of a 1,000-record run well under a second | '
	printf 'commit %s s, whole run %s s | %s |\n' "$commit_a" "$run_a" \
	    "$t_commit"
	printf '| throughput at %s vs empty (100 MB corpus) | %s MB/s vs ' \
	    "$fps_before" "$mbps_big"
	printf '%s MB/s: %sx | reported |\n' "$mbps_empty" "$ratio_b"
	printf '| simhash: candidates per lookup at %s records < 50 ' \
	    "$s_last_n"
	printf '| %s in the last slice (%s in the first); nsdedup over ' \
	    "$s_last_cand" "$s_first_cand"
	printf '100 MB of generated text: %s against the big index, %s ' \
	    "${scand[big]}" "${scand[empty]}"
	printf 'against an empty one | %s |\n' "$(status 50 "$(awk \
	    -v a="$s_last_cand" -v b="${scand[big]}" \
	    'BEGIN { print (a > b ? a : b) + 0.0001 }')")"
	printf '| simhash: nsdedup at %s records >= half of an empty ' \
	    "$s_last_n"
	printf 'index | updating, over 100 MB: %s MB/s against the big ' \
	    "${smbps[big]}"
	printf 'index, %s against an empty one: %sx; ' \
	    "${smbps[empty]}" "$s_ratio_b"
	printf -- '--no-update: %s and %s MB/s, %sx | %s |\n' \
	    "${smbps[big-ro]}" "${smbps[empty-ro]}" "$s_ratio_ro" \
	    "$(status "$(awk -v b="$s_ratio_b" -v c="$s_ratio_ro" \
	    'BEGIN { print (c < b ? c : b) }')" 0.5)"
	printf '| simhash: updating runs over a whole log cycle, the merge '
	printf 'that rewrites the table included, >= half of an empty '
	printf 'index | %s MB/s, %sx (the merge: %s s; `dd` of the table: ' \
	    "$s_cycle_mbps" "$s_cycle_ratio" "$s_cycle_max"
	printf '%s s) | %s |\n' "$s_floor" "$(status "$s_cycle_ratio" 0.5)"
	printf '| simhash: lookup+add in a bulk load, in place (the build '
	printf 'above), at %s records against the first slice | ' \
	    "$s_last_n"
	printf 'without growth: %s records/s in the last slice, %s in ' \
	    "$s_last_rate" "$s_first_rate"
	printf 'the first: %sx | reported |\n\n' "$s_ratio"
	printf '%s\n' "$end_mark"
} >"$tmp/section"

# Replace the section in the report, or append it.
mkdir -p "$(dirname "$out")"
if [ -f "$out" ] && grep -qF "$begin_mark" "$out"; then
	awk -v b="$begin_mark" -v e="$end_mark" -v f="$tmp/section" '
	    $0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
	    $0 == e { skip = 0; next }
	    !skip' "$out" >"$out.tmp"
else
	{
		[ ! -f "$out" ] || { cat "$out"; printf '\n'; }
		cat "$tmp/section"
	} >"$out.tmp"
fi
mv "$out.tmp" "$out"
note "wrote $out"
sed -n '/^### Targets at scale/,/^<!--/p' "$out"
