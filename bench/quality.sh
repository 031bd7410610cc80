#!/usr/bin/env bash
#
# bench/quality.sh: how well nshash and simhash find near-copies, with
# ground truth.  Generates four corpora with nsd-gencorpus --truth, one for
# each kind of near-copy it makes: "light" (the default: reposts with an
# agency prefix or a footer, a dropped sentence, a few characters of one
# sentence changed) and, with --edit-rate 1, copies that keep every
# sentence with characters changed at each --edit-strength: "longest" (one
# character in each of the 5 longest sentences, the ones nshash
# fingerprints), "every" (one in every sentence) and "heavy" (a typo, a
# punctuation mark and a digit in every sentence).  On each it runs nshash
# and simhash over a grid of --distance, --shingle and --ngram, and scores
# every run against the truth:
#
#   - a record judged a duplicate whose similar_id is in its own true
#     group (the record it was copied from, or a copy of the same
#     original) is a true positive;
#   - a record judged a duplicate that is not a repost, or whose
#     similar_id is in another true group, is a false positive;
#   - recall is true positives / reposts, precision is true positives /
#     records judged duplicates, F1 their harmonic mean.
#
# It also gives recall by text length, and for a sample of the copies of
# each kind their SimHash distance from the source beside what the angle
# between the two texts' feature vectors predicts.
#
# Then it measures the same on real text: nsd-repost draws --originals
# documents of the shared Chinese corpora (Sina, Simplified; Citizen News,
# Traditional) and as many of the English ones (Reuters, BBC, 20
# Newsgroups), makes about one labelled near-copy of each with 1 to 3 of
# the edits reposting sites make, and each configuration of real_configs
# is scored on them as above: precision, recall and F1 per language,
# recall per kind of edit and per length.  The same two sets again with a
# site's boilerplate block (a long disclaimer footer, or a leaked
# JavaScript/CSS snippet) in 30% of the originals show what shared
# boilerplate costs: originals matched through it, and copies of documents
# with a block missed.
#
# Then copies in which every sentence was touched: the same originals,
# and one copy of each made by nsd-repost --touch with one touch or a
# combination (a share of the letters of each sentence replaced, of its
# words, the paragraphs in another order), per language; each
# configuration of touched_configs is scored on them as above, in one
# table (recall per set, precision per language, each method's defaults
# and best row), and on the English copies of texts under 500 code
# points.  A configuration that the program under test refuses (a method
# it does not have yet) is left out with a note.  With --only touched,
# only this part runs (about a minute), and only its section of the
# report is replaced, the rest kept as it is.
#
# Then, on the shared real corpora (no truth there), it counts each
# method's duplicates, how far the two agree, and how many of each
# corpus's exact repeats (same text once white space is removed, at least
# 50 characters) each method finds; and on the labelled same-story pairs,
# how many pairs each method calls near-duplicates (same story in other
# words should not be).
#
# Last, of the records each configuration of mostly_configs (each method
# at its defaults) judges duplicates on the shared corpora, how many are
# mostly different from the record their similar_id names: the unique
# articles --drop-dups would lose.  bench/mostly-different measures each
# pair by its own features, words or Han characters (see its header).
# With --only mostly-different, only this part runs (under a minute), and
# only its section of the report is replaced.
#
# And hard negatives: per language, originals of the shared corpora and
# look-alikes made by nsd-repost --negatives, other articles that share
# background sentences, a quoted passage or a template (numbers and names
# changed) with one of them.  No record is a copy, so each configuration
# of negatives_configs is scored by what it flags: look-alikes judged
# duplicates of their original, by kind, and any other record.  With
# --only negatives, only this part runs (under a minute), and only its
# section of the report is replaced.
#
# And converted copies: Chinese articles of the shared corpora followed by
# their conversion to the other script by OpenCC's converter (opencc -c
# s2t.json, t2s.json, s2twp.json: Taiwan's phrases too), each method at
# its defaults scored on how many copies it finds and what else it flags.
# Skipped, saying so, without the opencc command.  With --only converted,
# only this part runs (under a minute), and only its section of the
# report is replaced.
#
# It writes the results as Markdown.  make bench-quality runs it; make
# bench runs it too.
#
# Run it from the top of the build tree:
#
#     bench/quality.sh [--size 32M] [--seed 1] [--originals 3000]
#         [--only touched|mostly-different|negatives|converted]
#         [--out bench/QUALITY.md]
#
# e.g. make quality BENCH_QUALITY_FLAGS='--only touched'.
#
# Environment:
#     NSDEDUP          the program under test (default ./src/nsdedup)
#     GENCORPUS        the corpus generator (default ./bench/nsd-gencorpus)
#     NSD_REPOST       the repost generator (default ./bench/nsd-repost)
#     NSD_SHARED_DATA  folder of *.jsonl.gz corpora and labeled_dev/
#                      (default: shared/data beside the source tree);
#                      the parts that need it are skipped when absent
#     PYTHON3          python3, for bench/mostly-different (default
#                      python3); that part is skipped without it
#     TMPDIR           where the corpora go (default /tmp)
#
# Needs bash, jq (1.6 or later), awk and GNU coreutils, and python3 for
# the mostly different pairs.  Exits 0 when every command ran (whatever
# the scores), 1 when one failed, 2 on a usage error.

# The report's Markdown puts commands in backquotes inside single quotes.
# shellcheck disable=SC2016

set -euo pipefail

prog=bench/quality.sh
size=32M
seed=1
real_originals=3000
out=bench/QUALITY.md
only=""
distances=(2 3 4)
shingles=(1 2 3)
ngrams=(2 3)
usage() {
	cat <<EOF
usage: $prog [--size SIZE] [--seed N] [--originals N]
                       [--only touched|mostly-different|negatives|converted]
                       [--out FILE]

  --size SIZE      size of each generated corpus, K/M/G suffixes
                   (default 32M)
  --seed N         corpus seed, and nsd-repost's (default 1)
  --originals N    real documents per language for the labelled
                   reposts and the touched copies (default 3000)
  --only touched   run only the copies with every sentence touched, and
                   replace only their section of the report
  --only mostly-different
                   run only the count of flagged pairs that are mostly
                   different, and replace only its section of the report
  --only negatives run only the hard negatives (look-alikes that share a
                   passage or a template, no copies), and replace only
                   their section of the report
  --only converted run only the Chinese articles converted to the other
                   script by OpenCC, and replace only their section
  --out FILE       where to write the Markdown report
                   (default bench/QUALITY.md)
EOF
}

# shellcheck source=bench/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

while [ $# -gt 0 ]; do
	case $1 in
	--size|--seed|--originals|--only|--out)
		[ $# -ge 2 ] || usage_error "option '$1' needs a value"
		opt=$1 val=$2
		shift 2 ;;
	--size=*|--seed=*|--originals=*|--only=*|--out=*)
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
	--originals) real_originals=$val ;;
	--only) only=$val ;;
	--out) out=$val ;;
	esac
done

[[ $size =~ ^[1-9][0-9]*[KMGkmg]?$ ]] || usage_error "invalid --size '$size'"
[[ $seed =~ ^[0-9]+$ ]] || usage_error "invalid --seed '$seed'"
[[ $real_originals =~ ^[1-9][0-9]*$ ]] ||
	usage_error "invalid --originals '$real_originals'"
[ -n "$out" ] || usage_error "empty --out"
case $only in
''|touched|mostly-different|negatives|converted) ;;
*) usage_error "invalid --only '$only' (valid: touched, mostly-different," \
    "negatives, converted)" ;;
esac

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src_top=$(dirname "$script_dir")
NSDEDUP=${NSDEDUP:-./src/nsdedup}
GENCORPUS=${GENCORPUS:-./bench/nsd-gencorpus}
NSD_REPOST=${NSD_REPOST:-./bench/nsd-repost}
NSD_SHARED_DATA=${NSD_SHARED_DATA:-$src_top/../shared/data}
PYTHON3=${PYTHON3:-python3}
tmproot=${TMPDIR:-/tmp}

command -v jq >/dev/null 2>&1 || die "jq not found"
for p in "$NSDEDUP" "$GENCORPUS" "$NSD_REPOST"; do
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

freeze_programs "$tmp" NSDEDUP GENCORPUS NSD_REPOST
nsd_version=$("$NSDEDUP" --version 2>&1 | head -n 1)
nsd_sum=$(sha256sum <"$NSDEDUP" | cut -c 1-16)

# --- Scoring -------------------------------------------------------------

# Each record of corpus $1 as "id<TAB>lang<TAB>bytes" lines into $2: zh
# when its text has a Han character, else en; bytes is the text's length
# in UTF-8.
record_info() {
	jq -r '[.id, (if (.text | test("\\p{Han}")) then "zh" else "en" end),
	    (.text | utf8bytelength)] | @tsv' "$1" >"$2" ||
		die "jq failed on $1"
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

# The classes of text length for recall by length, in bytes of UTF-8.
len_names=("under 2 KiB" "2 to 4 KiB" "4 KiB and more")

# Score $tmp/dups against truth file $1 and record info $2.  Prints one
# line of fields: for all, en and zh records in turn, "reposts TP FP
# precision recall F1" (fields 1 to 18); the false positives that were
# not reposts and those put in the wrong group (19, 20); and for each
# class of text length, "reposts TP" (21 to 26).
score() {
	awk -F '\t' -v truth="$1" -v info="$2" '
	function root(x) {
		while (x in src)
			x = src[x]
		return x
	}
	function pct(a, b) {
		return b > 0 ? sprintf("%.1f", 100 * a / b) : "-"
	}
	# F1 = 2PR / (P + R) = 2TP / (2TP + FP + FN).
	function f1(t, f, n) {
		return t > 0 ? sprintf("%.2f", 2 * t / (t + f + n)) : "0.00"
	}
	function cls(b) {
		return b < 2048 ? 1 : b < 4096 ? 2 : 3
	}
	BEGIN {
		while ((getline l < truth) > 0) {
			split(l, f, "\t")
			src[f[1]] = f[2]
		}
		while ((getline l < info) > 0) {
			split(l, f, "\t")
			lang[f[1]] = f[2]
			len[f[1]] = f[3]
		}
		for (r in src) {
			n["all"]++
			n[lang[r]]++
			nc[cls(len[r])]++
		}
	}
	{
		id = $1; l = lang[id]
		if ((id in src) && root($2) == root(id)) {
			tp["all"]++; tp[l]++; tpc[cls(len[id])]++
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
			printf "%d %d %d %s %s %s ", n[k], tp[k], fp[k],
			    pct(tp[k], tp[k] + fp[k]), pct(tp[k], n[k]),
			    f1(tp[k], fp[k], n[k])
		}
		printf "%d %d", orig, wrong
		for (c = 1; c <= 3; c++)
			printf " %d %d", nc[c], tpc[c]
		printf "\n"
	}' "$tmp/dups"
}

# --- Real documents: what the labelled sets share -----------------------

# The two sets, and their shared corpora.
real_langs=(zh en)
declare -A REAL_FILES REAL_LOG
REAL_FILES[zh]="zh_sina_news_2018 zh_hant_hkcnews_2018"
REAL_FILES[en]="en_reuters21578 en_bbc_news en_20newsgroups_bydate"
edit_kinds=(drop-sentence add-sentence reorder truncate insert-ad char-edit
    whitespace source-prefix footer html)
real_len_names=("under 500" "500 to 1500" "1500 to 3000" "3000 and more")

