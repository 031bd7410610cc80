#!/usr/bin/env bats
# Hostile input, one test per entry of the catalogue. For each: no crash
# (a documented status, never a signal), a FILE:LINE message for every bad
# record, the bad record passed through byte for byte under the default
# policy, and the good records around it annotated (or, with --drop-dups,
# kept or dropped) as usual. badinput.bats holds the finer checks of each
# kind of bad record; jsontestsuite.bats wraps the one-line suite files.

load helpers

# A JSON record with id $1 and the text sentence $2.
good() {
	printf '{"id":%s,"text":"%s"}\n' "$1" "$(sentence "$2")"
}

# The same record annotated with group $3 and duplicate flag $4.
annotated() {
	printf '{"id":%s,"text":"%s","similar_id":%s,"is_dup":%s}\n' \
	    "$1" "$(sentence "$2")" "$3" "$4"
}

# What a file of bad records comes out as under --on-error=pass: every
# line that is not blank (in JSON: spaces, tabs, carriage returns), with a
# newline given to the last one, without a byte order mark at the start.
passed_through() {
	perl -ne 's/^\xef\xbb\xbf// if $. == 1; next if /^[ \t\r]*\n?$/;
	    $_ .= "\n" unless /\n$/; print' "$1"
}

# The bad line in file $1 (its bytes, no newline) between an original and
# its copy: in both modes, status 1, the one message $2 for line 2, the bad
# line untouched and the good ones annotated or dropped as usual.
check_between() {
	{ good 1 1; cat "$1"; printf '\n'; good 2 1; } > in.jsonl
	{ annotated 1 1 1 false; cat "$1"; printf '\n'; annotated 2 1 1 true; } \
	    > want-annotate.jsonl
	{ good 1 1; cat "$1"; printf '\n'; } > want-drop-dups.jsonl
	for mode in annotate drop-dups; do
		run --separate-stderr bash -c \
		    '"$NSDEDUP" --"$1" in.jsonl > out.jsonl' bash "$mode"
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		expect_eq "$stderr" "nsdedup: in.jsonl:2: $2"
		cmp out.jsonl "want-$mode.jsonl"
	done
}

@test "every JSONTestSuite file, multi-line and NUL ones too, read whole" {
	[ -d "$(suite_dir)" ] || skip "JSONTestSuite not found in NSD_SHARED_DATA"
	# One perl script runs nsdedup on every file: a shell loop would start
	# ten processes a file. It prints what goes wrong.
	run --separate-stderr perl -e '
	sub slurp { local $/; open my $h, "<", $_[0] or die; <$h> }
	for my $f (glob "$ARGV[0]/*.json") {
		# What passes through: the lines that are not blank, each
		# with a newline, without a byte order mark at the start.
		my $raw = slurp($f);
		(my $in = $raw) =~ s/^\xef\xbb\xbf//;
		my @want = grep { !/^[ \t\r]*\n?$/ } split /(?<=\n)/, $in;
		$_ .= "\n" for grep { !/\n$/ } @want;
		# No suite file has a "text" member: every line is bad. A
		# record with one after them keeps "text" from being taken
		# for a mistaken name.
		my $n = @want;
		open my $h, ">", "in.json" or die;
		print $h $raw, $raw =~ /\n\z|^\z/ ? "" : "\n", "{\"text\":\"x\"}\n";
		close $h;
		my %last = ("annotate" =>
		    "{\"text\":\"x\",\"similar_id\":1,\"is_dup\":false}\n",
		    "drop-dups" => "{\"text\":\"x\"}\n");
		for my $mode ("annotate", "drop-dups") {
			system("sh", "-c",
			    "\"\$NSDEDUP\" --$mode in.json > out 2> err");
			my $st = $? & 127 ? 128 + ($? & 127) : $? >> 8;
			print "$f $mode: status $st\n" if $st != ($n ? 1 : 0);
			print "$f $mode: output differs\n"
			    if slurp("out") ne join "", @want, $last{$mode};
			my @err = split /\n/, slurp("err");
			print "$f $mode: messages: @err\n"
			    if @err != $n || grep { !/^nsdedup: in\.json:\d+: / } @err;
		}
	}' "$(suite_dir)"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
}

