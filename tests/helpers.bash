# helpers.bash: what every tests/*.bats file loads.
#
# make check exports NSDEDUP (the program under test), TOP_SRCDIR and
# NSD_SHARED_DATA. Each test runs in its own scratch directory, and
# run_nsd keeps stdout ($output) and stderr ($stderr) apart so that both
# can be checked, along with $status.

bats_require_minimum_version 1.5.0

: "${NSDEDUP:?run the tests through make check}"
: "${TOP_SRCDIR:?run the tests through make check}"

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# Run nsdedup with stdout and stderr captured separately.
run_nsd() {
	run --separate-stderr "$NSDEDUP" "$@"
}

# Run nsdedup with the arguments $2..., its stdout to file $1; sets status
# and stderr. For outputs of megabytes, which run_nsd is slow to take in:
# bats's run holds them in a variable and splits them into lines.
nsd_to() {
	local out=$1

	shift
	status=0
	"$NSDEDUP" "$@" > "$out" 2> "$out.err" || status=$?
	stderr=$(cat "$out.err")
}

# Make index $1 with the normalization version $2 (its header field at
# offset 68 set back) and the records of file $3 in it; nsdedup's other
# arguments, such as -m, follow. Needs NSD_INDEX_DUMP.
index_at_version() {
	local db=$1 version=$2 records=$3

	shift 3
	"$NSDEDUP" "$@" --db "$db" </dev/null >/dev/null &&
	    "$NSD_INDEX_DUMP" --set-u32 68 "$version" "$db" &&
	    "$NSDEDUP" "$@" --db "$db" "$records" >/dev/null
}

# Make index new.nsd of the records of file $1; fail unless it records
# normalization version 3, the newest, and the record of file $2 is found
# there a copy of the record with id $3.
new_index_finds() {
	"$NSDEDUP" --db new.nsd "$1" >/dev/null
	run_nsd --db new.nsd --db-info
	[[ "$output" == *", normalization 3"* ]] || return 1
	run_nsd --db new.nsd --no-update "$2"
	[ "$status" -eq 0 ] && [ -z "$stderr" ] &&
	    [[ "$output" == *"\"similar_id\":\"$3\",\"is_dup\":true}" ]]
}

# Fail unless files $1 and $2 are the same, showing where they differ.
same_file() {
	if ! cmp -s "$1" "$2"; then
		echo "$1 is not $2:"
		diff "$2" "$1" | cut -c 1-200 | head -n 10
		return 1
	fi
}

# A long sentence (more than 30 characters) that nshash will fingerprint.
sentence() {
	printf 'Sentence number %s is long enough to be fingerprinted by nshash' "$1"
}

# A JSON record with id $1 and text $2 (given as JSON string content).
record() {
	printf '{"id":"%s","text":"%s"}\n' "$1" "$2"
}

# $2 sentences of made-up prose, different for every seed $1: 9 to 14
# words a sentence, each of 2 or 3 syllables of 20 (8400 words), drawn by
# awk's generator.
prose() {
	awk -v seed="$1" -v n="$2" 'BEGIN {
		split("ka to mi ra ne su lo ve di po sha gu re fa ni bo te " \
		    "xi lu ma", syl, " ")
		srand(seed)
		for (s = 0; s < n; s++) {
			k = 9 + int(rand() * 6)
			line = ""
			for (i = 0; i < k; i++) {
				word = ""
				for (j = 2 + int(rand() * 2); j > 0; j--)
					word = word syl[1 + int(rand() * 20)]
				line = line (i ? " " : "") word
			}
			printf "%s%s. ", toupper(substr(line, 1, 1)), substr(line, 2)
		}
	}'
}

# Background sentences that two stories of one affair repeat: longer than
# any sentence of prose, so nshash fingerprints them first.
# shellcheck disable=SC2034 # for the tests that load this file
BACKGROUND='The regional water authority was placed under special administration in March after auditors found that most of its reserves had been spent on consultants. Its former chairman denies every charge and says that the accounts were approved by the ministry each year. Three engineering firms that worked for the authority are being investigated by prosecutors in two provinces. The national audit office has asked for the complete contracts of the last eleven years, which the authority says were lost in a flood.'

# The ids and similar_ids of nsdedup's JSON output $1, one pair a line.
groups_of() {
	printf '%s\n' "$1" |
	    sed 's/.*"id":"\([^"]*\)".*"similar_id":"\([^"]*\)".*/\1 \2/'
}

# The JSONTestSuite parsing files in the shared data (tests skip without).
suite_dir() {
	printf '%s/jsontestsuite/test_parsing' "$NSD_SHARED_DATA"
}

# The temporary output files (.nsdedup-*) in the current directory, one
# name a line, sorted: what a run with -o may leave.
temp_files() {
	find . -maxdepth 1 -name '.nsdedup-*' -printf '%f\n' | sort
}

# Fail unless the last run_nsd was a usage error with the message $1: status
# 2, nothing on stdout, and on stderr the message, the synopsis and the
# pointer to --help.
# shellcheck disable=SC2154 # status, output and stderr: set by run_nsd
usage_error() {
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: $1
Usage: nsdedup [OPTION]... [FILE]...
Try 'nsdedup --help' for more information."
}

# Fail with a message showing what was expected and what came out.
expect_eq() {
	if [ "$1" != "$2" ]; then
		printf 'expected: %s\nactual:   %s\n' "$2" "$1" >&2
		return 1
	fi
}

# Shared by the tests of runs that fail or are killed (index-crash.bats,
# signals.bats).

