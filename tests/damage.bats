#!/usr/bin/env bats
# Damage to an index: bytes and bits changed at random in every file of
# it, and header fields given values that no run writes, behind a valid
# checksum. A run over such an index answers exactly as over the intact
# one, or refuses it with status 7 and says so; it never answers
# otherwise. --db-verify finds what the runs refuse, and more.
#
# The index is made in setup_file by twelve runs of 50 generated records:
# a table, a stage, a log, and PATH.next a growth under way, so that every
# file is there (the key filter, PATH.filter, too). A read-only run over
# the 600 records, and a run that writes 50 new records before them, are
# what each damaged copy must answer, the evidence of each match included
# (--explain), so that an entry lost to damage shows even where a record's
# other fingerprints would still match.

load helpers

: "${NSD_INDEX_DUMP:?run the tests through make check}"
: "${GENCORPUS:?run the tests through make check}"

FILES="x x.ids x.log x.stage x.next"

setup_file() {
	local i

	cd "$BATS_FILE_TMPDIR" || return 1
	"$GENCORPUS" --records 650 --seed 9 > all.jsonl
	head -n 600 all.jsonl > probe.jsonl
	tail -n 50 all.jsonl > more.jsonl
	mkdir good
	for i in $(seq 0 11); do
		sed -n "$((i * 50 + 1)),$((i * 50 + 50))p" probe.jsonl |
		    "$NSDEDUP" --db good/x > /dev/null || return 1
	done
	"$NSDEDUP" --db good/x --no-update --explain probe.jsonl > read.want ||
	    return 1
	mkdir w && cp good/x* w/ && "$NSDEDUP" --db w/x --explain more.jsonl \
	    probe.jsonl > write.want || return 1
	rm -r w
	# Where each file is not zero: the bytes a change most often matters
	# in, half of those changed.
	for i in $FILES; do
		od -An -v -t u1 -w1 "good/$i" |
		    awk '$1 != 0 { print NR - 1 }' > "good/$i.nonzero"
	done
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# A fresh copy of the intact index in ./$1.
fresh() {
	rm -rf "$1" && mkdir "$1" && cp "$BATS_FILE_TMPDIR"/good/x* "$1"/ &&
	    rm -f "$1"/*.nonzero
}

# Set byte $2 of file $1 to the value $3.
set_byte() {
	# shellcheck disable=SC2059
	printf "\\$(printf %03o "$3")" |
	    dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# How nsdedup answers over the damaged index ./$1/x, read-only ($2 read)
# or writing ($2 write): "same", "refused", or what went wrong. A refusal
# is status 7 and a message that names the index; what reached standard
# output before it (records are written as they are decided) must be what
# the intact index answers.
answer() {
	local f="$BATS_FILE_TMPDIR" st=0

	if [ "$2" = read ]; then
		"$NSDEDUP" --db "$1/x" --no-update --explain "$f/probe.jsonl" \
		    > out 2> err || st=$?
	else
		"$NSDEDUP" --db "$1/x" --explain "$f/more.jsonl" \
		    "$f/probe.jsonl" > out 2> err || st=$?
	fi
	if [ "$st" -eq 0 ] && [ ! -s err ] && cmp -s out "$f/$2.want"; then
		echo same
	elif [ "$st" -eq 7 ] && [[ "$(head -c 20 err)" == "nsdedup: $1/x"* ]] &&
	    head -c "$(stat -c %s out)" "$f/$2.want" | cmp -s - out; then
		echo refused
	else
		echo "$2: status $st: $(head -c 200 err | tr '\n' '|')"
	fi
}

@test "a few hundred random changes of a byte or a bit, in every file: refused or answered right" {
	local n=0 refused=0 same=0 bad="" file off old new line
	local -a plan

	# The plan: 320 changes, 64 a file; half of them at a byte that is
	# not zero, half anywhere; half a byte set to another value, half a
	# bit flipped. awk's random numbers, seeded, make it the same every
	# time.
	mapfile -t plan < <(for file in $FILES; do
		awk -v file="$file" -v size="$(stat -c %s \
		    "$BATS_FILE_TMPDIR/good/$file")" -v seed="${#file}" '
		    { nz[n++] = $1 }
		    END {
			srand(seed)
			for (t = 0; t < 64; t++) {
				if (t % 2)
					off = nz[int(rand() * n)]
				else
					off = int(rand() * size)
				if (int(t / 2) % 2)
					print file, off, "bit", int(rand() * 8)
				else
					print file, off, "byte",
					    1 + int(rand() * 255)
			}
		    }' "$BATS_FILE_TMPDIR/good/$file.nonzero"
	done)
	[ "${#plan[@]}" -eq 320 ]
	fresh d
	for line in "${plan[@]}"; do
		read -r file off kind arg <<< "$line"
		old=$(od -An -t u1 -j "$off" -N 1 "d/$file" | tr -d ' ')
		if [ "$kind" = bit ]; then
			new=$((old ^ 1 << arg))
		else
			new=$((old ^ arg))
		fi
		set_byte "d/$file" "$off" "$new"
		result=$(answer d read)
		# A run that writes, over a copy: always when the read-only run
		# saw nothing wrong, and every fourth change besides.
		if [ "$result" = same ] || [ $((n % 4)) -eq 0 ]; then
			rm -rf w && cp -r d w
			result="$result $(answer w write)"
		fi
		set_byte "d/$file" "$off" "$old"
		case $result in
		same|"same same")
			same=$((same + 1)) ;;
		refused|"refused refused"|"refused same"|"same refused")
			refused=$((refused + 1)) ;;
		*)
			bad="$bad$file byte $off: $old -> $new: $result"$'\n' ;;
		esac
		n=$((n + 1))
	done
	echo "# $n changes: $refused refused, $same answered as intact" >&3
	if [ -n "$bad" ]; then
		printf 'changed answers:\n%s' "$bad"
		return 1
	fi
	# Most changes matter, and are refused.
	[ "$refused" -gt "$same" ]
}

@test "changes of a byte or a bit in the key filter: answered right, never refused" {
	local n=0 bad="" off old new size result

	fresh d
	size=$(stat -c %s d/x.filter)
	[ "$size" -gt 4096 ]
	# 48 changes, seeded as above: a third in the header, the rest in the
	# blocks, where a bit set wrongly costs a lookup and one cleared would
	# lose a key. The filter's checksums see them all: runs go without
	# it, or make it anew.
	while read -r off new; do
		old=$(od -An -t u1 -j "$off" -N 1 d/x.filter | tr -d ' ')
		[ "$new" -ne "$old" ] || continue
		set_byte d/x.filter "$off" "$new"
		result="$(answer d read)"
		rm -rf w && cp -r d w
		result="$result $(answer w write)"
		set_byte d/x.filter "$off" "$old"
		[ "$result" = "same same" ] ||
		    bad="${bad}x.filter byte $off: $old -> $new: $result"$'\n'
		n=$((n + 1))
	done < <(awk -v size="$size" 'BEGIN {
		srand(7)
		for (t = 0; t < 48; t++) {
			if (t % 3)
				off = 4096 + int(rand() * (size - 4096))
			else
				off = int(rand() * 96)
			print off, int(rand() * 256)
		}
	    }')
	echo "# $n changes of the key filter, all answered as intact" >&3
	if [ -n "$bad" ]; then
		printf 'changed answers:\n%s' "$bad"
		return 1
	fi
	[ "$n" -gt 40 ]
}

# The header fields, as "offset width name" (nsdedup-index(5), Header
# copies), but the magic and the checksum.
HEADER_FIELDS="8 4 version
12 4 size
16 8 byte_order
24 8 file_id
32 8 sequence
56 4 sentences
60 4 min_length
64 4 compat
68 4 norm_version
72 8 seed
80 4 distance
84 4 ntables
88 8 mask0
96 8 mask1
216 8 nslots
224 4 slot_size
228 4 max_load
232 8 committed_gen
240 8 pending_gen
248 8 records
256 8 groups
264 8 entries
272 8 ids_length
280 8 created
288 8 committed_at
296 4 ngram
300 4 shingle
304 4 min_features
308 4 next_shift
312 8 log_records
320 8 stage_seq
328 8 sweep_cursor
336 8 sweep_done
344 8 grow_done
352 8 next_entries
360 4 bins
364 4 bands
368 4 rows
372 4 threshold
376 8 log_sum
384 8 last_group
392 4 sketch_bytes
396 4 ttl
400 8 ids_start"

@test "header fields given values no run writes, with a valid checksum: refused or answered right" {
	local off width name cur value result bad="" n=0 refused=0 same=0

	fresh d
	while read -r off width name; do
		cur=$(od -An -t "u$width" -j "$off" -N "$width" d/x | tr -d ' ')
		for value in 0 1 $((cur - 1)) $((cur + 1)) $((cur * 2 + 3)) \
		    $((cur + (-1 - cur) / 2)) -1; do
			[ "$width" -eq 8 ] || value=$((value & 0xffffffff))
			[ "$value" != "$cur" ] || continue
			# An index of an older normalization that nsdedup still
			# reads is read with it: a header that names one is
			# believed (nsdedup-index(5), Checks).
			if [ "$name" = norm_version ] && [ "$value" -ge 1 ] &&
			    [ "$value" -lt "$cur" ]; then
				continue
			fi
			# So is a window (--ttl) that a run may keep, and the
			# groups it forgets.
			if [ "$name" = ttl ] && [ "$value" -ge 1 ] &&
			    [ "$value" -le $((3650 * 86400)) ]; then
				continue
			fi
			fresh d
			"$NSD_INDEX_DUMP" --set-u$((width * 8)) "$off" "$value" d/x
			result=$(answer d read)
			if [ "$result" = same ]; then
				rm -rf w && cp -r d w
				result="$result $(answer w write)"
			fi
			case $result in
			"same same")
				same=$((same + 1)) ;;
			refused|"same refused")
				refused=$((refused + 1)) ;;
			*)
				bad="$bad$name $cur -> $value: $result"$'\n' ;;
			esac
			n=$((n + 1))
		done
	done <<< "$HEADER_FIELDS"
	echo "# $n forged headers: $refused refused, $same answered as intact" >&3
	if [ -n "$bad" ]; then
		printf 'changed answers:\n%s' "$bad"
		return 1
	fi
}