@test "lines of 0 bytes are blank: skipped, counted, never records" {
	{ good 1 1; printf '\n\r\n\n'; good 2 1; printf '\n'; } > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(annotated 1 1 1 false; annotated 2 1 1 true)"
	run_nsd --stats in.jsonl
	[[ "$stderr" == *"nsdedup: blank       4"* ]]
	printf '\n\n' > blank.jsonl
	: > empty.jsonl
	run_nsd blank.jsonl empty.jsonl
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
}

@test "lines of 1 byte, every byte value: blank or bad, each passed through" {
	# Bytes 0 to 255 but the newline, one a line, between two records.
	perl -e 'for (0 .. 255) { print chr($_), "\n" unless $_ == 10 }' \
	    > bytes.txt
	{ good 1 1; cat bytes.txt; good 2 1; } > in.jsonl
	# Space, tab and carriage return make blank lines; the rest are bad.
	{ annotated 1 1 1 false; perl -ne 'print unless /^[ \t\r]\n/' bytes.txt
	    annotated 2 1 1 true; } > want.jsonl
	run --separate-stderr bash -c '"$NSDEDUP" in.jsonl > out.jsonl'
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	cmp out.jsonl want.jsonl
	[ "${#stderr_lines[@]}" -eq 11 ]
	expect_eq "${stderr_lines[0]}" "nsdedup: in.jsonl:2: NUL byte at byte 1"
	expect_eq "${stderr_lines[1]}" \
	    "nsdedup: in.jsonl:3: invalid JSON: expected a JSON object at byte 1"
	expect_eq "${stderr_lines[10]}" "nsdedup: 252 bad records (10 shown)"
	run --separate-stderr bash -c \
	    '"$NSDEDUP" --drop-dups --stats -q in.jsonl > out.jsonl'
	[ "$status" -eq 1 ]
	[ "$(wc -l < out.jsonl)" -eq 253 ]
	[[ "$stderr" == *"nsdedup: bad         252"* ]]
	[[ "$stderr" == *"nsdedup: blank       3"* ]]
	# A file of one byte and no newline is one bad record, given a newline.
	printf 'x' > one.jsonl
	run_nsd one.jsonl
	[ "$status" -eq 1 ]
	[ "$output" = x ]
	expect_eq "$stderr" \
	    "nsdedup: one.jsonl:1: invalid JSON: expected a JSON object at byte 1"
}

@test "a line of 100 MiB is over the default --max-line, passed through whole" {
	huge() {
		printf '{"id":9,"text":"'
		head -c 104857600 /dev/zero | tr '\0' a
		printf '"}\r\n'
	}
	{ good 1 1; huge; good 2 1; } > in.jsonl
	run --separate-stderr bash -c '"$NSDEDUP" in.jsonl > out.jsonl'
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	expect_eq "$stderr" \
	    "nsdedup: in.jsonl:2: line longer than 16777216 bytes (--max-line)"
	{ annotated 1 1 1 false; huge; annotated 2 1 1 true; } | cmp - out.jsonl
	run --separate-stderr bash -c '"$NSDEDUP" -d in.jsonl > out.jsonl'
	[ "$status" -eq 1 ]
	head -n 2 in.jsonl | cmp - out.jsonl
}

@test "an over-long first line still decides the format" {
	# Found by this catalogue: the line after an over-long first line was
	# taken as the TSV header, or decided the format.
	{ printf 'id\ttext\t'; head -c 3145728 /dev/zero | tr '\0' c
	    printf '\n1\t%s\t\n' "$(sentence 1)"; } > in.tsv
	run_nsd --max-line=64K in.tsv
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" \
	    "nsdedup: in.tsv:1: bad header: line longer than 65536 bytes (--max-line)"
	# Without a header the long row is only a bad record.
	run --separate-stderr bash -c \
	    '"$NSDEDUP" --max-line=64K -H -k 2 in.tsv > out.tsv'
	[ "$status" -eq 1 ]
	expect_eq "$stderr" \
	    "nsdedup: in.tsv:1: line longer than 65536 bytes (--max-line)"
	{ head -n 1 in.tsv; printf '1\t%s\t\t1\tfalse\n' "$(sentence 1)"; } |
	    cmp - out.tsv
	# An over-long JSON record first: the next line is JSON, not a header.
	{ printf '{"text":"%s"}\n' "$(head -c 100 /dev/zero | tr '\0' j)"
	    printf 'id\ttext\n'; good 1 1; } > in.jsonl
	run_nsd --max-line=100 in.jsonl
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[1]}" = "$(printf 'id\ttext')" ]
	expect_eq "${lines[2]}" "$(annotated 1 1 1 false)"
	expect_eq "${stderr_lines[1]}" \
	    "nsdedup: in.jsonl:2: invalid JSON: expected a JSON object at byte 1"
}