# Copy the files of index $1 that exist (the table, PATH.ids, PATH.log,
# PATH.stage, PATH.next, PATH.filter, PATH.undo and PATH.times) into
# directory $2.
copy_index() {
	local f

	for f in "$1" "$1.ids" "$1.log" "$1.stage" "$1.next" "$1.filter" \
	    "$1.undo" "$1.times"; do
		[ ! -e "$f" ] || cp "$f" "$2/"
	done
}

# Remove the files of index $1 (but its lock), and what a run cut short left.
remove_index() {
	rm -f "$1" "$1.ids" "$1.log" "$1.stage" "$1.next" "$1.new" \
	    "$1.stage.new" "$1.filter" "$1.filter.new" "$1.undo" "$1.times" \
	    "$1.times.new"
}

# Fail unless dump file $1 is the same as $2, showing how they differ.
same_dump() {
	if ! cmp -s "$1" "$2"; then
		echo "the index is not as in $2:"
		diff "$2" "$1" | head -n 20
		return 1
	fi
}

# Skip the test unless configure found the optional dependency $1 (named
# as in its option --without-NAME), saying why. make check passes each
# one's path, empty when it was missing or turned off; the README lists
# them.
need() {
	local path package

	case $1 in
	fiu) path=${FIU_RUN-} package=fiu-utils ;;
	fish) path=${FISH-} package=fish ;;
	jq) path=${JQ-} package=jq ;;
	mandoc) path=${MANDOC-} package=mandoc ;;
	python3) path=${PYTHON3-} package=python3 ;;
	redis) path=${NSD_HIREDIS-} package=libhiredis-dev ;;
	redis-server) path=${REDIS_SERVER-} package=redis-server ;;
	valgrind) path=${VALGRIND-} package=valgrind ;;
	zsh) path=${ZSH-} package=zsh ;;
	*) echo "need: no optional dependency named $1"; return 1 ;;
	esac
	[ -n "$path" ] || skip "$1 not found by configure (Debian package $package; or configured --without-$1)"
}

# Skip when nsdedup is built with a sanitizer, saying why ($1).
no_sanitizer() {
	if ldd "$NSDEDUP" 2> /dev/null | grep -q -e libasan -e libubsan -e libtsan; then
		skip "nsdedup is built with a sanitizer, $1"
	fi
}

# Skip unless valgrind can check nsdedup: it cannot run a program built
# with a sanitizer (which checks itself).
need_memcheck() {
	need valgrind
	no_sanitizer "which checks itself"
}

# Fail unless process $1 has the file $2 open, within 60 seconds (a loaded
# machine, or a sanitizer build, can take that long to start a run).
wait_open() {
	local f

	for _ in $(seq 1200); do
		for f in /proc/"$1"/fd/*; do
			[ "$(readlink "$f")" = "$2" ] && return 0
		done
		sleep 0.05
	done
	echo "process $1 never opened $2"
	return 1
}

# Wait (60 seconds at most) until a run over the index db has begun: its
# header is no longer the one kept in pre/db.
wait_begun() {
	for _ in $(seq 1200); do
		cmp -s -n 8192 db pre/db || return 0
		sleep 0.05
	done
	echo "run 2 never began"
	return 1
}

# Wait (60 seconds at most) until file $1 has $2 lines: a run writes out
# what it has read, and flushes its output, when its input stalls.
wait_lines() {
	for _ in $(seq 1200); do
		[ "$(wc -l < "$1")" -ge "$2" ] && return 0
		sleep 0.05
	done
	echo "$1 never had $2 lines, only $(wc -l < "$1")"
	return 1
}

# Make the FIFO feed, the input of process $1, and open it for writing as
# fd 8 once that process has opened it: its input is then what is written
# to fd 8, and closing fd 8 ends it.
feed_open() {
	# Read-write, so that this open never waits.
	exec 7<> feed
	wait_open "$1" "$PWD/feed"
	exec 8> feed
	exec 7<&-
}

# What fiu-run runs nsdedup through. fiu-run preloads libfiu, which wraps
# malloc among others; a program built with AddressSanitizer needs its
# runtime loaded before that, so the runtime is put first in LD_PRELOAD
# (sh execs, so nsdedup keeps the pid fiu-ctrl is given), and LeakSanitizer
# passes over the string that libfiu's preload library never frees.
# shellcheck disable=SC2034  # used by the files that load this one
fiu_nsdedup=("$NSDEDUP")
asan_lib=$(ldd "$NSDEDUP" 2> /dev/null | awk '$1 ~ /^libasan/ { print $3 }')
if [ -n "$asan_lib" ]; then
	printf 'leak:fiu_run_preload.so\n' > "$BATS_FILE_TMPDIR/fiu.supp"
	lsan="suppressions=$BATS_FILE_TMPDIR/fiu.supp:print_suppressions=0"
	# shellcheck disable=SC2016,SC2034  # $0 and $@ are the child's
	fiu_nsdedup=(env "LSAN_OPTIONS=$lsan"
	    sh -c 'LD_PRELOAD="$0 $LD_PRELOAD" exec "$@"' "$asan_lib"
	    "$NSDEDUP")
fi

# $1 with the confirmation's figures taken out of --explain's evidence
# (tests/confirm.bats checks them).
unconfirmed() {
	printf '%s\n' "$1" | sed 's/,"confirm":{[^}]*}//g'
}

# run_nsd, the confirmation's figures taken out of the output: for the
# tests of a method's own evidence.
# shellcheck disable=SC2034 # lines: bats's, for the test to read
run_nsd_evidence() {
	run_nsd "$@"
	output=$(unconfirmed "$output")
	lines=()
	[ -z "$output" ] || mapfile -t lines <<< "$output"
}
