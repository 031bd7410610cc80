#!/usr/bin/env bats
# Bad input: each kind gets a FILE:LINE message, and under the default
# policy the record comes out untouched; nothing is lost.

load helpers

good() {
	printf '{"id":%s,"text":"%s"}\n' "$1" "$(sentence "$1")"
}

# The bad line between two good ones; check status 1, the message, and that
# the bad line is passed through byte for byte.
check_bad() {
	local bad="$1" reason="$2"
	{ good 1; printf '%s\n' "$bad"; good 2; } > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[1]}" = "$bad" ]
	[[ "${lines[2]}" == *'"similar_id":2,"is_dup":false}' ]]
	[[ "$stderr" == "nsdedup: in.jsonl:2: $reason" ]]
}

@test "malformed JSON" {
	check_bad '{"id":3,"text":"x",}' "invalid JSON: expected a member name at byte 20"
}

@test "a line that is not an object" {
	check_bad '["text","x"]' "not a JSON object but an array"
	check_bad '"text"' "not a JSON object but a string"
	check_bad '12' "not a JSON object but a number"
	check_bad 'null' "not a JSON object but null"
}

@test "a line that looks like JSON but is not is called invalid" {
	check_bad 'nonsense' "invalid JSON: expected a JSON object at byte 1"
	check_bad '[1,' "invalid JSON: expected a JSON object at byte 1"
}

@test "garbage that is not JSON at all" {
	check_bad 'hello world' "invalid JSON: expected a JSON object at byte 1"
}

@test "a missing text field" {
	check_bad '{"id":3,"body":"x"}' 'no text field "text"'
}

@test "a text field that is not a string" {
	check_bad '{"id":3,"text":42}' 'text field "text" is a number, not a string'
	check_bad '{"id":3,"text":null}' 'text field "text" is null, not a string'
	check_bad '{"id":3,"text":["a"]}' 'text field "text" is an array, not a string'
	check_bad '{"id":3,"text":{"a":1}}' 'text field "text" is an object, not a string'
}

@test "invalid UTF-8 is reported at its byte" {
	check_bad "$(printf '{"text":"caf\xe9"}')" "invalid UTF-8 at byte 13"
	check_bad "$(printf '{"text":"\xed\xa0\x80"}')" "invalid UTF-8 at byte 10"
	check_bad "$(printf '{"text":"\xc0\xaf"}')" "invalid UTF-8 at byte 10"
}

@test "a NUL byte is reported and the line passed through" {
	{ good 1; printf '{"text":"a\0b"}\n'; good 2; } > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 1 ]
	[ "$stderr" = "nsdedup: in.jsonl:2: NUL byte at byte 11" ]
	cmp <("$NSDEDUP" --on-error=pass in.jsonl 2>/dev/null | sed -n 2p) <(sed -n 2p in.jsonl)
}

@test "an over-long line is reported and passed through whole" {
	{ good 1; printf '{"text":"%s"}\n' "$(head -c 5000 /dev/zero | tr '\0' x)"; good 2; } > in.jsonl
	run_nsd --max-line=1K in.jsonl
	[ "$status" -eq 1 ]
	[ "$stderr" = "nsdedup: in.jsonl:2: line longer than 1024 bytes (--max-line)" ]
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[1]}" = "$(sed -n 2p in.jsonl)" ]
	[[ "${lines[2]}" == *'"similar_id":2,"is_dup":false}' ]]
}

@test "a line longer than the read buffer streams through in pieces" {
	# 3 MiB is more than one read, so the reader hands it out piece by piece.
	{ good 1; printf '{"text":"'; head -c 3145728 /dev/zero | tr '\0' y; printf '"}\r\n'; good 2; } > in.jsonl
	run --separate-stderr bash -c '"$NSDEDUP" --max-line=64K in.jsonl > out.jsonl'
	[ "$status" -eq 1 ]
	[ "$stderr" = "nsdedup: in.jsonl:2: line longer than 65536 bytes (--max-line)" ]
	cmp <(sed -n 2p out.jsonl) <(sed -n 2p in.jsonl)
	[ "$(wc -l < out.jsonl)" -eq 3 ]
	run_nsd --max-line=64K --on-error=skip in.jsonl
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" == *'"similar_id":2,"is_dup":false}' ]]
}

@test "CRLF line ends are accepted and kept" {
	printf '{"id":1,"text":"%s"}\r\n{"id":2,"text":"%s"}\r\n' "$(sentence 1)" "$(sentence 1)" > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	"$NSDEDUP" in.jsonl > out.jsonl
	[ "$(tr -cd '\r' < out.jsonl | wc -c)" -eq 2 ]
	grep -q '"similar_id":1,"is_dup":true}'$'\r''$' out.jsonl
}

@test "a UTF-8 byte order mark at the start is accepted and not copied" {
	printf '\xef\xbb\xbf{"id":1,"text":"%s"}\n' "$(sentence 1)" > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "{\"id\":1,\"text\":\"$(sentence 1)\",\"similar_id\":1,\"is_dup\":false}"
}

@test "a byte order mark elsewhere is bad input" {
	printf '{"id":1,"text":"x"}\n\xef\xbb\xbf{"id":2,"text":"y"}\n' > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 1 ]
	[[ "$stderr" == "nsdedup: in.jsonl:2: "* ]]
}