@test "nesting 100,000 deep: accepted beside the text, bad as the text" {
	# badinput.bats has 100,000 arrays beside the text; here objects.
	local open close
	open=$(yes '{"a":' | head -n 100000 | tr -d '\n')
	close=$(head -c 100000 /dev/zero | tr '\0' '}')
	{ good 1 1; printf '{"v":%s1%s,"id":2,"text":"%s"}\n' "$open" "$close" \
	    "$(sentence 1)"; } > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[1]}" = "$(sed -n '2s/}$/,"similar_id":1,"is_dup":true}/p' in.jsonl)" ]
	printf '{"id":3,"text":%s1%s}' "$open" "$close" > bad.txt
	check_between bad.txt 'text field "text" is an object, not a string'
	# Unclosed: the scanner runs to the end of the line.
	printf '{"id":3,"text":"x","v":%s' "$open" > bad.txt
	check_between bad.txt "invalid JSON: unexpected end of line at byte $(($(wc -c < bad.txt) + 1))"
}

@test "1,000,000 members in one object, and as many annotation members" {
	awk -v s="$(sentence 1)" 'BEGIN { printf "{"
	    for (i = 1; i <= 1000000; i++) printf "\"%d\":0,", i
	    printf "\"id\":1,\"text\":\"%s\"}\n", s }' > in.jsonl
	good 2 1 >> in.jsonl
	run --separate-stderr bash -c '"$NSDEDUP" in.jsonl > out.jsonl'
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	{ sed -n '1s/}$/,"similar_id":1,"is_dup":false}/p' in.jsonl
	    annotated 2 1 1 true; } | cmp - out.jsonl
	run --separate-stderr bash -c '"$NSDEDUP" -d in.jsonl > out.jsonl'
	[ "$status" -eq 0 ]
	head -n 1 in.jsonl | cmp - out.jsonl
	# Every one of a million similar_id members has its value replaced.
	awk -v s="$(sentence 1)" 'BEGIN { printf "{"
	    for (i = 1; i <= 1000000; i++) printf "\"similar_id\":%d,", i % 10
	    printf "\"id\":7,\"text\":\"%s\"}\n", s }' > in.jsonl
	run --separate-stderr bash -c '"$NSDEDUP" in.jsonl > out.jsonl'
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	sed 's/"similar_id":[0-9]/"similar_id":7/g; s/}$/,"is_dup":false}/' \
	    in.jsonl | cmp - out.jsonl
}

@test "duplicate names: the last text and id are used, every annotation replaced" {
	# As the man page says under Implementation-defined JSON.
	{
		printf '{"id":1,"text":"%s","text":"%s"}\n' "$(sentence 2)" \
		    "$(sentence 1)"
		good 2 1
		good 3 2
		printf '{"id":"a","id":"b","text":"%s"}\n' "$(sentence 4)"
		good 5 4
		printf '{"id":6,"text":null,"text":"%s"}\n' "$(sentence 6)"
		printf '{"similar_id":0,"id":7,"similar_id":"z","is_dup":3,"text":"%s","is_dup":4}\n' \
		    "$(sentence 7)"
	} > in.jsonl
	{
		printf '{"id":1,"text":"%s","text":"%s","similar_id":1,"is_dup":false}\n' \
		    "$(sentence 2)" "$(sentence 1)"
		annotated 2 1 1 true
		annotated 3 2 3 false
		printf '{"id":"a","id":"b","text":"%s","similar_id":"b","is_dup":false}\n' \
		    "$(sentence 4)"
		annotated 5 4 '"b"' true
		printf '{"id":6,"text":null,"text":"%s","similar_id":6,"is_dup":false}\n' \
		    "$(sentence 6)"
		printf '{"similar_id":7,"id":7,"similar_id":7,"is_dup":false,"text":"%s","is_dup":false}\n' \
		    "$(sentence 7)"
	} > want.jsonl
	run --separate-stderr bash -c '"$NSDEDUP" in.jsonl > out.jsonl'
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	cmp out.jsonl want.jsonl
	# The last text is not a string: the record is bad.
	printf '{"id":8,"text":"%s","text":null}' "$(sentence 8)" > bad.txt
	check_between bad.txt 'text field "text" is null, not a string'
}

