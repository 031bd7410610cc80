#!/usr/bin/env bats
# bench/run.sh on a tiny corpus: its table has a row per command, each
# fingerprint method's included, with ratios computed from the medians;
# its targets (minhash's throughput as a share of nshash's among them) say
# MET or NOT MET as their figures do; against a baseline, the nsdedup
# commands are timed with both programs, a run of one and a run of the
# other in turn, minhash's only when the baseline has it, and the report
# says whether this nsdedup keeps 95% of the baseline's throughput.
# bench/year.sh on a few tiny days: its section has the table of the days
# and the target's verdict, which follows from the figures shown, and
# replaces the section it wrote before.
# The programs here are often wrappers that log each call and say how long
# each run takes on a fake clock (fake_clock), or hold memory, so that the
# order of the runs and the verdicts are known in advance, whatever the
# load of the machine; nothing here measures nsdedup's speed.

load helpers

: "${GENCORPUS:?run the tests through make check}"

setup() {
	need jq
	export TMPDIR=$BATS_TEST_TMPDIR
	export NSD_SHARED_DATA=$BATS_TEST_TMPDIR/no-shared-data
	calls=$BATS_TEST_TMPDIR/calls
	report=$BATS_TEST_TMPDIR/report.md
	clock=$BATS_TEST_TMPDIR/clock
}

# bench/run.sh times a command (without hyperfine, as here) by the
# difference of two `date +%s.%N`. Put first on PATH a date whose
# `date +%s.%N` is the sum of the seconds written to $clock, one number a
# line, and that is the real date otherwise: a command then takes the
# seconds that its wrapper writes there (tick), none if it writes none,
# however long it really runs. So a wrapper is slower or faster than
# another by as much as the test says, and neither a loaded machine nor a
# sanitizer build can turn a verdict.
fake_clock() {
	local real

	real=$(command -v date)
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	: > "$clock"
	cat > "$BATS_TEST_TMPDIR/bin/date" <<EOF
#!/bin/sh
if [ "\$*" = +%s.%N ]; then
	exec awk '{ s += \$1 } END { printf "%.4f\\n", s }' '$clock'
fi
exec '$real' "\$@"
EOF
	chmod +x "$BATS_TEST_TMPDIR/bin/date"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH
}

# The shell command with which a wrapper's run takes $1 seconds on the
# fake clock.
tick() {
	printf "echo %s >> '%s'" "$1" "$clock"
}

# Write an executable wrapper $1 around nsdedup that logs "$2 ARGS" to
# $calls, takes on the fake clock $3 seconds (default 1) for each
# fingerprinting run at the default jobs (no -j: those compared with the
# baseline) and 1 second for the others, and runs nsdedup.
wrapper() {
	cat > "$1" <<EOF
#!/bin/sh
echo "$2 \$*" >> '$calls'
case " \$* " in
*" -j"[0-9]*) $(tick 1) ;;
" --annotate "*|" -m "*) $(tick "${3:-1}") ;;
esac
exec '$NSDEDUP' "\$@"
EOF
	chmod +x "$1"
}

# Run bench/run.sh on a 2 MiB corpus, 2 runs each, without the index at
# scale, the profile (unless NSD_BENCH_NO_PERF is set, perhaps empty) or
# strace; extra arguments are passed on.
bench() {
	run env GENCORPUS="$GENCORPUS" NSD_BENCH_NO_HYPERFINE=1 \
	    NSD_BENCH_NO_STRACE=1 NSD_BENCH_NO_PERF="${NSD_BENCH_NO_PERF-1}" \
	    bash "${RUN_SH:-$TOP_SRCDIR/bench/run.sh}" --size 2M --runs 2 \
	    --no-scale --out "$report" "$@"
}

# Whether the source tree is a git checkout of its own (make distcheck's
# copy lies inside one, and is not).
own_checkout() {
	local top
	top=$(git -C "$TOP_SRCDIR" rev-parse --show-toplevel 2>/dev/null) ||
		return 1
	[ "$(cd "$top" && pwd -P)" = "$(cd "$TOP_SRCDIR" && pwd -P)" ]
}

# The baseline section's lines of the report.
baseline_rows() {
	sed -n '/^## Against a baseline/,/^## Where/p' "$report" |
	    grep '^| `\$NSDEDUP'
}

# The main table's rows, and the commands of its first column.
table_rows() {
	sed -n '/^| command | median s |/,/^$/p' "$report" | grep '^| `'
}
table_commands() {
	table_rows | sed 's/^| \(`[^`]*`\) | .*/\1/'
}

# The commands the table must have, in order.
expected_commands() {
	local m d j
	printf '%s\n' '`cat $CORPUS`' '`wc -l $CORPUS`' '`jq -c . $CORPUS`' \
	    "\`awk '!seen[\$0]++' \$CORPUS\`"
	for m in "" "-m simhash " "-m minhash "; do
		for d in "" " --db \$TMP/x.nsd"; do
			for j in 1 2; do
				printf '`$NSDEDUP %s--annotate -j%s%s $CORPUS`\n' \
				    "$m" "$j" "$d"
				printf '`cat $CORPUS \\| $NSDEDUP %s--annotate -j%s%s`\n' \
				    "$m" "$j" "$d"
			done
		done
	done
}

# Column $2 (1: the command, 2: median s, ... 8: RssAnon) of the table's
# row for command $1 (as table_commands shows it).
cell() {
	table_rows | c="| $1" awk -F' [|] ' -v k="$2" '
	    $1 == ENVIRON["c"] { v = $k; sub(/ *\|$/, "", v); print v }'
}

# Fail unless the table has its 28 rows, each MB/s the input bytes over
# the median, and each ratio the reference's median over the row's.
check_table() {
	local bytes
	expect_eq "$(table_commands)" "$(expected_commands)"
	bytes=$(sed -n 's/^Each command reads `$CORPUS`, \([0-9]*\) bytes.*/\1/p' \
	    "$report")
	[ -n "$bytes" ]
	table_rows | awk -F' [|] ' -v b="$bytes" '
	    function bad(what) {
		printf "row %d: %s: %s\n", NR, what, $0
		status = 1
	    }
	    # x is y rounded to d decimals, or "inf" when y is.
	    function near(x, y, d) {
		if (y == "inf")
			return x == "inf"
		return x != "inf" && (x - y) ^ 2 <= (0.5 / 10 ^ d + 1e-9) ^ 2
	    }
	    function over(a, m) { return m > 0 ? a / m : "inf" }
	    { med[NR] = $2; mb[NR] = $3; xj[NR] = $4; xa[NR] = $5; r[NR] = $0 }
	    $1 ~ /`jq -c \. / { jq = $2 }
	    $1 ~ /`awk / { aw = $2 }
	    END {
		if (NR != 28)
			bad(NR " rows")
		for (NR = 1; NR in r; NR++) {
			$0 = r[NR]
			if ($2 !~ /^[0-9]+\.[0-9][0-9][0-9][0-9]$/)
				bad("median")
			if (!near(mb[NR], over(b / 1e6, med[NR]), 1))
				bad("MB/s")
			if (!near(xj[NR], over(jq, med[NR]), 2))
				bad("x jq")
			if (!near(xa[NR], over(aw, med[NR]), 2))
				bad("x awk")
			# RssAnon for the nsdedup rows alone.
			if ((NR <= 4) != ($8 ~ /^ *\|$/))
				bad("RssAnon")
			if (NR > 4 && $8 !~ /^([0-9]+\.[0-9] MiB|n\/a \(no sample\)) \|$/)
				bad("RssAnon")
		}
		exit status
	    }'
}

