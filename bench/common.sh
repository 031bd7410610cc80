# bench/common.sh: what the benchmark scripts share. Sourced after the
# script sets prog (its name in messages) and defines usage.
# shellcheck shell=bash
# prog and usage are the sourcing script's.
# shellcheck disable=SC2154

die() {
	printf '%s: %s\n' "$prog" "$*" >&2
	exit 1
}

usage_error() {
	printf '%s: %s\n' "$prog" "$*" >&2
	usage >&2
	exit 2
}

note() {
	printf '%s: %s\n' "$prog" "$*" >&2
}

# The median of the numbers on standard input, one per line.
median() {
	sort -g | awk '{ v[NR] = $1 }
	    END {
		if (NR == 0) exit 1
		if (NR % 2) printf "%.4f\n", v[(NR + 1) / 2]
		else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2
	    }'
}

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

# KiB as MiB, one decimal.
mib() {
	awk -v k="$1" 'BEGIN { printf "%.1f MiB\n", k / 1024 }'
}

# A rebuild during a run must not mix two versions: copy each program named
# by the variables $2... into directory $1 when it is an ELF binary, and
# point the variable at the copy (a script, e.g. a libtool wrapper, is used
# in place).
freeze_programs() {
	local dir=$1 v
	shift
	for v in "$@"; do
		if [ "$(head -c 4 "${!v}" | od -An -c | tr -d ' ')" = \
		    '177ELF' ]; then
			cp -p "${!v}" "$dir/$(basename "${!v}")"
			printf -v "$v" '%s' "$dir/$(basename "${!v}")"
		fi
	done
}

# Sample the anonymous resident memory of process $1 (RssAnon in
# /proc/$1/status) every 10 ms until it exits, and print the largest sample
# in KiB and the number of samples taken, "KIB N" ("0 0" when it ended
# before the first).  The caller starts the process and waits for it.
rss_anon_sample() {
	local pid=$1 peak=0 n=0 s re='RssAnon:[[:space:]]+([0-9]+)'
	while :; do
		# In one read: the file changes between reads, so that the
		# builtin read, which reads ahead and seeks back, can miss
		# its line.
		s=$(cat "/proc/$pid/status" 2>/dev/null) || break
		# A process that has exited (a zombie) has no RssAnon line.
		[[ $s =~ $re ]] || break
		n=$((n + 1))
		[ "${BASH_REMATCH[1]}" -le "$peak" ] || peak=${BASH_REMATCH[1]}
		sleep 0.01
	done
	echo "$peak $n"
}

# Put the section in file $3, which begins with the line $1 and ends with
# the line $2, into the report $4 in place of the one between the same
# lines, or at its end when it has none.
replace_section() {
	local begin=$1 end=$2 section=$3 out=$4

	mkdir -p "$(dirname "$out")"
	if [ -f "$out" ] && grep -qF "$begin" "$out"; then
		awk -v b="$begin" -v e="$end" -v f="$section" '
		    $0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
		    $0 == e { skip = 0; next }
		    !skip' "$out" >"$out.tmp"
	else
		{
			[ ! -f "$out" ] || { cat "$out"; printf '\n'; }
			cat "$section"
		} >"$out.tmp"
	fi
	mv "$out.tmp" "$out"
}