@test "a text field that is a number, null, true, false, an array, an object" {
	# badinput.bats checks the messages of four of them; here all, in both
	# modes.
	local v
	for v in 42 -0 1e999 null true false '["a"]' '{"a":1}' '[]' '{}'; do
		printf '{"id":3,"text":%s}' "$v" > bad.txt
		case $v in
		null|true|false) what=$v ;;
		\[*) what="an array" ;;
		\{*) what="an object" ;;
		*) what="a number" ;;
		esac
		check_between bad.txt "text field \"text\" is $what, not a string"
	done
}

@test "invalid and overlong UTF-8 anywhere in a record makes it bad" {
	local b
	for b in 'c0 80' 'c1 bf' 'e0 80 80' 'f0 80 80 80' 'f8 88 80 80 80' \
	    'fc 84 80 80 80 80' 'fe' 'ff' 'ed a0 80' 'ed bf bf' 'f4 90 80 80' \
	    'f5 80 80 80' '80' 'bf' 'c2' 'e2 82' 'f0 9f 98'; do
		# shellcheck disable=SC2059,SC2086 # each byte of $b as \xHH
		printf "{\"id\":9,\"text\":\"ab$(printf '\\x%s' $b)cd\"}" > bad.txt
		check_between bad.txt "invalid UTF-8 at byte 19"
	done
	# In another member, in a name, after the object.
	printf '{"id":"\xff","text":"%s"}' "$(sentence 3)" > bad.txt
	check_between bad.txt "invalid UTF-8 at byte 8"
	printf '{"\xed\xa0\x80":1,"text":"%s"}' "$(sentence 3)" > bad.txt
	check_between bad.txt "invalid UTF-8 at byte 3"
	printf '{"id":9,"text":"ab"}\xc3' > bad.txt
	check_between bad.txt "invalid UTF-8 at byte 21"
}

@test "lone and reversed surrogates in \\u escapes are read as U+FFFD" {
	# As the man page says under Implementation-defined JSON: each unpaired
	# surrogate escape is one U+FFFD, so the whole text equals the one
	# written with \ufffd (--explain says "exact"), and a pair is a pair.
	local esc ref
	while read -r esc ref; do
		printf '{"id":1,"text":"%s. %s"}\n{"id":2,"text":"%s. %s"}\n' \
		    "$(sentence 1)" "$ref" "$(sentence 1)" "$esc" > in.jsonl
		run_nsd --explain in.jsonl
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[[ "${lines[1]}" == *'"similar_id":1,"is_dup":true,'*'"exact":true}}' ]] ||
		    { echo "$esc is not $ref: ${lines[1]}"; false; }
	done <<'EOF'
\ud800 \ufffd
\udc00 \ufffd
\uDBFF \ufffd
\udc00\ud800 \ufffd\ufffd
\ud800\ud800 \ufffd\ufffd
\ud800x \ufffdx
\ud800\u0041 \ufffdA
\ud800\n \ufffd\n
\ud800\\ \ufffd\\
\ud83d\ude00 😀
\udbff\udfff 􏿿
EOF
	# And not equal to something else: a lone surrogate is one character.
	printf '{"id":1,"text":"%s. \\ufffd\\ufffd"}\n{"id":2,"text":"%s. \\ud800"}\n' \
	    "$(sentence 1)" "$(sentence 1)" > in.jsonl
	run_nsd --explain in.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" == *'"exact":false,"confirm":{"containment":'*'}}}' ]]
}