# The targets' lines.
targets() {
	sed -n '/^## Targets$/,/^## /p' "$report" | grep '^- '
}

# Fail unless minhash's target has for figure the nshash median over the
# minhash median (in memory, -j2, from the file), three decimals, and both
# throughputs, and says MET at 0.70 or more, NOT MET under.
check_minhash_share() {
	local nc='`$NSDEDUP --annotate -j2 $CORPUS`'
	local mc='`$NSDEDUP -m minhash --annotate -j2 $CORPUS`'
	local line x want="NOT MET"
	x=$(awk -v n="$(cell "$nc" 2)" -v m="$(cell "$mc" 2)" \
	    'BEGIN { printf "%.3f", n / m }')
	awk -v x="$x" 'BEGIN { exit !(x >= 0.7) }' && want=MET
	line=$(targets | grep -F "≥ 70% of nshash's" | grep -v '^- real text')
	[[ $line == "- minhash --annotate at "* ]]
	expect_eq "${line#*, from a file, }" \
	    "≥ 70% of nshash's throughput (same run): share $x ($(cell "$mc" 3) MB/s, nshash $(cell "$nc" 3) MB/s) — $want"
	MINHASH_SHARE=$x
}

# Fail unless each target says MET when its figure reaches its threshold
# and NOT MET when it does not; there must be $1 of them.
check_targets() {
	local line fig thr want n=0
	local ratio='≥ ([0-9.]+)× .*: ([0-9.]+)× '
	local pipe='≥ ([0-9.]+)\): lowest ([0-9.]+) '
	local share='≥ ([0-9]+)% .*: lowest share ([0-9.]+) '
	local mshare="≥ ([0-9]+)% of nshash's throughput .*: share ([0-9.]+) "
	local rss='under ([0-9]+) MiB.*: largest ([0-9.]+) MiB'
	local fast='at least as fast as .*: ([0-9.]+|inf)× '
	local speed='≥ ([0-9]+) MB/s: ([0-9.]+) MB/s '
	while IFS= read -r line; do
		n=$((n + 1))
		if [[ $line == *": not measured — not measured" ]]; then
			continue
		elif [[ $line == *"output byte for byte the baseline's"* ]]; then
			want="NOT MET"
			[[ $line != *": the same — "* ]] || want=MET
			expect_eq "${line##* — }" "$want"
			continue
		elif [[ $line =~ $speed ]]; then
			thr=${BASH_REMATCH[1]} fig=${BASH_REMATCH[2]}
		elif [[ $line =~ $ratio || $line =~ $pipe ]]; then
			thr=${BASH_REMATCH[1]} fig=${BASH_REMATCH[2]}
		elif [[ $line =~ $fast ]]; then
			thr=1 fig=${BASH_REMATCH[1]}
		elif [[ $line =~ $share || $line =~ $mshare ]]; then
			thr=0.${BASH_REMATCH[1]} fig=${BASH_REMATCH[2]}
		elif [[ $line =~ $rss ]]; then
			# Under the limit: the figure plus a tenth must not reach it.
			thr=$(awk -v t="${BASH_REMATCH[1]}" 'BEGIN { print -t }')
			fig=$(awk -v f="${BASH_REMATCH[2]}" \
			    'BEGIN { print -(f + 0.1) }')
		else
			echo "a target of no known form: $line"
			return 1
		fi
		want="NOT MET"
		awk -v f="$fig" -v t="$thr" 'BEGIN { exit !(f >= t) }' &&
			want=MET
		expect_eq "${line##* — }" "$want"
	done < <(targets)
	expect_eq "$n" "$1"
}

@test "bench/run.sh: one table, a row per command, ratios from the medians" {
	bench
	[ "$status" -eq 0 ]
	[[ $output == *"wrote $report"* ]]
	check_table
	check_targets 12
	# The figures of the targets are the table's.
	x=$(cell '`$NSDEDUP --annotate -j2 $CORPUS`' 4)
	targets | grep -qF "≥ 12× \`jq -c .\`: $x× "
	x=$(cell '`$NSDEDUP --annotate -j2 $CORPUS`' 5)
	targets | grep -qF "≥ 3× the awk exact dedup: $x× "
	x=$(cell '`$NSDEDUP -m simhash --annotate -j2 $CORPUS`' 4)
	targets | grep -qF "≥ 10× \`jq -c .\`: $x× "
	check_minhash_share
	for m in nshash simhash minhash; do
		targets | grep -q "^- $m -j2 ≥ 1\.8× the -j1 throughput "
	done
	# What each method found.
	grep -Eq '^- minhash \(defaults: --threshold 0\.5, [^)]*\) found [0-9]+ duplicates; each lookup found [0-9]+\.[0-9]+ candidate groups on average; its index: [0-9]+ entries, [0-9]+ groups, [0-9.]+ MiB at its peak\.$' \
	    "$report"
	# The table and the targets are printed at the end.
	expect_eq "$(printf '%s\n' "$output" | sed -n '/^## Throughput$/,$p')" \
	    "$(sed -n '/^## Throughput$/,/^## Machine$/p' "$report" |
	    sed '$d')"
	for m in nshash simhash minhash; do
		grep -q "^- $m: not taken: NSD_BENCH_NO_PERF is set\.\$" \
		    "$report"
	done
	expect_eq "$(grep -c '^## Against a baseline' "$report")" 0
	# No shared corpora: the real text is said not measured, and why.
	grep -qxF "Not measured: no corpora at $NSD_SHARED_DATA." "$report"
	targets | grep -qxF -e "- real text (no corpora at $NSD_SHARED_DATA): not measured — not measured"
	# Compressed inputs: read by nsdedup and through a pipe, per format
	# (or said not measured), the target's figure the pipe's median over
	# nsdedup's.
	for f in gz:zcat zst:'zstd -dc'; do
		line=$(targets | grep -F "\`nsdedup F.jsonl.${f%%:*}\` at least as fast as \`${f#*:} F.jsonl.${f%%:*} | nsdedup\`") ||
		    targets | grep -q "^- compressed input, "
		[ -z "$line" ] || {
			self=$(grep -F "| \`\$NSDEDUP --annotate \$CORPUS.${f%%:*}\` |" "$report" | awk -F '|' '{ print $(NF - 3) }')
			pipe=$(grep -F "| \`${f#*:} \$CORPUS.${f%%:*} \\| \$NSDEDUP --annotate\` |" "$report" | awk -F '|' '{ print $(NF - 3) }')
			x=$(awk -v a="$pipe" -v b="$self" 'BEGIN { printf "%.2f", a / b }')
			[[ $line == *": $x× ("* ]]
		}
	done
}

