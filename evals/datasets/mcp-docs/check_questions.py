#!/usr/bin/env python3
"""Validate evals/datasets/mcp-docs/questions.jsonl against the MCP docs corpus.

Checks, per line:
  * the line is one JSON object with exactly the contract fields
    (id, question, version, answerable, gold, facts, kind) of the right types;
  * ids are unique; kind is one of the allowed kinds; version is null or a
    version folder that exists in the corpus;
  * answerable:false  -> gold == [] and facts == [];
    answerable:true   -> 1+ gold entries and 1-3 facts;
  * every gold path exists (relative to the corpus folder) and its heading is
    either "" (page intro) or the plain text of a `##` / `###` heading line in
    that file (fenced code blocks are skipped, markup is stripped);
  * a scoped question's gold paths are in its version or unversioned;
  * optional fields, when present, are well formed: "phrasing" (one of PHRASINGS),
    "named_version" (a corpus version the text names), "note" (string),
    "follow_up_of" (id of an EARLIER question) with "history" (non-empty list of
    {"question": str} turns; both or neither), and "page" (1-based int) on a gold
    entry. Any other extra field is still an error.

Usage:
  python3 evals/datasets/mcp-docs/check_questions.py \
      [--corpus /work/shared/corpora/mcp-docs] [--questions path/to/questions.jsonl]

Exits 0 when everything passes, 1 otherwise. Standard library only.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CORPUS = "/work/shared/corpora/mcp-docs"
DEFAULT_QUESTIONS = os.path.join(HERE, "questions.jsonl")

KINDS = {
    "version-specific",
    "cross-version",
    "absent-feature",
    "exact-token",
    "paraphrase",
    "off-topic",
    "smalltalk",
}
FIELDS = ["id", "question", "version", "answerable", "gold", "facts", "kind"]
OPTIONAL_FIELDS = ["phrasing", "named_version", "note", "follow_up_of", "history"]
PHRASINGS = {
    "plain",
    "typo",
    "long",
    "acronym",
    "follow-up",
    "version-in-text",
    "sloppy",
}
VERSION_SEG = re.compile(r"^(\d{4}-\d{2}-\d{2}|v?\d+(\.\d+)+|draft|next|latest)$")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
HEADING = re.compile(r"^(#{2,3})\s+(.*?)\s*#*\s*$")


def plain_heading(text: str) -> str:
    """Reduce a markdown heading to plain text (no code/link/emphasis markup)."""
    t = text.strip()
    t = re.sub(r"\{#[^}]*\}\s*$", "", t)  # trailing {#anchor}
    t = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", t)  # images
    t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", t)  # links
    t = re.sub(r"<[^>]+>", "", t)  # html tags
    t = t.replace("`", "")
    t = re.sub(r"(\*\*|__)(.+?)\1", r"\2", t)
    t = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?!\w)", r"\1", t)
    t = re.sub(r"(?<![\w_])_(?!\s)(.+?)(?<!\s)_(?![\w])", r"\1", t)
    return re.sub(r"\s+", " ", t).strip()


_heading_cache: dict[str, list[str]] = {}


def headings_of(path: str) -> list[str]:
    if path not in _heading_cache:
        out = []
        in_fence = False
        fence_char = ""
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                m = FENCE.match(line)
                if m:
                    ch = m.group(1)[0]
                    if not in_fence:
                        in_fence, fence_char = True, ch
                    elif ch == fence_char:
                        in_fence = False
                    continue
                if in_fence:
                    continue
                h = HEADING.match(line.rstrip("\n"))
                if h:
                    out.append(plain_heading(h.group(2)))
        _heading_cache[path] = out
    return _heading_cache[path]


def version_of(rel_path: str) -> str | None:
    for seg in rel_path.split("/")[:-1]:
        if VERSION_SEG.match(seg):
            return seg
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--questions", default=DEFAULT_QUESTIONS)
    args = ap.parse_args()

    corpus = args.corpus
    versions = set()
    for root, dirs, _files in os.walk(corpus):
        for d in dirs:
            if VERSION_SEG.match(d):
                versions.add(d)

    errors: list[str] = []
    ids: set[str] = set()
    kinds = collections.Counter()
    n = answerable = gold_total = 0

    with open(args.questions, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()

    for lineno, line in enumerate(lines, 1):
        where = f"line {lineno}"
        if not line.strip():
            errors.append(f"{where}: blank line")
            continue
        try:
            q = json.loads(line)
        except json.JSONDecodeError as e:
            errors.append(f"{where}: invalid JSON ({e})")
            continue
        if not isinstance(q, dict):
            errors.append(f"{where}: not a JSON object")
            continue
        n += 1
        qid = q.get("id")
        where = f"line {lineno} ({qid})"
        missing_f = [f for f in FIELDS if f not in q]
        extra_f = [f for f in q if f not in FIELDS and f not in OPTIONAL_FIELDS]
        if missing_f or extra_f:
            errors.append(f"{where}: missing fields {missing_f}, unknown fields {extra_f} (contract: {FIELDS}, optional: {OPTIONAL_FIELDS})")
        if "phrasing" in q and q["phrasing"] not in PHRASINGS:
            errors.append(f"{where}: phrasing {q['phrasing']!r} not in {sorted(PHRASINGS)}")
        if "note" in q and (not isinstance(q["note"], str) or not q["note"].strip()):
            errors.append(f"{where}: note must be a non-empty string")
        if "named_version" in q and (not isinstance(q["named_version"], str) or q["named_version"] not in versions):
            errors.append(f"{where}: named_version {q['named_version']!r} is not a corpus version")
        if ("follow_up_of" in q) != ("history" in q):
            errors.append(f"{where}: follow_up_of and history go together")
        if "follow_up_of" in q and q["follow_up_of"] not in ids:
            errors.append(f"{where}: follow_up_of {q['follow_up_of']!r} is not the id of an earlier question")
        if "history" in q:
            hist = q["history"]
            if not isinstance(hist, list) or not hist or not all(
                isinstance(t, dict) and sorted(t.keys()) == ["question"] and isinstance(t["question"], str) and t["question"].strip()
                for t in hist
            ):
                errors.append(f"{where}: history must be a non-empty list of {{\"question\": str}} turns")
        if not isinstance(qid, str) or not qid:
            errors.append(f"{where}: id must be a non-empty string")
        elif qid in ids:
            errors.append(f"{where}: duplicate id")
        ids.add(qid)
        if not isinstance(q.get("question"), str) or not q["question"].strip():
            errors.append(f"{where}: question must be a non-empty string")
        version = q.get("version")
        if version is not None and (not isinstance(version, str) or version not in versions):
            errors.append(f"{where}: version {version!r} is not null or a corpus version {sorted(versions)}")
        kind = q.get("kind")
        if kind not in KINDS:
            errors.append(f"{where}: kind {kind!r} not in {sorted(KINDS)}")
        kinds[kind] += 1
        ans = q.get("answerable")
        if not isinstance(ans, bool):
            errors.append(f"{where}: answerable must be true/false")
        gold = q.get("gold")
        facts = q.get("facts")
        if not isinstance(gold, list) or not isinstance(facts, list):
            errors.append(f"{where}: gold and facts must be lists")
            continue
        if not all(isinstance(f, str) and f.strip() for f in facts):
            errors.append(f"{where}: facts must be non-empty strings")
        if ans is False:
            if gold or facts:
                errors.append(f"{where}: answerable:false needs empty gold and facts")
            if kind not in ("absent-feature", "off-topic", "smalltalk"):
                errors.append(f"{where}: answerable:false with kind {kind!r}")
        elif ans is True:
            answerable += 1
            if not gold:
                errors.append(f"{where}: answerable:true needs at least one gold section")
            if not 1 <= len(facts) <= 3:
                errors.append(f"{where}: needs 1-3 facts, has {len(facts)}")
            if kind in ("off-topic", "smalltalk"):
                errors.append(f"{where}: {kind} question should not be answerable")
        seen_gold = set()
        for gi, gd in enumerate(gold):
            gw = f"{where} gold[{gi}]"
            if not isinstance(gd, dict) or sorted(k for k in gd.keys() if k != "page") != ["heading", "path"]:
                errors.append(f"{gw}: must be {{path, heading}} plus optional page")
                continue
            if "page" in gd and (not isinstance(gd["page"], int) or isinstance(gd["page"], bool) or gd["page"] < 1):
                errors.append(f"{gw}: page must be a 1-based integer")
            path, heading = gd["path"], gd["heading"]
            if not isinstance(path, str) or not isinstance(heading, str):
                errors.append(f"{gw}: path/heading must be strings")
                continue
            key = (path, heading)
            if key in seen_gold:
                errors.append(f"{gw}: duplicate gold entry {key}")
            seen_gold.add(key)
            if path.startswith("/") or ".." in path.split("/"):
                errors.append(f"{gw}: path must be relative to the corpus: {path}")
                continue
            full = os.path.join(corpus, path)
            if not os.path.isfile(full):
                errors.append(f"{gw}: path does not exist: {path}")
                continue
            if version is not None:
                pv = version_of(path)
                if pv is not None and pv != version:
                    errors.append(f"{gw}: path version {pv} outside question scope {version}")
            if heading != "":
                if heading != plain_heading(heading):
                    errors.append(f"{gw}: heading has markup, use plain text: {heading!r}")
                if heading not in headings_of(full):
                    errors.append(f"{gw}: heading {heading!r} is not a ##/### heading of {path}")
            gold_total += 1

    print(f"questions: {n}  answerable: {answerable}  unanswerable: {n - answerable}  gold sections: {gold_total}")
    for k in sorted(KINDS):
        print(f"  {k:<17} {kinds.get(k, 0)}")
    for k in kinds:
        if k not in KINDS:
            print(f"  {k!r:<17} {kinds[k]}  (invalid)")
    missing = [k for k in KINDS if kinds.get(k, 0) == 0]
    if missing:
        errors.append(f"kinds not represented: {sorted(missing)}")
    if errors:
        print(f"\nFAILED: {len(errors)} problem(s)")
        for e in errors:
            print("  - " + e)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
