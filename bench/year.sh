#!/usr/bin/env bash
#
# bench/year.sh: a simulated year of a daily cron job over one index file
# with a window.  Day after day, a fresh corpus of bench/nsd-gencorpus
# (its own seed, its ids marked with the day) goes through nsdedup
# --annotate --db year.nsd --ttl 30d, the clock of each run set by
# $NSDEDUP_NOW to its day, so that a year passes in minutes.  Each day's
# input also carries exact copies of stories that opened groups on earlier
# days, some within the window (which must be found) and some a window or
# more back (which must not be: the window forgot them).
#
# For each day it records the wall time of the day's nsdedup run alone (the
# input is made, and the disk synced, before the clock starts) and that of
# a control, the same input into an empty index right after it, which
# drifts with the load of a shared machine as the day's run does; the bytes
# of the index's files (PATH, .ids, .log, .stage, .next, .filter, .undo,
# .times) in their apparent size and on the disk (st_blocks) after the run,
# and the most on the disk during it (sampled); from --db-info at the
# day's clock, the table's slots, the groups opened and forgotten and the
# oldest kept; and, from an untimed --no-update run over the day's copies
# before the day's run, how many of them the index found.
# The report gives day 1, every 30th day, the first day of the target and
# the last, and the issue's target: the index's size on the disk and the
# day's time flat (within 10%) from day 45 on, the day's time as a rolling
# median of 5 days against the noise of a shared machine.  For a window
# other than 30 days the target starts one and a half windows in (day 45
# of a 30-day window).  cat and jq -c . are timed over day 1's input in the
# same run, for scale.
#
# The results replace the "A simulated year" section of the report
# (appended when it has none); bench/run.sh keeps the section when it
# rewrites the report.  make bench-year runs it, with BENCH_YEAR_FLAGS;
# make bench does not.  A year at 100M a day takes about 15 minutes on two
# quiet cores (2.3 s a day, most of it making the day's input), and room
# in $TMPDIR for a day's input (deleted after its run) and the index:
# 160 MiB on the disk after day 10 at 100M a day, more during a run, when
# PATH.ids takes its whole size, which grows by about 5 MB a day; allow
# 3 GB.  --keep DIR keeps the index and every day's figures.  Run it from
# the top of the build tree:
#
#     bench/year.sh [--days 365] [--size 100M] [--ttl 30d] [--method nshash]
#                   [--seed 1] [--out bench/RESULTS.md] [--keep DIR]
#
# Environment:
#     NSDEDUP    the program under test (default ./src/nsdedup)
#     GENCORPUS  the corpus generator (default ./bench/nsd-gencorpus)
#     TMPDIR     where the inputs and the index go (default /tmp)
#
# Needs bash, jq (the one on $PATH), awk and GNU coreutils.  Exits 0 when
# every command ran (whether or not the target was met), 1 when one failed
# or the disk ran short, 2 on a usage error.

# The report's Markdown puts commands in backquotes inside single quotes.
# shellcheck disable=SC2016

set -euo pipefail

prog=bench/year.sh
days=365
size=100M
ttl=30d
method=nshash
seed=1
out=bench/RESULTS.md
keep=
begin_mark='<!-- year: begin -->'
end_mark='<!-- year: end -->'
# The target: the largest of the figures over days from the target's first
# on at most this many times the smallest.
flat_limit=1.10
# Day 1's clock, 2025-01-01T06:00:00Z; day N is N - 1 days on.
day1_at=1735711200
# Stories copied from each earlier day, for each distance in days.
copies_per_lag=20

usage() {
	cat <<EOF
usage: $prog [--days N] [--size SIZE] [--ttl TTL] [--method METHOD]
                     [--seed N] [--out FILE] [--keep DIR]

  --days N         days simulated, one run each (default 365)
  --size SIZE      a day's corpus, K/M/G suffixes (powers of 1024, as
                   nsd-gencorpus --size; default 100M)
  --ttl TTL        the index's window, nsdedup --ttl: seconds, or with a
                   suffix s, m, h or d (default 30d)
  --method METHOD  nshash (default), simhash or minhash
  --seed N         seed of the corpora: day N's is SEED*100000+N (default 1)
  --out FILE       the report whose "A simulated year" section is replaced
                   (default bench/RESULTS.md)
  --keep DIR       keep the index, each day's figures (days.tsv) and
                   --db-info (info/) in DIR, made when missing
EOF
}

# shellcheck source=bench/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

