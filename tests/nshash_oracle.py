#!/usr/bin/env python3
"""The reference nshash grouping rule, as an oracle for --compat=nshash.

Written from the description in nsdedup's design, independently of the C
code: split the text on  : ： ； ？ 。 ！ 】 and newline, keep pieces longer
than 30 code points, take the 5 longest (ties in text order), and when none
is left use the empty string. A record that shares any piece with an
earlier record joins the oldest such group; its pieces not seen before
join that group too. Pieces are compared as strings, not hashes.

Usage: nshash_oracle.py FILE.jsonl  -> one line per record: id <TAB> group id
"""
import json
import re
import sys

DELIMITERS = re.compile("[:\uff1a\uff1b\uff1f\u3002\uff01\u3011\n]")


def pieces(text, n=5, min_length=30):
    kept = [p for p in DELIMITERS.split(text) if len(p) > min_length]
    kept.sort(key=len, reverse=True)  # stable: ties stay in text order
    return kept[:n] or [""]


def main(path):
    group_of_piece = {}
    first_id = []  # group number - 1 -> id of its first record
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            record = json.loads(line)
            own = pieces(record["text"])
            known = [group_of_piece[p] for p in own if p in group_of_piece]
            if known:
                group = min(known)
            else:
                first_id.append(record["id"])
                group = len(first_id) - 1
            for p in own:
                group_of_piece.setdefault(p, group)
            print(f"{record['id']}\t{first_id[group]}")


if __name__ == "__main__":
    main(sys.argv[1])
