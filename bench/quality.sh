#!/usr/bin/env bash
#
# bench/quality.sh: how well nshash and simhash find near-copies, with
# ground truth.  Generates two corpora with nsd-gencorpus --truth: the
# default one (reposts with light edits: a prefix or footer, a dropped
# sentence, a few characters of one sentence) and an "edited" one where
# half the reposts have every sentence edited (--edit-rate 0.5: a typo, a
# punctuation mark and a digit in each), the kind nshash cannot find.  On
# each it runs nshash and simhash over a grid of --distance, --shingle and
# --ngram, and scores every run against the truth:
#
#   - a record judged a duplicate whose similar_id is in its own true
#     group (the record it was copied from, or a copy of the same
#     original) is a true positive;
#   - a record judged a duplicate that is not a repost, or whose
#     similar_id is in another true group, is a false positive;
#   - recall is true positives / reposts, precision is true positives /
#     records judged duplicates.
#
# Then, on the shared real corpora (no truth there), it counts each
# method's duplicates, how far the two agree, and how many of each
# corpus's exact repeats (same text once white space is removed, at least
# 50 characters) each method finds; and on the labelled same-story pairs,
# how many pairs each method calls near-duplicates (same story in other
# words should not be).  It writes the results as Markdown.  make
# bench-quality runs it; make bench runs it too.
#
# Run it from the top of the build tree:
#
#     bench/quality.sh [--size 32M] [--seed 1] [--out bench/QUALITY.md]
#
# Environment:
#     NSDEDUP          the program under test (default ./src/nsdedup)
#     GENCORPUS        the corpus generator (default ./bench/nsd-gencorpus)
#     NSD_SHARED_DATA  folder of *.jsonl.gz corpora and labeled_dev/
#                      (default: shared/data beside the source tree);
#                      skipped when absent
#     TMPDIR           where the corpora go (default /tmp)
#
# Needs bash, jq, awk and GNU coreutils.  Exits 0 when every command ran
# (whatever the scores), 1 when one failed, 2 on a usage error.

# The report's Markdown puts commands in backquotes inside single quotes.
# shellcheck disable=SC2016

set -euo pipefail

prog=bench/quality.sh
size=32M
seed=1
out=bench/QUALITY.md
edit_rate=0.5
distances=(2 3 4)
shingles=(1 2 3)
ngrams=(2 3)

usage() {
	cat <<EOF
usage: $prog [--size SIZE] [--seed N] [--out FILE]

  --size SIZE   size of each generated corpus, K/M/G suffixes (default 32M)
  --seed N      corpus seed (default 1)
  --out FILE    where to write the Markdown report (default bench/QUALITY.md)
EOF
}

# shellcheck source=bench/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

while [ $# -gt 0 ]; do
	case $1 in
	--size|--seed|--out)
		[ $# -ge 2 ] || usage_error "option '$1' needs a value"
		opt=$1 val=$2
		shift 2 ;;
	--size=*|--seed=*|--out=*)
		opt=${1%%=*} val=${1#*=}
		shift ;;
	-h|--help)
		usage; exit 0 ;;
	*)
		usage_error "unknown argument '$1'" ;;
	esac
	case $opt in
	--size) size=$val ;;
	--seed) seed=$val ;;
	--out) out=$val ;;
	esac
done

[[ $size =~ ^[1-9][0-9]*[KMGkmg]?$ ]] || usage_error "invalid --size '$size'"
[[ $seed =~ ^[0-9]+$ ]] || usage_error "invalid --seed '$seed'"
[ -n "$out" ] || usage_error "empty --out"

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src_top=$(dirname "$script_dir")
NSDEDUP=${NSDEDUP:-./src/nsdedup}
GENCORPUS=${GENCORPUS:-./bench/nsd-gencorpus}
NSD_SHARED_DATA=${NSD_SHARED_DATA:-$src_top/../shared/data}
tmproot=${TMPDIR:-/tmp}

