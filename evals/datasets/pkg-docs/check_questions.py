#!/usr/bin/env python3
"""Validate evals/datasets/pkg-docs/questions.jsonl against the built pkg-docs folder.

The corpus is not committed; build it first with
    bash evals/corpora/build-docs-folder.sh /tmp/docent-corpora/pkg-docs

Contract checks (same contract as evals/datasets/mcp-docs/check_questions.py, whose
constants are reused): exact contract fields plus the optional fields phrasing,
named_version, note, follow_up_of + history; unique ids; allowed kind and phrasing;
version must be null (this corpus has no versions); answerable:false -> empty gold and
facts; answerable:true -> 1+ gold and 1-3 facts; follow_up_of names an earlier id.

Corpus checks, per gold entry:
  * the path exists relative to the corpus folder;
  * .pdf  -> "page" is required and within the PDF's page count (pdfinfo); heading is ""
             or a line of text on that page;
  * .html -> heading is the text of an <h2>/<h3> in the file;
  * .docx -> heading is the text of a level-2/3 heading (pandoc -f docx -t html).
Fact check: every fact must be supported by at least one of its question's gold
locations (the PDF page text from `pdftotext -f N -l N`, or the HTML/DOCX section under
the heading up to the next h1-h3): at least FACT_MIN_SHARE of the fact's key words
(>= 3 characters, not stop words) must occur in that text.

Usage:
  python3 evals/datasets/pkg-docs/check_questions.py \
      [--corpus /tmp/docent-corpora/pkg-docs] [--questions path/to/questions.jsonl] [-v]

Exits 0 when everything passes, 1 otherwise. Needs python3, pdftotext/pdfinfo
(poppler-utils) and pandoc.
"""
from __future__ import annotations

import argparse
import collections
import html
import importlib.util
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CORPUS = "/tmp/docent-corpora/pkg-docs"
DEFAULT_QUESTIONS = os.path.join(HERE, "questions.jsonl")
FACT_MIN_SHARE = 0.8

_spec = importlib.util.spec_from_file_location(
    "mcp_check", os.path.join(HERE, "..", "mcp-docs", "check_questions.py")
)
_mcp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mcp)
KINDS, PHRASINGS = _mcp.KINDS, _mcp.PHRASINGS
FIELDS, OPTIONAL_FIELDS = _mcp.FIELDS, _mcp.OPTIONAL_FIELDS
REQUIRED_KINDS = {"exact-token", "paraphrase", "absent-feature", "off-topic", "smalltalk"}

STOP = set(
    """the and for are but not you your with that this from into onto than then them they their there
    will would can could should may might must its it's was were been being has have had does did doing
    which what when where who whom how why all any each other some such only own same also just very
    instead rather about after before over under again further once here more most both few nor too
    e.g i.e via per one two use used uses using set sets""".split()
)


