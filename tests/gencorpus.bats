#!/usr/bin/env bats
# nsd-gencorpus, the benchmark's corpus generator: what the benchmarks rely
# on. Its output depends only on the seed and the options, a shorter run is
# a prefix of a longer one, and its near-copies are what --truth says they
# are: light reposts keep sentences that nshash matches, and an
# --edit-strength longest copy changes one character in each sentence
# nshash fingerprints, so that nshash cannot match it to its source.

load helpers

: "${GENCORPUS:?run the tests through make check}"

# Print "id<TAB>similar_id" for each record that nsdedup, with the
# arguments given, judges a duplicate of another.
dups() {
	"$NSDEDUP" "$@" --only-dups | "$JQ" -r '[.id, .similar_id] | @tsv'
}

@test "a shorter run with the same seed is a prefix of a longer one" {
	need jq
	"$GENCORPUS" --seed 4 --records 300 > short.jsonl
	"$GENCORPUS" --seed 4 --size 2M > long.jsonl
	[ "$(wc -l < short.jsonl)" -eq 300 ]
	[ "$(wc -c < long.jsonl)" -le $((2 << 20)) ]
	head -n 300 long.jsonl | cmp - short.jsonl
	"$GENCORPUS" --seed 4 --records 200 --edit-rate 0.5 \
	    --edit-strength every > a.jsonl
	"$GENCORPUS" --seed 4 --records 400 --edit-rate 0.5 \
	    --edit-strength every > b.jsonl
	head -n 200 b.jsonl | cmp - a.jsonl
	# Another seed, another corpus; every record is valid JSON.
	"$GENCORPUS" --seed 5 --records 300 > other.jsonl
	run cmp -s other.jsonl short.jsonl
	[ "$status" -eq 1 ]
	"$JQ" -e .text long.jsonl > /dev/null
}

@test "at --edit-rate 0, --edit-strength and --truth change nothing" {
	"$GENCORPUS" --seed 6 --records 500 > want.jsonl
	for s in longest every heavy; do
		"$GENCORPUS" --seed 6 --records 500 --edit-strength "$s" \
		    --truth truth | cmp - want.jsonl
	done
	# The reposts are all light.
	[ -s truth ]
	[ "$(cut -f 3 truth | sort -u)" = light ]
}

@test "nshash finds every light repost and no longest-edited copy's source" {
	need jq
	"$GENCORPUS" --seed 7 --records 2000 --edit-rate 0.5 \
	    --edit-strength longest --truth truth > c.jsonl
	dups c.jsonl > dups.tsv
	awk -F '\t' '$3 == "light" { print $1 }' truth | sort > light
	awk -F '\t' '$3 == "edited-longest" { print $1 "\t" $2 }' truth |
	    sort > edited
	[ "$(wc -l < light)" -gt 100 ]
	[ "$(wc -l < edited)" -gt 100 ]
	[ "$(cut -f 3 truth | sort -u | tr '\n' ' ')" = \
	    "edited-longest light " ]
	# Every light repost is a duplicate.
	cut -f 1 dups.tsv | sort | comm -13 - light > missed
	[ ! -s missed ]
	# No edited copy is a duplicate of the record it was copied from.
	sort dups.tsv | comm -12 - edited > found
	[ ! -s found ]
	# simhash, which compares the bag of words, finds some of them.
	dups -m simhash c.jsonl | sort | comm -12 - edited > found
	[ -s found ]
}

@test "a longest-edited copy changes up to 5 characters and keeps its length" {
	need jq
	"$GENCORPUS" --seed 8 --records 600 --edit-rate 1 \
	    --edit-strength longest --truth truth > c.jsonl
	# Each copy beside its source: the number of code points that differ,
	# or -1 when the texts differ in length or the titles differ.
	"$JQ" -c '{(.id): .}' c.jsonl | "$JQ" -s add > byid.json
	cut -f 1,2 truth | "$JQ" -R -r --slurpfile r byid.json '
	    split("\t") as [$c, $s] | $r[0][$c] as $x | $r[0][$s] as $y |
	    ($x.text | explode) as $a | ($y.text | explode) as $b |
	    if ($a | length) != ($b | length) or $x.title != $y.title then -1
	    else [range($a | length) | select($a[.] != $b[.])] | length
	    end' > changed
	[ "$(wc -l < changed)" -gt 50 ]
	[ "$(sort -nu changed | head -n 1)" -ge 1 ]
	[ "$(sort -nu changed | tail -n 1)" -le 5 ]
	# Most documents have 5 sentences long enough.
	[ "$(grep -c '^5$' changed)" -gt $(($(wc -l < changed) / 2)) ]
}