while [ $# -gt 0 ]; do
	case $1 in
	--days|--size|--ttl|--method|--seed|--out|--keep)
		[ $# -ge 2 ] || usage_error "option '$1' needs a value"
		opt=$1 val=$2
		shift 2 ;;
	--days=*|--size=*|--ttl=*|--method=*|--seed=*|--out=*|--keep=*)
		opt=${1%%=*} val=${1#*=}
		shift ;;
	-h|--help)
		usage; exit 0 ;;
	*)
		usage_error "unknown argument '$1'" ;;
	esac
	case $opt in
	--days) days=$val ;;
	--size) size=$val ;;
	--ttl) ttl=$val ;;
	--method) method=$val ;;
	--seed) seed=$val ;;
	--out) out=$val ;;
	--keep) keep=$val ;;
	esac
done

# Seconds in a window as nsdedup --ttl takes it.
ttl_seconds() {
	local n=${1%[smhd]}
	case $1 in
	*m) echo $((n * 60)) ;;
	*h) echo $((n * 3600)) ;;
	*d) echo $((n * 86400)) ;;
	*) echo "$n" ;;
	esac
}

[[ $days =~ ^[1-9][0-9]{0,4}$ ]] || usage_error "invalid --days '$days'"
[[ $size =~ ^[1-9][0-9]*[KMG]?$ ]] || usage_error "invalid --size '$size'"
[[ $ttl =~ ^[1-9][0-9]{0,8}[smhd]?$ ]] || usage_error "invalid --ttl '$ttl'"
case $method in
nshash|simhash|minhash) ;;
*) usage_error "invalid --method '$method' (nshash, simhash or minhash)" ;;
esac
[[ $seed =~ ^[0-9]{1,9}$ ]] || usage_error "invalid --seed '$seed'"
[ -n "$out" ] || usage_error "empty --out"
size_bytes=$(to_bytes "$size")
[ "$size_bytes" -ge 65536 ] || usage_error "--size under 64K"
ttl_s=$(ttl_seconds "$ttl")
# nsdedup's own bound on --ttl, ten years.
[ "$ttl_s" -le $((3650 * 86400)) ] ||
	usage_error "invalid --ttl '$ttl' (at most 3650d)"

# The target's first day: one and a half windows in, day 45 of 30 days,
# and never day 1, when the index is made.
flat_from=$(( (3 * ttl_s + 2 * 86400 - 1) / (2 * 86400) ))
[ "$flat_from" -ge 2 ] || flat_from=2

# The distances in days of the copies: within the window (1 day, half the
# window, its last whole day), and a window or more back (the window's
# edge, twice and six times the window), none beyond the year.
lags=()
last_in=$(( (ttl_s - 1) / 86400 ))
first_out=$(( (ttl_s + 86399) / 86400 ))
for l in 1 $(( (last_in + 1) / 2 )) "$last_in" "$first_out" \
    $((2 * first_out)) $((6 * first_out)); do
	if [ "$l" -lt 1 ] || [ "$l" -ge "$days" ]; then
		continue
	fi
	case " ${lags[*]} " in
	*" $l "*) ;;
	*) lags+=("$l") ;;
	esac
done

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src_top=$(dirname "$script_dir")
NSDEDUP=${NSDEDUP:-./src/nsdedup}
GENCORPUS=${GENCORPUS:-./bench/nsd-gencorpus}
tmproot=${TMPDIR:-/tmp}
for p in "$NSDEDUP" "$GENCORPUS"; do
	[ -x "$p" ] || die "$p: not an executable (see the environment in $prog)"
done
"$NSDEDUP" --version >/dev/null 2>&1 || die "$NSDEDUP --version failed"
command -v jq >/dev/null 2>&1 ||
	die "jq not found: it is the reference the benchmark compares against"

# Room: a day's input twice over (its corpus and its copies made), and the
# index, which its window keeps to about a window of days; the free space
# is looked at again before each day.
day_need_kib=$(( (2 * size_bytes + (256 << 20)) >> 10 ))
free_kib() {
	df -Pk "$1" | awk 'NR == 2 { print $4 }'
}
[ "$(free_kib "$tmproot")" -ge $((day_need_kib + (1 << 20))) ] ||
	die "$tmproot has $(($(free_kib "$tmproot") >> 10)) MiB free," \
	    "needs $(( (day_need_kib >> 10) + 1024 )) MiB (set TMPDIR)"

