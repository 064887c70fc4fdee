#!/usr/bin/env python3
"""Validate evals/datasets/fastify-docs/questions.jsonl against the corpus that
evals/corpora/build-fastify-docusaurus.sh builds.

Checks, per line: the contract fields and their types (docs/contracts.md, "Evaluation questions");
unique ids; a known kind; version null or one of the corpus's versions (versions.json, or "next"
for the current docs/); answerable:false has empty gold and facts; every gold path exists and its
heading is the plain text of a heading line (any depth, outside code fences) in that file; a
scoped question's gold lies in its version or in unversioned pages; and an absent-feature
question's scope really lacks the feature (its "absent" words, given below, appear nowhere there).

Usage:
  python3 evals/datasets/fastify-docs/check_questions.py [--corpus /tmp/docent-corpora/fastify-docs]

Exits 0 when everything passes, 1 otherwise. Standard library only.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = {"version-specific", "cross-version", "absent-feature", "exact-token", "paraphrase", "off-topic", "smalltalk"}
FIELDS = {"id", "question", "version", "answerable", "gold", "facts", "kind"}
# The words that would answer each absent-feature question, if its scope had them.
ABSENT = {
    "fd05": ["handlerTimeout"],
    "fd07": ["logController"],
    "fd08": ["withTypeProvider", "TypeProvider"],
    "fd09": ["writeEarlyHints", "Early Hints"],
    "fd11": ["onRequestAbort"],
    "fd22": ["addHttpMethod"],
    "fd30": ["getDecorator"],
}
# Absent-feature questions that name their version in the words (version null).
NAMED = {"fd08": "3.29.5"}


def plain(heading: str) -> str:
    h = re.sub(r"<[^>]+>", "", heading)
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)
    return re.sub(r"\s+", " ", re.sub(r"[`*_]", "", h)).strip().lower()


def headings(path: str) -> set[str]:
    out, fence = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if re.match(r"^\s*(```|~~~)", line):
                fence = not fence
                continue
            m = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                out.add(plain(m.group(1)))
    return out


def version_of(rel: str) -> str | None:
    m = re.match(r"versioned_docs/version-([^/]+)/", rel)
    if m:
        return m.group(1)
    return "next" if rel.startswith("docs/") else None


def files_in(corpus: str, version: str | None) -> list[str]:
    out = []
    for base, _, names in os.walk(corpus):
        for n in names:
            if n.endswith(".md"):
                rel = os.path.relpath(os.path.join(base, n), corpus).replace(os.sep, "/")
                if version_of(rel) in (version, None):
                    out.append(os.path.join(corpus, rel))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/tmp/docent-corpora/fastify-docs")
    ap.add_argument("--questions", default=os.path.join(HERE, "questions.jsonl"))
    a = ap.parse_args()
    with open(os.path.join(a.corpus, "versions.json"), encoding="utf-8") as f:
        versions = set(json.load(f)) | {"next"}
    errors, ids = [], set()
    with open(a.questions, encoding="utf-8") as f:
        lines = [l for l in f if l.strip()]
    for n, line in enumerate(lines, 1):
        q = json.loads(line)
        where = f"line {n} ({q.get('id')})"
        if set(q) != FIELDS:
            errors.append(f"{where}: fields {sorted(q)}")
            continue
        if q["id"] in ids:
            errors.append(f"{where}: duplicate id")
        ids.add(q["id"])
        if q["kind"] not in KINDS:
            errors.append(f"{where}: kind {q['kind']}")
        if q["version"] is not None and q["version"] not in versions:
            errors.append(f"{where}: version {q['version']} not in the corpus")
        if not q["answerable"]:
            if q["gold"] or q["facts"]:
                errors.append(f"{where}: unanswerable with gold or facts")
            scope = q["version"] or NAMED.get(q["id"])
            for word in ABSENT.get(q["id"], []):
                found = [p for p in files_in(a.corpus, scope) if word.lower() in open(p, encoding="utf-8").read().lower()]
                if found:
                    errors.append(f"{where}: '{word}' appears in its scope: {found[:2]}")
            if q["kind"] == "absent-feature" and q["id"] not in ABSENT:
                errors.append(f"{where}: absent-feature without the words to check")
            continue
        if not q["gold"]:
            errors.append(f"{where}: answerable without gold")
        for g in q["gold"]:
            path = os.path.join(a.corpus, g["path"])
            if not os.path.isfile(path):
                errors.append(f"{where}: no file {g['path']}")
                continue
            if g["heading"] and plain(g["heading"]) not in headings(path):
                errors.append(f"{where}: no heading '{g['heading']}' in {g['path']}")
            v = version_of(g["path"])
            if q["version"] is not None and v not in (q["version"], None):
                errors.append(f"{where}: gold {g['path']} outside version {q['version']}")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{len(lines)} questions, {sum(1 for l in lines if json.loads(l)['answerable'])} answerable: "
          + ("ok" if not errors else f"{len(errors)} problems"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