@test "--edit-strength every changes every sentence; heavy, more" {
	need jq
	for s in every heavy; do
		"$GENCORPUS" --seed 9 --records 800 --edit-rate 1 \
		    --edit-strength "$s" --truth "truth.$s" > "$s.jsonl"
		[ "$(cut -f 3 "truth.$s" | sort -u)" = "edited-$s" ]
		dups "$s.jsonl" | sort > "dups.$s"
		cut -f 1,2 "truth.$s" | sort | comm -12 - "dups.$s" > found
		[ ! -s found ]
	done
	# Same seed, same sources: the heavy copies are further from them.
	"$NSDEDUP" -m simhash --distance 8 --only-dups every.jsonl |
	    grep -c . > n.every
	"$NSDEDUP" -m simhash --distance 8 --only-dups heavy.jsonl |
	    grep -c . > n.heavy
	[ "$(cat n.heavy)" -lt "$(cat n.every)" ]
}

@test "--edit-strength takes longest, every or heavy" {
	run --separate-stderr "$GENCORPUS" --edit-strength light --records 1
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	msg="invalid value for --edit-strength: 'light'"
	expect_eq "${stderr%%$'\n'*}" \
	    "nsd-gencorpus: $msg (valid: every, heavy, longest)"
	[[ "$stderr" == *"Try 'nsd-gencorpus --help'." ]]
	run --separate-stderr "$GENCORPUS" --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *"--edit-strength S"* ]]
	for s in longest every heavy; do
		[[ "$output" == *"$s:"* ]]
	done
}

# nsd-repost --touch: one copy of each original, every sentence touched.

# Documents for nsd-repost --touch, $1 of them in language $2 (en or zh),
# of $3 paragraphs (default 3) of 3 sentences each: 30 words of a short
# list in English (sentences end with ". ", paragraphs with a blank line),
# 30 Han characters in Chinese (sentences end with "。", paragraphs with a
# line break).  With $4 set, English lines are wrapped every 8 words.
touch_input() {
	awk -v n="$1" -v lang="$2" -v paras="${3:-3}" -v wrap="${4:-}" '
	BEGIN {
		srand(7)
		nw = split("market price bank rate share oil trade year " \
		    "month week company government official report growth " \
		    "export import dollar profit loss deal plan talk " \
		    "minister city people court police school water", w, " ")
		nh = split("国,人,大,中,上,年,行,会,经,发,市,场,价,格,银," \
		    "政,府,部,长,工,业,农,村,城,水,电,路,车,船,港", h, ",")
		for (d = 1; d <= n; d++) {
			t = ""
			for (p = 1; p <= paras; p++) {
				if (p > 1)
					t = t (lang == "en" ? "\\n\\n" : "\\n")
				for (s = 1; s <= 3; s++) {
					if (s > 1 && lang == "en")
						t = t " "
					for (k = 1; k <= 30; k++) {
						if (lang != "en") {
							t = t h[int(rand() * nh) + 1]
							continue
						}
						x = w[int(rand() * nw) + 1]
						if (k == 1)
							x = toupper(substr(x, 1, 1)) \
							    substr(x, 2)
						if (k > 1)
							t = t (wrap != "" && \
							    k % 8 == 0 ? "\\n" : " ")
						t = t x
					}
					t = t (lang == "en" ? "." : "。")
				}
			}
			printf "{\"id\":\"%s%d\",\"text\":\"%s\"}\n", lang, d, t
		}
	}'
}