@test "bench/run.sh: the targets say NOT MET when the figures miss them" {
	# On the fake clock: -j1 four times as slow as -j2, but minhash as
	# slow at -j2 as at -j1, and so a quarter of nshash's throughput; a
	# pipe slower still with --db; the references take no time at all.
	# And the simhash -j2 --db run from a pipe holds 80 MB until run.sh
	# has sampled its memory (read its /proc/PID/status, after which the
	# fake cat makes the file $sampled), in the run that run.sh samples.
	fake_clock
	sampled=$BATS_TEST_TMPDIR/sampled
	real_cat=$(command -v cat)
	cat > "$BATS_TEST_TMPDIR/bin/cat" <<EOF
#!/bin/sh
'$real_cat' "\$@"
st=\$?
case "\$*" in
/proc/*/status) : > '$sampled' ;;
esac
exit \$st
EOF
	chmod +x "$BATS_TEST_TMPDIR/bin/cat"
	cat > "$BATS_TEST_TMPDIR/this" <<EOF
#!/bin/bash
t=0
case " \$* " in
*" -j1 "*) t=4 ;;
*" -j2 "*) t=1 ;;
esac
case "\$*" in
"-m minhash --annotate -j2"*) t=\$((t + 3)) ;;
esac
# From a pipe, no file is named.
case "\$*" in
*.jsonl) ;;
"-m simhash --annotate -j2 --db "*)
	# Its first run is the one run.sh samples.
	if [ ! -e '$sampled.done' ]; then
		hog=\$(head -c 80000000 /dev/zero | tr '\\0' x)
		rm -f '$sampled'
		for _ in \$(seq 600); do
			[ -e '$sampled' ] && break
			sleep 0.1
		done
		: > '$sampled.done'
	fi
	t=\$((t + 3)) ;;
*--db*) t=\$((t + 3)) ;;
esac
$(tick '$t')
exec '$NSDEDUP' "\$@"
EOF
	chmod +x "$BATS_TEST_TMPDIR/this"
	NSDEDUP=$BATS_TEST_TMPDIR/this bench
	[ "$status" -eq 0 ]
	check_table
	check_targets 12
	check_minhash_share
	expect_eq "$MINHASH_SHARE" 0.250
	run targets
	[[ ${lines[0]} == *"≥ 12× \`jq -c .\`: 0.00× "*" — NOT MET" ]]
	[[ ${lines[1]} == *"≥ 3× the awk exact dedup: 0.00× "*" — NOT MET" ]]
	[[ ${lines[2]} == *"≥ 10× \`jq -c .\`: 0.00× "*" — NOT MET" ]]
	[[ ${lines[3]} == "- minhash --annotate "*" ≥ 70% of nshash's throughput (same run): share 0.250 "*" — NOT MET" ]]
	[[ ${lines[4]} == "- nshash -j2 ≥ 1.8× the -j1 throughput"*" — MET" ]]
	[[ ${lines[5]} == "- simhash -j2 ≥ 1.8× the -j1 throughput"*" — MET" ]]
	[[ ${lines[6]} == "- minhash -j2 ≥ 1.8× the -j1 throughput"*" — NOT MET" ]]
	[[ ${lines[7]} == "- from a pipe within 10% "*": lowest 0."*" --db); "*" — NOT MET" ]]
	# (Runs that end before run.sh's first sample, as these quick ones
	# may, are counted at the end of the line.)
	[[ ${lines[8]} == "- peak RssAnon under 64 MiB, every nsdedup row: largest "*" MiB (simhash -j2 --db, from a pipe); 1 of 24 rows at 64 MiB or more: simhash -j2 --db, from a pipe "*" MiB"*" — NOT MET" ]]
	rss=$(cell '`cat $CORPUS \| $NSDEDUP -m simhash --annotate -j2 --db $TMP/x.nsd`' 8)
	awk -v r="${rss% MiB}" 'BEGIN { exit !(r >= 76) }'
}

@test "bench/run.sh: the minhash target is MET when minhash keeps 70% of nshash's throughput" {
	# On the fake clock, nshash at -j2 from the file takes 3 s, every
	# other nsdedup run 1 s: minhash has 3 times nshash's throughput.
	fake_clock
	cat > "$BATS_TEST_TMPDIR/this" <<EOF
#!/bin/sh
case "\$*" in
"--annotate -j2 "*.jsonl) $(tick 3) ;;
*) $(tick 1) ;;
esac
exec '$NSDEDUP' "\$@"
EOF
	chmod +x "$BATS_TEST_TMPDIR/this"
	NSDEDUP=$BATS_TEST_TMPDIR/this bench
	[ "$status" -eq 0 ]
	check_table
	check_targets 12
	check_minhash_share
	expect_eq "$MINHASH_SHARE" 3.000
	targets | grep -q "≥ 70% of nshash's throughput (same run): share 3.000 .* — MET\$"
}

# Shared corpora of generated news (English and Chinese) in $1, as two
# gzipped NDJSON files.
fake_shared() {
	mkdir -p "$1"
	"$GENCORPUS" --seed 5 --records 150 | gzip > "$1/a.jsonl.gz"
	"$GENCORPUS" --seed 6 --records 100 | gzip > "$1/b.jsonl.gz"
}

# The real-text table's rows, and a cell of the row of command $1
# (column $2: 3 median s, 4 MB/s, 5 ×jq, 6 ×awk).
real_rows() {
	sed -n '/^| text | command |/,/^$/p' "$report" | grep '^| [a-z]* | `'
}
real_cell() {
	real_rows | awk -F' [|] ' -v c="$1" -v k="$2" \
	    '$2 == c { v = $k; sub(/ [|]$/, "", v); print v }'
}

@test "bench/run.sh: the real-text corpus, made in rounds from the shared corpora, and its rows and targets per language" {
	fake_shared "$BATS_TEST_TMPDIR/shared"
	NSD_SHARED_DATA=$BATS_TEST_TMPDIR/shared bench --real-size 2M \
	    --keep-corpus
	[ "$status" -eq 0 ]
	check_targets 17
	real=$BATS_TEST_TMPDIR/bench/real-1-2M.jsonl
	# Whole rounds of nsd-repost, each with its own ids, the last cut
	# at the first line's end past the size.
	size=$(stat -c %s "$real")
	[ "$size" -ge $((2 << 20)) ]
	last=$(tail -n 1 "$real" | wc -c)
	[ $((size - last)) -lt $((2 << 20)) ]
	jq -e . "$real" > /dev/null
	rounds=$(sed -n 's/^{"id":"r\([0-9]*\):.*/\1/p' "$real" | sort -un |
	    tr '\n' ' ')
	[[ $rounds == "1 2 "* ]]
	expect_eq "$(grep -vc '^{"id":"r[0-9]*:' "$real")" 0
	n=$(echo "$rounds" | wc -w)
	grep -qF "\`\$REAL\` is $size bytes of real news: $n rounds of \`gzip -dc \$NSD_SHARED_DATA/*.jsonl.gz | " "$report"
	grep -qF " $(wc -l < "$real") records, $(grep -c '#r[0-9]*",' "$real") of them copies made by nsd-repost" "$report"
	en=$(grep -F '"lang":"en"}' "$real" | wc -c)
	zh=$(grep -vF '"lang":"en"}' "$real" | wc -c)
	[ "$en" -gt 0 ] && [ "$zh" -gt 0 ]
	grep -qF "\`\$REAL_EN\` holds its English records ($en bytes) and \`\$REAL_ZH\` its Chinese ones ($zh bytes)" "$report"
	# A row per reference and text, per method at -j1 and -j2 on the
	# whole, and per method at -j1 on each language.
	run real_rows
	expect_eq "$(printf '%s\n' "${lines[@]}" | cut -d '|' -f 2,3 |
	    tr -s ' ')" "$(for t in all en zh; do
		T=; [ $t = all ] || T=_${t^^}
		printf ' %s | `cat $REAL%s` \n' $t "$T"
		printf ' %s | `jq -c . $REAL%s` \n' $t "$T"
		printf " %s | \`awk '!seen[\$0]++' \$REAL%s\` \n" $t "$T"
		for m in '' '-m simhash ' '-m minhash '; do
			for j in 1 2; do
				[ $t = all ] || [ $j = 1 ] || continue
				printf ' %s | `$NSDEDUP %s--annotate -j%s $REAL%s` \n' \
				    $t "$m" $j "$T"
			done
		done
	done)"
	# The targets' figures are the table's.
	nc='`$NSDEDUP --annotate -j2 $REAL`'
	targets | grep -qF "real text: nshash --annotate at the default jobs (-j2 here), from a file, ≥ 12× \`jq -c .\`: $(real_cell "$nc" 5)× ($(real_cell "$nc" 4) MB/s, jq $(real_cell '`jq -c . $REAL`' 4) MB/s) — "
	targets | grep -qF "real text: nshash --annotate at the default jobs (-j2 here), from a file, ≥ 3× the awk exact dedup: $(real_cell "$nc" 6)× "
	for mt in nshash:350: simhash:300:'-m simhash ' minhash:200:'-m minhash '; do
		IFS=: read -r m want arg <<< "$mt"
		x=$(real_cell "\`\$NSDEDUP $arg--annotate -j1 \$REAL_EN\`" 4)
		targets | grep -qF "real text, English records: $m --annotate -j1 ≥ $want MB/s: $x MB/s (awk $(real_cell "\`awk '!seen[\$0]++' \$REAL_EN\`" 4) MB/s) — "
	done
	mc='`$NSDEDUP -m minhash --annotate -j2 $REAL`'
	x=$(awk -v n="$(real_cell "$nc" 3)" -v m="$(real_cell "$mc" 3)" \
	    'BEGIN { printf "%.3f", n / m }')
	targets | grep -qF "real text: minhash --annotate at the default jobs (-j2 here) ≥ 70% of nshash's throughput (same run): share $x "
	# No baseline, no comparing of outputs.
	run grep -c "byte for byte" "$report"
	expect_eq "$output" 0
}

@test "bench/run.sh --baseline: the real text's output compared with the baseline's, every method, --explain included" {
	fake_shared "$BATS_TEST_TMPDIR/shared"
	# A baseline that writes what nsdedup does, and one whose --explain
	# says something else for simhash.
	cat > "$BATS_TEST_TMPDIR/same" <<EOF
#!/bin/sh
exec '$NSDEDUP' "\$@"
EOF
	cat > "$BATS_TEST_TMPDIR/other" <<EOF
#!/bin/sh
case " \$* " in
*" -m simhash "*" --explain "*) '$NSDEDUP' "\$@" | sed 's/}\$/,"x":1}/' ;;
*) exec '$NSDEDUP' "\$@" ;;
esac
EOF
	chmod +x "$BATS_TEST_TMPDIR/same" "$BATS_TEST_TMPDIR/other"
	NSD_SHARED_DATA=$BATS_TEST_TMPDIR/shared bench --real-size 500K \
	    --baseline "$BATS_TEST_TMPDIR/same"
	[ "$status" -eq 0 ]
	check_targets 20
	targets | grep -qxF -e "- real text: output byte for byte the baseline's, every method compared, --explain included: the same — MET"
	NSD_SHARED_DATA=$BATS_TEST_TMPDIR/shared bench --real-size 500K \
	    --baseline "$BATS_TEST_TMPDIR/other"
	[ "$status" -eq 0 ]
	check_targets 20
	targets | grep -qxF -e "- real text: output byte for byte the baseline's, every method compared, --explain included: differs: -m simhash --explain — NOT MET"
}

@test "bench/run.sh: the sections of index-scale.sh (MinHash's too), redis.sh, year.sh and the analysis are kept" {
	{
		printf '# old report\n\n<!-- index-scale: begin -->\n'
		printf '## Index at scale\nscale figures\n'
		printf '<!-- index-scale: end -->\n\n'
		printf '<!-- index-scale-minhash: begin -->\n'
		printf '## MinHash index at scale\nminhash figures\n'
		printf '<!-- index-scale-minhash: end -->\n\n'
		printf 'a line of the old report\n\n'
		printf '<!-- analysis: begin -->\n## Analysis\nwhy\n'
		printf '<!-- analysis: end -->\n'
		printf '<!-- redis: begin -->\n## Shared index on Redis\n'
		printf 'redis figures\n<!-- redis: end -->\n'
		printf '<!-- year: begin -->\n## A simulated year\n'
		printf 'year figures\n<!-- year: end -->\n'
	} > "$report"
	bench
	[ "$status" -eq 0 ]
	expect_eq "$(sed -n '/^<!-- index-scale: begin -->$/,$p' "$report")" \
	    "$(printf '%s\n' '<!-- index-scale: begin -->' \
	    '## Index at scale' 'scale figures' '<!-- index-scale: end -->' \
	    '<!-- index-scale-minhash: begin -->' \
	    '## MinHash index at scale' 'minhash figures' \
	    '<!-- index-scale-minhash: end -->' \
	    '<!-- redis: begin -->' '## Shared index on Redis' \
	    'redis figures' '<!-- redis: end -->' \
	    '<!-- year: begin -->' '## A simulated year' \
	    'year figures' '<!-- year: end -->' \
	    '' '<!-- analysis: begin -->' '## Analysis' 'why' \
	    '<!-- analysis: end -->')"
	[ "$(grep -c 'a line of the old report' "$report")" -eq 0 ]
	grep -q '^## Throughput$' "$report"
}

@test "bench/run.sh: without perf, the report says the profile was not taken" {
	mkdir "$BATS_TEST_TMPDIR/bin"
	cat > "$BATS_TEST_TMPDIR/bin/perf" <<'EOF'
#!/bin/sh
echo "Error: perf_event_paranoid setting is 4" >&2
exit 255
EOF
	chmod +x "$BATS_TEST_TMPDIR/bin/perf"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH NSD_BENCH_NO_PERF='' \
	    NSD_BENCH_NO_TIME=1 bench
	[ "$status" -eq 0 ]
	for m in nshash simhash minhash; do
		grep -q "^- $m: not taken: perf is missing or cannot sample here (bench/profile.sh: perf cannot sample here: Error: perf_event_paranoid setting is 4)\.\$" \
		    "$report"
	done
	# Without hyperfine or /usr/bin/time, no CPU times.
	expect_eq "$(table_rows | awk -F' [|] ' '{ print $6, $7 }' | sort -u)" \
	    "n/a n/a"
}

@test "bench/run.sh: where the time goes, by stage, for each method" {
	command -v perf > /dev/null || skip "perf is not installed"
	fake_shared "$BATS_TEST_TMPDIR/shared"
	NSD_SHARED_DATA=$BATS_TEST_TMPDIR/shared NSD_BENCH_NO_PERF='' bench \
	    --real-size 500K
	[ "$status" -eq 0 ]
	if grep -q '^- nshash: not taken' "$report"; then
		skip "perf cannot sample here"
	fi
	grep -qxF '| stage | nshash CPU s | nshash share | simhash CPU s | simhash share | minhash CPU s | minhash share |' \
	    "$report"
	run sh -c "sed -n '/^## Where the time goes/,/^## Shared/p' '$report' |
	    grep '^| [a-z]* | [0-9]'"
	[ "${#lines[@]}" -eq 11 ]
	expect_eq "$(printf '%s\n' "${lines[@]}" | cut -d ' ' -f 2 | tr '\n' ' ')" \
	    "frame scan decode normalize split hash index write wait other all "
	[[ ${lines[10]} == "| all | "*" | 100.0% | "*" | 100.0% | "*" | 100.0% |" ]]
	# Each column's shares are its own: each adds up to about 100%.
	printf '%s\n' "${lines[@]:0:10}" | awk -F' [|] ' '
	    { for (k = 3; k <= 7; k += 2) { v = $k; sub(/%.*/, "", v); t[k] += v } }
	    END { for (k = 3; k <= 7; k += 2) if ((t[k] - 100) ^ 2 > 1) exit 1 }'
	# And per language on the real text, the same stages.
	for t in EN ZH; do
		mapfile -t rows < <(awk -v h="Where the time goes on \`\$REAL_$t\`" '
		    index($0, h) == 1 { on = 1; next }
		    on && /^$/ && seen { exit }
		    on && /^[|] [a-z]* [|] [0-9]/ { print; seen = 1 }' "$report")
		[ "${#rows[@]}" -eq 11 ]
		expect_eq "$(printf '%s\n' "${rows[@]}" | cut -d ' ' -f 2 | tr '\n' ' ')" \
		    "frame scan decode normalize split hash index write wait other all "
	done
}

@test "bench/run.sh --baseline times the two programs in turn, ABBA" {
	wrapper "$BATS_TEST_TMPDIR/this" A
	wrapper "$BATS_TEST_TMPDIR/base" B
	NSDEDUP=$BATS_TEST_TMPDIR/this bench --baseline "$BATS_TEST_TMPDIR/base"
	[ "$status" -eq 0 ]
	[[ $output == *"wrote $report"* ]]
	# Plain --annotate of the corpus (the default jobs) is timed only
	# with the baseline: one untimed run of each program, then the timed
	# runs A B, B A.
	run sh -c "grep -E '^[AB] --annotate [^ ]+\.jsonl\$' '$calls' | cut -c 1 |
	    tr -d '\n'"
	[ "$output" = "ABABBA" ]
	# Every command of the section ran 1 + 2 times with the baseline,
	# which was asked first whether it has -m minhash.
	run sh -c "grep '^B ' '$calls' | grep -vcx -e 'B --version' \
	    -e 'B -m minhash --annotate'"
	[ "$output" -eq 18 ]
	grep -qx 'B -m minhash --annotate' "$calls"
	run baseline_rows
	[ "${#lines[@]}" -eq 6 ]
	[[ ${lines[1]} == '| `$NSDEDUP --annotate --db $TMP/x.nsd $CORPUS` | '* ]]
	[[ ${lines[2]} == '| `$NSDEDUP -m simhash --annotate $CORPUS` | '* ]]
	[[ ${lines[4]} == '| `$NSDEDUP -m minhash --annotate $CORPUS` | '* ]]
	[[ ${lines[5]} == '| `$NSDEDUP -m minhash --annotate --db $TMP/x.nsd $CORPUS` | '* ]]
	expect_eq "$(grep -c 'minhash is not compared' "$report")" 0
	grep -q "^Written by \`bench/run.sh --size 2M --runs 2 --seed 1 --baseline $BATS_TEST_TMPDIR/base\`" \
	    "$report"
	grep -q "^Baseline: \`nsdedup [0-9.]*\`, $BATS_TEST_TMPDIR/base (sha256 [0-9a-f]*\\.\\.\\.)" \
	    "$report"
	check_table
	check_targets 14
}

@test "bench/run.sh --baseline without -m minhash compares the other methods" {
	wrapper "$BATS_TEST_TMPDIR/this" A
	# A baseline from before minhash: a usage error, as nsdedup's.
	cat > "$BATS_TEST_TMPDIR/base" <<EOF
#!/bin/sh
echo "B \$*" >> '$calls'
case " \$* " in
*" -m minhash "*)
	echo "nsdedup: invalid value 'minhash' for --method" >&2
	exit 2 ;;
esac
exec '$NSDEDUP' "\$@"
EOF
	chmod +x "$BATS_TEST_TMPDIR/base"
	NSDEDUP=$BATS_TEST_TMPDIR/this bench --baseline "$BATS_TEST_TMPDIR/base"
	[ "$status" -eq 0 ]
	[[ $output == *"bench/run.sh: the baseline has no -m minhash; minhash is not compared"* ]]
	# Asked once, and never timed with minhash.
	run grep -c -- '^B -m minhash' "$calls"
	[ "$output" -eq 1 ]
	run baseline_rows
	[ "${#lines[@]}" -eq 4 ]
	[[ ${lines[3]} == '| `$NSDEDUP -m simhash --annotate --db $TMP/x.nsd $CORPUS` | '* ]]
	grep -q 'The baseline has no `-m minhash` (it fails with it on empty input): minhash is not compared\.$' \
	    "$report"
	# This nsdedup's minhash rows are in the table all the same.
	check_table
	check_targets 14
}

@test "bench/run.sh: an nsdedup without -m minhash is refused before any timing" {
	cat > "$BATS_TEST_TMPDIR/old" <<EOF
#!/bin/sh
case " \$* " in
*" -m minhash "*) exit 2 ;;
esac
exec '$NSDEDUP' "\$@"
EOF
	chmod +x "$BATS_TEST_TMPDIR/old"
	NSDEDUP=$BATS_TEST_TMPDIR/old bench
	[ "$status" -eq 1 ]
	[ "$output" = "bench/run.sh: $BATS_TEST_TMPDIR/old: -m minhash fails on empty input (an older nsdedup?)" ]
	[ ! -e "$report" ]
}

@test "bench/run.sh --baseline: a slower nsdedup does not meet the 95% target" {
	fake_clock
	wrapper "$BATS_TEST_TMPDIR/this" A 3
	wrapper "$BATS_TEST_TMPDIR/base" B 1
	NSDEDUP=$BATS_TEST_TMPDIR/this bench --baseline "$BATS_TEST_TMPDIR/base"
	[ "$status" -eq 0 ]
	[[ $output == *"- throughput ≥ 95% of the baseline's, every command compared: lowest share 0.333 "*" — NOT MET"* ]]
	# Each row's share is the baseline's median over this one's, a third
	# here.
	run baseline_rows
	[ "${#lines[@]}" -eq 6 ]
	for row in "${lines[@]}"; do
		awk -F' \\| ' '{ exit !($4 == 0.333 && $2 == 3 && $3 == 1 &&
		    ($4 - $3 / $2) ^ 2 < 0.001 ^ 2) }' <<< "$row"
	done
	check_targets 14
}

@test "bench/run.sh --baseline: a slower baseline meets the 95% target" {
	fake_clock
	wrapper "$BATS_TEST_TMPDIR/this" A 1
	wrapper "$BATS_TEST_TMPDIR/base" B 3
	NSDEDUP=$BATS_TEST_TMPDIR/this bench --baseline "$BATS_TEST_TMPDIR/base"
	[ "$status" -eq 0 ]
	[[ $output == *"- throughput ≥ 95% of the baseline's, every command compared: lowest share 3.000 "*" — MET"* ]]
}

@test "bench/run.sh --baseline: bad baselines are refused before any timing" {
	bench --baseline "$BATS_TEST_TMPDIR/missing"
	[ "$status" -eq 1 ]
	[ "$output" = "bench/run.sh: $BATS_TEST_TMPDIR/missing: not an executable (--baseline)" ]
	bench --baseline "$NSDEDUP" --baseline-rev HEAD
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "bench/run.sh: --baseline and --baseline-rev exclude each other" ]
	[ ! -e "$report" ]
}

@test "bench/run.sh --baseline-rev builds the revision and names it" {
	own_checkout || skip "the source tree is not a git checkout"
	command -v autoreconf > /dev/null || skip "autoreconf is not installed"
	bench --baseline-rev no-such-revision
	[ "$status" -eq 1 ]
	[ "$output" = "bench/run.sh: --baseline-rev: 'no-such-revision' is not a revision of $TOP_SRCDIR" ]
	bench --baseline-rev HEAD
	[ "$status" -eq 0 ]
	[[ $output == *"building the baseline from HEAD ($(git -C "$TOP_SRCDIR" rev-parse HEAD))"* ]]
	grep -q "^Baseline: \`nsdedup [0-9.]*\`, built from git revision HEAD ($(git -C "$TOP_SRCDIR" rev-parse --short HEAD), \"" \
	    "$report"
	# minhash is compared when HEAD has it.
	want=4
	! git -C "$TOP_SRCDIR" cat-file -e HEAD:src/minhash.c 2>/dev/null ||
		want=6
	run baseline_rows
	[ "${#lines[@]}" -eq "$want" ]
}

@test "bench/run.sh --baseline-rev outside a git checkout says so" {
	command -v git > /dev/null || skip "git is not installed"
	mkdir "$BATS_TEST_TMPDIR/copy"
	cp "$TOP_SRCDIR/bench/run.sh" "$TOP_SRCDIR/bench/common.sh" \
	    "$BATS_TEST_TMPDIR/copy/"
	git -C "$BATS_TEST_TMPDIR" rev-parse --git-dir > /dev/null 2>&1 &&
		skip "the test's temporary directory is inside a checkout"
	RUN_SH=$BATS_TEST_TMPDIR/copy/run.sh bench --baseline-rev HEAD
	[ "$status" -eq 1 ]
	[ "$output" = "bench/run.sh: --baseline-rev: $BATS_TEST_TMPDIR is not a git checkout" ]
	[ ! -e "$report" ]
}

# Run bench/redis.sh on a tiny corpus, one round.
bench_redis() {
	run env GENCORPUS="$GENCORPUS" REDIS_SERVER="$REDIS_SERVER" \
	    REDIS_CLI="$REDIS_CLI" bash "$TOP_SRCDIR/bench/redis.sh" \
	    --records 300 --runs 1 --out "$report"
}

@test "bench/redis.sh: file, single server and cluster per method, and the target's verdict from its figure" {
	need redis-server
	need redis
	printf '# old report\n\nkept\n' > "$report"
	bench_redis
	[ "$status" -eq 0 ]
	grep -q '^kept$' "$report"
	[ "$(grep -c '^<!-- redis: begin -->$' "$report")" -eq 1 ]
	for m in nshash simhash minhash; do
		for ix in file single cluster; do
			grep -q "^| $m | $ix | [0-9.]* | [0-9]* | [0-9.]* |" \
			    "$report"
		done
		# The Redis rows have server CPU, commands and round trips
		# per record, keys and memory.
		grep -Eq "^\\| $m \\| cluster( \\| [0-9.]+){10} \\|$" "$report"
		# Each record takes some commands, all in far fewer trips.
		awk -F' [|] ' -v m="| $m" '$1 == m && $2 == "cluster" {
		    exit !($8 >= 1 && $9 > 0 && $9 < 1000) }' "$report"
	done
	# What each shape of command costs the server, per key.
	grep -q '^### What a command costs the server$' "$report"
	[ "$(sed -n '/^### What a command costs/,/^### Target/p' "$report" |
	    grep -Ec '^\| .* \| [0-9]+\.[0-9]{2} \|$')" -eq 6 ]
	rps=$(awk -F' [|] ' '$1 == "| nshash" && $2 == "cluster" { print $4 }' \
	    "$report")
	[ -n "$rps" ]
	if [ "$rps" -ge 100000 ]; then want=MET; else want='NOT MET'; fi
	grep -q "^- nshash against the 3-master cluster, at least 100000 records/s: $rps records/s: \*\*$want\*\*$" \
	    "$report"
	# A second run replaces the section.
	bench_redis
	[ "$status" -eq 0 ]
	[ "$(grep -c '^<!-- redis: begin -->$' "$report")" -eq 1 ]
	[ "$(grep -c '^## Shared index on Redis$' "$report")" -eq 1 ]
	# No server is left behind.
	ports=$(sed -n 's/^bench\/redis.sh: single server on port \([0-9]*\); cluster on ports \(.*\)$/\1 \2/p' <<< "$output")
	[ "$(wc -w <<< "$ports")" -eq 4 ]
	for p in $ports; do
		if "$REDIS_CLI" -p "$p" ping > /dev/null 2>&1; then
			echo "a server still answers on port $p"
			false
		fi
	done
}

# Run bench/year.sh on days of 200K into $report, stdout and stderr apart;
# the arguments are passed on.
bench_year() {
	run --separate-stderr env GENCORPUS="$GENCORPUS" \
	    bash "$TOP_SRCDIR/bench/year.sh" --size 200K --out "$report" "$@"
}

# The rows of the section's table of the days, and the target's line.
year_rows() {
	sed -n '/^| day | input MB |/,/^$/p' "$report" | grep '^| [0-9]'
}
year_target() {
	sed -n '/^### Target$/,/^<!-- year: end -->$/p' "$report" |
	    grep '^- index size and day time flat'
}

# Fail unless the target's line says MET when both its figures are 1.10
# or less, and NOT MET otherwise, the figures being those of the table:
# the largest and the smallest size on the disk and rolling median from
# day $1 on, each on the day the line names.
check_year_target() {
	local line re a t want=MET
	line=$(year_target)
	re='from day ([0-9]+) on: index on the disk max/min ([0-9.]+) \(([0-9.]+) MiB on day ([0-9]+), ([0-9.]+) MiB on day ([0-9]+)\); day time, rolling median of 5 days, max/min ([0-9.]+) \(([0-9.]+) s on day ([0-9]+), ([0-9.]+) s on day ([0-9]+)\) — (MET|NOT MET)$'
	[[ $line =~ $re ]] || {
		echo "not a target line: $line"
		return 1
	}
	expect_eq "${BASH_REMATCH[1]}" "$1"
	a=${BASH_REMATCH[2]} t=${BASH_REMATCH[7]}
	awk -v a="$a" -v t="$t" 'BEGIN { exit !(a <= 1.10 && t <= 1.10) }' ||
		want="NOT MET"
	expect_eq "${BASH_REMATCH[12]}" "$want"
	# The figures of the days the line names are the table's, when the
	# table shows them: column 6, the rolling median; 10, on the disk.
	year_rows | awk -F' [|] ' -v d1="${BASH_REMATCH[4]}" \
	    -v s1="${BASH_REMATCH[3]}" -v d2="${BASH_REMATCH[6]}" \
	    -v s2="${BASH_REMATCH[5]}" -v d3="${BASH_REMATCH[9]}" \
	    -v t3="${BASH_REMATCH[8]}" -v d4="${BASH_REMATCH[11]}" \
	    -v t4="${BASH_REMATCH[10]}" '
	    { d = $1; sub(/^\| /, "", d) }
	    d == d1 && $9 != s1 || d == d2 && $9 != s2 ||
	    d == d3 && $6 != t3 || d == d4 && $6 != t4 {
		print "a figure of the target is not the table'"'"'s: " $0
		bad = 1
	    }
	    END { exit bad }'
	YEAR_TIME_X=$t
}

@test "bench/year.sh --help: the usage on stdout, status 0" {
	run --separate-stderr bash "$TOP_SRCDIR/bench/year.sh" --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ ${lines[0]} == "usage: bench/year.sh [--days N] [--size SIZE] [--ttl TTL] [--method METHOD]" ]]
	for o in --days --size --ttl --method --seed --out --keep; do
		printf '%s\n' "$output" | grep -q "^  $o "
	done
}

@test "bench/year.sh: usage errors exit 2 with a message and the usage, before any run" {
	for args in "--bogus" "--days 0" "--days" "--size 10K" "--size 1X" \
	    "--ttl 0" "--ttl 3651d" "--ttl 5w" "--method superhash" \
	    "--seed -1" "--out="; do
		# shellcheck disable=SC2086
		bench_year $args
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[[ ${stderr_lines[0]} == "bench/year.sh: "* ]]
		[[ ${stderr_lines[1]} == "usage: bench/year.sh "* ]]
	done
	bench_year --method superhash
	expect_eq "${stderr_lines[0]}" \
	    "bench/year.sh: invalid --method 'superhash' (nshash, simhash or minhash)"
	bench_year --bogus
	expect_eq "${stderr_lines[0]}" "bench/year.sh: unknown argument '--bogus'"
	[ ! -e "$report" ]
}

@test "bench/year.sh: three tiny days, the table of the days and the target's verdict from its figures" {
	printf '# old report\n\nkept\n' > "$report"
	bench_year --days 3 --ttl 1d --keep "$BATS_TEST_TMPDIR/keep"
	[ "$status" -eq 0 ]
	[[ $stderr == *"bench/year.sh: wrote $report"* ]]
	printed=$output
	grep -q '^kept$' "$report"
	expect_eq "$(grep -c '^<!-- year: begin -->$' "$report")" 1
	grep -q '^## A simulated year$' "$report"
	grep -q '^Written by `bench/year.sh --days 3 --size 200K --ttl 1d --method nshash --seed 1` (`make bench-year`; `make bench` does not run it), from [0-9-]* [0-9:]* UTC to ' \
	    "$report"
	grep -Eq '^- Machine: .*, [0-9]+ cores online \(nproc\), [0-9.]+ GiB of memory; ' \
	    "$report"
	grep -Eq '^- nsdedup: `nsdedup [0-9.]+` at commit ([0-9a-f]{7,}|unknown)' \
	    "$report"
	# The days shown: 1, the target's first (one and a half windows in,
	# but never day 1) and the last, each with its figures.
	run year_rows
	[ "${#lines[@]}" -eq 3 ]
	for i in 0 1 2; do
		[[ ${lines[i]} =~ ^\|\ $((i + 1))\ \|(\ [0-9.]+\ \|){8}\ [0-9]+(\ →\ [0-9]+)?\ \|\ [0-9]+\ \|\ [0-9]+\ \|\ ([0-9]+\ \([0-9.]+\)|none)\ \|\ [0-9]+\ of\ [0-9]+\ \|\ [0-9]+\ of\ [0-9]+\ \|$ ]]
	done
	# With a window of a day, the copies are all a window or more back
	# (up to 20 from each earlier day, as it has originals for them), and
	# the window forgot them all.
	for i in 1 2; do
		[[ ${lines[i]} =~ \|\ 0\ of\ 0\ \|\ 0\ of\ ([0-9]+)\ \|$ ]]
		[ "${BASH_REMATCH[1]}" -gt $((10 * i)) ]
	done
	check_year_target 2
	# The last day's size on the disk is that of the index kept.
	bytes=0
	for f in "$BATS_TEST_TMPDIR"/keep/year.nsd*; do
		bytes=$((bytes + $(stat -c '%b * %B' "$f")))
	done
	expect_eq "$(year_rows | awk -F' [|] ' 'END { print $9 }')" \
	    "$(awk -v b="$bytes" 'BEGIN { printf "%.2f", b / 1048576 }')"
	expect_eq "$(wc -l < "$BATS_TEST_TMPDIR/keep/days.tsv")" 3
	[ -f "$BATS_TEST_TMPDIR/keep/info/day3" ]
	# cat and jq -c . over day 1's input, in the same run.
	grep -Eq '^In the same run, over day 1.s input \([0-9]+ bytes\), .*`cat IN_1 > /dev/null` [0-9.]+ s .*`jq -c \. IN_1 > /dev/null` [0-9.]+ s ' \
	    "$report"
	# The table and the target are printed too.
	[[ $printed == *"| day | input MB |"* ]]
	[[ $printed == *"$(year_target)"* ]]

	# A second run replaces the section; --keep refuses a directory that
	# holds an index already.
	bench_year --days 3 --ttl 1d --keep "$BATS_TEST_TMPDIR/keep"
	[ "$status" -eq 1 ]
	expect_eq "$stderr" "bench/year.sh: $BATS_TEST_TMPDIR/keep/year.nsd exists: --keep wants a directory without one"
	bench_year --days 4 --ttl 2d
	[ "$status" -eq 0 ]
	expect_eq "$(grep -c '^<!-- year: begin -->$' "$report")" 1
	expect_eq "$(grep -c '^## A simulated year$' "$report")" 1
	grep -q '^kept$' "$report"
	# A window of two days: the copies from a day back are found, those
	# from two days back are not (up to 20 of each, as a day has
	# originals for them).
	run year_rows
	[ "${#lines[@]}" -eq 3 ]
	[[ ${lines[0]} == "| 1 | "* ]]
	for i in 1 2; do
		[[ ${lines[i]} =~ ^\|\ $((i + 2))\ \|.*\|\ ([0-9]+)\ of\ ([0-9]+)\ \|\ 0\ of\ ([0-9]+)\ \|$ ]]
		[ "${BASH_REMATCH[1]}" -eq "${BASH_REMATCH[2]}" ]
		[ "${BASH_REMATCH[1]}" -gt 10 ]
		[ "${BASH_REMATCH[3]}" -gt 10 ]
	done
	check_year_target 3
}

@test "bench/year.sh: days that get slower do not meet the target" {
	# On the fake clock, days 1 to 3 take a second, days 4 to 6 three,
	# the control runs into an empty index a second: the rolling median
	# of 5 days is 1 s on days 2 and 3 and 3 s from day 4 on.
	fake_clock
	cat > "$BATS_TEST_TMPDIR/this" <<EOF
#!/bin/sh
case "\$*" in
*"--db $BATS_TEST_TMPDIR/keep/year.nsd --ttl 1d --stats "*)
	if [ \$(( (NSDEDUP_NOW - 1735711200) / 86400 + 1 )) -ge 4 ]; then
		$(tick 3)
	else
		$(tick 1)
	fi ;;
*"/empty.nsd "*) $(tick 1) ;;
esac
exec '$NSDEDUP' "\$@"
EOF
	chmod +x "$BATS_TEST_TMPDIR/this"
	NSDEDUP=$BATS_TEST_TMPDIR/this bench_year --days 6 --ttl 1d \
	    --keep "$BATS_TEST_TMPDIR/keep"
	[ "$status" -eq 0 ]
	check_year_target 2
	expect_eq "$YEAR_TIME_X" 3.000
	year_target | grep -q 'max/min 3.000 (3.000 s on day 4, 1.000 s on day 2) — NOT MET$'
	grep -q '^Not a part of the target: from day 2 on, .* the day.s time over the control.s, rolling median of 5 days, went from 1.00 (day 2) to 3.00 (day 4), max/min 3.000; ' \
	    "$report"
	run year_rows
	[[ ${lines[0]} == "| 1 | "*" | 1.000 | 1.000 | 1.000 | "* ]]
	[[ ${lines[2]} == "| 6 | "*" | 3.000 | 3.000 | 1.000 | "* ]]
}

# bench/quality.sh --only converted, with $NSD_SHARED_DATA holding a
# corpus of each script: seven articles of 12 sentences (more than 600
# code points) each, the fourth a repeat of the second; and an opencc on
# PATH that "converts" by copying, and logs its configurations.
converted_setup() {
	local corpus i
	mkdir -p "$BATS_TEST_TMPDIR/shared" "$BATS_TEST_TMPDIR/bin"
	for corpus in zh_sina_news_2018 zh_hant_hkcnews_2018; do
		for i in 1 2 3 2 5 6 7; do
			record "$corpus/$i" "$(prose "$i" 12)"
		done | awk '{ sub(/"id":"[^"]*"/, "\"id\":\"" NR "\"") } 1' |
		    gzip >"$BATS_TEST_TMPDIR/shared/$corpus.jsonl.gz"
	done
	cat >"$BATS_TEST_TMPDIR/bin/opencc" <<EOF
#!/bin/sh
[ "\$1" = --version ] && { printf '\nVersion: 9.9\n'; exit 0; }
echo "\$2" >> '$calls'
cp "\$4" "\$6"
EOF
	chmod +x "$BATS_TEST_TMPDIR/bin/opencc"
}

quality_converted() {
	run --separate-stderr env NSDEDUP="$NSDEDUP" GENCORPUS="$GENCORPUS" \
	    NSD_REPOST="$NSD_REPOST" \
	    NSD_SHARED_DATA="$BATS_TEST_TMPDIR/shared" \
	    PATH="$BATS_TEST_TMPDIR/bin:$PATH" "$@" \
	    bash "$TOP_SRCDIR/bench/quality.sh" --only converted --out "$report"
}

@test "make quality's converted copies: each set's copies found, the originals' repeats flagged, every method" {
	converted_setup
	quality_converted
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ -z "$output" ]
	expect_eq "$(cat "$calls")" "$(printf '%s\n' s2t.json t2s.json \
	    s2twp.json)"
	grep -qx '## Converted copies' "$report"
	grep -q ' and OpenCC 9.9: 9 nsdedup runs, ' "$report"
	# Every copy names its original's group: the repeat's copy names the
	# first of the two; the repeat is the one original flagged.
	for set in s2t t2s s2twp; do
		for m in nshash simhash minhash; do
			grep -qxF "| $set | $m | 7 (100.0%) | 0 | 1 |" \
			    "$report" || { grep "^| $set | $m " "$report"; false; }
		done
	done
	# The note written by hand under the table is kept by the next run.
	sed -i 's/^(No note yet: write one here; it is kept.)$/Kept./' \
	    "$report"
	quality_converted
	[ "$status" -eq 0 ]
	grep -qx 'Kept.' "$report"
}

@test "make quality's converted copies are skipped, saying so, without OpenCC's converter" {
	converted_setup
	quality_converted OPENCC=/nonexistent/opencc
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[[ "$stderr" == *"converted copies: no OpenCC converter (/nonexistent/opencc; on Debian: apt-get install opencc); skipping them"* ]]
	grep -qx 'Skipped: no OpenCC converter (/nonexistent/opencc; on Debian: apt-get install opencc).' "$report"
	[ ! -e "$calls" ]
}

@test "make quality's converted copies: a set whose corpus is missing is skipped, saying so, and the others measured" {
	converted_setup
	rm "$BATS_TEST_TMPDIR/shared/zh_hant_hkcnews_2018.jsonl.gz"
	quality_converted
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	grep -qx 'Skipped: t2s (zh_hant_hkcnews_2018.jsonl.gz missing).' \
	    "$report"
	expect_eq "$(grep -c '^| s2t\(wp\)\? | ' "$report")" 6
	expect_eq "$(grep -c '^| t2s | ' "$report")" 0
}