script_t0=$(date +%s)
date_start=$(date -u '+%Y-%m-%d %H:%M UTC')
load_start=$(cut -d ' ' -f 1-3 /proc/loadavg)
free_start=$(free_kib "$tmproot")
tmp=$(mktemp -d "$tmproot/nsdedup-year.XXXXXX")
sampler=
cleanup() {
	[ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -n "$keep" ]; then
	mkdir -p "$keep" || die "cannot make $keep"
	work=$(cd "$keep" && pwd)
	[ ! -e "$work/year.nsd" ] ||
		die "$work/year.nsd exists: --keep wants a directory without one"
else
	work=$tmp
fi
ix=$work/year.nsd
mkdir -p "$work/info" "$tmp/archive"

# The commit of the program under test, when the source tree is a checkout
# of its own (make distcheck's copy lies inside one, and is not).
commit="unknown (not a git checkout)"
git_top=$(git -C "$src_top" rev-parse --show-toplevel 2>/dev/null) ||
	git_top=
if [ -n "$git_top" ] &&
    [ "$(cd "$git_top" && pwd -P)" = "$(cd "$src_top" && pwd -P)" ] &&
    c=$(git -C "$src_top" rev-parse --short HEAD 2>/dev/null); then
	commit=$c
	[ -z "$(git -C "$src_top" status --porcelain --untracked-files=no \
	    2>/dev/null)" ] || commit="$commit, with changes not committed"
fi
# A rebuild during the year must not change the program under test.
nsd_shown=$NSDEDUP
freeze_programs "$tmp" NSDEDUP GENCORPUS
nsd_version=$("$NSDEDUP" --version 2>&1 | head -n 1)
nsd_sum=$(sha256sum <"$NSDEDUP" | cut -c 1-16)

now() {
	date +%s.%N
}

elapsed() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f\n", b - a }'
}

# Bytes $1 in MiB, two decimals.
mib2() {
	awk -v b="$1" 'BEGIN { printf "%.2f MiB\n", b / 1048576 }'
}

# Day $1's clock, for $NSDEDUP_NOW.
clock_of() {
	echo $((day1_at + ($1 - 1) * 86400))
}

# Whether copies from $1 days back are within the window.
within() {
	[ $(($1 * 86400)) -lt "$ttl_s" ]
}

# The index's files.
suffixes=('' .ids .log .stage .next .filter .undo .times)

# The apparent and the allocated bytes of the index's files, summed, then
# the allocated bytes of each (0 when missing), in the order of suffixes.
index_bytes() {
	local s
	for s in "${suffixes[@]}"; do
		if [ -e "$ix$s" ]; then
			stat -c '%s %b %B' "$ix$s"
		else
			echo 0 0 0
		fi
	done | awk '{ a += $1; b += $2 * $3; f = f " " $2 * $3 }
	    END { printf "%.0f %.0f%s\n", a, b, f }'
}

# Sample, every $sample_every s until process $1 ends, the blocks of the
# index's files on the disk (those of a fold, a renewal or a rebuild under
# way among them), with one stat a sample; the largest sum, in bytes, goes
# to file $2.
sample_every=0.02
disk_sample() {
	local pid=$1 to=$2 peak=0 b n u s files=()
	for s in "${suffixes[@]}" .new .stage.new .filter.new .times.new; do
		files+=("$ix$s")
	done
	while kill -0 "$pid" 2>/dev/null; do
		# Missing files are passed over.
		b=0
		while read -r n u; do
			b=$((b + n * u))
		done < <(stat -c '%b %B' -- "${files[@]}" 2>/dev/null)
		[ "$b" -le "$peak" ] || peak=$b
		sleep "$sample_every"
	done
	echo "$peak" >"$to"
}

# Remove the index at $1 and its companion files.
rm_index() {
	local s
	for s in "${suffixes[@]}" .lock .new .stage.new .filter.new \
	    .times.new; do
		rm -f "$1$s"
	done
}

# The figures of --db-info in file $1: the table's slots, those of the
# table it grows (or renews) into (0: none), groups opened, groups
# forgotten, the oldest kept and its age in days (- -: none).
info_figures() {
	awk '
	    /^load:/ { slots = $4 }
	    /^groups:/ { groups = $2 }
	    /^growing:/ { next_slots = $3 }
	    /^forgotten:/ { forgotten = $2 }
	    /^oldest group:/ {
		if ($3 == "none") { oldest = "-"; age = "-" }
		else { oldest = $3; sub(/,$/, "", oldest); age = $(NF - 2) }
	    }
	    END { printf "%s %s %s %s %s %s\n", slots, next_slots + 0,
		groups, forgotten, oldest, age }' "$1"
}

