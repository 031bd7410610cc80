#!/usr/bin/env bats
# Memory errors and leaks under valgrind's memcheck, on runs that go
# through every stage and the odd paths: bad records, long lines streamed
# in pieces, input arriving in small pieces, compressed inputs, failing
# runs, fields that no record has, and an index made, grown, updated, read,
# checked and taken back. Leaks of every kind but memory still reachable at exit are
# errors. (-m simhash has its memcheck test in simhash.bats.)

load helpers

memcheck() {
	need_memcheck
	run --separate-stderr "$VALGRIND" -q --leak-check=full \
	    --errors-for-leak-kinds=definite,indirect,possible \
	    --error-exitcode=99 "$NSDEDUP" "$@"
	[ "$status" -ne 99 ] || { printf '%s\n' "$stderr"; false; }
	[[ "$stderr" != *"=="* ]] || { printf '%s\n' "$stderr"; false; }
}

@test "memcheck: JSON and TSV examples, all modes" {
	memcheck "$TOP_SRCDIR/examples/news.jsonl" "$TOP_SRCDIR/examples/news.tsv"
	[ "$status" -eq 0 ]
	memcheck -d --compat=nshash "$TOP_SRCDIR/examples/news.jsonl"
	[ "$status" -eq 0 ]
	memcheck -D -k title -k /text "$TOP_SRCDIR/examples/news.jsonl"
	[ "$status" -eq 0 ]
}

@test "memcheck: bad records, long lines and a failing run" {
	{
		printf '{"id":1,"text":"%s"}\r\n' "$(sentence 1)"
		printf 'junk\n{"text":3}\n\n{"text":"caf\xe9"}\n'
		printf '{"text":"%s"}\n' "$(head -c 300000 /dev/zero | tr '\0' z)"
		printf '{"id":2,"text":"%s"}' "$(sentence 1)"
	} > in.jsonl
	memcheck --max-line=1K in.jsonl
	[ "$status" -eq 1 ]
	memcheck --on-error=fail -o out.jsonl in.jsonl
	[ "$status" -eq 5 ]
}

@test "memcheck: compressed inputs, whole, truncated and stopped early" {
	need_memcheck
	"$NSDEDUP" --version | grep -q '^compressed inputs: .*gzip' ||
	    skip "nsdedup is built without gzip"
	gzip -c "$TOP_SRCDIR/examples/news.jsonl" > news.gz
	cat news.gz news.gz > two.gz
	memcheck two.gz - < news.gz
	[ "$status" -eq 0 ]
	head -c 5000 news.gz > cut.gz
	memcheck cut.gz
	[ "$status" -eq 3 ]
	# A stop at a bad record ends the decompressor before its input ends.
	{ echo junk; cat "$TOP_SRCDIR/examples/news.jsonl"; } | gzip -c > bad.gz
	memcheck --on-error=fail bad.gz
	[ "$status" -eq 5 ]
}

@test "memcheck: fields that no record has, judged over several batches" {
	# 700 records of 2 KB, more than a batch; body from the 600th on.
	awk 'BEGIN { p = "x"; while (length(p) < 2000) p = p p
	    for (i = 1; i <= 700; i++)
		printf "{\"id\":%d,\"pad\":\"%s\",\"text\":\"t\"%s}\n", i,
		    substr(p, 1, 2000), (i >= 600 ? ",\"body\":\"b\"" : "") }' \
	    > in.jsonl
	memcheck -k body in.jsonl
	[ "$status" -eq 1 ]
	memcheck -k body --id-field=uid in.jsonl
	[ "$status" -eq 3 ]
	head -n 599 in.jsonl > none.jsonl
	memcheck -k body none.jsonl
	[ "$status" -eq 3 ]
	printf 'id\ttext\n1\tx\n' > in.tsv
	memcheck -k body in.tsv
	[ "$status" -eq 3 ]
}

@test "memcheck: input arriving a few bytes at a time" {
	need_memcheck
	printf '{"id":1,"text":"%s"}\r\n{"id":2,"text":"%s"}\n' "$(sentence 1)" "$(sentence 1)" > in.jsonl
	run --separate-stderr bash -c 'while IFS= read -r -n 7 -d "" chunk || [ -n "$chunk" ]; do
	    printf "%s" "$chunk"; sleep 0.01; done < in.jsonl |
	    "$VALGRIND" -q --leak-check=full --error-exitcode=99 "$NSDEDUP" --max-line=80'
	[ "$status" -eq 0 ]
	[[ "$stderr" != *"=="* ]]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" == *'"similar_id":1,"is_dup":true}' ]]
}

@test "memcheck: an index made, grown, updated, read, checked and taken back" {
	: "${GENCORPUS:?run the tests through make check}"
	need_memcheck
	# 1000 records after 100 grow the table (see index-crash.bats).
	"$GENCORPUS" --records 100 --seed 1 > a.jsonl
	"$GENCORPUS" --records 1000 --seed 2 > b.jsonl
	memcheck --db db a.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	memcheck --db db --stats -o out.jsonl b.jsonl
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"nsdedup: index "* ]]
	memcheck --db db -f tsv "$TOP_SRCDIR/examples/news.tsv"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	memcheck --db db --no-update -D --explain b.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(wc -l < out.jsonl)" -eq 1000 ]
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 1000 ]
	memcheck --db db --db-info
	[ "$status" -eq 0 ]
	memcheck --db db --db-verify
	[ "$status" -eq 0 ]
	# The TSV run taken back, then the growing run; not the first.
	memcheck --db db --db-undo
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	memcheck --db db --db-undo
	[ "$status" -eq 0 ]
	memcheck --db db --db-undo
	[ "$status" -eq 7 ]
	memcheck --db missing --no-update a.jsonl
	[ "$status" -eq 7 ]
}