@test "NUL: a raw byte makes the record bad, \\u0000 is a character" {
	printf '{"id":9,"text":"a\0b"}' > bad.txt
	check_between bad.txt "NUL byte at byte 18"
	printf '\0{"id":9,"text":"ab"}' > bad.txt
	check_between bad.txt "NUL byte at byte 1"
	printf '{"id":9,"text":"ab"}\0' > bad.txt
	check_between bad.txt "NUL byte at byte 21"
	# Decoded, U+0000 is part of the text: it neither ends nor empties it.
	{
		printf '{"id":1,"text":"%s."}\n' "$(sentence 1)"
		printf '{"id":2,"text":"\\u0000. %s. \\u0000"}\n' "$(sentence 1)"
		printf '{"id":3,"text":"\\u0000%s."}\n' "$(sentence 1)"
		printf '{"id":4,"text":"\\u0000"}\n'
		printf '{"id":5,"text":"\\u0000"}\n'
	} > in.jsonl
	run_nsd --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "${lines[1]}" == *'"similar_id":1,"is_dup":true,'*'"exact":false,"confirm":{"containment":'*'}}}' ]]
	[[ "${lines[2]}" == *'"similar_id":3,"is_dup":false}' ]]
	[[ "${lines[3]}" == *'"similar_id":4,"is_dup":false}' ]]
	[[ "${lines[4]}" == *'"similar_id":5,"is_dup":false}' ]]
	printf '{"te\\u0000xt":"a"}' > bad.txt
	check_between bad.txt 'no text field "text"'
}

@test "a text of only punctuation or white space: an original, never grouped" {
	local t
	for t in '!!!...???;;;:::---***,,,' '   ' '\t\n\r\u3000\u2028 ' '' \
	    '<p></p><br>' '。。。】】' '\u0000\u001f'; do
		printf '{"id":1,"text":"%s"}\n{"id":2,"text":"%s"}\n' "$t" "$t" \
		    > in.jsonl
		for m in nshash simhash; do
			run_nsd -m "$m" --stats in.jsonl
			[ "$status" -eq 0 ]
			[ "${lines[0]}" = "{\"id\":1,\"text\":\"$t\",\"similar_id\":1,\"is_dup\":false}" ]
			[ "${lines[1]}" = "{\"id\":2,\"text\":\"$t\",\"similar_id\":2,\"is_dup\":false}" ]
			[[ "$stderr" == *"nsdedup: originals   2 (2 with nothing to compare)"* ]] ||
			    { echo "$m '$t': $stderr"; false; }
			run --separate-stderr bash -c \
			    '"$NSDEDUP" -d -m "$1" in.jsonl > out.jsonl' bash "$m"
			[ "$status" -eq 0 ]
			[ -z "$stderr" ]
			cmp in.jsonl out.jsonl
		done
	done
}

@test "one sentence of 10 MiB" {
	# Records 1 and 2 hold the same sentence, 3 another one.
	awk 'function text(w,  j) { for (j = 0; j < 1310720; j++)
		printf "%s%06d ", w, j % 1000 }
	    BEGIN { for (i = 1; i <= 3; i++) {
		printf "{\"id\":%d,\"text\":\"", i
		text(i == 3 ? "v" : "w")
		printf "\"}\n" } }' > in.jsonl
	[ "$(head -n 1 in.jsonl | wc -c)" -gt 10485760 ]
	for m in nshash simhash; do
		run --separate-stderr bash -c \
		    '"$NSDEDUP" -m "$1" in.jsonl > out.jsonl' bash "$m"
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		awk '{ i = NR == 3 ? 3 : 1; d = NR == 2 ? "true" : "false"
		    sub(/}$/, ",\"similar_id\":" i ",\"is_dup\":" d "}"); print }' \
		    in.jsonl | cmp - out.jsonl
		run --separate-stderr bash -c \
		    '"$NSDEDUP" -d -m "$1" in.jsonl > out.jsonl' bash "$m"
		[ "$status" -eq 0 ]
		sed 2d in.jsonl | cmp - out.jsonl
	done
}

