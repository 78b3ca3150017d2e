#!/usr/bin/env python3
"""Refresh rows of a paper chapter's "Ours next to the paper" table from experiment reports.

usage: update-claims-table.py [--by-position] [--label-prefix P] DOC OUT_DIR NAME [NAME ...]

DOC is a chapter of docs/src/papers/ (sfc.md, hpcc.md, bfc.md, pbfs.md, tcd.md, ndp.md).

For each experiment NAME, reads OUT_DIR/NAME/REPORT.md (full run) and OUT_DIR/NAME-quick/REPORT.md
(quick run), when present, and rewrites the doc's rows `| NAME | claim | paper | quick | full |
verdict |` whose claim text matches a report row: the quick and full values, and the verdict
(full if there is a full report, else quick). A verdict annotation written by hand after the
first word ("differs (ours higher; see …)") is kept when the verdict word is unchanged;
otherwise the row takes the report's verdict and is listed on stdout for a manual look.
Rows the reports do not have and report claims the doc does not have are listed too.

--by-position: for tables whose claim texts are shortened (PB-FS, TCD): the doc's rows of NAME
are matched to the report's claims in order, and only when there are as many of each.
--label-prefix P: the doc's first column is NAME without the prefix P (the BFC table writes
`fig5` for `bfc-fig5`).
"""
import sys
from pathlib import Path


def report_rows(path):
    rows = {}
    if not path.exists():
        return None
    lines = path.read_text().splitlines()
    in_table = False
    for line in lines:
        if line.startswith("| claim | ours | paper | verdict |"):
            in_table = True
            continue
        if in_table:
            if not line.startswith("|"):
                in_table = False
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 4 or cells[0].startswith("---"):
                continue
            rows[cells[0]] = (cells[1], cells[2], cells[3])
    return rows


def main():
    args = sys.argv[1:]
    by_position = "--by-position" in args
    args = [a for a in args if a != "--by-position"]
    label_prefix = ""
    if "--label-prefix" in args:
        k = args.index("--label-prefix")
        label_prefix = args[k + 1]
        del args[k : k + 2]
    doc = Path(args[0])
    out = Path(args[1])
    names = args[2:]
    lines = doc.read_text().split("\n")
    for name in names:
        full = report_rows(out / name / "REPORT.md")
        quick = report_rows(out / f"{name}-quick" / "REPORT.md")
        if full is None and quick is None:
            print(f"{name}: no report")
            continue
        label = name[len(label_prefix) :] if name.startswith(label_prefix) else name
        prefix = f"| {label} | "
        mine = [i for i, line in enumerate(lines) if line.startswith(prefix)]
        by_row = {}
        if by_position:
            claims = list(full or quick)
            if len(claims) != len(mine):
                print(f"{name}: {len(mine)} doc rows, {len(claims)} report claims: not matched")
                continue
            by_row = dict(zip(mine, claims))
        seen = set()
        for i in mine:
            line = lines[i]
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 6:
                print(f"{name}: unexpected row shape: {line[:80]}")
                continue
            _, claim, paper, q_old, f_old, verdict_old = cells
            key = by_row.get(i, claim)
            q = quick.get(key) if quick else None
            f = full.get(key) if full else None
            if q is None and f is None:
                print(f"{name}: doc row not in the reports: {claim}")
                continue
            seen.add(key)
            q_new = q[0] if q else q_old
            f_new = f[0] if f else f_old
            if f is None and f_old not in ("", "-"):
                # Only a quick report: its verdict would not describe the full column.
                lines[i] = f"| {label} | {claim} | {paper} | {q_new} | {f_new} | {verdict_old} |"
                continue
            v_new = (f or q)[2]
            # "differs (ours higher; see …)" keeps its note while the report still says
            # "differs (ours higher)"; any other change takes the report's verdict.
            if verdict_old.startswith(v_new.rstrip(")")):
                verdict = verdict_old
            else:
                verdict = v_new
            if verdict != verdict_old:
                print(f"{name}: verdict {verdict_old!r} -> {verdict!r}: {claim}")
            lines[i] = f"| {label} | {claim} | {paper} | {q_new} | {f_new} | {verdict} |"
        for claim in (full or quick):
            if claim not in seen:
                print(f"{name}: report claim not in the doc: {claim}")
    doc.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