command -v jq >/dev/null 2>&1 || die "jq not found"
for p in "$NSDEDUP" "$GENCORPUS"; do
	[ -x "$p" ] || die "$p: not an executable (see the environment in $prog)"
done
"$NSDEDUP" --version >/dev/null 2>&1 || die "$NSDEDUP --version failed"

tmp=$(mktemp -d "$tmproot/nsdedup-quality.XXXXXX")
cleanup() {
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A rebuild during the run must not mix two versions: copy ELF binaries.
for v in NSDEDUP GENCORPUS; do
	if [ "$(head -c 4 "${!v}" | od -An -c | tr -d ' ')" = '177ELF' ]; then
		cp -p "${!v}" "$tmp/$(basename "${!v}")"
		printf -v "$v" '%s' "$tmp/$(basename "${!v}")"
	fi
done
nsd_version=$("$NSDEDUP" --version 2>&1 | head -n 1)
nsd_sum=$(sha256sum <"$NSDEDUP" | cut -c 1-16)

# --- Scoring -------------------------------------------------------------

# The language of each record of corpus $1 (zh when its text has a Han
# character, else en), as "id<TAB>lang" lines into $2.
languages() {
	jq -r '[.id, (if (.text | test("\\p{Han}")) then "zh" else "en" end)]
	    | @tsv' "$1" >"$2" || die "jq failed on $1"
}

# Run nsdedup with the arguments after $1 on corpus $1; the duplicates go
# to $tmp/dups as "id<TAB>similar_id" lines, and RUN_MBPS and RUN_CAND get
# the throughput and the candidates per lookup that --stats reports.
judge() {
	local c=$1
	shift
	"$NSDEDUP" "$@" --only-dups --stats "$c" 2>"$tmp/stats" |
	    jq -r '[.id, .similar_id] | @tsv' >"$tmp/dups" ||
		die "nsdedup $* $c failed: $(tail -n 1 "$tmp/stats")"
	RUN_MBPS=$(awk '/^nsdedup: throughput/ { print $3 }' "$tmp/stats")
	RUN_CAND=$(awk '/^nsdedup: candidates/ { print $3 }' "$tmp/stats")
	RUN_CAND=${RUN_CAND:--}
}

# Score $tmp/dups against truth file $1 and language map $2.  Prints one
# line: for all, en and zh records in turn, "reposts tp fp precision
# recall", then the recall of the light and the edited reposts, then the
# false positives that were not reposts and those put in the wrong group.
score() {
	awk -F '\t' -v truth="$1" -v langs="$2" '
	function root(x) {
		while (x in src)
			x = src[x]
		return x
	}
	function pct(a, b) {
		return b > 0 ? sprintf("%.1f", 100 * a / b) : "-"
	}
	BEGIN {
		while ((getline l < truth) > 0) {
			split(l, f, "\t")
			src[f[1]] = f[2]
			kind[f[1]] = f[3]
		}
		while ((getline l < langs) > 0) {
			split(l, f, "\t")
			lang[f[1]] = f[2]
		}
		for (r in src) {
			n["all"]++
			n[lang[r]]++
			nk[kind[r]]++
		}
	}
	{
		id = $1; l = lang[id]
		if ((id in src) && root($2) == root(id)) {
			tp["all"]++; tp[l]++; tpk[kind[id]]++
		} else {
			fp["all"]++; fp[l]++
			if (id in src)
				wrong++
			else
				orig++
		}
	}
	END {
		split("all en zh", g, " ")
		for (i = 1; i <= 3; i++) {
			k = g[i]
			printf "%d %d %d %s %s ", n[k], tp[k], fp[k],
			    pct(tp[k], tp[k] + fp[k]), pct(tp[k], n[k])
		}
		printf "%s %s %d %d\n", pct(tpk["light"], nk["light"]),
		    pct(tpk["edited-heavy"], nk["edited-heavy"]), orig, wrong
	}' "$tmp/dups"
}

# --- The generated corpora -----------------------------------------------

declare -A GEN_ARGS GEN_LOG
GEN_ARGS[default]=""
GEN_ARGS[edited]="--edit-rate $edit_rate --edit-strength heavy"
corpora=(default edited)
for c in "${corpora[@]}"; do
	note "generating the $c corpus ($size, seed $seed)"
	# shellcheck disable=SC2086
	"$GENCORPUS" --seed "$seed" --size "$size" ${GEN_ARGS[$c]} \
	    --truth "$tmp/$c.truth" --verbose >"$tmp/$c.jsonl" \
	    2>"$tmp/$c.gen" || die "nsd-gencorpus failed: $(cat "$tmp/$c.gen")"
	GEN_LOG[$c]=$(sed 's/^[^:]*: //' "$tmp/$c.gen")
	languages "$tmp/$c.jsonl" "$tmp/$c.lang"
done

# Every configuration: a label and nsdedup's arguments.
configs=("nshash|-m nshash")
for k in "${distances[@]}"; do
	for s in "${shingles[@]}"; do
		for g in "${ngrams[@]}"; do
			configs+=("simhash k=$k shingle=$s ngram=$g|-m simhash --distance $k --shingle $s --ngram $g")
		done
	done
done

# Rows: corpus|label|args|mbps|cand|score fields.
: >"$tmp/rows"
for c in "${corpora[@]}"; do
	for cf in "${configs[@]}"; do
		label=${cf%%|*}
		args=${cf#*|}
		note "$c corpus: $label"
		# shellcheck disable=SC2086
		judge "$tmp/$c.jsonl" $args
		printf '%s|%s|%s|%s|%s|%s\n' "$c" "$label" "$args" "$RUN_MBPS" \
		    "$RUN_CAND" "$(score "$tmp/$c.truth" "$tmp/$c.lang")" \
		    >>"$tmp/rows"
	done
done

# --- How far a repost's SimHash is from its source's ---------------------

# For the first $hist_max reposts of each kind in the edited corpus: the
# SimHash distance from its source (default parameters), as nsdedup
# --explain reports it for the two records alone at --distance 8; beyond 8
# it says nothing.  Lines "kind lang distance" into $tmp/hist.
hist_max=200
note "SimHash distances of reposts from their sources"
awk -F '\t' -v m="$hist_max" '{ if (n[$3]++ < m) print }' \
    "$tmp/edited.truth" >"$tmp/hist.truth"
mkdir "$tmp/rec"
# Each record needed, alone in a file named by its id.
awk -F '\t' -v dir="$tmp/rec" 'NR == FNR { want[$1] = 1; want[$2] = 1; next }
    { id = $0; sub(/^\{"id":"/, "", id); sub(/".*/, "", id)
      if (id in want) print > (dir "/" id) }' "$tmp/hist.truth" \
    "$tmp/edited.jsonl"
: >"$tmp/hist"
while IFS=$'\t' read -r rid sid kind; do
	cat "$tmp/rec/$sid" "$tmp/rec/$rid" >"$tmp/pair.jsonl"
	d=$("$NSDEDUP" -m simhash --distance 8 --explain --only-dups \
	    "$tmp/pair.jsonl" | jq -r '.explain.distance // empty')
	lang=$(awk -F '\t' -v id="$rid" '$1 == id { print $2; exit }' \
	    "$tmp/edited.lang")
	printf '%s %s %s\n' "$kind" "$lang" "${d:-9}" >>"$tmp/hist"
done <"$tmp/hist.truth"

# --- The shared real corpora ---------------------------------------------

# Records of corpus $1 whose text, white space removed, is at least 50
# bytes and the same as an earlier record's: one id a line into $2.
exact_repeats() {
	# @tsv writes tabs and newlines as \t and \n; those go too, and
	# U+3000 and U+00A0.
	jq -r '[.id, (.text // "")] | @tsv' "$1" |
	    LC_ALL=C awk -F '\t' '{ t = $2
		gsub(/\\[tnr]|[ \t]|\343\200\200|\302\240/, "", t)
		if (length(t) < 50) next
		if (t in seen) print $1; else seen[t] = 1 }' >"$2"
}

# The ids judged duplicates by nsdedup with the arguments after $1, sorted,
# into $tmp/ids.
dup_ids() {
	local c=$1
	shift
	"$NSDEDUP" "$@" --only-dups --stats --on-error=skip -q "$c" \
	    2>"$tmp/stats" | jq -r '.id' | sort >"$tmp/ids" || true
	grep -q '^nsdedup: records' "$tmp/stats" ||
		die "nsdedup $* $c failed: $(tail -n 1 "$tmp/stats")"
	RUN_MBPS=$(awk '/^nsdedup: throughput/ { print $3 }' "$tmp/stats")
	RUN_CAND=$(awk '/^nsdedup: candidates/ { print $3 }' "$tmp/stats")
	RUN_CAND=${RUN_CAND:--}
}

shared_rows=()
mf_rows=()
min_features=(8 16 32)
pair_rows=()
have_shared=0
if [ -d "$NSD_SHARED_DATA" ]; then
	NSD_SHARED_DATA=$(cd "$NSD_SHARED_DATA" && pwd)
	for gz in "$NSD_SHARED_DATA"/*.jsonl.gz; do
		[ -e "$gz" ] || continue
		have_shared=1
		base=$(basename "$gz" .jsonl.gz)
		f=$tmp/$base.jsonl
		note "shared corpus $base"
		gzip -dc "$gz" >"$f" || die "cannot decompress $gz"
		recs=$(grep -c . "$f" || true)
		exact_repeats "$f" "$tmp/exact"
		sort -o "$tmp/exact" "$tmp/exact"
		nexact=$(wc -l <"$tmp/exact")
		dup_ids "$f" -m nshash
		mv "$tmp/ids" "$tmp/ids.nshash"
		n_mbps=$RUN_MBPS
		for k in "${distances[@]}"; do
			dup_ids "$f" -m simhash --distance "$k"
			mv "$tmp/ids" "$tmp/ids.simhash$k"
			eval "s_mbps$k=\$RUN_MBPS s_cand$k=\$RUN_CAND"
		done
		nn=$(wc -l <"$tmp/ids.nshash")
		row="| $base | $recs | $nexact | $nn"
		row="$row ($(comm -12 "$tmp/exact" "$tmp/ids.nshash" | wc -l))"
		for k in "${distances[@]}"; do
			ns=$(wc -l <"$tmp/ids.simhash$k")
			row="$row | $ns ($(comm -12 "$tmp/exact" \
			    "$tmp/ids.simhash$k" | wc -l))"
		done
		both=$(comm -12 "$tmp/ids.nshash" "$tmp/ids.simhash3" | wc -l)
		only_n=$(comm -23 "$tmp/ids.nshash" "$tmp/ids.simhash3" | wc -l)
		only_s=$(comm -13 "$tmp/ids.nshash" "$tmp/ids.simhash3" | wc -l)
		mb=$(awk -v b="$(stat -c %s "$f")" \
		    'BEGIN { printf "%.1f", b / 1e6 }')
		row="$row | $both | $only_n | $only_s | $mb | $n_mbps"
		# shellcheck disable=SC2154
		row="$row | $s_mbps3 | $s_cand2 / $s_cand3 / $s_cand4 |"
		shared_rows+=("$row")
		# --min-features: duplicates, exact repeats among them, and
		# records with nothing to compare.
		row="| $base"
		for mf in "${min_features[@]}"; do
			dup_ids "$f" -m simhash --min-features "$mf"
			row="$row | $(wc -l <"$tmp/ids") ($(comm -12 \
			    "$tmp/exact" "$tmp/ids" | wc -l))"
			row="$row | $(sed -n 's/^nsdedup: originals .*(\([0-9]*\) with.*/\1/p' \
			    "$tmp/stats")"
		done
		mf_rows+=("$row |")
		# Keep a few of the records only one method calls duplicates.
		# (sed reads to the end: head would leave comm a SIGPIPE.)
		comm -23 "$tmp/ids.nshash" "$tmp/ids.simhash3" |
		    sed -n 1,3p >"$tmp/$base.only-nshash"
		comm -13 "$tmp/ids.nshash" "$tmp/ids.simhash3" |
		    sed -n 1,3p >"$tmp/$base.only-simhash"
		rm -f "$f"
	done
	pairs=$NSD_SHARED_DATA/labeled_dev/en_semeval2022t8_dev_pairs.jsonl
	if [ -f "$pairs" ]; then
		note "labelled same-story pairs"
		# Each pair alone: its two texts as records a and b.
		: >"$tmp/pairs.out"
		i=0
		while IFS= read -r line; do
			i=$((i + 1))
			printf '%s\n' "$line" | jq -c \
			    '{id: "a", text: .text_a}, {id: "b", text: .text_b}' \
			    >"$tmp/pair.jsonl"
			ov=$(printf '%s\n' "$line" | jq -r '.overall')
			res="$ov"
			for m in "-m nshash" "-m simhash --distance 2" \
			    "-m simhash --distance 3" "-m simhash --distance 4"; do
				# shellcheck disable=SC2086
				d=$("$NSDEDUP" $m --only-dups "$tmp/pair.jsonl" |
				    grep -c . || true)
				res="$res $d"
			done
			printf '%s\n' "$res" >>"$tmp/pairs.out"
		done <"$pairs"
		# Rows by the annotators' overall score, rounded.
		while IFS= read -r r; do
			pair_rows+=("$r")
		done < <(awk '{ b = sprintf("%.0f", $1); n[b]++
		    for (j = 2; j <= 5; j++) d[b, j] += $j }
		    END { for (b = 1; b <= 4; b++)
			printf "| %d | %d | %d | %d | %d | %d |\n", b, n[b],
			    d[b, 2], d[b, 3], d[b, 4], d[b, 5] }' \
		    "$tmp/pairs.out")
	fi
else
	note "no shared corpora at $NSD_SHARED_DATA; skipping them"
fi

# --- The report ----------------------------------------------------------

cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo \
    2>/dev/null || true)

# A table of the rows of corpus $1 whose label matches $2: for language
# field offset $3 (0 all, 5 en, 10 zh of the score fields).
table() {
	local c=$1 re=$2
	printf '| method | reposts | TP | FP | precision %% | recall %% '
	printf '| recall light %% | recall edited %% | FP not reposts '
	printf '| FP wrong group | MB/s | candidates per lookup |\n'
	printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
	awk -F '|' -v c="$c" -v re="$re" '$1 == c && $2 ~ re {
		split($6, s, " ")
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s " \
		    "| %s | %s |\n", $2, s[1], s[2], s[3], s[4], s[5],
		    s[16], s[17], s[18], s[19], $4, $5 }' "$tmp/rows"
}