# Decompress the shared corpora of language $2 into folder $1, and list
# them in the array inputs.  Returns 1, the first missing in real_missing,
# when one of them is missing.
real_inputs() {
	local b gz
	inputs=()
	for b in ${REAL_FILES[$2]}; do
		gz=$NSD_SHARED_DATA/$b.jsonl.gz
		if [ ! -f "$gz" ]; then
			real_missing=$b.jsonl.gz
			return 1
		fi
		gzip -dc "$gz" >"$1/$b.jsonl" || die "cannot decompress $gz"
		inputs+=("$1/$b.jsonl")
	done
}

# Score $tmp/dups against truth $1 and record info $2 ("id<TAB>lang<TAB>
# code points<TAB>block", block 1 for an original with a site's block or
# a copy of one).  Prints tagged lines: "main copies TP FP FP-originals
# FP-wrong-group", "edit KIND copies TP" for each edit kind, the same
# as "alone KIND copies TP" for the copies with that edit only, "len CLASS
# copies TP" for each class of length, and "block copies-with-block
# TP-among-them originals-with-block flagged-among-them
# flagged-onto-another-block-original".  With $3, the FPs on originals go
# there, "id<TAB>similar_id" a line.
real_score() {
	awk -F '\t' -v truth="$1" -v info="$2" -v kinds="${edit_kinds[*]}" \
	    -v pairs="${3:-}" '
	function cls(n) {
		return n < 500 ? 1 : n < 1500 ? 2 : n < 3000 ? 3 : 4
	}
	BEGIN {
		while ((getline l < truth) > 0) {
			split(l, f, "\t")
			src[f[1]] = f[2]
			ne = split(f[3], e, ",")
			for (i = 1; i <= ne; i++)
				has[f[1], e[i]] = 1
			if (ne == 1)
				alone[f[1]] = e[1]
		}
		while ((getline l < info) > 0) {
			split(l, f, "\t")
			len[f[1]] = f[3]
			blk[f[1]] = f[4]
			if (!(f[1] in src) && f[4] == 1)
				borig++
		}
		nk = split(kinds, kind, " ")
		for (c in src) {
			copies++
			nc[cls(len[c])]++
			for (i = 1; i <= nk; i++)
				if ((c, kind[i]) in has)
					nek[kind[i]]++
			if (blk[c] == 1)
				bcopies++
			if (c in alone)
				nalone[alone[c]]++
		}
	}
	{
		id = $1; sim = $2
		joined[id] = sim
		# A copy is right to name its source, a copy of the same
		# source, or the group its source joined (an original of the
		# set may be a near-copy of an earlier one, which no truth
		# labels).  (x in a) first: a reference to a[x] would add it.
		if ((id in src) && (sim == src[id] ||
		    ((sim in src) && src[sim] == src[id]) ||
		    ((src[id] in joined) && joined[src[id]] == sim))) {
			tp++
			tpc[cls(len[id])]++
			for (i = 1; i <= nk; i++)
				if ((id, kind[i]) in has)
					tek[kind[i]]++
			if (blk[id] == 1)
				btp++
			if (id in alone)
				talone[alone[id]]++
		} else {
			fp++
			if (id in src)
				wrong++
			else {
				orig++
				if (pairs != "")
					print id "\t" sim > pairs
				if (blk[id] == 1) {
					bflag++
					if (!(sim in src) && blk[sim] == 1)
						bonto++
				}
			}
		}
	}
	END {
		printf "main %d %d %d %d %d\n", copies, tp, fp, orig, wrong
		for (i = 1; i <= nk; i++)
			printf "edit %s %d %d\n", kind[i], nek[kind[i]],
			    tek[kind[i]]
		for (i = 1; i <= nk; i++)
			printf "alone %s %d %d\n", kind[i], nalone[kind[i]],
			    talone[kind[i]]
		for (c = 1; c <= 4; c++)
			printf "len %d %d %d\n", c, nc[c], tpc[c]
		printf "block %d %d %d %d %d\n", bcopies, btp, borig, bflag,
		    bonto
	}' "$tmp/dups"
}

# How many of the pairs of file $1 ("id<TAB>similar_id") are near-copies
# already, by a measure of their own, not nsdedup's: the texts of set
# text file $2 ("id<TAB>text", white space and its escapes removed), cut
# into overlapping 24-byte shingles, the shorter's shingles at least half
# in the longer's (containment, so that a copy with a site's furniture
# added still counts).  Prints "held N of-M".
held_pairs() {
	awk -F '\t' '
	FNR == NR { want[$1] = want[$2] = 1; a[++n] = $1; b[n] = $2; next }
	($1 in want) { text[$1] = $2 }
	function shingles(t, set,    i, k) {
		k = 0
		for (i = 1; i + 23 <= length(t); i++)
			if (!(substr(t, i, 24) in set)) {
				set[substr(t, i, 24)] = 1
				k++
			}
		return k
	}
	END {
		for (p = 1; p <= n; p++) {
			split("", sa)
			split("", sb)
			na = shingles(text[a[p]], sa)
			nb = shingles(text[b[p]], sb)
			both = 0
			for (x in sa)
				both += x in sb
			if (na > 0 && nb > 0 && both >= (na < nb ? na : nb) / 2)
				held++
		}
		printf "held %d %d\n", held, n
	}' "$1" "$2"
}

# The texts of set $1 for held_pairs into $2, "id<TAB>text" a line, white
# space removed (@tsv writes tabs and newlines as \t and \n; those go
# with it).
held_text() {
	jq -r '[.id, .text] | @tsv' "$1" |
	    awk -F '\t' '{ t = $0; sub(/^[^\t]*\t/, "", t)
		gsub(/[ \t]|\\[nrt]/, "", t); print $1 "\t" t }' >"$2" ||
		die "jq failed on $1"
}