# For each copy of truth file $2 in nsd-repost output $1, beside its
# source, in language $3: "letters changed bad untouched sentences", bad
# being the characters changed that were no letter or became no letter of
# the same case, untouched the sentences with letters and none changed
# ("length" when the two differ in length).
touch_chars_diff() {
	"$JQ" -c '{(.id): .text}' "$1" | "$JQ" -s add > byid.json
	cut -f 1,2 "$2" | "$JQ" -R -r --slurpfile r byid.json --arg lang "$3" '
	    def letter: if $lang == "en" then
		(. >= 65 and . <= 90) or (. >= 97 and . <= 122)
		else . >= 19968 and . <= 40959 end;
	    def upper: . >= 65 and . <= 90;
	    split("\t") as [$c, $s] |
	    ($r[0][$s] | explode) as $a | ($r[0][$c] | explode) as $b |
	    if ($a | length) != ($b | length) then "length" else
	    (reduce range($a | length) as $i (
		{l: 0, c: 0, bad: 0, sl: 0, sc: 0, un: 0, n: 0};
		if ($a[$i] | letter) then
			.l += 1 | .sl += 1 |
			if $a[$i] != $b[$i] then
				.c += 1 | .sc += 1 |
				if ($b[$i] | letter | not) or
				    ($lang == "en" and
				    ($a[$i] | upper) != ($b[$i] | upper))
				then .bad += 1 else . end
			else . end
		elif $a[$i] != $b[$i] then .bad += 1
		elif $a[$i] == 46 or $a[$i] == 12290 then
			(if .sl > 0 then .n += 1 else . end) |
			(if .sl > 0 and .sc == 0 then .un += 1 else . end) |
			.sl = 0 | .sc = 0
		else . end)) |
	    "\(.l) \(.c) \(.bad) \(.un) \(.n)" end'
}