@test "mixed CRLF and LF line ends: each line keeps its own" {
	local s3
	s3=$(sentence 3)
	{
		printf '{"id":1,"text":"%s"}\r\n' "$(sentence 1)"
		printf '{"id":2,"text":"%s"}\n' "$(sentence 1)"
		printf 'junk\r\n'
		printf 'junk\n'
		printf '{"id":3,"text":"%s"}\r{"id":4}\n' "$(sentence 3)"
		printf '{"id":5,"text":"%s"}\r\r\n' "$(sentence 1)"
		printf '\r\n'
		printf '{"id":6,"text":"%s"}\r' "$(sentence 1)"
	} > in.jsonl
	{
		printf '{"id":1,"text":"%s","similar_id":1,"is_dup":false}\r\n' \
		    "$(sentence 1)"
		printf '{"id":2,"text":"%s","similar_id":1,"is_dup":true}\n' \
		    "$(sentence 1)"
		printf 'junk\r\njunk\n'
		printf '{"id":3,"text":"%s"}\r{"id":4}\n' "$(sentence 3)"
		printf '{"id":5,"text":"%s","similar_id":1,"is_dup":true}\r\r\n' \
		    "$(sentence 1)"
		printf '{"id":6,"text":"%s","similar_id":1,"is_dup":true}\r\n' \
		    "$(sentence 1)"
	} > want.jsonl
	run --separate-stderr bash -c '"$NSDEDUP" in.jsonl > out.jsonl'
	[ "$status" -eq 1 ]
	cmp out.jsonl want.jsonl
	expect_eq "$stderr" "nsdedup: in.jsonl:3: invalid JSON: expected a JSON object at byte 1
nsdedup: in.jsonl:4: invalid JSON: expected a JSON object at byte 1
nsdedup: in.jsonl:5: invalid JSON: text after the JSON value at byte $((${#s3} + 20))"
	run --separate-stderr bash -c '"$NSDEDUP" -d in.jsonl > out.jsonl'
	[ "$status" -eq 1 ]
	head -n 5 in.jsonl | sed 2d | cmp - out.jsonl
}

@test "a binary file: 1 MiB of fixed pseudo-random bytes, and a gzip file" {
	perl -e 'srand(20261121); print pack("C*", map { int rand 256 } 1 .. 1048576)' \
	    > random.bin
	[ "$(wc -c < random.bin)" -eq 1048576 ]
	passed_through random.bin > want
	for mode in annotate drop-dups only-dups; do
		run --separate-stderr bash -c \
		    '"$NSDEDUP" --format=jsonl --stats --"$1" random.bin > out' \
		    bash "$mode"
		[ "$status" -eq 1 ]
		cmp out want
		[[ "$stderr" == *"nsdedup: bad         $(wc -l < want)"* ]]
		[[ "${stderr_lines[0]}" == "nsdedup: random.bin:1: "* ]]
	done
	# As TSV rows, each is bad or, valid by chance, annotated.
	run --separate-stderr bash -c \
	    '"$NSDEDUP" --format=tsv -H -k 1 random.bin > out'
	[ "$status" -eq 1 ]
	[ "$(wc -l < out)" -eq "$(perl -ne '$n++ unless /^\r?\n?$/;
	    END { print $n }' random.bin)" ]
	# With a tab in its first line, --format=auto takes it for TSV, and a
	# header that is not UTF-8 stops the run.
	{ printf '\x01\t\xff\n'; cat random.bin; } > tab.bin
	run_nsd tab.bin
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: tab.bin:1: bad header: invalid UTF-8 at byte 3"
	# Random bytes behind gzip's magic are a corrupt gzip input, or one
	# in a format this nsdedup was built without: an input error either
	# way, with nothing written.
	{ printf '\x1f\x8b\n'; cat random.bin; } > gzip.bin
	run_nsd gzip.bin
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	[[ $stderr == "nsdedup: gzip.bin: byte "[0-9]*": corrupt gzip data: "* ||
	    $stderr == "nsdedup: gzip.bin: compressed with gzip, which "* ]]
	# A gzip file is decompressed (compressed.bats), or refused so.
	gzip -n -c "$TOP_SRCDIR/examples/news.jsonl" > news.gz
	run --separate-stderr bash -c '"$NSDEDUP" news.gz > out'
	if [ "$status" -eq 3 ]; then
		[ ! -s out ]
		[[ "$stderr" == "nsdedup: news.gz: compressed with gzip, which "* ]]
	else
		[ "$status" -eq 0 ]
		"$NSDEDUP" "$TOP_SRCDIR/examples/news.jsonl" | cmp - out
		[ -z "$stderr" ]
	fi
}

@test "a TSV of 10,000 columns" {
	awk -v s="$(sentence 1)" 'BEGIN { h = "id"
	    for (i = 2; i < 10000; i++) h = h "\tc" i
	    print h "\ttext"
	    for (r = 1; r <= 4; r++) { l = r
		for (i = 2; i < 10000; i++) l = l "\t" i
		if (r == 3) l = l "\textra"
		print l "\t" s } }' > in.tsv
	awk 'NR == 1 { print $0 "\tsimilar_id\tis_dup"; next }
	    NR == 4 { print; next }
	    { print $0 "\t1\t" (NR == 2 ? "false" : "true") }' in.tsv > want.tsv
	for k in text 10000; do
		run --separate-stderr bash -c \
		    '"$NSDEDUP" -k "$1" in.tsv > out.tsv' bash "$k"
		[ "$status" -eq 1 ]
		expect_eq "$stderr" \
		    "nsdedup: in.tsv:4: row has 10001 columns, the header has 10000"
		cmp out.tsv want.tsv
	done
	run --separate-stderr bash -c '"$NSDEDUP" -d in.tsv > out.tsv'
	[ "$status" -eq 1 ]
	sed -n '1p; 2p; 4p' in.tsv | cmp - out.tsv
	run_nsd -k 10001 in.tsv
	[ "$status" -eq 3 ]
	expect_eq "$stderr" \
	    "nsdedup: in.tsv:1: no column 10001: the header has 10000 columns"
}

@test "TSV ragged rows, and rows with bad bytes" {
	{
		printf 'id\ttext\tx\n'
		printf '1\t%s\tx\n' "$(sentence 1)"
		printf '2\t%s\n' "$(sentence 1)"
		printf '3\t%s\tx\tmore\r\n' "$(sentence 1)"
		printf '4\n'
		printf '\n'
		printf '\t\t\n'
		printf '5\t%s\t\0\n' "$(sentence 1)"
		printf '6\t%s\t\xff\n' "$(sentence 1)"
		printf '7\t%s\tx\r\n' "$(sentence 1)"
	} > in.tsv
	{
		printf 'id\ttext\tx\tsimilar_id\tis_dup\n'
		printf '1\t%s\tx\t1\tfalse\n' "$(sentence 1)"
		sed -n 3,5p in.tsv
		printf '\t\t\t2\tfalse\n'
		sed -n 8,9p in.tsv
		printf '7\t%s\tx\t1\ttrue\r\n' "$(sentence 1)"
	} > want.tsv
	run --separate-stderr bash -c '"$NSDEDUP" in.tsv > out.tsv'
	[ "$status" -eq 1 ]
	cmp out.tsv want.tsv
	expect_eq "$stderr" "nsdedup: in.tsv:3: row has 2 columns, the header has 3
nsdedup: in.tsv:4: row has 4 columns, the header has 3
nsdedup: in.tsv:5: row has 1 column, the header has 3
nsdedup: in.tsv:8: NUL byte at byte 66
nsdedup: in.tsv:9: invalid UTF-8 at byte 66"
	run --separate-stderr bash -c '"$NSDEDUP" -d in.tsv > out.tsv'
	[ "$status" -eq 1 ]
	sed '6d; 10d' in.tsv | cmp - out.tsv
	# One column too few for the first row of a -H input.
	run_nsd -H -k 2 in.tsv
	[ "$status" -eq 1 ]
	run_nsd -H -k 4 in.tsv
	[ "$status" -eq 3 ]
	expect_eq "$stderr" \
	    "nsdedup: in.tsv:1: no column 4: the first row has 3 columns"
	printf 'one\n' > one.tsv
	run_nsd -f tsv -H -k 2 one.tsv
	[ "$status" -eq 3 ]
	expect_eq "$stderr" \
	    "nsdedup: one.tsv:1: no column 2: the first row has 1 column"
}
