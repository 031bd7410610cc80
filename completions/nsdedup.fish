# fish completion for nsdedup(1)

complete -c nsdedup -s a -l annotate \
    -d 'Write every record, annotated (default)'
complete -c nsdedup -l compat -x -a nshash \
    -d 'Split and select sentences as the reference does'
complete -c nsdedup -l confirm -x \
    -d 'Least share of the smaller text that the other holds (default 0.7)'
complete -c nsdedup -l db -r -F \
    -d 'Remember fingerprints in this index file, or redis://HOST:PORT/NS'
complete -c nsdedup -l db-info \
    -d 'Describe the index and exit'
complete -c nsdedup -l db-undo \
    -d 'Take back the last run committed to the index and exit'
complete -c nsdedup -l db-verify \
    -d 'Check every invariant of the index and exit'
complete -c nsdedup -l distance -x -a '0 1 2 3 4 5 6 7 8' \
    -d 'simhash: most bits that may differ (default 3)'
complete -c nsdedup -s d -l drop-dups \
    -d 'Write only the originals, as read'
complete -c nsdedup -l dup-field -x \
    -d 'Name of the duplicate flag (empty: omit it)'
complete -c nsdedup -l explain \
    -d 'Add to each duplicate the evidence of its match'
complete -c nsdedup -l field-name -x \
    -d 'Name of the added group id'
complete -c nsdedup -s f -l format -x -a 'auto jsonl tsv' \
    -d 'Input format'
complete -c nsdedup -s h -l help \
    -d 'Show help and exit'
complete -c nsdedup -l id-field -x \
    -d 'Field naming a record'
complete -c nsdedup -s j -l jobs -x \
    -d 'Threads that fingerprint (default: the cores available)'
complete -c nsdedup -s k -l key -x \
    -d 'Field holding the text (repeatable)'
complete -c nsdedup -l max-line -x \
    -d 'Longest record accepted, in bytes (K, M, G suffixes)'
complete -c nsdedup -s m -l method -x \
    -a 'nshash\t"Hashes of the longest sentences" simhash\t"64-bit SimHash within --distance bits" minhash\t"MinHash-LSH, Jaccard of at least --threshold"' \
    -d 'Fingerprint method'
complete -c nsdedup -l common -x \
    -d 'nshash: groups sharing a sentence that make it boilerplate (default 3)'
complete -c nsdedup -l min-features -x \
    -d 'simhash, minhash: fewer features is nothing to compare (default 8)'
complete -c nsdedup -l min-length -x \
    -d 'Sentences must be longer than this many code points'
complete -c nsdedup -l min-match -x \
    -d 'nshash: fingerprints a duplicate shares with its group (default 2)'
complete -c nsdedup -l ngram -x \
    -d 'simhash, minhash: characters per Han/Kana/Hangul feature (1-8)'
complete -c nsdedup -s H -l no-header \
    -d 'TSV input has no header line: columns by number'
complete -c nsdedup -l no-update \
    -d 'Compare against the index, add nothing to it'
complete -c nsdedup -l no-wait \
    -d 'Exit with status 8 if another run holds the index'
complete -c nsdedup -l on-error -x \
    -a 'pass\t"Write it untouched" skip\t"Leave it out" fail\t"Stop the run"' \
    -d 'What to do with a bad record'
complete -c nsdedup -s D -l only-dups \
    -d 'Write only the duplicates, annotated'
complete -c nsdedup -s o -l output -r -F \
    -d 'Write to a file instead of standard output'
complete -c nsdedup -l progress -x -a 'auto always never' \
    -d 'When to show progress'
complete -c nsdedup -s q -l quiet \
    -d 'No per-record diagnostics, no progress'
complete -c nsdedup -s n -l sentences -x \
    -d 'Number of sentences fingerprinted (1-64)'
complete -c nsdedup -l shingle -x \
    -d 'simhash, minhash: words per feature elsewhere (1-8)'
complete -c nsdedup -l stats \
    -d 'Print a summary on standard error at the end (--stats=json: as JSON)'
complete -c nsdedup -l ttl -x \
    -d 'forget groups after SECONDS (s, m, h, d); the index keeps it'
complete -c nsdedup -l threshold -x \
    -d 'minhash: least estimated Jaccard similarity (default 0.5)'
complete -c nsdedup -s V -l version \
    -d 'Show version and exit'
complete -c nsdedup -l wait -x \
    -d 'Wait at most this many seconds for the index'