# Per language: precision and recall of every configuration, side by side
# for the two corpora.
lang_table() {
	local off=$1
	printf '| method | default: precision %% | default: recall %% '
	printf '| edited: precision %% | edited: recall %% |\n'
	printf '|---|---:|---:|---:|---:|\n'
	awk -F '|' -v o="$off" '{ split($6, s, " ")
		p[$1, $2] = s[o + 4]; r[$1, $2] = s[o + 5]
		if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
	    END { for (i = 1; i <= n; i++) { l = order[i]
		printf "| %s | %s | %s | %s | %s |\n", l, p["default", l],
		    r["default", l], p["edited", l], r["edited", l] } }' \
	    "$tmp/rows"
}

mkdir -p "$(dirname "$out")"
{
	printf '# nsdedup: how well the methods find near-copies\n\n'
	printf 'Written by `bench/quality.sh --size %s --seed %s` ' "$size" "$seed"
	printf '(`make bench-quality`; `make bench` runs it too).\n\n'
	printf '## Machine\n\n'
	printf -- '- Date: %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
	printf -- '- System: %s; CPU: %s, %s cores online\n' "$(uname -srm)" \
	    "${cpu_model:-unknown}" "$(nproc)"
	printf -- '- nsdedup: `%s` (sha256 %s...)\n' "$nsd_version" "$nsd_sum"
	printf -- '- MB/s and candidates per lookup are what `--stats` '
	printf 'printed for that one run (one core; a rough figure, not a '
	printf 'benchmark: see RESULTS.md for those).\n\n'

	printf '## How it is scored\n\n'
	printf 'Two corpora of `nsd-gencorpus`, with `--truth FILE` '
	printf 'writing, for each repost, its id, the id of the record it '
	printf 'was copied from and its kind:\n\n'
	for c in "${corpora[@]}"; do
		printf -- '- **%s**: `nsd-gencorpus --seed %s --size %s%s ' \
		    "$c" "$seed" "$size" "${GEN_ARGS[$c]:+ ${GEN_ARGS[$c]}}"
		printf -- '--truth %s.truth`: %s.\n' "$c" "${GEN_LOG[$c]}"
	done
	printf '\nA *light* repost is the default kind (an agency prefix or '
	printf 'source line, a footer, one sentence dropped, a few characters '
	printf 'of one sentence changed, other white space); an *edited* one '
	printf 'keeps every sentence but gives each a typo, a punctuation '
	printf 'mark added, dropped or changed, and one digit of a number '
	printf 'changed. A repost may copy a repost; its true group is the '
	printf 'original at the head of the chain.\n\n'
	printf 'Each run is `nsdedup ARGS --only-dups --stats CORPUS`. '
	printf 'A record judged a duplicate is a true positive (TP) when '
	printf 'it is a repost and its `similar_id` is in its own true group; '
	printf 'a false positive (FP) when it is no repost ("not reposts") or '
	printf 'its `similar_id` is in another group ("wrong group"). '
	printf 'Precision = TP / (TP + FP); recall = TP / reposts (a '
	printf 'repost put in the wrong group counts against both).\n\n'

	for c in "${corpora[@]}"; do
		printf '## The %s corpus\n\n' "$c"
		table "$c" '^(nshash|simhash k=. shingle=3 ngram=2)$'
		printf '\nThe whole grid (`--shingle` changes only English '
		printf 'features, `--ngram` only Chinese ones):\n\n'
		table "$c" '^simhash'
		printf '\n'
	done

	printf '## How far a repost is from its source\n\n'
	printf 'The SimHash distance (default parameters) between each of '
	printf 'the first %s reposts of each kind in the edited corpus and ' \
	    "$hist_max"
	printf 'the record it was copied from, the two run alone through '
	printf '`nsdedup -m simhash --distance 8 --explain`; ">8" is '
	printf 'beyond what --distance allows. A repost is found at '
	printf '`--distance K` only when it is within K bits of some '
	printf 'record of its group.\n\n'
	printf '| reposts | n | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | >8 '
	printf '| within 3 %% |\n'
	printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
	awk '{ k = $1 " " $2; n[k]++; h[k, $3]++; if (!(k in seen)) {
		seen[k] = 1; order[++m] = k } }
	    END { for (i = 1; i <= m; i++) { k = order[i]
		printf "| %s | %d", k, n[k]
		w = 0
		for (d = 0; d <= 9; d++) {
			printf " | %d", h[k, d]
			if (d <= 3) w += h[k, d]
		}
		printf " | %.1f |\n", 100 * w / n[k] } }' "$tmp/hist" |
	    sort
	printf '\n'

	printf '## By language\n\n'
	printf 'The generated corpora are about half English, half Chinese; '
	printf 'a record is Chinese when its text has a Han character.\n\n'
	printf '### English records\n\n'
	lang_table 5
	printf '\n### Chinese records\n\n'
	lang_table 10
	printf '\n'

	printf '## Shared real corpora\n\n'
	if [ "$have_shared" = 0 ]; then
		printf 'Not measured: no corpora at %s.\n\n' "$NSD_SHARED_DATA"
	else
		printf 'Each `%s/*.jsonl.gz` with no ground truth: ' \
		    "$NSD_SHARED_DATA"
		printf 'records judged duplicates by `nsdedup -m nshash` and '
		printf 'by `nsdedup -m simhash --distance K` (`--on-error=skip`), '
		printf 'and in brackets how many of them are exact repeats. An '
		printf '*exact repeat* is a record whose text, white space '
		printf 'removed, is at least 50 characters and the same as an '
		printf 'earlier record'"'"'s: a floor every method should reach. '
		printf '"Both", "only nshash" and "only simhash" compare '
		printf 'nshash with simhash at k = 3.\n\n'
		printf '| corpus | records | exact repeats | nshash '
		printf '| simhash k=2 | simhash k=3 | simhash k=4 | both '
		printf '| only nshash | only simhash | MB | nshash MB/s '
		printf '| simhash k=3 MB/s | candidates per lookup k=2/3/4 |\n'
		printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
		printf -- '---:|---:|---:|---|\n'
		printf '%s\n' "${shared_rows[@]}"
		printf '\n`--min-features`: records judged duplicates by '
		printf '`nsdedup -m simhash --min-features N` (k = 3), the '
		printf 'exact repeats among them in brackets, and the records '
		printf 'with fewer features, which have nothing to compare:\n\n'
		printf '| corpus'
		for mf in "${min_features[@]}"; do
			printf ' | N=%s duplicates | N=%s nothing to compare' \
			    "$mf" "$mf"
		done
		printf ' |\n|---'
		for mf in "${min_features[@]}"; do
			printf '|---:|---:'
		done
		printf '|\n'
		printf '%s\n' "${mf_rows[@]}"
		printf '\nSome of the records only one method calls duplicates '
		printf '(k = 3), to read with `--explain`:\n\n'
		for f in "$tmp"/*.only-nshash; do
			[ -e "$f" ] || continue
			b=$(basename "$f" .only-nshash)
			printf -- '- %s: only nshash: %s; only simhash: %s\n' \
			    "$b" "$(paste -sd ' ' "$f" | sed 's/ /, /g')" \
			    "$(paste -sd ' ' "$tmp/$b.only-simhash" |
			    sed 's/ /, /g')"
		done
		printf '\n'
		if [ ${#pair_rows[@]} -gt 0 ]; then
			printf '### Same story, other words\n\n'
			printf '`labeled_dev/en_semeval2022t8_dev_pairs.jsonl`: '
			printf 'pairs of articles that annotators scored from 1 '
			printf '(the same story) to 4 (unrelated). These are '
			printf 'mostly two outlets writing up one event, not '
			printf 'copies: a near-duplicate filter should leave '
			printf 'them alone. Each pair is run alone '
			printf '(`text_a` then `text_b`); the columns count '
			printf 'the pairs whose second text was judged a '
			printf 'duplicate.\n\n'
			printf '| overall (rounded) | pairs | nshash '
			printf '| simhash k=2 | simhash k=3 | simhash k=4 |\n'
			printf '|---:|---:|---:|---:|---:|---:|\n'
			printf '%s\n' "${pair_rows[@]}"
			printf '\n'
		fi
	fi
	printf '<!-- quality: findings -->\n'
	# The findings are written by hand below this line and kept.
	if [ -f "$out" ]; then
		sed -n '/^<!-- quality: findings -->$/,$p' "$out" | sed 1d
	fi
} >"$out.tmp"
mv "$out.tmp" "$out"
note "wrote $out"