@test "nsd-repost --touch chars:P changes a share P of each sentence's letters" {
	need jq
	for lang in en zh; do
		touch_input 20 "$lang" > in.jsonl
		run --separate-stderr "$NSD_REPOST" --touch chars:0.05 \
		    --truth truth in.jsonl
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		printf '%s\n' "$output" > out.jsonl
		# Each original, and one copy of it.
		[ "$(grep -c '#r1"' out.jsonl)" -eq 20 ]
		[ "$(wc -l < out.jsonl)" -eq 40 ]
		[ "$(cut -f 3 truth | sort -u)" = chars:0.05 ]
		touch_chars_diff out.jsonl truth "$lang" > diff.txt
		[ "$(wc -l < diff.txt)" -eq 20 ]
		# Letters changed into letters, 4% to 6% of them, in every
		# sentence; nothing else changed.
		awk '{ l += $1; c += $2; bad += $3; un += $4; n += $5 }
		    END { printf "%d %d %d %d\n", bad, un, n,
			(c >= 0.04 * l && c <= 0.06 * l) }' diff.txt > sums
		expect_eq "$(cat sums)" "0 0 180 1"
	done
	# At a share below one a sentence, one letter in each.
	touch_input 10 en > in.jsonl
	"$NSD_REPOST" --touch chars:0.001 --truth truth in.jsonl > out.jsonl
	touch_chars_diff out.jsonl truth en > diff.txt
	expect_eq "$(awk '{ c += $2; bad += $3; n += $5 }
	    END { print c, bad, n }' diff.txt)" "90 0 90"
}

@test "nsd-repost --touch words:P replaces a share P of each sentence's words" {
	need jq
	touch_input 20 en > in.jsonl
	run --separate-stderr "$NSD_REPOST" --touch words:0.1 --truth truth \
	    in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	printf '%s\n' "$output" > out.jsonl
	"$JQ" -c '{(.id): .text}' out.jsonl | "$JQ" -s add > byid.json
	"$JQ" -s '[.[].text | scan("[A-Za-z]+") | ascii_downcase |
	    {(.): true}] | add' in.jsonl > vocab.json
	# For each copy and sentence: "words changed bad", bad counting the
	# words replaced by no other word of the input's, or cased otherwise,
	# and the sentences whose words and what lies between them differ.
	cut -f 1,2 truth | "$JQ" -R -r --slurpfile r byid.json \
	    --slurpfile v vocab.json '
	    def cap: test("^[A-Z]");
	    split("\t") as [$c, $s] |
	    [$r[0][$s], $r[0][$c] | split(".")[:-1]] as [$a, $b] |
	    range($a | length) as $i |
	    [$a[$i], $b[$i] | [scan("[A-Za-z'"'"']+")]] as [$x, $y] |
	    ([$a[$i], $b[$i] | gsub("[A-Za-z'"'"']+"; "w")] |
		if .[0] == .[1] then 0 else 1 end) as $shape |
	    [range($x | length) | select($x[.] != $y[.])] as $d |
	    [$d[] | select(($x[.] | ascii_downcase) == ($y[.] |
		ascii_downcase) or ($x[.] | cap) != ($y[.] | cap) or
		$v[0][$y[.] | ascii_downcase] != true)] as $bad |
	    "\($x | length) \($d | length) \(($bad | length) + $shape)"' \
	    > diff.txt
	[ "$(wc -l < diff.txt)" -eq 180 ]
	awk '$2 == 0 || $3 > 0 { print "sentence " NR ": " $0; exit 1 }
	    { w += $1; c += $2 }
	    END { if (c < 0.07 * w || c > 0.13 * w) {
		print c " of " w " words"; exit 1 } }' diff.txt
	# Chinese: two Han characters in a row, both changed, a share P of
	# the pairs each run of Han characters is cut into.
	touch_input 20 zh > in.jsonl
	"$NSD_REPOST" --touch words:0.1 --truth truth in.jsonl > out.jsonl
	"$JQ" -c '{(.id): .text}' out.jsonl | "$JQ" -s add > byid.json
	cut -f 1,2 truth | "$JQ" -R -r --slurpfile r byid.json '
	    def han: . >= 19968 and . <= 40959;
	    split("\t") as [$c, $s] |
	    [$r[0][$s], $r[0][$c] | split("。")[:-1] |
		map(ltrimstr("\n") | explode)] as [$a, $b] |
	    range($a | length) as $i | $a[$i] as $x | $b[$i] as $y |
	    [range(0; $x | length; 2) | [$x[.], $x[. + 1]] != [$y[.],
		$y[. + 1]]] as $pairs |
	    [range($x | length) | select($x[.] != $y[.]) |
		select(($y[.] | han | not) or
		($x[. - . % 2] == $y[. - . % 2]) or
		($x[. - . % 2 + 1] == $y[. - . % 2 + 1]))] as $bad |
	    "\($pairs | length) \($pairs | map(select(.)) | length) " +
	    "\(($bad | length) + (if ($x | length) == ($y | length) then 0
		else 1 end))"' > diff.txt
	[ "$(wc -l < diff.txt)" -eq 180 ]
	awk '$2 == 0 || $3 > 0 { print "sentence " NR ": " $0; exit 1 }
	    { w += $1; c += $2 }
	    END { if (c < 0.07 * w || c > 0.13 * w) {
		print c " of " w " pairs"; exit 1 } }' diff.txt
}

@test "nsd-repost --touch paragraphs puts every text's parts in another order" {
	need jq
	# Paragraphs in English and Chinese, and blocks of sentences in a
	# text of one paragraph, hard-wrapped or not: never its lines.
	for input in "en 3" "zh 3" "en 1" "en 1 wrap"; do
		# shellcheck disable=SC2086 # its words
		set -- $input
		touch_input 30 "$1" "$2" "${3:-}" > in.jsonl
		run --separate-stderr "$NSD_REPOST" --touch paragraphs \
		    --truth truth in.jsonl
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		printf '%s\n' "$output" > out.jsonl
		[ "$(cut -f 3 truth | sort -u)" = paragraphs ]
		"$JQ" -c '{(.id): .text}' out.jsonl | "$JQ" -s add > byid.json
		# "same" when the copy holds the source's parts (sentences
		# here, so that blocks count too) and differs from it.
		cut -f 1,2 truth | "$JQ" -R -r --slurpfile r byid.json '
		    def parts: [scan("[^.。]+[.。]?") | sub("^\\s+"; "") |
			select(length > 0)] | sort;
		    split("\t") as [$c, $s] | $r[0][$s] as $a |
		    $r[0][$c] as $b |
		    if $a != $b and ($a | parts) == ($b | parts) then "same"
		    else "\($c): \($b)" end' | sort | uniq -c > diff.txt
		expect_eq "$(cat diff.txt)" "     30 same"
	done
}

@test "nsd-repost --touch is deterministic, with the originals of its seed" {
	touch_input 40 en > in.jsonl
	"$NSD_REPOST" --seed 3 --touch chars:0.02,paragraphs --truth t1 \
	    in.jsonl > a.jsonl
	"$NSD_REPOST" --seed 3 --touch paragraphs,chars:0.02 --truth t2 \
	    in.jsonl > b.jsonl
	cmp a.jsonl b.jsonl
	cmp t1 t2
	# The touches go in their own order, whatever the order given.
	[ "$(cut -f 3 t1 | sort -u)" = chars:0.02,paragraphs ]
	"$NSD_REPOST" --seed 4 --touch chars:0.02,paragraphs in.jsonl > c.jsonl
	run cmp -s a.jsonl c.jsonl
	[ "$status" -eq 1 ]
	# Other touches, or none, with the same seed: the same originals in
	# the same order, each copy at the same place.
	"$NSD_REPOST" --seed 3 --touch words:0.2 in.jsonl > d.jsonl
	"$NSD_REPOST" --seed 3 --copy-rate 0.5 in.jsonl > e.jsonl
	for f in a c d e; do
		grep -o '"id":"[^"]*"' "$f.jsonl" > "$f.ids"
		grep -v '#r' "$f.ids" > "$f.orig"
	done
	cmp a.ids d.ids
	cmp a.orig e.orig
	run cmp -s a.orig c.orig
	[ "$status" -eq 1 ]
}

@test "nsd-repost --touch refuses a bad SPEC and --copy-rate" {
	valid="(valid: chars:P, words:P, paragraphs, joined by commas;"
	valid="$valid P above 0, at most 1)"
	share="(P: a share above 0, at most 1)"
	touch_input 2 en > in.jsonl
	for bad in "chars|chars' $valid" "letters:0.1|letters:0.1' $valid" \
	    "paragraphs:0.5|paragraphs:0.5' $valid" \
	    "chars:0.1,,words:0.1|' $valid" "chars:0|chars:0' $share" \
	    "chars:1.5|chars:1.5' $share" "words:x|words:x' $share" \
	    "words:0.1,chars:0.2,words:0.3|words' (given twice)"; do
		run --separate-stderr "$NSD_REPOST" --touch "${bad%%|*}" \
		    in.jsonl
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		expect_eq "${stderr%%$'\n'*}" \
		    "nsd-repost: invalid value for --touch: '${bad#*|}"
		[[ "$stderr" == *"Try 'nsd-repost --help'." ]]
	done
	for opt in "--copy-rate 1" "--max-copies 3"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$NSD_REPOST" --touch paragraphs $opt \
		    in.jsonl
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		expect_eq "${stderr%%$'\n'*}" "nsd-repost: --touch makes one \
copy of each original: no --copy-rate or --max-copies with it"
	done
	run --separate-stderr "$NSD_REPOST" --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *"--touch SPEC[,SPEC...]"* ]]
	for s in words:P chars:P paragraphs; do
		[[ "$output" == *"  $s "* ]]
	done
}

@test "nsd-repost --touch --verbose counts what the touches changed" {
	touch_input 10 en > in.jsonl
	run --separate-stderr "$NSD_REPOST" --touch chars:0.001,paragraphs \
	    --verbose in.jsonl
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 20 ]
	want="; 10 originals (0 with a block), 10 copies; touches chars:0.001: "
	[[ "$stderr" == *"$want"* ]]
	want=" letters changed (*%) in 90 sentences; paragraphs: 10 of 10"
	want="$want copies reordered (0 by blocks of sentences)"
	# Unquoted, so that the * in it matches the share.
	[[ "$stderr" == *$want ]]
	[[ "$stderr" == *": 90 of "* ]]
}