@test "an empty input gives empty output and success" {
	: > empty.jsonl
	run_nsd empty.jsonl
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	run_nsd < /dev/null
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "blank lines are skipped and counted" {
	printf '\n  \n{"text":"x"}\n\t\r\n' > in.jsonl
	run_nsd --stats in.jsonl
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$stderr" == *"nsdedup: blank       3"* ]]
}

@test "a last line without a newline is read and given one" {
	printf '{"id":1,"text":"%s"}\n{"id":2,"text":"%s"}' "$(sentence 1)" "$(sentence 1)" > in.jsonl
	"$NSDEDUP" in.jsonl > out.jsonl
	[ "$(wc -l < out.jsonl)" -eq 2 ]
	tail -n 1 out.jsonl | grep -q '"similar_id":1,"is_dup":true}$'
}

@test "an unreadable file operand stops the run with status 3" {
	run_nsd no-such-file.jsonl
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: no-such-file.jsonl: No such file or directory" ]
}

@test "a directory operand is an input error" {
	mkdir dir
	run_nsd dir
	[ "$status" -eq 3 ]
	[ "$stderr" = "nsdedup: dir: Is a directory" ]
}

@test "a file without read permission is an input error" {
	[ "$(id -u)" -ne 0 ] || skip "root can read any file"
	printf '{"text":"x"}\n' > locked.jsonl
	chmod 000 locked.jsonl
	run_nsd locked.jsonl
	[ "$status" -eq 3 ]
	[ "$stderr" = "nsdedup: locked.jsonl: Permission denied" ]
}

@test "stdout on /dev/full fails the run with status 4" {
	[ -w /dev/full ] || skip "no /dev/full"
	good 1 > in.jsonl
	run --separate-stderr bash -c '"$NSDEDUP" in.jsonl > /dev/full'
	[ "$status" -eq 4 ]
	[ "$stderr" = "nsdedup: standard output: write error: No space left on device" ]
}

@test "--on-error=skip drops bad records, still reports them, status 1" {
	{ good 1; printf 'junk\n'; good 2; } > in.jsonl
	run_nsd --on-error=skip in.jsonl
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "$stderr" = "nsdedup: in.jsonl:2: invalid JSON: expected a JSON object at byte 1" ]
}

@test "--on-error=fail stops at the first bad record with status 5" {
	{ good 1; printf 'junk\n'; good 2; } > in.jsonl
	run_nsd --on-error=fail in.jsonl
	[ "$status" -eq 5 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == '{"id":1,'* ]]
	[ "${stderr_lines[0]}" = "nsdedup: in.jsonl:2: invalid JSON: expected a JSON object at byte 1" ]
	[ "${stderr_lines[1]}" = "nsdedup: in.jsonl:2: stopped at this bad record (--on-error=fail)" ]
	run_nsd -q --on-error=fail in.jsonl
	[ "$status" -eq 5 ]
	[ "$stderr" = "nsdedup: in.jsonl:2: stopped at this bad record (--on-error=fail)" ]
}

@test "only the first 10 bad records are shown, then a count" {
	for i in $(seq 1 25); do printf 'bad %d\n' "$i"; done > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 25 ]
	[ "${#stderr_lines[@]}" -eq 11 ]
	[ "${stderr_lines[9]}" = "nsdedup: in.jsonl:10: invalid JSON: expected a JSON object at byte 1" ]
	[ "${stderr_lines[10]}" = "nsdedup: 25 bad records (10 shown)" ]
}

@test "--quiet hides bad-record messages but not the status" {
	printf 'junk\n' > in.jsonl
	run_nsd --quiet in.jsonl
	[ "$status" -eq 1 ]
	[ -z "$stderr" ]
	[ "$output" = "junk" ]
}

@test "line numbers count blank lines and run per file" {
	printf '\n\njunk\n' > a.jsonl
	printf 'junk\n' > b.jsonl
	run_nsd a.jsonl b.jsonl
	[ "$status" -eq 1 ]
	[[ "${stderr_lines[0]}" == "nsdedup: a.jsonl:3: "* ]]
	[[ "${stderr_lines[1]}" == "nsdedup: b.jsonl:1: "* ]]
}

@test "standard input is named in messages" {
	run_nsd < <(printf 'junk\n')
	[ "$status" -eq 1 ]
	[[ "$stderr" == "nsdedup: (standard input):1: "* ]]
}

@test "a CRLF line of exactly --max-line bytes is accepted, even in pieces" {
	body=$(head -c 89 /dev/zero | tr '\0' a)
	run --separate-stderr bash -c "{ printf '{\"text\":\"%s\"}\\r' $body; sleep 0.3; printf '\\n'; } | \"\$NSDEDUP\" --max-line=100"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *'"similar_id":1,"is_dup":false}'* ]]
}

@test "deep nesting is accepted, bounded only by memory" {
	deep=$(head -c 100000 /dev/zero | tr '\0' '[')$(head -c 100000 /dev/zero | tr '\0' ']')
	printf '{"v":%s,"text":"%s"}\n' "$deep" "$(sentence 1)" > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *']],"text":"'*'","similar_id":1,"is_dup":false}' ]]
}
