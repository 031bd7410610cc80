#!/usr/bin/env bash
#
# bench/profile.sh: where an nsdedup run spends its CPU time, by stage.
#
#     bench/profile.sh [--freq HZ] [--src DIR] -- NSDEDUP-ARGS...
#
# Runs $NSDEDUP (default ./src/nsdedup) with the arguments given, its
# output to /dev/null, under `perf record -e cpu-clock` with DWARF call
# chains, and prints one Markdown table row per stage:
#
#     | stage | CPU s | share |
#
# A sample belongs to the stage of the innermost function on its call chain
# that has one (inlined functions count, as perf reports them): a memchr()
# called by the reader is framing, the same memchr() called by the writer
# is output. The stages are those of the pipeline (pipeline.h) with the
# fingerprinting parts apart:
#
#     frame      reading and cutting lines (reader.c), blank lines, format
#     scan       validating JSON and finding its fields, splitting TSV rows
#     decode     decoding the text fields (JSON escapes, TSV escapes)
#     normalize  normalization and markup tags (text.c)
#     split      nshash: sentences (PCRE2, its JIT code), white space
#                dropped, letters counted; simhash and minhash: cutting
#                features (cut_voting, cut_binning)
#     hash       choosing and hashing sentences, SimHash votes (XXH3),
#                MinHash bins, signatures, band keys and the comparing
#                of signatures (minhash.c)
#     index      lookups and claims, groups, the file index's log
#     write      annotating and writing records
#     wait       threads waiting for each other (-j)
#     other      start-up, options, exit, what has no stage
#
# A function's stage comes from the file that defines it (src/*.c, read
# from --src, default the source tree of this script), with the exceptions
# listed below. CPU s is samples / HZ: cpu-clock samples each thread's CPU
# time, so with -j the stages add up to the CPU time of every thread.
#
# Needs perf (Debian: linux-perf) with permission to sample the program
# (perf_event_paranoid <= 2 for one's own processes); exits 3 when it cannot
# sample, so that callers can say the profile was not taken.

set -euo pipefail

prog=bench/profile.sh
usage() {
	echo "usage: $prog [--freq HZ] [--src DIR] -- NSDEDUP-ARGS..."
}
# shellcheck source=bench/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

freq=999
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../src" && pwd)
while [ $# -gt 0 ]; do
	case $1 in
	--freq) freq=${2:?}; shift 2 ;;
	--src) src=${2:?}; shift 2 ;;
	--) shift; break ;;
	-h|--help) usage; exit 0 ;;
	*) usage_error "unknown argument '$1'" ;;
	esac
done
[ $# -gt 0 ] || usage_error "no arguments for nsdedup"
NSDEDUP=${NSDEDUP:-./src/nsdedup}
command -v perf > /dev/null 2>&1 || { note "perf not found"; exit 3; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nsdedup-profile.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if ! perf record -q -e cpu-clock -F "$freq" --call-graph dwarf,16384 \
    -o "$tmp/perf.data" -- "$NSDEDUP" "$@" > /dev/null 2> "$tmp/err"; then
	if grep -q -i -e 'perf_event' -e 'permission' "$tmp/err"; then
		note "perf cannot sample here: $(head -n 1 "$tmp/err")"
		exit 3
	fi
	tail -n 5 "$tmp/err" >&2
	die "nsdedup $* failed under perf"
fi

# Function -> stage: the file that defines it, then the exceptions.
{
	for f in "$src"/*.c; do
		base=$(basename "$f" .c)
		case $base in
		reader) stage="frame" ;;
		json|tsv) stage="scan" ;;
		text) stage="split" ;;
		nshash|simhash|minhash) stage="hash" ;;
		index_*) stage="index" ;;
		writer) stage="write" ;;
		main|options) stage="other" ;;
		*) stage= ;;	# pipeline, util, utf8: by function, or the caller's
		esac
		[ -z "$stage" ] ||
			sed -n 's/^\([a-z_][a-z0-9_]*\)(.*/\1/p' "$f" |
			    sed "s/\$/ $stage/"
	done
	cat <<'EOF'
stage_frame frame
is_blank frame
detect_format frame
tsv_setup frame
tsv_column frame
scan_json scan
scan_tsv scan
stage_scan scan
add_fps scan
add_spans scan
set_bad scan
tsv_check_bytes scan
nsd_json_decode_string decode
decode_u_escape decode
nsd_tsv_decode decode
nsd_text_normalize normalize
copy_ordinary normalize
space_at normalize
seq_bytes normalize
nsd_text_strip_tags normalize
tag_length normalize
cut split
cut_voting split
cut_binning split
shingle_add split
lower_copy split
ascii_word_end split
run_ends split
kind_at split
decode split
stage_decide index
lookup_nshash index
lookup_minhash index
scan_minhash hash
is_common index
count_presenter index
open_group index
stage_write write
write_judged write
report_bad write
nsd_json_encode_string -
EOF
} > "$tmp/stages"

perf script -i "$tmp/perf.data" -F ip,sym,dso 2> /dev/null |
    awk -v freq="$freq" -v jit="split" '
	FILENAME == ARGV[1] { st[$1] = $2; next }
	# One sample: its frames, innermost first, then a blank line.
	function flush(   s) {
		if (n == 0)
			return
		s = ""
		for (i = 1; i <= n && s == ""; i++)
			if (sym[i] in st && st[sym[i]] != "-")
				s = st[sym[i]]
		if (s == "") {
			# PCRE2 and its JIT code (no symbols, no unwinding).
			if (dso[1] ~ /perf-[0-9]+\.map|libpcre2/ ||
			    (sym[1] == "[unknown]" && dso[1] !~ /kernel/))
				s = jit
			else if (sym[1] ~ /^XXH/)
				s = "hash"
			else if (chain ~ /pthread_cond|futex|sem_/)
				s = "wait"
			else
				s = "other"
		}
		count[s]++
		total++
		n = 0
		chain = ""
	}
	/^[ \t]*$/ { flush(); next }
	{
		n++
		sym[n] = $2
		dso[n] = $NF
		chain = chain " " $2
	}
	END {
		flush()
		split("frame scan decode normalize split hash index write wait other", order, " ")
		for (k = 1; k <= 10; k++) {
			s = order[k]
			printf "| %s | %.3f | %.1f%% |\n", s, count[s] / freq,
			    total ? 100 * count[s] / total : 0
		}
		printf "| all | %.3f | 100.0%% |\n", total / freq
	}' "$tmp/stages" -