# A note written by hand under a table: the lines between "<!-- note: $1
# -->" and "<!-- end note -->" of the report being replaced, kept as they
# are (a placeholder the first time).
kept_note() {
	local text=""
	[ ! -f "$out" ] || text=$(awk -v n="<!-- note: $1 -->" '
	    $0 == n { on = 1; next }
	    on && $0 == "<!-- end note -->" { exit }
	    on { print }' "$out")
	printf '<!-- note: %s -->\n' "$1"
	if [ -n "$text" ]; then
		printf '%s\n' "$text"
	else
		printf '(No note yet: write one here; it is kept.)\n'
	fi
	printf '<!-- end note -->\n\n'
}

# Put section file $1 in the report in place of the section with the same
# heading (its first line), or when there is none, before the first line
# of the report that is one of $2 ("|" between them), or at the end.
splice_section() {
	local head has=0
	head=$(head -n 1 "$1")
	if [ ! -f "$out" ]; then
		cp "$1" "$out"
		return
	fi
	! grep -qxF "$head" "$out" || has=1
	awk -v head="$head" -v sec="$1" -v has="$has" -v before="$2" '
	function put(    l) {
		while ((getline l < sec) > 0)
			print l
		done = 1
	}
	BEGIN { n = split(before, b, "|")
		for (i = 1; i <= n; i++)
			at[b[i]] = 1 }
	has && $0 == head { put(); skip = 1; next }
	skip && (/^## / || $0 == "<!-- quality: findings -->") { skip = 0 }
	skip { next }
	!has && !done && ($0 in at) { put() }
	{ print }
	END { if (!done) put() }' "$out" >"$out.tmp"
	mv "$out.tmp" "$out"
}

# --- Flagged pairs that are mostly different -----------------------------

# The configurations whose matches on the shared corpora are read by
# bench/mostly-different: "label|nsdedup arguments", one a line; add a
# line to add a column.  "-m METHOD" alone is that method's defaults.  One
# that the program under test refuses (an option it does not have yet) is
# left out, with a note in the report.
mostly_configs=(
	"nshash|-m nshash"
	"simhash|-m simhash"
	"minhash|-m minhash"
)
MOSTLY_DIFFERENT=$script_dir/mostly-different

# "P% of N" for M ($1) mostly different pairs of N ($2) eligible, N with
# its thousands set off by commas.
mostly_cell() {
	awk -v m="$1" -v n="$2" '
	function commas(x,    s, r) {
		s = x ""
		while (length(s) > 3) {
			r = "," substr(s, length(s) - 2) r
			s = substr(s, 1, length(s) - 3)
		}
		return s r
	}
	BEGIN { if (n > 0)
			printf "%.1f%% of %s\n", 100 * m / n, commas(n)
		else
			printf "- of 0\n" }'
}

# The configurations "label|options" $4... that the program takes (tried
# on an empty input) into the array named $1, the others with its message
# ("label|options|message") into the array named $2, each said in a note
# of the part named $3.
probe_configs() {
	local -n takes=$1 refuses=$2
	local part=$3 cf
	shift 3
	: >"$tmp/empty.jsonl"
	for cf in "$@"; do
		# shellcheck disable=SC2086
		if "$NSDEDUP" ${cf#*|} --only-dups "$tmp/empty.jsonl" \
		    >/dev/null 2>"$tmp/probe"; then
			takes+=("$cf")
		else
			refuses+=("$cf|$(head -n 1 "$tmp/probe")")
			note "$part: nsdedup refuses ${cf#*|}; left out"
		fi
	done
}

# The sentence that says which configurations "label|options|message"
# ($@, as probe_configs() leaves them) the program refused, and what it
# said to the first.
refused_sentence() {
	printf 'Not measured, refused by this nsdedup: %s (it said ' \
	    "$(for cf in "$@"; do
		printf '*%s* `%s`, ' "${cf%%|*}" "$(cut -d '|' -f 2 <<<"$cf")"
	    done | sed 's/, $//')"
	printf '"%s" to the first).\n\n' "$(cut -d '|' -f 3- <<<"$1")"
}

# Why a part that reads sets of the shared corpora is empty, if it is:
# nothing when it made $1 rows, else the sets missing, $2 (" SET (FILE
# missing)" each).
no_rows_reason() {
	[ "$1" -gt 0 ] ||
		printf "no set's corpora at %s:%s" "$NSD_SHARED_DATA" "$2"
}

# The first lines of such a part's section: why it was skipped, $1, or
# which of its sets were, $2. Returns 1 when the section is no more.
section_skips() {
	if [ -n "$1" ]; then
		printf 'Skipped: %s.\n\n' "$1"
		return 1
	fi
	[ -z "$2" ] || printf 'Skipped:%s.\n\n' "$2"
}

# Rows of the table, one per shared corpus, into mostly_rows; the first
# few mostly different pairs of the first configuration, "corpus|pairs",
# into mostly_examples; why the section is empty, if it is, in
# mostly_skip.  Run unless --only asks for another part.
mostly_rows=()
mostly_examples=()
mostly_ok=()
mostly_refused=()
mostly_skip=""
mostly_runs=0
mostly_start=$SECONDS
if [ -n "$only" ] && [ "$only" != mostly-different ]; then
	:
elif [ ! -d "$NSD_SHARED_DATA" ]; then
	mostly_skip="no shared corpora at $NSD_SHARED_DATA"
elif ! command -v "$PYTHON3" >/dev/null 2>&1; then
	mostly_skip="no $PYTHON3 (set PYTHON3) to run bench/mostly-different"
else
	probe_configs mostly_ok mostly_refused "mostly different pairs" \
	    "${mostly_configs[@]}"
	for gz in "$NSD_SHARED_DATA"/*.jsonl.gz; do
		[ -e "$gz" ] || continue
		base=$(basename "$gz" .jsonl.gz)
		f=$tmp/$base.jsonl
		gzip -dc "$gz" >"$f" || die "cannot decompress $gz"
		row="| $base"
		for cf in "${mostly_ok[@]}"; do
			note "mostly different pairs, $base: ${cf%%|*}"
			st=0
			# shellcheck disable=SC2086
			"$NSDEDUP" ${cf#*|} --only-dups --on-error=skip -q "$f" \
			    >"$tmp/mostly.dups" 2>"$tmp/mostly.err" || st=$?
			# 1: some records were bad, and skipped.
			[ "$st" -le 1 ] || die "nsdedup ${cf#*|} $f failed" \
			    "(status $st): $(tail -n 1 "$tmp/mostly.err")"
			"$PYTHON3" "$MOSTLY_DIFFERENT" --list "$f" \
			    "$tmp/mostly.dups" >"$tmp/mostly.out" ||
				die "bench/mostly-different failed on $base"
			mostly_runs=$((mostly_runs + 1))
			read -r _ m _ n < <(tail -n 1 "$tmp/mostly.out")
			[[ $m =~ ^[0-9]+$ && $n =~ ^[0-9]+$ ]] ||
				die "bench/mostly-different: no count for $base"
			row="$row | $(mostly_cell "$m" "$n")"
			[ "$cf" = "${mostly_ok[0]}" ] || continue
			mostly_examples+=("$base|$(awk -F '\t' 'NF == 4 && k < 3 {
			    printf "%s%s → %s (%s, %s)", (k++ ? "; " : ""),
				$1, $2, $3, $4 }' "$tmp/mostly.out")")
		done
		mostly_rows+=("$row |")
		rm -f "$f" "$tmp/mostly.dups" "$tmp/mostly.out"
	done
	[ ${#mostly_rows[@]} -gt 0 ] ||
		mostly_skip="no *.jsonl.gz corpora at $NSD_SHARED_DATA"
fi
[ -z "$mostly_skip" ] ||
	note "mostly different pairs: $mostly_skip; skipping them"
mostly_secs=$((SECONDS - mostly_start))

# The section, as Markdown, into $tmp/mostly.md.
mostly_section() {
	local cf e p
	printf '## Flagged pairs that are mostly different\n\n'
	if [ -n "$mostly_skip" ]; then
		printf 'Skipped: %s.\n\n' "$mostly_skip"
		return
	fi
	printf 'Written by `bench/quality.sh%s` (`--only mostly-different` ' \
	    "${only:+ --only $only}"
	printf 'writes this section alone) on %s with `%s` (sha256 %s...): ' \
	    "$(date -u '+%Y-%m-%d %H:%M UTC')" "$nsd_version" "$nsd_sum"
	printf '%s runs, %s s in all.\n\n' "$mostly_runs" "$mostly_secs"
	printf 'Under `--drop-dups` a record judged a duplicate is dropped; '
	printf 'when it is no copy of the record its `similar_id` names, a '
	printf 'unique article is lost. The shared corpora have no truth, so '
	printf 'this counts the matches no reader would call copies, by a '
	printf 'measure of its own that shares nothing with the methods'"'"' '
	printf 'fingerprints (`bench/mostly-different`). Each record of '
	printf '`nsdedup ARGS --only-dups --on-error=skip -q CORPUS` whose '
	printf 'text and whose `similar_id` record'"'"'s text are both at '
	printf 'least 400 code points is an eligible pair. Its two texts are '
	printf 'cut into features: in Latin text the lower-cased words (runs '
	printf 'of `%s`) three at a time, in Han text the characters five at ' \
	    '\w'
	printf 'a time once white space is removed (a pair is Han when either '
	printf 'text has a CJK ideograph, U+4E00 to U+9FFF). The pair is '
	printf '*mostly different* when the Jaccard similarity of the two '
	printf 'sets is below 0.3 and less than 80%% of the smaller set is in '
	printf 'the larger (so that a copy cut short, or wrapped in a '
	printf 'site'"'"'s furniture, is still a copy). Each cell: the share of '
	printf 'the eligible pairs that are mostly different, "of" how many '
	printf 'were eligible. Configurations (`mostly_configs` in '
	printf '`bench/quality.sh`): %s.\n\n' "$(for cf in "${mostly_ok[@]}"; do
	    printf '*%s* `%s`, ' "${cf%%|*}" "${cf#*|}"; done | sed 's/, $//')"
	printf '| corpus'
	for cf in "${mostly_ok[@]}"; do
		printf ' | %s' "${cf%%|*}"
	done
	printf ' |\n|---'
	for cf in "${mostly_ok[@]}"; do
		printf '|---:'
	done
	printf '|\n'
	printf '%s\n' "${mostly_rows[@]}"
	printf '\n'
	if [ ${#mostly_refused[@]} -gt 0 ]; then
		refused_sentence "${mostly_refused[@]}"
	fi
	if [ ${#mostly_ok[@]} -gt 0 ]; then
		printf 'The first mostly different pairs of *%s* in each ' \
		    "${mostly_ok[0]%%|*}"
		printf 'corpus, id → `similar_id` (Jaccard, containment), to '
		printf 'read with `--explain`:\n\n'
		for e in "${mostly_examples[@]}"; do
			p=${e#*|}
			printf -- '- %s: %s\n' "${e%%|*}" "${p:-none}"
		done
		printf '\n'
	fi
	kept_note mostly-different
}

mostly_section >"$tmp/mostly.md"
if [ "$only" = mostly-different ]; then
	mkdir -p "$(dirname "$out")"
	splice_section "$tmp/mostly.md" "<!-- quality: findings -->"
	note "wrote the mostly different pairs' section of $out"
	exit 0
fi

# --- Hard negatives ------------------------------------------------------

# The configurations run on the look-alike sets: "label|nsdedup arguments",
# one a line; add a line to add rows.  One that the program under test
# refuses (an option it does not have yet) is left out, with a note in
# the report.
negatives_configs=(
	"nshash|-m nshash"
	"simhash|-m simhash"
	"minhash|-m minhash"
	"nshash confirm=0|-m nshash --confirm 0"
)
negatives_kinds=(background quote template)
# Originals per language: each gets about one look-alike.
negatives_originals=1000

# For each language, a set made by nsd-repost --negatives: originals of
# the shared corpora, and after them look-alikes, other documents that
# share a passage or a template with one of them (see nsd-repost --help).
# No record is a copy of another, so every record judged a duplicate is a
# false positive.  Rows of the table into negatives_rows; why the section
# is empty, if it is, in negatives_skip.  Run unless --only asks for
# another part.
negatives_rows=()
negatives_ok=()
negatives_refused=()
negatives_skip=""
negatives_missing=""
negatives_runs=0
declare -A NEG_LOG
negatives_start=$SECONDS
if [ -n "$only" ] && [ "$only" != negatives ]; then
	:
elif [ ! -d "$NSD_SHARED_DATA" ]; then
	negatives_skip="no shared corpora at $NSD_SHARED_DATA"
else
	probe_configs negatives_ok negatives_refused "hard negatives" \
	    "${negatives_configs[@]}"
	mkdir "$tmp/negatives"
	for lang in "${real_langs[@]}"; do
		if ! real_inputs "$tmp/negatives" "$lang"; then
			negatives_missing+=" $lang ($real_missing missing)"
			continue
		fi
		set=$tmp/negatives/$lang
		note "hard negatives: generating the $lang set"
		"$NSD_REPOST" --negatives --seed "$seed" \
		    --originals "$negatives_originals" --truth "$set.truth" \
		    --verbose "${inputs[@]}" >"$set.jsonl" 2>"$set.gen" ||
			die "nsd-repost failed: $(cat "$set.gen")"
		rm -f "${inputs[@]}"
		NEG_LOG[$lang]=$(sed 's/.* eligible; //' "$set.gen")
		records=$(wc -l <"$set.jsonl")
		for cf in "${negatives_ok[@]}"; do
			note "hard negatives, $lang set: ${cf%%|*}"
			# shellcheck disable=SC2086
			judge "$set.jsonl" ${cf#*|}
			negatives_runs=$((negatives_runs + 1))
			# A look-alike named a duplicate of the original it
			# was made from counts under its kind; any other
			# record judged a duplicate under "other".
			negatives_rows+=("$(awk -F '\t' -v truth="$set.truth" \
			    -v kinds="${negatives_kinds[*]}" -v set="$lang" \
			    -v label="${cf%%|*}" -v records="$records" '
			function cell(a, b) {
				return sprintf("%d (%.1f%%)", a, b > 0 ? \
				    100 * a / b : 0)
			}
			BEGIN {
				while ((getline l < truth) > 0) {
					split(l, f, "\t")
					src[f[1]] = f[2]
					kind[f[1]] = f[3]
					n[f[3]]++
				}
			}
			(($1 in src) && $2 == src[$1]) { hit[kind[$1]]++; next }
			{ other++ }
			END {
				nk = split(kinds, k, " ")
				row = "| " set " | " label " | "
				for (i = 1; i <= nk; i++)
					row = row (i > 1 ? " / " : "") \
					    n[k[i]] + 0
				for (i = 1; i <= nk; i++)
					row = row " | " cell(hit[k[i]], n[k[i]])
				print row " | " cell(other, records) " |"
			}' "$tmp/dups")")
		done
		rm -f "$set.jsonl"
	done
	negatives_skip=$(no_rows_reason ${#negatives_rows[@]} \
	    "$negatives_missing")
fi
[ -z "$negatives_skip" ] ||
	note "hard negatives: $negatives_skip; skipping them"
negatives_secs=$((SECONDS - negatives_start))

# The section, as Markdown, into $tmp/negatives.md.
negatives_section() {
	local cf l
	printf '## Hard negatives\n\n'
	section_skips "$negatives_skip" "$negatives_missing" || return 0
	printf 'Written by `bench/quality.sh%s --seed %s` ' \
	    "${only:+ --only $only}" "$seed"
	printf '(`--only negatives` writes this section alone) on %s with `%s` (sha256 %s...): ' \
	    "$(date -u '+%Y-%m-%d %H:%M UTC')" "$nsd_version" "$nsd_sum"
	printf '%s nsdedup runs, %s s in all.\n\n' "$negatives_runs" \
	    "$negatives_secs"
	printf 'Different articles that share text without being copies: '
	printf 'every record nsdedup judges a duplicate here is a false '
	printf 'positive, a unique article `--drop-dups` would lose. For each '
	printf 'language, %s originals of the shared corpora of the real ' \
	    "$negatives_originals"
	printf 'sets above (the same seed: the same documents in the same '
	printf 'order), and after them, about one for each original, '
	printf '*look-alikes* made by `nsd-repost --negatives` (see '
	printf '`nsd-repost --help`) from other documents of the corpora, '
	printf 'each used once: *background*, 2 to 4 consecutive sentences '
	printf 'of the original put in another article as a paragraph, as '
	printf 'news stories repeat background; *quote*, another article '
	printf 'after 2 to 4 sentences of the original quoted as a reply '
	printf 'quotes them (an attribution line, `> ` before each line); '
	printf '*template*, the original with every run of digits replaced '
	printf 'by another of the same length and, in English, its '
	printf 'capitalised words that begin no sentence by names of another '
	printf 'article: the same form about other people and figures. The '
	printf 'sets, as `nsd-repost --verbose` counts them:\n\n'
	for l in "${real_langs[@]}"; do
		[ -z "${NEG_LOG[$l]:-}" ] ||
			printf -- '- %s: %s.\n' "$l" "${NEG_LOG[$l]}"
	done
	printf '\nEach run is `nsdedup ARGS --only-dups --stats SET`. '
	printf '"Flagged" counts the look-alikes of a kind judged duplicates '
	printf 'of the original they were made from, and their share of that '
	printf 'kind; "other records flagged" every other record judged a '
	printf 'duplicate (an original, or a look-alike matched to another '
	printf 'record, e.g. two templates of one original), and its share '
	printf 'of the set'"'"'s records. Configurations (`negatives_configs` '
	printf 'in `bench/quality.sh`): %s.\n\n' "$(for cf in \
	    "${negatives_ok[@]}"; do printf '*%s* `%s`, ' "${cf%%|*}" \
	    "${cf#*|}"; done | sed 's/, $//')"
	printf '| set | configuration | look-alikes (%s) ' \
	    "$(printf '%s / ' "${negatives_kinds[@]}" | sed 's| / $||')"
	printf '| flagged: %s ' "${negatives_kinds[@]}"
	printf '| other records flagged |\n|---|---|---:'
	printf '|---:%.0s' "${negatives_kinds[@]}"
	printf '|---:|\n'
	printf '%s\n' "${negatives_rows[@]}"
	printf '\n'
	if [ ${#negatives_refused[@]} -gt 0 ]; then
		refused_sentence "${negatives_refused[@]}"
	fi
	kept_note negatives
}

negatives_section >"$tmp/negatives.md"
if [ "$only" = negatives ]; then
	mkdir -p "$(dirname "$out")"
	splice_section "$tmp/negatives.md" "<!-- quality: findings -->"
	note "wrote the hard negatives' section of $out"
	exit 0
fi

# --- Converted copies ----------------------------------------------------

# Chinese articles converted between the scripts by OpenCC's converter,
# "label|corpus|OpenCC configuration": each set is converted_originals
# originals of at least converted_min code points (the first in the
# corpus), then the converted copy of each.
conversions=(
	"s2t|zh_sina_news_2018|s2t.json"
	"t2s|zh_hant_hkcnews_2018|t2s.json"
	"s2twp|zh_sina_news_2018|s2twp.json"
)
converted_configs=(
	"nshash|-m nshash"
	"simhash|-m simhash"
	"minhash|-m minhash"
)
converted_originals=300
converted_min=600
OPENCC=${OPENCC:-opencc}

# Rows of the table into converted_rows; why the section is empty, if it
# is, in converted_skip.  Run unless --only asks for another part.
converted_rows=()
converted_ok=()
converted_refused=()
converted_skip=""
converted_missing=""
converted_runs=0
converted_start=$SECONDS
if [ -n "$only" ] && [ "$only" != converted ]; then
	:
elif [ ! -d "$NSD_SHARED_DATA" ]; then
	converted_skip="no shared corpora at $NSD_SHARED_DATA"
elif ! command -v "$OPENCC" >/dev/null; then
	converted_skip="no OpenCC converter ($OPENCC; on Debian: apt-get"
	converted_skip+=" install opencc)"
else
	probe_configs converted_ok converted_refused "converted copies" \
	    "${converted_configs[@]}"
	mkdir "$tmp/converted"
	for cv in "${conversions[@]}"; do
		IFS='|' read -r label corpus config <<<"$cv"
		gz=$NSD_SHARED_DATA/$corpus.jsonl.gz
		if [ ! -f "$gz" ]; then
			converted_missing+=" $label ($corpus.jsonl.gz missing)"
			continue
		fi
		set=$tmp/converted/$label
		note "converted copies: the $label set"
		gzip -dc "$gz" >"$set.all" || die "cannot decompress $gz"
		jq -c -n --argjson min "$converted_min" \
		    --argjson n "$converted_originals" 'limit($n; inputs |
		    select((.text | length) >= $min) | {id, text})' \
		    "$set.all" >"$set.orig" || die "cannot read $gz"
		"$OPENCC" -c "$config" -i "$set.orig" -o "$set.conv" ||
			die "$OPENCC -c $config failed"
		jq -c '.id = "converted:" + .id' "$set.conv" |
		    cat "$set.orig" - >"$set.jsonl"
		originals=$(wc -l <"$set.orig")
		for cf in "${converted_ok[@]}"; do
			note "converted copies, $label set: ${cf%%|*}"
			# shellcheck disable=SC2086
			judge "$set.jsonl" ${cf#*|}
			converted_runs=$((converted_runs + 1))
			# A copy is found when its similar_id is its
			# original's group: the original, or the earlier
			# original it repeats (the corpora have repeats).
			converted_rows+=("$(awk -F '\t' -v set="$label" \
			    -v label="${cf%%|*}" -v n="$originals" '
			function cell(a, b) {
				return sprintf("%d (%.1f%%)", a, b > 0 ? \
				    100 * a / b : 0)
			}
			$1 !~ /^converted:/ { group[$1] = $2; flagged++; next }
			{
				o = substr($1, 11)
				g = (o in group) ? group[o] : o
				if ($2 == g)
					found++
				else
					wrong++
			}
			END {
				printf "| %s | %s | %s | %d | %d |\n", set,
				    label, cell(found, n), wrong, flagged
			}' "$tmp/dups")")
		done
		rm -f "$set.all" "$set.orig" "$set.conv" "$set.jsonl"
	done
	converted_skip=$(no_rows_reason ${#converted_rows[@]} \
	    "$converted_missing")
fi
[ -z "$converted_skip" ] ||
	note "converted copies: $converted_skip; skipping them"
converted_secs=$((SECONDS - converted_start))

# The section, as Markdown, into $tmp/converted.md.
converted_section() {
	local cf cv
	printf '## Converted copies\n\n'
	section_skips "$converted_skip" "$converted_missing" || return 0
	printf 'Written by `bench/quality.sh%s` ' "${only:+ --only $only}"
	printf '(`--only converted` writes this section alone) on %s with `%s` (sha256 %s...) and %s: ' \
	    "$(date -u '+%Y-%m-%d %H:%M UTC')" "$nsd_version" "$nsd_sum" \
	    "$("$OPENCC" --version 2>&1 | awk '/Version/ { print "OpenCC " $2 }')"
	printf '%s nsdedup runs, %s s in all.\n\n' "$converted_runs" \
	    "$converted_secs"
	printf 'Chinese articles converted to the other script, as news '
	printf 'crosses between the mainland, Hong Kong and Taiwan. Each set '
	printf 'is the first %s articles of at least %s code points of a ' \
	    "$converted_originals" "$converted_min"
	printf 'shared corpus, then the copy of each made by `opencc -c '
	printf 'CONFIG`: %s.\n\n' "$(for cv in "${conversions[@]}"; do
		IFS='|' read -r label corpus config <<<"$cv"
		printf '*%s* %s with `%s`, ' "$label" "$corpus" "$config"
	    done | sed 's/, $//')"
	printf 'Each run is `nsdedup ARGS --only-dups --stats SET`. A copy '
	printf 'is *found* when its similar_id is its original'"'"'s group '
	printf '(the original, or the earlier original it repeats); '
	printf '*elsewhere* counts copies judged duplicates of anything '
	printf 'else; *originals flagged* the originals judged duplicates of '
	printf 'earlier ones, which the copies, all after them, cannot '
	printf 'change: the corpus'"'"'s own repeats, and what folding adds '
	printf 'to them (compare a run of the program before). '
	printf 'Configurations: %s.\n\n' "$(for cf in \
	    "${converted_ok[@]}"; do printf '*%s* `%s`, ' "${cf%%|*}" \
	    "${cf#*|}"; done | sed 's/, $//')"
	printf '| set | configuration | found | elsewhere '
	printf '| originals flagged |\n'
	printf '|---|---|---:|---:|---:|\n'
	printf '%s\n' "${converted_rows[@]}"
	printf '\n'
	if [ ${#converted_refused[@]} -gt 0 ]; then
		refused_sentence "${converted_refused[@]}"
	fi
	kept_note converted
}

converted_section >"$tmp/converted.md"
if [ "$only" = converted ]; then
	mkdir -p "$(dirname "$out")"
	splice_section "$tmp/converted.md" "<!-- quality: findings -->"
	note "wrote the converted copies' section of $out"
	exit 0
fi

# --- Copies with every sentence touched ----------------------------------

# The sets: for each language and touch, the originals of the real sets
# (the same seed and --originals) and one copy of each, changed in every
# sentence by nsd-repost --touch.  "column header|--touch value".
touches=(
	"chars 1%|chars:0.01"
	"chars 2%|chars:0.02"
	"chars 5%|chars:0.05"
	"words 5%|words:0.05"
	"paragraphs|paragraphs"
	"combined|chars:0.02,words:0.05,paragraphs"
)
# The configurations scored on them: "label|nsdedup arguments", one a
# line; add a line to add a row.  A row whose arguments are "-m METHOD"
# alone is that method's defaults.  One that the program under test
# refuses (a method or an option it does not have yet) is left out, with
# a note in the report.
touched_configs=(
	"nshash|-m nshash"
	"simhash|-m simhash"
	"simhash k=4|-m simhash --distance 4"
	"minhash|-m minhash"
	"minhash threshold=0.4|-m minhash --threshold 0.4"
	"minhash shingle=1|-m minhash --shingle 1"
	"minhash threshold=0.6|-m minhash --threshold 0.6"
	"minhash threshold=0.7|-m minhash --threshold 0.7"
	"minhash threshold=0.8|-m minhash --threshold 0.8"
)
# The best row of a method: the highest recall over all the sets among
# its rows with a precision (held right) of at least this, in percent, in
# each language.
best_precision=99.0

touched_start=$SECONDS
touched_runs=0
touched_ok=()
touched_refused=()
probe_configs touched_ok touched_refused "touched copies" \
    "${touched_configs[@]}"

# Rows: lang|touch|label|tagged line of real_score or held_pairs, into
# $tmp/touched.rows.  The record info gives a copy its source's length,
# so that real_score's "len 1" counts the copies of originals under 500
# code points.
declare -A TOUCH_LOG
have_touched=0
touched_skip=""
: >"$tmp/touched.rows"
if [ -d "$NSD_SHARED_DATA" ]; then
	mkdir "$tmp/touched"
	for lang in "${real_langs[@]}"; do
		if ! real_inputs "$tmp/touched" "$lang"; then
			touched_skip="$touched_skip $lang ($real_missing missing)"
			continue
		fi
		have_touched=1
		for tc in "${touches[@]}"; do
			spec=${tc#*|}
			set=$tmp/touched/$lang.$spec
			note "touched copies: generating the $lang $spec set"
			"$NSD_REPOST" --seed "$seed" --originals "$real_originals" \
			    --touch "$spec" --truth "$set.truth" --verbose \
			    "${inputs[@]}" >"$set.jsonl" 2>"$set.gen" ||
				die "nsd-repost failed: $(cat "$set.gen")"
			TOUCH_LOG[$lang|$spec]=$(sed 's/.* copies; touches //' \
			    "$set.gen")
			jq -r '[.id, .lang, (.text | length)] | @tsv' \
			    "$set.jsonl" | awk -F '\t' -v truth="$set.truth" '
			    BEGIN { while ((getline l < truth) > 0) {
				split(l, f, "\t")
				src[f[1]] = f[2] } }
			    { n[$1] = $3
			      print $1 "\t" $2 "\t" (($1 in src) ? n[src[$1]] : \
				$3) "\t0" }' >"$set.info" ||
				die "jq failed on $set.jsonl"
			held_text "$set.jsonl" "$set.txt"
			for cf in "${touched_ok[@]}"; do
				label=${cf%%|*}
				note "touched copies, $lang $spec set: $label"
				# shellcheck disable=SC2086
				judge "$set.jsonl" ${cf#*|}
				touched_runs=$((touched_runs + 1))
				real_score "$set.truth" "$set.info" \
				    "$tmp/fp.pairs" |
				    sed "s/^/$lang|$spec|$label|/" \
				    >>"$tmp/touched.rows"
				touch "$tmp/fp.pairs"
				held_pairs "$tmp/fp.pairs" "$set.txt" |
				    sed "s/^/$lang|$spec|$label|/" \
				    >>"$tmp/touched.rows"
				rm -f "$tmp/fp.pairs"
			done
			rm -f "$set.jsonl" "$set.txt"
		done
		rm -f "${inputs[@]}"
	done
fi
[ "$have_touched" = 1 ] ||
	note "no shared corpora for the touched copies; skipping them"
touched_secs=$((SECONDS - touched_start))

# The touched sets' table, one row per configuration that ran: its label,
# whether it is its method's defaults or best, its recall on each set
# and its precision over the sets of each language, held right (as
# scored in brackets).  With $1 = short, recall on the English copies of
# originals under 500 code points instead, a column per touch.
touched_table() {
	local labels args specs heads
	labels=$(for cf in "${touched_ok[@]}"; do printf '%s\t' "${cf%%|*}"
	    done)
	args=$(for cf in "${touched_ok[@]}"; do printf '%s\t' "${cf#*|}"
	    done)
	specs=$(for tc in "${touches[@]}"; do printf '%s\t' "${tc#*|}"
	    done)
	heads=$(for tc in "${touches[@]}"; do printf '%s\t' "${tc%%|*}"
	    done)
	awk -F '|' -v labels="$labels" -v args="$args" -v specs="$specs" \
	    -v heads="$heads" -v langs="${real_langs[*]}" \
	    -v minp="$best_precision" -v short="${1:-}" '
	function pct(a, b) {
		return b > 0 ? sprintf("%.1f", 100 * a / b) : "-"
	}
	# The method of nsdedup arguments a: what follows -m, or the default.
	function method(a,    w, i, n) {
		n = split(a, w, " ")
		for (i = 1; i < n; i++)
			if (w[i] == "-m" || w[i] == "--method")
				return w[i + 1]
		return "nshash"
	}
	{ split($4, s, " ")
		k = $1 SUBSEP $2 SUBSEP $3
		if (s[1] == "main") {
			n[k] = s[2]; tp[k] = s[3]
			TP[$1, $3] += s[3]; FP[$1, $3] += s[4]
			N[$3] += s[2]; T[$3] += s[3]
		} else if (s[1] == "held")
			H[$1, $3] += s[2]
		else if (s[1] == "len" && s[2] == 1) {
			n500[k] = s[3]; t500[k] = s[4]
		}
		ran[$3] = 1 }
	END {
		nl = split(labels, lab, "\t") - 1
		split(args, arg, "\t")
		ns = split(specs, spec, "\t") - 1
		split(heads, head, "\t")
		ng = split(langs, lang, " ")
		# Roles: the defaults, and the best of each method.
		for (j = 1; j <= nl; j++) {
			m = method(arg[j])
			role[j] = arg[j] ~ /^(-m|--method) [^ ]+$/ ? "defaults" : ""
			ok = ran[lab[j]]
			for (g = 1; g <= ng; g++) {
				l = lang[g]
				tf = TP[l, lab[j]] + FP[l, lab[j]]
				if (tf == 0 || 100 * (TP[l, lab[j]] + \
				    H[l, lab[j]]) / tf < minp)
					ok = 0
			}
			r = N[lab[j]] > 0 ? T[lab[j]] / N[lab[j]] : 0
			if (ok && (!(m in best) || r > bestr[m])) {
				best[m] = j
				bestr[m] = r
			}
		}
		for (m in best)
			role[best[m]] = role[best[m]] == "" ? "best" : \
			    role[best[m]] ", best"
		printf "| configuration | row"
		for (g = 1; g <= (short ? 1 : ng); g++)
			for (i = 1; i <= ns; i++)
				printf " | %s%s", short ? "" : lang[g] ": ",
				    head[i]
		if (!short)
			for (g = 1; g <= ng; g++)
				printf " | %s: precision %%", lang[g]
		printf " |\n|---|---"
		for (i = 1; i <= (short ? ns : ng * ns + ng); i++)
			printf "|---:"
		printf "|\n"
		for (j = 1; j <= nl; j++) {
			if (!ran[lab[j]])
				continue
			printf "| %s | %s", lab[j], role[j]
			for (g = 1; g <= (short ? 1 : ng); g++)
				for (i = 1; i <= ns; i++) {
					l = short ? "en" : lang[g]
					k = l SUBSEP spec[i] SUBSEP lab[j]
					printf " | %s", short ? \
					    pct(t500[k], n500[k]) : \
					    pct(tp[k], n[k])
				}
			if (!short)
				for (g = 1; g <= ng; g++) {
					l = lang[g]
					tf = TP[l, lab[j]] + FP[l, lab[j]]
					printf " | %s (%s)",
					    pct(TP[l, lab[j]] + H[l, lab[j]], tf),
					    pct(TP[l, lab[j]], tf)
				}
			printf " |\n"
		} }' "$tmp/touched.rows"
}

# The section, as Markdown, into $tmp/touched.md.
touched_section() {
	local tc cf l n500 ncopies
	printf '## Copies with every sentence touched\n\n'
	if [ "$have_touched" = 0 ]; then
		printf 'Skipped: no shared corpora at %s.\n\n' "$NSD_SHARED_DATA"
		return
	fi
	[ -z "$touched_skip" ] || printf 'Skipped:%s.\n\n' "$touched_skip"
	printf 'Written by `bench/quality.sh%s --seed %s --originals %s` ' \
	    "${only:+ --only $only}" "$seed" "$real_originals"
	printf '(`--only touched` writes this section alone) on %s with ' \
	    "$(date -u '+%Y-%m-%d %H:%M UTC')"
	printf '`%s` (sha256 %s...): %s nsdedup runs, %s s in all.\n\n' \
	    "$nsd_version" "$nsd_sum" "$touched_runs" "$touched_secs"
	printf 'Copies changed all through, not in one place: no sentence '
	printf 'is left as it was, or the paragraphs all move. For each '
	printf 'language, the originals of the real sets above (`--seed %s ' \
	    "$seed"
	printf -- '--originals %s`: the same documents in the same order) ' \
	    "$real_originals"
	printf 'and one copy of each, made by `nsd-repost --touch SPEC` '
	printf '(see `nsd-repost --help`): *chars:P* replaces a share P of '
	printf 'the letters of each sentence (Han characters by other common '
	printf 'ones, ASCII letters by other letters), *words:P* a share P of '
	printf 'its words (by words of other texts of the corpora; in Chinese '
	printf 'two Han characters in a row by two others), each at least '
	printf 'one a sentence; *paragraphs* puts the paragraphs (or, with '
	printf 'fewer than 3, blocks of sentences) in another order; '
	printf '*combined* is `chars:0.02,words:0.05,paragraphs`. The one '
	printf 'change a sentence at least makes the share changed higher '
	printf 'than P in short sentences; what each set got, as '
	printf '`nsd-repost --verbose` counts it:\n\n'
	for l in "${real_langs[@]}"; do
		for tc in "${touches[@]}"; do
			[ -n "${TOUCH_LOG[$l|${tc#*|}]:-}" ] || continue
			printf -- '- %s: %s.\n' "$l" "${TOUCH_LOG[$l|${tc#*|}]}"
		done
	done
	printf '\nScored as the real sets above: recall = TP / copies, in '
	printf 'percent; precision = TP / (TP + FP) over all the sets of a '
	printf 'language (the same originals in each), "held" pairs counted '
	printf 'right, and as scored in brackets. Row: *defaults* is a '
	printf 'method run with `-m METHOD` alone; *best* is the row of its '
	printf 'method with the highest recall over all the sets among those '
	printf 'with a precision (held right) of at least %s%% in each ' \
	    "$best_precision"
	printf 'language. Configurations: `touched_configs` in '
	printf '`bench/quality.sh`.\n\n'
	touched_table
	printf '\n'
	# The refused, with what nsdedup said of the first (the others
	# are mostly the same method).
	if [ ${#touched_refused[@]} -gt 0 ]; then
		refused_sentence "${touched_refused[@]}"
	fi
	n500=$(awk -F '|' '$1 == "en" { split($4, s, " ")
	    if (s[1] == "len" && s[2] == 1) { print s[3]; exit } }' \
	    "$tmp/touched.rows")
	ncopies=$(awk -F '|' '$1 == "en" { split($4, s, " ")
	    if (s[1] == "main") { print s[2]; exit } }' "$tmp/touched.rows")
	if [ -n "$n500" ]; then
		printf '### English copies of short texts\n\n'
		printf 'Recall in percent on the %s English copies (of %s) ' \
		    "$n500" "$ncopies"
		printf 'whose original is under 500 code points:\n\n'
		touched_table short
		printf '\n'
	fi
	kept_note touched
}

touched_section >"$tmp/touched.md"
if [ "$only" = touched ]; then
	mkdir -p "$(dirname "$out")"
	splice_section "$tmp/touched.md" \
	    "## Shared real corpora|<!-- quality: findings -->"
	note "wrote the touched copies' section of $out"
	exit 0
fi

# --- The generated corpora -----------------------------------------------

# One corpus for each kind of near-copy that nsd-gencorpus makes: the
# default light reposts, and copies edited at each --edit-strength (all of
# the reposts, so that each corpus's precision is about its own kind).
corpora=(light longest every heavy)
declare -A GEN_ARGS GEN_LOG
GEN_ARGS[light]=""
for c in longest every heavy; do
	GEN_ARGS[$c]="--edit-rate 1 --edit-strength $c"
done
for c in "${corpora[@]}"; do
	note "generating the $c corpus ($size, seed $seed)"
	# shellcheck disable=SC2086
	"$GENCORPUS" --seed "$seed" --size "$size" ${GEN_ARGS[$c]} \
	    --truth "$tmp/$c.truth" --verbose >"$tmp/$c.jsonl" \
	    2>"$tmp/$c.gen" || die "nsd-gencorpus failed: $(cat "$tmp/$c.gen")"
	GEN_LOG[$c]=$(sed 's/^[^:]*: //' "$tmp/$c.gen")
	record_info "$tmp/$c.jsonl" "$tmp/$c.info"
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
configs+=("minhash|-m minhash")
# The defaults, at each distance.
headline='^(nshash|simhash k=. shingle=3 ngram=2|minhash)$'

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
		    "$RUN_CAND" "$(score "$tmp/$c.truth" "$tmp/$c.info")" \
		    >>"$tmp/rows"
	done
done

# --- How far a copy's SimHash is from its source's -----------------------

# For the first $hist_max copies of each corpus: the SimHash distance from
# the record it was copied from (default parameters), as nsdedup --explain
# reports it for the two records alone at --distance 8 (beyond 8 it says
# nothing); and the cosine of the angle between the two texts' feature
# vectors, counted as simhash.c counts them, which predicts the distance.
# Lines "corpus lang distance cosine" into $tmp/hist.
hist_max=200
note "SimHash distances of copies from their sources"
mkdir "$tmp/rec"
: >"$tmp/hist.meta"
: >"$tmp/hist.pairs"
for c in "${corpora[@]}"; do
	sed -n "1,${hist_max}p" "$tmp/$c.truth" >"$tmp/hist.truth"
	# Each record needed, alone in a file named by its id.
	awk -F '\t' -v dir="$tmp/rec" 'NR == FNR { want[$1] = 1; want[$2] = 1
		next }
	    { id = $0; sub(/^\{"id":"/, "", id); sub(/".*/, "", id)
	      if (id in want) print > (dir "/" id) }' "$tmp/hist.truth" \
	    "$tmp/$c.jsonl"
	awk -F '\t' 'NR == FNR { lang[$1] = $2; next }
	    { print $1, $2, lang[$1] }' "$tmp/$c.info" "$tmp/hist.truth" |
	    while read -r rid sid lang; do
		cat "$tmp/rec/$sid" "$tmp/rec/$rid" >"$tmp/pair.jsonl"
		# Unconfirmed: the distance, whatever the whole texts say.
		d=$("$NSDEDUP" -m simhash --distance 8 --confirm 0 --explain \
		    --only-dups "$tmp/pair.jsonl" |
		    sed -n 's/.*"method":"simhash","distance":\([0-9]*\)[,}].*/\1/p')
		printf '%s %s %s\n' "$c" "$lang" "${d:-9}" >>"$tmp/hist.meta"
		cat "$tmp/pair.jsonl" >>"$tmp/hist.pairs"
	    done
	rm -f "$tmp/rec"/*
done
# The features of simhash.c with its defaults, for the generated texts
# (which have no letters beyond U+024F and no CJK but Han): words of
# letters and digits, ASCII lower-cased, three to a shingle across the
# whole text; and the bigrams of each run of Han characters (a run of one
# is itself).  jq writes each text's features a line each, then an empty
# line; awk counts them, a feature weighing as often as it occurs, and
# gives the cosine of each pair of texts.
jq -r '
	def words: [match("[0-9A-Za-z\u00c0-\u024f]+"; "g").string |
	    ascii_downcase];
	def shingles: if length == 0 then empty
	    elif length < 3 then join(" ")
	    else . as $w | range(0; length - 2) as $i |
		$w[$i] + " " + $w[$i + 1] + " " + $w[$i + 2] end;
	def bigrams: match("\\p{Han}+"; "g").string | explode |
	    if length < 2 then implode
	    else . as $c | range(0; length - 1) as $i | $c[$i:$i + 2] |
		implode end;
	(.text | (words | shingles), bigrams), ""' "$tmp/hist.pairs" |
    awk '$0 == "" {
		if (++t % 2 == 0) {
			dot = na = nb = 0
			for (f in a) {
				na += a[f] * a[f]
				if (f in b)
					dot += a[f] * b[f]
			}
			for (f in b)
				nb += b[f] * b[f]
			print (na > 0 && nb > 0 ? dot / sqrt(na * nb) : 0)
			split("", a)
			split("", b)
		}
		next
	}
	t % 2 == 0 { a[$0]++; next }
	{ b[$0]++ }' >"$tmp/hist.cos" || die "cannot count the pairs' features"
[ "$(wc -l <"$tmp/hist.cos")" -eq "$(wc -l <"$tmp/hist.meta")" ] ||
	die "the pairs' features do not match the pairs"
paste -d ' ' "$tmp/hist.meta" "$tmp/hist.cos" >"$tmp/hist"

# --- Labelled reposts of real documents ----------------------------------

# The configurations scored on the real reposts: "label|nsdedup arguments",
# one a line; add a line to add a column.  The first nshash line has the
# reference's rules (one shared fingerprint makes a copy, nothing counted
# as boilerplate); "nshash" alone is the defaults.
real_configs=(
	"nshash min-match=1 common=0|-m nshash --min-match 1 --common 0"
	"nshash min-match=2 common=0|-m nshash --min-match 2 --common 0"
	"nshash|-m nshash"
	"nshash min-match=2 common=2|-m nshash --min-match 2 --common 2"
	"nshash min-match=3|-m nshash --min-match 3"
	"nshash min-match=4|-m nshash --min-match 4"
	"simhash k=3|-m simhash --distance 3"
	"simhash k=4|-m simhash --distance 4"
	"minhash|-m minhash"
	"minhash threshold=0.7|-m minhash --threshold 0.7"
)
# The boilerplate kinds.
bp_kinds=(footer script)
bp_rate=0.3

# Rows: set|boilerplate|label|tagged line, into $tmp/real.rows; the
# boilerplate sets' block lines scored on the set without blocks too, as
# set|kind|label|plainblock ....
have_real=0
real_skip=""
: >"$tmp/real.rows"
if [ -d "$NSD_SHARED_DATA" ]; then
	mkdir "$tmp/real"
	for lang in "${real_langs[@]}"; do
		if ! real_inputs "$tmp/real" "$lang"; then
			real_skip="$real_skip $lang ($real_missing missing)"
			continue
		fi
		have_real=1
		for kind in none "${bp_kinds[@]}"; do
			set=$lang
			bp_args=()
			if [ "$kind" != none ]; then
				set=$lang-$kind
				bp_args=(--boilerplate "$kind"
				    --boilerplate-rate "$bp_rate")
			fi
			note "real reposts: generating the $set set"
			"$NSD_REPOST" --seed "$seed" --originals "$real_originals" \
			    "${bp_args[@]}" --truth "$tmp/real/$set.truth" \
			    --verbose "${inputs[@]}" >"$tmp/real/$set.jsonl" \
			    2>"$tmp/real/$set.gen" ||
				die "nsd-repost failed: $(cat "$tmp/real/$set.gen")"
			REAL_LOG[$set]=$(sed 's/^[^:]*: //' "$tmp/real/$set.gen")
			jq -r '[.id, .lang, (.text | length)] | @tsv' \
			    "$tmp/real/$set.jsonl" >"$tmp/real/$set.len" ||
				die "jq failed on $set"
			[ "$kind" = none ] || continue
			held_text "$tmp/real/$set.jsonl" "$tmp/real/$set.txt"
		done
		for b in ${REAL_FILES[$lang]}; do
			rm -f "$tmp/real/$b.jsonl"
		done
		# Block: 1 when the record is longer than in the set without
		# blocks (the sets are the same records in the same order).
		for kind in none "${bp_kinds[@]}"; do
			set=$lang
			[ "$kind" = none ] || set=$lang-$kind
			awk -F '\t' 'NR == FNR { l[FNR] = $3; id[FNR] = $1; next }
			    id[FNR] != $1 { print "records differ at " FNR \
				>"/dev/stderr"; exit 1 }
			    { print $1 "\t" $2 "\t" l[FNR] "\t" \
				($3 != l[FNR] ? 1 : 0) }' \
			    "$tmp/real/$lang.len" "$tmp/real/$set.len" \
			    >"$tmp/real/$set.info" ||
				die "the $set set does not match the $lang set"
		done
		n=0
		for cf in "${real_configs[@]}"; do
			n=$((n + 1))
			label=${cf%%|*}
			args=${cf#*|}
			for kind in none "${bp_kinds[@]}"; do
				set=$lang
				[ "$kind" = none ] || set=$lang-$kind
				note "real reposts, $set set: $label"
				# shellcheck disable=SC2086
				judge "$tmp/real/$set.jsonl" $args
				cp "$tmp/dups" "$tmp/real/$set.$n.dups"
				real_score "$tmp/real/$set.truth" \
				    "$tmp/real/$set.info" "$tmp/fp.pairs" |
				    sed "s/^/$lang|$kind|$label|/" \
				    >>"$tmp/real.rows"
				if [ "$kind" = none ]; then
					touch "$tmp/fp.pairs"
					held_pairs "$tmp/fp.pairs" \
					    "$tmp/real/$set.txt" |
					    sed "s/^/$lang|$kind|$label|/" \
					    >>"$tmp/real.rows"
					rm -f "$tmp/fp.pairs"
					continue
				fi
				rm -f "$tmp/fp.pairs"
				# The same copies in the set without blocks.
				cp "$tmp/real/$lang.$n.dups" "$tmp/dups"
				real_score "$tmp/real/$set.truth" \
				    "$tmp/real/$set.info" |
				    sed -n "s/^block /$lang|$kind|$label|plainblock /p" \
				    >>"$tmp/real.rows"
			done
		done
	done
fi
[ "$have_real" = 1 ] || note "no shared corpora for the real reposts; skipping them"

# --- The shared real corpora ---------------------------------------------

# Records of corpus $1 whose text, white space removed, is at least 50
# characters and the same as an earlier record's: one id a line into $2,
# and "id<TAB>id of the first record with that text" lines into $2.first.
exact_repeats() {
	# @tsv writes tabs and newlines as \t and \n; those go too, and
	# U+3000 and U+00A0.  Characters are counted as the bytes that do
	# not continue one.
	jq -r '[.id, (.text // "")] | @tsv' "$1" |
	    LC_ALL=C awk -F '\t' -v first="$2.first" '{ t = $2
		gsub(/\\[tnr]|[ \t]|\343\200\200|\302\240/, "", t)
		c = t
		if (gsub(/[\200-\277]/, "", c) >= 0 && length(c) < 50)
			next
		if (t in seen) {
			print $1
			print $1 "\t" seen[t] > first
		} else
			seen[t] = $1 }' >"$2"
	[ -f "$2.first" ] || : >"$2.first"
}

# Of the exact repeats ($1.first), those that $tmp/idpairs (id<TAB>
# similar_id of the duplicates of one run) puts in the group of the
# first record with their text: that record's own group, which is named
# by its similar_id when it is a duplicate itself, else by its id.
exact_right() {
	awk -F '\t' 'NR == FNR { sim[$1] = $2; next }
	    ($1 in sim) && sim[$1] == (($2 in sim) ? sim[$2] : $2) { n++ }
	    END { print n + 0 }' "$tmp/idpairs" "$1.first"
}

# The ids judged duplicates by nsdedup with the arguments after $1, sorted,
# into $tmp/ids, and with their similar_id into $tmp/idpairs.
dup_ids() {
	local c=$1
	shift
	"$NSDEDUP" "$@" --only-dups --stats --on-error=skip -q "$c" \
	    2>"$tmp/stats" | jq -r '[.id, (.similar_id | tostring)] | @tsv' \
	    >"$tmp/idpairs" || true
	cut -f 1 "$tmp/idpairs" | sort >"$tmp/ids"
	grep -q '^nsdedup: records' "$tmp/stats" ||
		die "nsdedup $* $c failed: $(tail -n 1 "$tmp/stats")"
	RUN_MBPS=$(awk '/^nsdedup: throughput/ { print $3 }' "$tmp/stats")
	RUN_CAND=$(awk '/^nsdedup: candidates/ { print $3 }' "$tmp/stats")
	RUN_CAND=${RUN_CAND:--}
}

# One cell of the exact-repeat table for the last dup_ids run: recall on
# the exact repeats of $tmp/exact, the counts, and how many are in the
# right group.
exact_cell() {
	local found right
	found=$(comm -12 "$tmp/exact" "$tmp/ids" | wc -l)
	right=$(exact_right "$tmp/exact")
	awk -v f="$found" -v r="$right" -v n="$nexact" 'BEGIN {
		printf "%s (%d of %d; %d in the right group)",
		    (n > 0 ? sprintf("%.3f", f / n) : "-"), f, n, r }'
}

# The configurations of the exact-repeat table: nshash and simhash at each
# distance, then those of real_configs beyond its first three.
exact_labels=(nshash)
for k in "${distances[@]}"; do
	exact_labels+=("simhash k=$k")
done
# The configurations of real_configs beyond its first three, but for the
# simhash ones at a distance measured anyway.
extra_configs=()
for cf in "${real_configs[@]:3}"; do
	for k in "${distances[@]}"; do
		[ "${cf%%|*}" = "simhash k=$k" ] && continue 2
	done
	extra_configs+=("$cf")
	exact_labels+=("${cf%%|*}")
done
shared_rows=()
exact_rows=()
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
		erow="| $base | $nexact | $(exact_cell)"
		mv "$tmp/ids" "$tmp/ids.nshash"
		n_mbps=$RUN_MBPS
		for k in "${distances[@]}"; do
			dup_ids "$f" -m simhash --distance "$k"
			erow="$erow | $(exact_cell)"
			mv "$tmp/ids" "$tmp/ids.simhash$k"
			eval "s_mbps$k=\$RUN_MBPS s_cand$k=\$RUN_CAND"
		done
		for cf in "${extra_configs[@]}"; do
			# shellcheck disable=SC2086
			dup_ids "$f" ${cf#*|}
			erow="$erow | $(exact_cell)"
		done
		exact_rows+=("$erow |")
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
			    "-m simhash --distance 3" "-m simhash --distance 4" \
			    "${extra_configs[@]}"; do
				m=${m#*|}
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
		done < <(awk '{ b = sprintf("%.0f", $1); n[b]++; n["all"]++
		    for (j = 2; j <= NF; j++) { d[b, j] += $j; d["all", j] += $j }
		    nf = NF }
		    END { for (b = 1; b <= 5; b++) {
			k = b == 5 ? "all" : b
			printf "| %s | %d", k, n[k]
			for (j = 2; j <= nf; j++)
				printf " | %d", d[k, j]
			printf " |\n" } }' "$tmp/pairs.out")
	fi
else
	note "no shared corpora at $NSD_SHARED_DATA; skipping them"
fi

# --- The report ----------------------------------------------------------

# --- The real reposts' tables --------------------------------------------

# Precision, recall and F1 of every configuration on the sets without
# blocks.
real_main_table() {
	printf '| set | method | copies | TP | FP | FP on originals '
	printf '| of them held | FP in the wrong group | precision %% '
	printf '| recall %% | F1 | precision, held right %% '
	printf '| F1, held right |\n'
	printf '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
	# "main" comes before "held" for each set and method.
	awk -F '|' '$2 == "none" { split($4, s, " ")
		if (s[1] == "main") {
			for (i = 2; i <= 6; i++)
				m[i] = s[i]
			next
		}
		if (s[1] != "held")
			next
		c = m[2]; tp = m[3]; fp = m[4]; h = s[2]
		p = tp + fp > 0 ? sprintf("%.1f", 100 * tp / (tp + fp)) : "-"
		r = c > 0 ? sprintf("%.1f", 100 * tp / c) : "-"
		f = tp > 0 ? sprintf("%.3f", 2 * tp / (tp + fp + c)) : "0.000"
		ph = tp + fp > 0 ? sprintf("%.1f", 100 * (tp + h) / \
		    (tp + fp)) : "-"
		fh = tp > 0 ? sprintf("%.3f", 2 * tp / (tp + fp - h + c)) : \
		    "0.000"
		printf "| %s | %s | %d | %d | %d | %d | %d | %d | %s | %s | %s " \
		    "| %s | %s |\n", $1, $3, c, tp, fp, m[5], h, m[6], p, r,
		    f, ph, fh }' "$tmp/real.rows"
}

# Recall by tag $2 (edit, alone or len) on set $1 without blocks: one
# row per edit kind or class of length, one column per configuration.
real_by() {
	local names
	if [ "$2" = len ]; then
		names=$(IFS='|'; echo "${real_len_names[*]}")
	else
		names=$(IFS='|'; echo "${edit_kinds[*]}")
	fi
	awk -F '|' -v set="$1" -v tag="$2" -v names="$names" '
	$1 == set && $2 == "none" { split($4, s, " ")
		if (s[1] != tag)
			next
		if (!($3 in seen)) { seen[$3] = 1; meth[++m] = $3 }
		if (!(s[2] in kseen)) { kseen[s[2]] = 1; key[++nk] = s[2] }
		n[s[2]] = s[3]
		r[s[2], $3] = s[3] > 0 ? sprintf("%.1f", 100 * s[4] / s[3]) \
		    : "-" }
	END { split(names, nm, "|")
		printf "| %s | copies", (tag == "len" ? "code points" : "edit")
		for (j = 1; j <= m; j++)
			printf " | %s", meth[j]
		printf " |\n|---|---:"
		for (j = 1; j <= m; j++)
			printf "|---:"
		printf "|\n"
		for (i = 1; i <= nk; i++) {
			printf "| %s | %d", tag == "len" ? nm[key[i]] : key[i],
			    n[key[i]]
			for (j = 1; j <= m; j++)
				printf " | %s", r[key[i], meth[j]]
			printf " |\n"
		} }' "$tmp/real.rows"
}

# The sets with blocks: precision, the originals with a block flagged,
# and the recall of the copies of documents with a block, with the block
# and without it.
real_bp_table() {
	printf '| set | method | originals with a block | precision %% '
	printf '| FP | FP on originals with a block | of them matched to '
	printf 'another such original | copies of them | recall with the '
	printf 'block %% | recall of the same copies without blocks %% |\n'
	printf '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n'
	awk -F '|' '$2 != "none" { split($4, s, " ")
		k = $1 "-" $2 "|" $3
		if (!(k in seen)) { seen[k] = 1; order[++n] = k }
		if (s[1] == "main") {
			p[k] = s[3] + s[4] > 0 ? sprintf("%.1f", 100 * s[3] / \
			    (s[3] + s[4])) : "-"
			fp[k] = s[4]
		} else if (s[1] == "block") {
			bo[k] = s[4]; bf[k] = s[5]; bb[k] = s[6]; bc[k] = s[2]
			br[k] = s[2] > 0 ? sprintf("%.1f", 100 * s[3] / s[2]) \
			    : "-"
		} else if (s[1] == "plainblock")
			pr[k] = s[2] > 0 ? sprintf("%.1f", 100 * s[3] / s[2]) \
			    : "-" }
	END { for (i = 1; i <= n; i++) { k = order[i]
		split(k, a, "|")
		printf "| %s | %s | %d | %s | %d | %d | %d | %d | %s | %s |\n",
		    a[1], a[2], bo[k], p[k], fp[k], bf[k], bb[k], bc[k],
		    br[k], pr[k] } }' "$tmp/real.rows" |
	    sort -t '|' -k 2,2 -s
}


cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo \
    2>/dev/null || true)

# Precision, recall and F1 of the configurations whose label matches $1,
# one row each, the four corpora side by side.
side_by_side() {
	printf '| method'
	for c in "${corpora[@]}"; do
		printf ' | %s: precision %% | %s: recall %% | %s: F1' \
		    "$c" "$c" "$c"
	done
	printf ' |\n|---'
	for c in "${corpora[@]}"; do
		printf '|---:|---:|---:'
	done
	printf '|\n'
	awk -F '|' -v re="$1" -v cs="${corpora[*]}" '$2 ~ re {
		split($6, s, " ")
		v[$1, $2] = s[4] " | " s[5] " | " s[6]
		if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
	    END { m = split(cs, c, " ")
		for (i = 1; i <= n; i++) {
			printf "| %s", order[i]
			for (j = 1; j <= m; j++)
				printf " | %s", v[c[j], order[i]]
			printf " |\n" } }' "$tmp/rows"
}

# The configurations whose label matches $1 on every corpus, in full.
detail() {
	printf '| corpus | method | reposts | TP | FP | precision %% '
	printf '| recall %% | F1 | FP not reposts | FP wrong group | MB/s '
	printf '| candidates per lookup |\n'
	printf '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
	awk -F '|' -v re="$1" '$2 ~ re { split($6, s, " ")
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s " \
		    "| %s | %s |\n", $1, $2, s[1], s[2], s[3], s[4], s[5],
		    s[6], s[19], s[20], $4, $5 }' "$tmp/rows"
}

# Every configuration's precision and recall on each corpus, for all
# records or (field offset $1: 0 all, 6 en, 12 zh) one language; with
# $2 set, the candidates per lookup on the light corpus too.
grid() {
	local off=$1 cand=${2:-}
	printf '| method'
	for c in "${corpora[@]}"; do
		printf ' | %s: precision %% | %s: recall %%' "$c" "$c"
	done
	[ -z "$cand" ] || printf ' | light: candidates per lookup'
	printf ' |\n|---'
	for c in "${corpora[@]}"; do
		printf '|---:|---:'
	done
	[ -z "$cand" ] || printf '|---:'
	printf '|\n'
	awk -F '|' -v o="$off" -v cs="${corpora[*]}" -v cand="$cand" '{
		split($6, s, " ")
		v[$1, $2] = s[o + 4] " | " s[o + 5]
		if ($1 == "light") k[$2] = $5
		if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
	    END { m = split(cs, c, " ")
		for (i = 1; i <= n; i++) {
			printf "| %s", order[i]
			for (j = 1; j <= m; j++)
				printf " | %s", v[c[j], order[i]]
			if (cand != "")
				printf " | %s", k[order[i]]
			printf " |\n" } }' "$tmp/rows"
}

# Recall by class of text length, for the configurations matching $1.
by_length() {
	awk -F '|' -v re="$1" -v names="$(IFS='|'; echo "${len_names[*]}")" '
	function pct(a, b) {
		return b > 0 ? sprintf("%.1f", 100 * a / b) : "-"
	}
	$2 ~ re { split($6, s, " ")
		if (!($2 in seen)) { seen[$2] = 1; meth[++m] = $2 }
		if (!($1 in cseen)) { cseen[$1] = 1; corp[++nc] = $1 }
		for (c = 1; c <= 3; c++) {
			n[$1, c] = s[19 + 2 * c]
			r[$1, $2, c] = pct(s[20 + 2 * c], s[19 + 2 * c])
		} }
	END { split(names, nm, "|")
		printf "| corpus | text length | reposts"
		for (j = 1; j <= m; j++)
			printf " | %s", meth[j]
		printf " |\n|---|---|---:"
		for (j = 1; j <= m; j++)
			printf "|---:"
		printf "|\n"
		for (i = 1; i <= nc; i++)
			for (c = 1; c <= 3; c++) {
				printf "| %s | %s | %s", corp[i], nm[c],
				    n[corp[i], c]
				for (j = 1; j <= m; j++)
					printf " | %s", r[corp[i], meth[j], c]
				printf " |\n"
			} }' "$tmp/rows"
}

mkdir -p "$(dirname "$out")"
{
	printf '# nsdedup: how well the methods find near-copies\n\n'
	printf 'Written by `bench/quality.sh --size %s --seed %s ' "$size" "$seed"
	printf -- '--originals %s` (`make quality` or `make bench-quality`; ' \
	    "$real_originals"
	printf '`make bench` runs it too). Notes between `<!-- note: ... -->` '
	printf 'and `<!-- end note -->`, and everything below the findings '
	printf 'marker, are written by hand and kept when it runs again.\n\n'
	printf '## Machine\n\n'
	printf -- '- Date: %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
	printf -- '- System: %s; CPU: %s, %s cores online\n' "$(uname -srm)" \
	    "${cpu_model:-unknown}" "$(nproc)"
	printf -- '- nsdedup: `%s` (sha256 %s...)\n' "$nsd_version" "$nsd_sum"
	printf -- '- MB/s and candidates per lookup are what `--stats` '
	printf 'printed for that one run (one core; a rough figure, not a '
	printf 'benchmark: see RESULTS.md for those).\n\n'

	printf '## How it is scored\n\n'
	printf 'Four corpora of `nsd-gencorpus`, one for each kind of '
	printf 'near-copy it makes, with `--truth FILE` writing, for each '
	printf 'copy, its id, the id of the record it was copied from and '
	printf 'its kind:\n\n'
	for c in "${corpora[@]}"; do
		printf -- '- **%s**: `nsd-gencorpus --seed %s --size %s%s ' \
		    "$c" "$seed" "$size" "${GEN_ARGS[$c]:+ ${GEN_ARGS[$c]}}"
		printf -- '--truth %s.truth`: %s.\n' "$c" "${GEN_LOG[$c]}"
	done
	printf '\nA *light* repost is the default kind: an agency prefix or '
	printf 'source line, a footer, one sentence dropped, a few characters '
	printf 'of one sentence changed, other white space. The other three '
	printf 'keep every sentence and change characters in some: '
	printf '*longest* one character in each of the 5 longest sentences '
	printf 'of more than 30 code points (the ones nshash fingerprints), '
	printf 'nothing else; *every* one character in every sentence; '
	printf '*heavy* a typo, a punctuation mark added, dropped or changed '
	printf 'and a digit in every sentence, and half the time a footer. '
	printf 'A changed character is a typo, a digit, or in Chinese a '
	printf 'character that looks like it (未 as 末). A copy may '
	printf 'copy a copy; its true group is the original at the head of '
	printf 'the chain.\n\n'
	printf 'Each run is `nsdedup ARGS --only-dups --stats CORPUS`. '
	printf 'A record judged a duplicate is a true positive (TP) when '
	printf 'it is a repost and its `similar_id` is in its own true group; '
	printf 'a false positive (FP) when it is no repost ("not reposts") or '
	printf 'its `similar_id` is in another group ("wrong group"). '
	printf 'Precision = TP / (TP + FP); recall = TP / reposts (a '
	printf 'repost put in the wrong group counts against both); F1 = '
	printf '2 TP / (2 TP + FP + missed reposts).\n\n'

	printf '## Side by side\n\n'
	printf 'nshash, and simhash with its default `--shingle 3 --ngram 2` '
	printf 'at `--distance` 2, 3 (the default) and 4, and minhash at its defaults:\n\n'
	side_by_side "$headline"
	printf '\nIn full:\n\n'
	detail "$headline"
	printf '\n'

	printf '## Recall by text length\n\n'
	printf 'The reposts of each corpus by the length of their text in '
	printf 'UTF-8 (generated texts are 1 to 6 KB; a Chinese character '
	printf 'takes 3 bytes), and the share of them each method finds, in '
	printf 'percent:\n\n'
	by_length "$headline"
	printf '\n'

	printf '## How far a copy is from its source\n\n'
	printf 'The SimHash distance (default parameters) between each of '
	printf 'the first %s copies of each corpus and the record it was ' \
	    "$hist_max"
	printf 'copied from, the two run alone through '
	printf '`nsdedup -m simhash --distance 8 --explain`; ">8" is '
	printf 'beyond what --distance allows. A copy is found at '
	printf '`--distance K` only when it is within K bits of some '
	printf 'record of its group.\n\n'
	printf 'Each bit of a SimHash is the sign of a random projection of '
	printf 'the text'"'"'s feature vector (every feature weighing as often '
	printf 'as it occurs), so a bit differs between two texts with '
	printf 'probability p = θ/π, θ the angle between their vectors, and '
	printf 'the distance is about binomial(64, p). "cos θ" is the mean '
	printf 'cosine of the pairs'"'"' vectors, counted with simhash.c'"'"'s '
	printf 'features (three-word shingles, Han bigrams); "64θ/π" the '
	printf 'mean distance that model expects; "predicted" the mean '
	printf 'over the pairs of P(distance ≤ 3) under it, beside the '
	printf 'share measured.\n\n'
	printf '| copies | n | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | >8 '
	printf '| mean cos θ | mean 64θ/π | within 3: predicted %% '
	printf '| within 3: measured %% |\n'
	printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
	printf -- '---:|---:|---:|---:|\n'
	awk -v cs="${corpora[*]}" '
	function binom3(p,	i, c, t) {
		t = 0; c = 1
		for (i = 0; i <= 3; i++) {
			t += c * p ^ i * (1 - p) ^ (64 - i)
			c = c * (64 - i) / (i + 1)
		}
		return t
	}
	{ k = $1 " " $2; n[k]++; h[k, $3]++
	  x = $4 > 1 ? 1 : $4
	  th = atan2(sqrt(1 - x * x), x)
	  cs_[k] += x; bits[k] += 64 * th / 3.141592653589793
	  pred[k] += binom3(th / 3.141592653589793)
	  if ($3 <= 3) w[k]++ }
	END { m = split(cs, c, " ")
		for (i = 1; i <= m; i++)
			for (j = 1; j <= 2; j++) {
				k = c[i] " " (j == 1 ? "en" : "zh")
				if (!(k in n))
					continue
				printf "| %s | %d", k, n[k]
				for (d = 0; d <= 9; d++)
					printf " | %d", h[k, d]
				printf " | %.3f | %.1f | %.1f | %.1f |\n",
				    cs_[k] / n[k], bits[k] / n[k],
				    100 * pred[k] / n[k], 100 * w[k] / n[k]
			} }' "$tmp/hist"
	printf '\n'

	printf '## The whole grid\n\n'
	printf 'Every configuration on every corpus (`--shingle` changes '
	printf 'the features of words, which are English words and the '
	printf 'numbers in Chinese text; `--ngram` those of Han '
	printf 'characters), with the candidates per lookup of each run on '
	printf 'the light corpus:\n\n'
	grid 0 cand
	printf '\n'

	printf '## By language\n\n'
	printf 'The generated corpora are about half English, half Chinese; '
	printf 'a record is Chinese when its text has a Han character.\n\n'
	printf '### English records\n\n'
	grid 6
	printf '\n### Chinese records\n\n'
	grid 12
	printf '\n'

	printf '## Real documents, labelled reposts\n\n'
	if [ "$have_real" = 0 ]; then
		printf 'Skipped: no shared corpora at %s.\n\n' "$NSD_SHARED_DATA"
	else
		[ -z "$real_skip" ] ||
			printf 'Skipped:%s.\n\n' "$real_skip"
		printf 'Real news and usenet text, with near-copies whose '
		printf 'edits are known. `nsd-repost --seed %s --originals %s ' \
		    "$seed" "$real_originals"
		printf -- '--truth SET.truth FILE...` draws %s documents of ' \
		    "$real_originals"
		printf 'at least 200 code points from the shared corpora of '
		printf 'one language (exact repeats, white space removed, '
		printf 'left out), in a random order, and after each, up to 20 '
		printf 'originals later, 0 to 2 copies (1 on average) with 1 to '
		printf '3 of these edits: %s (see `nsd-repost --help`). ' \
		    "$(printf '`%s`, ' "${edit_kinds[@]}" | sed 's/, $//')"
		printf 'The sets:\n\n'
		for lang in "${real_langs[@]}"; do
			[ -n "${REAL_LOG[$lang]:-}" ] || continue
			printf -- '- **%s** (%s): %s.\n' "$lang" \
			    "$(sed 's/[^ ][^ ]*/&.jsonl.gz/g; s/ /, /g' \
			    <<<"${REAL_FILES[$lang]}")" "${REAL_LOG[$lang]}"
		done
		printf '\nScored as above: a record judged a duplicate is a '
		printf 'TP when it is a copy and its `similar_id` is its source, '
		printf 'another copy of the same source, or the `similar_id` '
		printf 'its source was given (a source that is itself a '
		printf 'near-copy of an earlier original joins that group, '
		printf 'and its copies with it); else an FP, "on '
		printf 'originals" when the record is no copy, "in the wrong '
		printf 'group" when it is; recall = TP / copies. The originals '
		printf 'are real text, so some FPs on originals are near-copies '
		printf 'the corpora already held (Reuters corrections, stories '
		printf 'republished under another id) that no truth labels. '
		printf 'Those are counted by a measure independent of nsdedup '
		printf '("held"): the two texts, white space removed, cut into '
		printf 'overlapping 24-byte shingles, the shorter'"'"'s shingles at '
		printf 'least half in the longer'"'"'s; "precision, held right" '
		printf 'and "F1, held right" count them as right.\n\n'
		printf 'Configurations (`real_configs` in `bench/quality.sh`):'
		printf ' %s.\n\n' "$(for cf in "${real_configs[@]}"; do
		    printf '*%s* `%s`, ' "${cf%%|*}" "${cf#*|}"; done |
		    sed 's/, $//')"
		real_main_table
		printf '\n'
		kept_note real-main
		for lang in "${real_langs[@]}"; do
			[ -n "${REAL_LOG[$lang]:-}" ] || continue
			printf '### %s: recall by edit\n\n' "$lang"
			printf 'Each copy counts under every edit it received '
			printf '(1 to 3), so a column mixes each edit with '
			printf 'others; recall in percent.\n\n'
			real_by "$lang" edit
			printf '\nThe copies that received that edit alone:\n\n'
			real_by "$lang" alone
			printf '\n'
			kept_note "real-edit-$lang"
			printf '### %s: recall by length\n\n' "$lang"
			printf 'Copies by the length of their text in code '
			printf 'points; recall in percent.\n\n'
			real_by "$lang" len
			printf '\n'
			kept_note "real-len-$lang"
		done
		printf '### Shared boilerplate\n\n'
		printf 'The same sets made again with `--boilerplate KIND '
		printf -- '--boilerplate-rate %s`: each original, with ' \
		    "$bp_rate"
		printf 'probability %s, carries the block of one of three ' \
		    "$bp_rate"
		printf '"sites" of its language, and its copies carry it too '
		printf '(the originals, copies and edits are the same as '
		printf 'without blocks). *footer*: a disclaimer of several '
		printf 'sentences, each longer than most sentences of news, '
		printf 'appended. *script*: a leaked JavaScript and CSS ad '
		printf 'snippet of 500 to 600 characters, one line, put first '
		printf 'or last. Unrelated originals then share a long '
		printf 'identical passage: any match between two of them is a '
		printf 'false positive. "Recall of the same copies without '
		printf 'blocks" scores the copies of documents with a block on '
		printf 'the set without blocks.\n\n'
		for lang in "${real_langs[@]}"; do
			for kind in "${bp_kinds[@]}"; do
				[ -n "${REAL_LOG[$lang-$kind]:-}" ] || continue
				printf -- '- **%s-%s**: %s.\n' "$lang" "$kind" \
				    "${REAL_LOG[$lang-$kind]}"
			done
		done
		printf '\n'
		real_bp_table
		printf '\n'
		kept_note real-boilerplate
	fi

	cat "$tmp/touched.md"

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
		printf '\n### Exact repeats found\n\n'
		printf 'Every exact repeat should be found, in the group of the '
		printf 'first record with its text (recall 1.000). Each cell: '
		printf 'the share of the exact repeats judged duplicates, the '
		printf 'counts, and how many of them have a `similar_id` that '
		printf 'names the group of that first record.\n\n'
		printf '| corpus | exact repeats'
		printf ' | %s' "${exact_labels[@]}"
		printf ' |\n|---|---:'
		printf '|---:%.0s' "${exact_labels[@]}"
		printf '|\n'
		printf '%s\n' "${exact_rows[@]}"
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
			printf '| overall (rounded) | pairs'
			printf ' | %s' "${exact_labels[@]}"
			printf ' |\n|---:|---:'
			printf '|---:%.0s' "${exact_labels[@]}"
			printf '|\n'
			printf '%s\n' "${pair_rows[@]}"
			printf '\n'
		fi
	fi
	cat "$tmp/mostly.md"
	cat "$tmp/negatives.md"
	cat "$tmp/converted.md"
	printf '<!-- quality: findings -->\n'
	# The findings are written by hand below this line and kept.
	if [ -f "$out" ]; then
		sed -n '/^<!-- quality: findings -->$/,$p' "$out" | sed 1d
	fi
} >"$out.tmp"
mv "$out.tmp" "$out"
note "wrote $out"