def norm(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return re.sub(r"\s+", " ", text).lower()


def key_words(fact: str) -> list[str]:
    words = re.findall(r"[A-Za-z0-9_$@][A-Za-z0-9_$@.\-/]*", fact)
    out = []
    for w in words:
        w = w.rstrip(".-/").lower()
        if len(w) >= 3 and w not in STOP:
            out.append(w)
    return out


def supported(fact: str, text: str) -> tuple[bool, list[str]]:
    t = norm(text)
    squashed = re.sub(r"[\s\-]", "", t)  # words broken across lines or hyphenated by layout
    kws = key_words(fact)
    missing = [w for w in kws if w not in t and re.sub(r"[\s\-]", "", w) not in squashed]
    ok = not kws or (len(kws) - len(missing)) / len(kws) >= FACT_MIN_SHARE
    return ok, missing


class Sections(HTMLParser):
    """Split an HTML document into (heading level, heading text, body text) sections."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[list] = [[0, "", []]]
        self.in_heading: int | None = None
        self.buf: list[str] = []

    def handle_starttag(self, tag, attrs):
        if re.fullmatch(r"h[1-6]", tag):
            self.in_heading = int(tag[1])
            self.buf = []
        elif tag in ("p", "li", "tr", "br", "pre", "div", "td", "th"):
            self._text(" ")

    def handle_endtag(self, tag):
        if self.in_heading is not None and tag == f"h{self.in_heading}":
            text = re.sub(r"\s+", " ", "".join(self.buf)).strip()
            level = self.in_heading
            self.in_heading = None
            if level <= 3:
                self.sections.append([level, text, []])
            else:
                self.sections[-1][2].append(" " + text + " ")

    def handle_data(self, data):
        self._text(data)

    def _text(self, data):
        if self.in_heading is not None:
            self.buf.append(data)
        else:
            self.sections[-1][2].append(data)


_cache: dict[str, object] = {}


def html_sections(path: str) -> list[tuple[int, str, str]]:
    if path not in _cache:
        if path.endswith(".docx"):
            src = subprocess.run(["pandoc", "-f", "docx", "-t", "html", path], check=True, capture_output=True, text=True).stdout
        else:
            with open(path, encoding="utf-8") as fh:
                src = fh.read()
        p = Sections()
        p.feed(src)
        p.close()
        _cache[path] = [(lvl, head, "".join(body)) for lvl, head, body in p.sections]
    return _cache[path]  # type: ignore[return-value]


def pdf_pages(path: str) -> int:
    key = ("pages", path)
    if key not in _cache:
        out = subprocess.run(["pdfinfo", path], check=True, capture_output=True, text=True).stdout
        _cache[key] = int(re.search(r"^Pages:\s+(\d+)", out, re.M).group(1))  # type: ignore[index]
    return _cache[key]  # type: ignore[return-value]


def pdf_page_text(path: str, page: int) -> str:
    key = ("page", path, page)
    if key not in _cache:
        _cache[key] = subprocess.run(
            ["pdftotext", "-f", str(page), "-l", str(page), path, "-"], check=True, capture_output=True, text=True
        ).stdout
    return _cache[key]  # type: ignore[return-value]


def gold_text(corpus: str, gd: dict, errors: list[str], gw: str) -> str | None:
    path, heading = gd["path"], gd["heading"]
    full = os.path.join(corpus, path)
    if not os.path.isfile(full):
        errors.append(f"{gw}: path does not exist: {path}")
        return None
    ext = os.path.splitext(path)[1].lower()
    if ext == ".pdf":
        page = gd.get("page")
        if page is None:
            errors.append(f"{gw}: PDF gold needs a page")
            return None
        n = pdf_pages(full)
        if not 1 <= page <= n:
            errors.append(f"{gw}: page {page} outside 1..{n}")
            return None
        text = pdf_page_text(full, page)
        if heading and norm(heading) not in [norm(l).strip() for l in text.splitlines()]:
            errors.append(f"{gw}: heading {heading!r} is not a line on page {page}")
        return text
    if ext in (".html", ".htm", ".docx"):
        if "page" in gd:
            errors.append(f"{gw}: page only applies to PDFs")
        secs = html_sections(full)
        if heading == "":
            return " ".join(body for _l, _h, body in secs)
        hits = [body for lvl, head, body in secs if lvl in (2, 3) and head == heading]
        if not hits:
            errors.append(f"{gw}: heading {heading!r} is not an h2/h3 heading of {path}")
            return None
        return " ".join(hits)
    errors.append(f"{gw}: unsupported format {ext}")
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--questions", default=DEFAULT_QUESTIONS)
    ap.add_argument("-v", "--verbose", action="store_true", help="print key words missing from each fact's best location")
    args = ap.parse_args()
    if not os.path.isdir(args.corpus):
        print(f"corpus folder {args.corpus} not found; build it with: bash evals/corpora/build-docs-folder.sh {args.corpus}")
        return 1

    errors: list[str] = []
    ids: set[str] = set()
    kinds: collections.Counter = collections.Counter()
    phrasings: collections.Counter = collections.Counter()
    formats: collections.Counter = collections.Counter()
    n = answerable = gold_total = facts_checked = 0
    with open(args.questions, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for lineno, line in enumerate(lines, 1):
        where = f"line {lineno}"
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
            errors.append(f"{where}: missing fields {missing_f}, unknown fields {extra_f}")
        if not isinstance(qid, str) or not qid or qid in ids:
            errors.append(f"{where}: id must be a unique non-empty string")
        if not isinstance(q.get("question"), str) or not q["question"].strip():
            errors.append(f"{where}: question must be a non-empty string")
        if q.get("version") is not None:
            errors.append(f"{where}: version must be null (the pkg-docs corpus has no versions)")
        if "named_version" in q:
            errors.append(f"{where}: named_version does not apply to this corpus")
        kind = q.get("kind")
        kinds[kind] += 1
        if kind not in KINDS:
            errors.append(f"{where}: kind {kind!r} not in {sorted(KINDS)}")
        phr = q.get("phrasing")
        phrasings[phr] += 1
        if "phrasing" in q and phr not in PHRASINGS:
            errors.append(f"{where}: phrasing {phr!r} not in {sorted(PHRASINGS)}")
        if ("follow_up_of" in q) != ("history" in q):
            errors.append(f"{where}: follow_up_of and history go together")
        if "follow_up_of" in q:
            if q["follow_up_of"] not in ids:
                errors.append(f"{where}: follow_up_of {q['follow_up_of']!r} is not an earlier id")
            hist = q["history"]
            if not isinstance(hist, list) or not hist or not all(
                isinstance(t, dict) and list(t.keys()) == ["question"] and isinstance(t["question"], str) and t["question"].strip()
                for t in hist
            ):
                errors.append(f"{where}: history must be a non-empty list of {{\"question\": str}}")
        ids.add(qid)
        ans, gold, facts = q.get("answerable"), q.get("gold"), q.get("facts")
        if not isinstance(ans, bool) or not isinstance(gold, list) or not isinstance(facts, list):
            errors.append(f"{where}: answerable must be bool, gold and facts lists")
            continue
        if ans is False:
            if gold or facts:
                errors.append(f"{where}: answerable:false needs empty gold and facts")
            if kind not in ("absent-feature", "off-topic", "smalltalk"):
                errors.append(f"{where}: answerable:false with kind {kind!r}")
            continue
        answerable += 1
        if not gold:
            errors.append(f"{where}: answerable:true needs at least one gold location")
        if not 1 <= len(facts) <= 3 or not all(isinstance(f, str) and f.strip() for f in facts):
            errors.append(f"{where}: needs 1-3 non-empty facts")
        if kind in ("off-topic", "smalltalk"):
            errors.append(f"{where}: {kind} question should not be answerable")
        texts: list[str] = []
        seen = set()
        for gi, gd in enumerate(gold):
            gw = f"{where} gold[{gi}]"
            if not isinstance(gd, dict) or sorted(k for k in gd if k != "page") != ["heading", "path"]:
                errors.append(f"{gw}: must be {{path, heading}} plus optional page")
                continue
            if "page" in gd and (not isinstance(gd["page"], int) or isinstance(gd["page"], bool) or gd["page"] < 1):
                errors.append(f"{gw}: page must be a 1-based integer")
                continue
            key = (gd["path"], gd["heading"], gd.get("page"))
            if key in seen:
                errors.append(f"{gw}: duplicate gold entry {key}")
            seen.add(key)
            if gd["path"].startswith("/") or ".." in gd["path"].split("/"):
                errors.append(f"{gw}: path must be relative to the corpus")
                continue
            formats[os.path.splitext(gd["path"])[1]] += 1
            t = gold_text(args.corpus, gd, errors, gw)
            if t is not None:
                texts.append(t)
                gold_total += 1
        for fi, fact in enumerate(facts):
            if not texts or not isinstance(fact, str):
                continue
            results = [supported(fact, t) for t in texts]
            facts_checked += 1
            if not any(ok for ok, _m in results):
                best = min((m for _ok, m in results), key=len)
                errors.append(f"{where} fact[{fi}]: key words not found at any gold location: {best}")
            elif args.verbose:
                best = min((m for _ok, m in results), key=len)
                if best:
                    print(f"  note {qid} fact[{fi}] missing (tolerated): {best}")

    print(f"questions: {n}  answerable: {answerable}  unanswerable: {n - answerable}  "
          f"gold locations: {gold_total}  facts checked: {facts_checked}")
    print("  gold by format: " + ", ".join(f"{k} {v}" for k, v in sorted(formats.items())))
    for k in sorted(KINDS):
        print(f"  {k:<17} {kinds.get(k, 0)}")
    print("  phrasing: " + ", ".join(f"{k} {v}" for k, v in sorted(phrasings.items(), key=lambda kv: str(kv[0]))))
    missing = sorted(k for k in REQUIRED_KINDS if kinds.get(k, 0) == 0)
    if missing:
        errors.append(f"kinds not represented: {missing}")
    if errors:
        print(f"\nFAILED: {len(errors)} problem(s)")
        for e in errors:
            print("  - " + e)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