# The copies of day $1 in file $2 that nsdedup's output $3 calls
# duplicates: "within found_within beyond found_beyond".
copies_found() {
	local d=$1 in=$2 res=$3 l inl=
	for l in "${lags[@]}"; do
		! within "$l" || inl="$inl $l"
	done
	awk -v inl="$inl " -v pre="c$d-" '
	    FNR == 1 { f++ }
	    {
		id = $0
		sub(/^\{"id":"/, "", id)
		sub(/".*/, "", id)
		if (substr(id, 1, length(pre)) != pre)
			next
		split(substr(id, length(pre) + 1), p, "-")
		k = index(inl, " " p[1] " ") ? "in" : "out"
		if (f == 1)
			n[k]++
		else if ($0 ~ /"is_dup":true/)
			found[k]++
	    }
	    END { printf "%d %d %d %d\n", n["in"], found["in"], n["out"],
		found["out"] }' "$in" "$res"
}

# Day $1's input, $tmp/in.jsonl: the corpus of its seed, ids marked dN-,
# then the copies due that day (from $tmp/archive, deleted as they are
# used) into $tmp/copies.jsonl, their ids cN-LAG-dM-...; and from the
# corpus, the stories to be copied on later days: originals (no near-copy
# in the generator's truth), a share for each distance.
make_input() {
	local d=$1 l src a=$tmp/archive need=0 todo=""
	"$GENCORPUS" --seed $((seed * 100000 + d)) --size "$size" \
	    --truth "$tmp/truth" 2>"$tmp/gen.err" |
	    sed "s/^{\"id\":\"/{\"id\":\"d$d-/" >"$tmp/in.jsonl" || {
		cat "$tmp/gen.err" >&2
		die "generating day $d's corpus failed"
	}
	: >"$tmp/copies.jsonl"
	for l in "${lags[@]}"; do
		src=$((d - l))
		if [ -f "$a/d$src.$l" ]; then
			sed "s/^{\"id\":\"d$src-/{\"id\":\"c$d-$l-d$src-/" \
			    "$a/d$src.$l" >>"$tmp/copies.jsonl"
			rm -f "$a/d$src.$l"
		fi
		if [ $((d + l)) -le "$days" ]; then
			todo="$todo $l"
			need=$((need + copies_per_lag))
		fi
	done
	if [ "$need" -gt 0 ]; then
		awk -v pre="d$d-" -v k="$copies_per_lag" -v todo="$todo" \
		    -v dir="$a" -v d="$d" '
		    BEGIN { nl = split(todo, lag, " ") }
		    FNR == NR { truth[$1] = 1; next }
		    {
			id = $0
			sub(/^\{"id":"/, "", id)
			sub(/".*/, "", id)
			if (substr(id, length(pre) + 1) in truth)
				next
			i = n % nl + 1
			print > (dir "/d" d "." lag[i])
			if (++n >= k * nl)
				exit
		    }' "$tmp/truth" "$tmp/in.jsonl"
	fi
	cat "$tmp/copies.jsonl" >>"$tmp/in.jsonl"
}

# The median of the numbers in file $1, three decimals.
median_of() {
	median <"$1" | awk '{ printf "%.3f\n", $1 }'
}

# Time cat and jq -c . over the file $1, three runs each after one
# untimed; their medians go to cat_s and jq_s.
time_references() {
	local f=$1 r i t0 t1
	for r in cat jq; do
		: >"$tmp/ref-$r"
		for i in 0 1 2 3; do
			t0=$(now)
			case $r in
			cat) cat "$f" >/dev/null ;;
			jq) jq -c . "$f" >/dev/null ;;
			esac || die "$r over day 1's input failed"
			t1=$(now)
			[ "$i" -eq 0 ] || elapsed "$t0" "$t1" >>"$tmp/ref-$r"
		done
	done
	cat_s=$(median_of "$tmp/ref-cat")
	jq_s=$(median_of "$tmp/ref-jq")
}

note "$days days of $size, --ttl $ttl, -m $method, into $ix" \
    "(copies from ${lags[*]:-no} days back)"
: >"$work/days.tsv"
for ((d = 1; d <= days; d++)); do
	[ "$(free_kib "$tmproot")" -ge "$day_need_kib" ] ||
		die "day $d: $tmproot has $(($(free_kib "$tmproot") >> 10))" \
		    "MiB free, under the $((day_need_kib >> 10)) MiB a day needs"
	clock=$(clock_of "$d")
	make_input "$d"
	in_bytes=$(stat -c %s "$tmp/in.jsonl")
	[ "$d" -ne 1 ] || time_references "$tmp/in.jsonl"
	# The copies, judged by the index as the day's run finds it.
	copies="0 0 0 0"
	if [ -s "$tmp/copies.jsonl" ] && [ -e "$ix" ]; then
		NSDEDUP_NOW=$clock "$NSDEDUP" -m "$method" --annotate \
		    --no-update --db "$ix" --ttl "$ttl" "$tmp/copies.jsonl" \
		    >"$tmp/copies.out" 2>"$tmp/run.err" || {
			cat "$tmp/run.err" >&2
			die "day $d: the --no-update run over the copies failed"
		}
		copies=$(copies_found "$d" "$tmp/copies.jsonl" "$tmp/copies.out")
	fi
	# Else the run's first fdatasync would write the new input out.
	sync
	st=0
	t0=$(now)
	NSDEDUP_NOW=$clock "$NSDEDUP" -m "$method" --annotate --db "$ix" \
	    --ttl "$ttl" --stats "$tmp/in.jsonl" >/dev/null \
	    2>"$tmp/run.err" &
	pid=$!
	disk_sample "$pid" "$tmp/peak" &
	sampler=$!
	wait "$pid" || st=$?
	t1=$(now)
	wait "$sampler" || true
	sampler=
	[ "$st" -eq 0 ] || {
		tail -n 5 "$tmp/run.err" >&2
		die "day $d: nsdedup exited with status $st"
	}
	wall=$(elapsed "$t0" "$t1")
	# The control: the same input into an empty index, right after.
	rm_index "$tmp/empty.nsd"
	sync
	t0=$(now)
	NSDEDUP_NOW=$clock "$NSDEDUP" -m "$method" --annotate \
	    --db "$tmp/empty.nsd" --ttl "$ttl" "$tmp/in.jsonl" >/dev/null \
	    2>"$tmp/control.err" || {
		tail -n 5 "$tmp/control.err" >&2
		die "day $d: nsdedup into an empty index failed"
	}
	t1=$(now)
	control=$(elapsed "$t0" "$t1")
	rm_index "$tmp/empty.nsd"
	rm -f "$tmp/in.jsonl" "$tmp/copies.jsonl" "$tmp/copies.out"
	read -r recs dups < <(awk '
	    /^nsdedup: records / { r = $3 }
	    /^nsdedup: duplicates / { u = $3 }
	    END { print r + 0, u + 0 }' "$tmp/run.err")
	info=$work/info/day$d
	[ -n "$keep" ] || info=$work/info/last
	NSDEDUP_NOW=$clock "$NSDEDUP" --db "$ix" --db-info >"$info" \
	    2>"$tmp/info.err" || {
		cat "$tmp/info.err" >&2
		die "day $d: nsdedup --db-info failed"
	}
	read -r apparent allocated per_file < <(index_bytes)
	peak=$(cat "$tmp/peak")
	[ "$peak" -ge "$allocated" ] || peak=$allocated
	# The columns of days.tsv (see $tmp/days below).
	echo "$d $clock $in_bytes $recs $dups $wall $apparent $allocated" \
	    "$(info_figures "$info") $copies $per_file $peak $control" |
	    tr ' ' '\t' >>"$work/days.tsv"
	note "day $d: $wall s (empty index: $control s), index" \
	    "$(mib2 "$allocated") on the disk ($(mib2 "$peak") during the run)"
done
[ -n "$keep" ] || cp "$work/info/last" "$tmp/last-info"
[ -z "$keep" ] || cp "$work/info/day$days" "$tmp/last-info"

# The rolling medians, of days d-2 to d+2 (those there are), of the day's
# time and of its ratio to the control's; added as the last two columns of
# days.tsv's lines, into $tmp/days.
awk -F'\t' '
    # The median of the series s around day d.
    function rolling(s, d,   n, i, j, x, v) {
	n = 0
	for (j = d - 2; j <= d + 2; j++)
		if (j >= 1 && j <= NR)
			v[++n] = s[j]
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
			x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
		}
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    { line[NR] = $0; t[NR] = $6; r[NR] = $28 > 0 ? $6 / $28 : 0 }
    END {
	for (d = 1; d <= NR; d++)
		printf "%s\t%.4f\t%.4f\n", line[d], rolling(t, d),
		    rolling(r, d)
    }' "$work/days.tsv" >"$tmp/days"

# Columns of $tmp/days: 1 day, 2 clock, 3 input bytes, 4 records, 5
# duplicates, 6 wall s, 7 index bytes apparent, 8 on the disk, 9 slots, 10
# slots of the table it grows into, 11 groups, 12 forgotten, 13 oldest kept,
# 14 its age in days, 15 copies within, 16 found, 17 copies beyond, 18
# found, 19 to 26 each file's bytes on the disk (PATH, .ids, .log, .stage,
# .next, .filter, .undo, .times), 27 the most on the disk during the run,
# 28 the control's wall s, 29 the rolling median of the wall s, 30 that of
# the wall s over the control's.
c_alloc=8 c_slots=9 c_peak=27 c_med=29 c_ratio=30

# The largest and the smallest of column $1 from the target's first day on,
# in the printf format $2 (default %s; rounded by awk, as the tables are):
# "max day_of_max min day_of_min max/min".
spread() {
	awk -F'\t' -v c="$1" -v f="${2:-%s}" -v from="$flat_from" '
	    $1 >= from {
		if (!n++ || $c > hi) { hi = $c; dhi = $1 }
		if (n == 1 || $c < lo) { lo = $c; dlo = $1 }
	    }
	    END { printf f " %s " f " %s %.3f\n", hi, dhi, lo, dlo,
		(lo > 0 ? hi / lo : 0) }' "$tmp/days"
}

if [ "$days" -ge "$flat_from" ]; then
	read -r a_hi a_dhi a_lo a_dlo a_x < <(spread "$c_alloc")
	read -r t_hi t_dhi t_lo t_dlo t_x < <(spread "$c_med" %.3f)
	if awk -v a="$a_x" -v t="$t_x" -v l="$flat_limit" \
	    'BEGIN { exit !(a <= l && t <= l) }'; then
		verdict=MET
	else
		verdict="NOT MET"
	fi
	target_line=$(printf -- '- index size and day time flat (within 10%%)'\
' from day %s on: index on the disk max/min %s (%s on day %s, %s on day'\
' %s); day time, rolling median of 5 days, max/min %s (%s s on day %s,'\
' %s s on day %s) — %s' "$flat_from" "$a_x" \
	    "$(mib2 "$a_hi")" "$a_dhi" "$(mib2 "$a_lo")" \
	    "$a_dlo" "$t_x" "$t_hi" "$t_dhi" "$t_lo" "$t_dlo" "$verdict")
else
	target_line="- index size and day time flat (within 10%) from day"
	target_line="$target_line $flat_from on: not measured (the run ended"
	target_line="$target_line on day $days)"
fi

# The days of the table: 1, every 30th, the target's first, the last.
table_days=$( { echo 1; seq 30 30 "$days"; echo "$flat_from"; echo "$days"
    } | awk -v n="$days" '$1 <= n' | sort -nu | tr '\n' ' ')

# The table, in Markdown.
year_table() {
	printf '| day | input MB | records | duplicates | s | rolling median s '
	printf '| empty index s | index MiB | on the disk MiB | table slots '
	printf '| groups | forgotten | oldest kept (days old) '
	printf '| copies within found | copies beyond found |\n'
	printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:'
	printf '|---:|---:|---:|\n'
	awk -F'\t' -v days=" $table_days" '
	    index(days, " " $1 " ") {
		slots = $9
		if ($10 > 0)
			slots = slots " → " $10
		oldest = $13 == "-" ? "none" : $13 " (" $14 ")"
		printf "| %d | %.1f | %d | %d | %.3f | %.3f | %.3f | %.2f " \
		    "| %.2f | %s | %d | %d | %s | %d of %d | %d of %d |\n", $1,
		    $3 / 1e6, $4, $5, $6, $29, $28, $7 / 1048576, $8 / 1048576,
		    slots, $11, $12, oldest, $16, $15, $18, $17 }' "$tmp/days"
}

# The index's files on the disk, one by one, on the days of the table.
files_table() {
	local s
	printf '| day |'
	for s in "${suffixes[@]}"; do
		printf ' `year.nsd%s` |' "$s"
	done
	printf ' all | all, most during the run | apparent size |\n|---:|'
	for s in "${suffixes[@]}"; do
		printf -- '---:|'
	done
	printf -- '---:|---:|---:|\n'
	awk -F'\t' -v days=" $table_days" '
	    index(days, " " $1 " ") {
		printf "| %d |", $1
		for (k = 19; k <= 26; k++)
			printf " %.2f |", $k / 1048576
		printf " %.2f | %.2f | %.2f |\n", $8 / 1048576, $27 / 1048576,
		    $7 / 1048576 }' \
	    "$tmp/days"
}

# The table's slots from the target's first day on: "least most".
read -r slots_lo slots_hi < <(awk -F'\t' -v c="$c_slots" -v from="$flat_from" '
    $1 >= from { if (!n++ || $c < lo) lo = $c; if ($c > hi) hi = $c }
    END { print lo + 0, hi + 0 }' "$tmp/days")

# Totals over the year.
read -r tot_in tot_recs tot_dups tot_wall n_in f_in n_out f_out \
    < <(awk -F'\t' '
    { b += $3; r += $4; u += $5; w += $6
      ni += $15; fi += $16; no += $17; fo += $18 }
    END { printf "%.0f %d %d %.3f %d %d %d %d\n", b, r, u, w, ni, fi, no,
	fo }' "$tmp/days")
med_day=$(cut -f 6 "$tmp/days" | median_of /dev/stdin)
day1_in=$(awk -F'\t' '$1 == 1 { print $3 }' "$tmp/days")
mbps() {
	awk -v b="$1" -v s="$2" \
	    'BEGIN { if (s > 0) printf "%.1f\n", b / s / 1e6; else print "inf" }'
}
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo \
    2>/dev/null) || true
cpu_model=${cpu_model:-unknown}
mem_gib=$(awk '/^MemTotal:/ { printf "%.1f GiB\n", $2 / 1048576 }' \
    /proc/meminfo 2>/dev/null) || true
mem_gib=${mem_gib:-unknown}
took=$(( $(date +%s) - script_t0 ))
# The distances of the copies, in words: "1, 15 and 29 days".
lags_words() {
	local n=${#lags[@]} i w=''
	if [ "$n" -eq 0 ]; then
		printf 'no days (the run is too short)'
		return
	fi
	for ((i = 0; i < n; i++)); do
		if [ "$i" -eq 0 ]; then
			w=${lags[i]}
		elif [ "$i" -eq $((n - 1)) ]; then
			w="$w and ${lags[i]}"
		else
			w="$w, ${lags[i]}"
		fi
	done
	printf '%s days' "$w"
}
lags_in='' lags_out=''
for l in "${lags[@]}"; do
	if within "$l"; then
		lags_in="$lags_in${lags_in:+, }$l"
	else
		lags_out="$lags_out${lags_out:+, }$l"
	fi
done

{
	printf '%s\n' "$begin_mark"
	printf '## A simulated year\n\n'
	printf 'Written by `bench/year.sh --days %s --size %s --ttl %s ' \
	    "$days" "$size" "$ttl"
	printf -- '--method %s --seed %s` (`make bench-year`; `make bench` ' \
	    "$method" "$seed"
	printf 'does not run it), from %s to %s (%d min %d s).\n\n' \
	    "$date_start" "$(date -u '+%Y-%m-%d %H:%M UTC')" \
	    $((took / 60)) $((took % 60))
	printf -- '- Machine: %s, %s cores online (nproc), %s of memory; ' \
	    "$cpu_model" "$(nproc)" "$mem_gib"
	printf '%s\n' "$(uname -srm)"
	printf -- '- nsdedup: `%s` at commit %s, `$NSDEDUP` = %s ' \
	    "$nsd_version" "$commit" "$nsd_shown"
	printf '(sha256 %s...)\n' "$nsd_sum"
	printf -- '- Index and inputs in %s: %s free at the start, ' \
	    "$tmproot" "$(mib "$free_start")"
	printf '%s at the end\n' "$(mib "$(free_kib "$tmproot")")"
	printf -- '- Load average (1, 5, 15 min) at the start: %s, ' \
	    "$load_start"
	printf 'at the end: %s\n\n' "$(cut -d ' ' -f 1-3 /proc/loadavg)"
	printf 'Day N is a cron job'"'"'s run, `NSDEDUP_NOW=T_N nsdedup -m '
	printf '%s --annotate --db year.nsd --ttl %s --stats IN_N > ' \
	    "$method" "$ttl"
	printf '/dev/null`, T_N being %s plus N - 1 days, ' \
	    "$(date -u -d "@$day1_at" '+%Y-%m-%dT%H:%M:%SZ')"
	printf 'on the one index of the year. IN_N is `nsd-gencorpus --seed '
	printf '%s --size %s` (a corpus of its own each day, ' \
	    "$((seed * 100000))+N" "$size"
	printf 'its ids marked dN-), then exact copies of %s stories ' \
	    "$copies_per_lag"
	printf 'that opened groups (records the generator made no '
	printf 'near-copy of) from each of the days %s back, ' \
	    "$(lags_words)"
	printf 'within the window (%s) or a window or more back (%s), ' \
	    "${lags_in:-none}" "${lags_out:-none}"
	printf 'their ids marked cN-LAG-. The copies are judged before the '
	printf 'day'"'"'s run by `nsdedup --no-update` at the day'"'"'s '
	printf 'clock, untimed: those within must be found, those beyond '
	printf 'must not. The input is made and `sync` is run before the '
	printf 'clock starts; "s" is the wall time of the day'"'"'s run alone '
	printf '(`date +%%s.%%N` before and after). "Empty index s" is a '
	printf 'control: the same input into an empty index (`--db '
	printf 'empty.nsd`, removed before and after), timed right after '
	printf 'the day'"'"'s run, which drifts with the load of the machine '
	printf 'as the day'"'"'s run does; the input is deleted after it. '
	printf 'The index'"'"'s size, after the run, is that of all '
	printf 'its files '
	printf '(PATH, .ids, .log, .stage, .next, .filter, .undo, .times), '
	printf 'apparent (st_size) and on the disk (st_blocks, in the '
	printf '512-byte blocks of `stat -c "%%b %%B"`: PATH.ids has holes '
	printf 'where the window punched out forgotten groups); during the '
	printf 'run, one `stat` every %s s (a process of the script, which ' \
	    "$sample_every"
	printf 'runs alongside every day alike) takes the same sum, with '
	printf 'the files a fold, a renewal or a rebuild makes (PATH.new, '
	printf '.stage.new, .filter.new, .times.new), for the most the '
	printf 'index took on the disk during the run. Slots, groups, '
	printf 'forgotten groups and the oldest kept are `nsdedup --db-info` '
	printf 'at the day'"'"'s clock (→: the table it grows or renews '
	printf 'into). The rolling median of a day is that of the days '
	printf 'from two before to two after it (fewer at the ends), to '
	printf 'damp the noise of a shared machine.\n\n'
	printf 'The days shown: 1, every 30th, the first of the target '
	printf '(%s) and the last.\n\n' "$flat_from"
	year_table
	printf '\nOver the %s days: %s MB in %s records, %s duplicates; ' \
	    "$days" "$(awk -v b="$tot_in" 'BEGIN { printf "%.1f", b / 1e6 }')" \
	    "$tot_recs" "$tot_dups"
	printf 'nsdedup took %s s, the median day %s s (%s MB/s). ' \
	    "$tot_wall" "$med_day" "$(mbps "$((tot_in / days))" "$med_day")"
	printf 'Copies within the window found: %s of %s; a window or more ' \
	    "$f_in" "$n_in"
	printf 'back (which the window forgot): %s of %s.\n\n' "$f_out" \
	    "$n_out"
	printf 'In the same run, over day 1'"'"'s input (%s bytes), median ' \
	    "$day1_in"
	printf 'of 3 runs after one untimed: `cat IN_1 > /dev/null` %s s ' \
	    "$cat_s"
	printf '(%s MB/s), `jq -c . IN_1 > /dev/null` %s s (%s MB/s); ' \
	    "$(mbps "$day1_in" "$cat_s")" "$jq_s" "$(mbps "$day1_in" "$jq_s")"
	printf 'the median day of nsdedup is %s× jq'"'"'s time.\n\n' \
	    "$(awk -v a="$med_day" -v b="$jq_s" \
	    'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }')"
	printf 'The index'"'"'s files on the disk, MiB, on the same days '
	printf '(all: the sum the target takes; apparent size: of all, '
	printf 'st_size):\n\n'
	files_table
	printf '\n'
	printf '`nsdedup --db-info` after the last day, at its clock:\n\n'
	printf '```\n'
	sed "s|$work/||g" "$tmp/last-info"
	printf '```\n\n'
	printf '### Target\n\n'
	printf '%s\n\n' "$target_line"
	if [ "$days" -ge "$flat_from" ]; then
		printf 'Not a part of the target: from day %s on, the table ' \
		    "$flat_from"
		if [ "$slots_lo" = "$slots_hi" ]; then
			printf 'kept its %s slots; ' "$slots_lo"
		else
			printf 'had from %s to %s slots; ' "$slots_lo" "$slots_hi"
		fi
		read -r r_hi r_dhi r_lo r_dlo r_x < <(spread "$c_ratio" %.2f)
		printf 'the day'"'"'s time over the control'"'"'s, rolling '
		printf 'median of 5 days, went from %s (day %s) to %s ' \
		    "$r_lo" "$r_dlo" "$r_hi"
		printf '(day %s), max/min %s; ' "$r_dhi" "$r_x"
		read -r p_hi p_dhi p_lo p_dlo p_x < <(spread "$c_peak")
		printf 'the most the index took on the disk during a run went '
		printf 'from %s (day %s) to %s (day %s), max/min %s.\n\n' \
		    "$(mib2 "$p_lo")" "$p_dlo" "$(mib2 "$p_hi")" "$p_dhi" \
		    "$p_x"
	fi
	printf '%s\n' "$end_mark"
} >"$tmp/section"
# No line ends in blanks (sentences are printed each with a space after).
sed -i 's/[[:space:]]*$//' "$tmp/section"

replace_section "$begin_mark" "$end_mark" "$tmp/section" "$out"
note "wrote $out"
sed -n '/^| day |/,/^$/p' "$tmp/section"
printf '%s\n' "$target_line"
