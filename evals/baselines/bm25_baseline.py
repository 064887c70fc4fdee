#!/usr/bin/env python3
"""Plain BM25 retrieval baseline over a folder of documents (Markdown/MDX, HTML, DOCX, PDF).

Reference point for Docent's Postgres-based keyword retriever: same questions file, same hit rule,
no Docent code involved.

Pipeline
  1. Walk the corpus (sorted) for *.md / *.mdx, drop YAML front matter (its `title` becomes the
     page title) and MDX `import` / `export` lines (outside code fences). HTML and DOCX files are
     converted to Markdown with pandoc (`pandoc -t gfm`) and split the same way, at every heading
     level (their headings are the only structure they have). PDF files are read with pdftotext,
     one section per page, carrying its page number (no breadcrumb).
  2. Split each file into heading-level sections: a section is the text under a `#`, `##` or `###`
     heading up to the next heading of any of those levels; `####` and deeper stay inside the
     section; lines inside fenced code blocks are never headings. Text before the first heading is
     the page intro. Each section has a breadcrumb: page title, then the heading chain
     (e.g. ["Transports", "Streamable HTTP"]), with heading markup (backticks, links, emphasis,
     HTML tags) reduced to plain text. Sections with no body text are skipped.
  3. Index breadcrumb + body with a lowercase tokenizer: `[a-z0-9]+` words minus a small English
     stopword list, plus extra whole tokens for joined identifiers (`tools/call`,
     `mcp-session-id`, `list_changed`, `2025-03-26`) and signed integers (`-32602`).
  4. One BM25Okapi index (rank-bm25, k1=1.5, b=0.75) over every section of the corpus. A question
     with a `version` only ranks sections whose path has that version segment or no version
     segment at all (a version segment matches ^\\d{4}-\\d{2}-\\d{2}$, ^v?\\d+(\\.\\d+)+$ or is
     draft/next/latest); `version: null` ranks everything.
     With --scope named, a question whose `version` is null but whose text names a release
     (`named_version`, written by the question author) ranks that release only: the scope a
     reader of the question would pick, given to the baseline without any detection code.
  5. Hit rule (the questions.jsonl contract): a retrieved section is a hit for a gold entry when its
     path equals the gold path and its breadcrumb contains the gold heading as one of its elements
     (or the gold heading is "", which accepts any section of that path), and, when the gold entry
     has a page, the section is that page. With --substring-match
     the breadcrumb, joined with " > ", need only contain the heading as a substring.
  6. Over answerable questions: recall@k = share of questions with a hit in the top k;
     MRR = mean of 1/rank of the first hit (0 when none in the ranking).

Usage
  python3 evals/baselines/bm25_baseline.py --corpus /work/shared/corpora/mcp-docs \
      --questions evals/datasets/mcp-docs/questions.jsonl --json out.json [--verbose] [--scope named]
  python3 evals/baselines/bm25_baseline.py --corpus /tmp/docent-corpora/pkg-docs \
      --questions evals/datasets/pkg-docs/questions.jsonl      (needs pandoc and pdftotext)
"""
from __future__ import annotations

import argparse
import html
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass

try:
    import numpy as np
    from rank_bm25 import BM25Okapi
except ImportError:  # pragma: no cover - environment problem, not a code path
    sys.stderr.write(
        "bm25_baseline.py needs rank-bm25 (and numpy): "
        "python3 -m venv /tmp/venv-bm25 && /tmp/venv-bm25/bin/pip install -r evals/baselines/requirements.txt\n"
    )
    raise

# ----------------------------------------------------------------------------- versions

VERSION_SEG = re.compile(r"^(\d{4}-\d{2}-\d{2}|v?\d+(\.\d+)+|draft|next|latest)$")


def path_version(rel_path: str) -> str | None:
    """First version-like folder segment of a corpus-relative path, or None (unversioned)."""
    for seg in rel_path.split("/")[:-1]:
        if VERSION_SEG.match(seg):
            return seg
    return None


# ----------------------------------------------------------------------------- parsing

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
MDX_IMPORT_EXPORT = re.compile(r"^(import|export)\s")


def plain_heading(text: str) -> str:
    """Heading text without markdown/MDX markup: `code`, [link](url), **bold**, <tags>, {#anchor}."""
    t = text.strip()
    t = re.sub(r"\{#[^}]*\}\s*$", "", t)
    t = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", t)
    t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", t)
    t = re.sub(r"<[^>]+>", "", t)
    t = t.replace("`", "")
    t = re.sub(r"(\*\*|__)(.+?)\1", r"\2", t)
    t = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?!\w)", r"\1", t)
    t = re.sub(r"(?<![\w_])_(?!\s)(.+?)(?<!\s)_(?![\w])", r"\1", t)
    t = re.sub(r"\\([\\`*_{}\[\]()#+\-.!<>|~])", r"\1", t)  # Markdown escapes (pandoc writes \[ for [)
    return re.sub(r"\s+", " ", t).strip()


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Returns (simple key: value pairs of the YAML front matter, the rest of the file)."""
    meta: dict[str, str] = {}
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        return meta, text
    lines = text.splitlines(keepends=True)
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            for line in lines[1:i]:
                m = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$", line)
                if m:
                    val = m.group(2)
                    if len(val) >= 2 and val[0] == val[-1] and val[0] in "\"'":
                        val = val[1:-1]
                    meta[m.group(1)] = val
            return meta, "".join(lines[i + 1 :])
    return meta, text  # unterminated front matter: keep the text as is


@dataclass
class Section:
    path: str  # relative to the corpus folder, with "/" separators
    version: str | None
    breadcrumb: list[str]
    text: str  # body text (without the heading line)
    page: int | None = None  # PDF page number, else None


def parse_sections(rel_path: str, raw: str, strip_markup: bool = False, max_level: int = 3) -> list[Section]:
    meta, body = split_front_matter(raw)
    title = plain_heading(meta.get("title", "")) or None
    version = path_version(rel_path)

    sections: list[Section] = []
    stack: list[tuple[int, str]] = []  # (level, heading) for levels 1..3
    buf: list[str] = []
    in_fence = False
    fence_char = ""

    def crumb() -> list[str]:
        heads = [h for _, h in stack]
        if title and (not heads or heads[0] != title):
            return [title, *heads]
        return heads

    def flush() -> None:
        text = "".join(buf).strip()
        if strip_markup:
            text = html.unescape(re.sub(r"<[^>]+>", " ", text))
        if text.strip():
            sections.append(Section(rel_path, version, crumb(), text))
        buf.clear()

    for line in body.splitlines(keepends=True):
        m = FENCE.match(line)
        if m:
            ch = m.group(1)[0]
            if not in_fence:
                in_fence, fence_char = True, ch
            elif ch == fence_char:
                in_fence = False
            buf.append(line)
            continue
        if not in_fence:
            if MDX_IMPORT_EXPORT.match(line):
                continue
            h = HEADING.match(line.rstrip("\r\n"))
            if h and len(h.group(1)) <= max_level:
                flush()
                level = len(h.group(1))
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, plain_heading(h.group(2))))
                continue
        buf.append(line)
    flush()
    return sections


def pdf_pages(rel_path: str, full: str) -> list[Section]:
    """One section per PDF page (pdftotext separates pages with form feeds)."""
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", full, "-"], check=True, capture_output=True).stdout
    pages = text.decode("utf-8", errors="replace").split("\f")
    version = path_version(rel_path)
    return [Section(rel_path, version, [], p.strip(), i + 1) for i, p in enumerate(pages) if p.strip()]


def converted_sections(rel_path: str, full: str, fmt: str, strip_markup: bool) -> list[Section]:
    """HTML/DOCX through pandoc to Markdown, split at every heading level."""
    md = subprocess.run(
        ["pandoc", "-f", fmt, "-t", "gfm", "--wrap=none", full], check=True, capture_output=True
    ).stdout.decode("utf-8", errors="replace")
    return parse_sections(rel_path, md, True if fmt == "html" else strip_markup, max_level=6)


def load_corpus(corpus: str, strip_markup: bool = False) -> list[Section]:
    out: list[Section] = []
    for root, dirs, files in os.walk(corpus):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(root, name)
            rel = os.path.relpath(full, corpus).replace(os.sep, "/")
            lower = name.lower()
            if lower.endswith(".md") or lower.endswith(".mdx"):
                with open(full, encoding="utf-8", errors="replace") as fh:
                    out.extend(parse_sections(rel, fh.read(), strip_markup))
            elif lower.endswith(".pdf"):
                out.extend(pdf_pages(rel, full))
            elif lower.endswith(".html") or lower.endswith(".htm"):
                out.extend(converted_sections(rel, full, "html", strip_markup))
            elif lower.endswith(".docx"):
                out.extend(converted_sections(rel, full, "docx", strip_markup))
    return out


# ----------------------------------------------------------------------------- tokenizer

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves s t don doesn isn aren wasn weren won let get got also may
    """.split()
)
WORD = re.compile(r"[a-z0-9]+")
# Alphanumeric runs joined by / _ - . : (at least one joiner): tools/call, mcp-session-id, 2025-03-26.
JOINED = re.compile(r"[a-z0-9]+(?:[/_.:\-][a-z0-9]+)+")
# Signed integers such as JSON-RPC error codes: -32602.
SIGNED_INT = re.compile(r"(?<![a-z0-9_\-])-\d{2,}\b")


def tokenize(text: str) -> list[str]:
    t = text.lower()
    tokens = [w for w in WORD.findall(t) if w not in STOPWORDS]
    tokens.extend(m for m in JOINED.findall(t) if not re.fullmatch(r"\d+\.\d+", m))
    tokens.extend(SIGNED_INT.findall(t))
    return tokens


# ----------------------------------------------------------------------------- evaluation


def is_hit(sec: Section, gold: list[dict], substring: bool) -> bool:
    for g in gold:
        if sec.path != g["path"]:
            continue
        if g.get("page") is not None and sec.page != g["page"]:
            continue
        heading = g["heading"]
        if heading == "":
            return True
        if substring:
            if heading in " > ".join(sec.breadcrumb):
                return True
        elif heading in sec.breadcrumb:
            return True
    return False


def evaluate(corpus: str, questions_path: str, k1: float, b: float, substring: bool, strip_markup: bool,
             verbose: bool, scope: str = "field") -> dict:
    sections = load_corpus(corpus, strip_markup)
    if not sections:
        raise SystemExit(f"no sections found under {corpus}")
    docs = [tokenize(" ".join(s.breadcrumb) + "\n" + s.text) for s in sections]
    bm25 = BM25Okapi(docs, k1=k1, b=b)
    versions = np.array([s.version or "" for s in sections], dtype=object)
    unversioned = versions == ""

    with open(questions_path, encoding="utf-8") as fh:
        questions = [json.loads(line) for line in fh if line.strip()]

    # Gold entries that no indexed section can satisfy (e.g. a heading with no body text).
    unreachable = []
    for q in questions:
        for g in q.get("gold", []):
            if not any(is_hit(s, [g], substring) for s in sections if s.path == g["path"]):
                unreachable.append((q["id"], g["path"], g["heading"]))

    per_question = []
    rows = []
    for q in questions:
        if not q.get("answerable"):
            continue
        scores = bm25.get_scores(tokenize(q["question"]))
        version = q.get("version") or (q.get("named_version") if scope == "named" else None)
        if version:
            in_scope = unversioned | (versions == version)
        else:
            in_scope = np.ones(len(sections), dtype=bool)
        idx = np.nonzero(in_scope)[0]
        order = idx[np.argsort(-scores[idx], kind="stable")]
        first = None
        for rank, i in enumerate(order, 1):
            if is_hit(sections[i], q["gold"], substring):
                first = rank
                break
        per_question.append({"id": q["id"], "first_hit_rank": first})
        top = sections[order[0]] if len(order) else None
        rows.append((q, first, top))

    m = len(per_question)
    ranks = [p["first_hit_rank"] for p in per_question]
    result = {
        "mode": "bm25-baseline",
        "scope": scope,
        "questions": len(questions),
        "answerable": m,
        "recall_at_5": round(sum(1 for r in ranks if r is not None and r <= 5) / m, 4) if m else 0.0,
        "recall_at_10": round(sum(1 for r in ranks if r is not None and r <= 10) / m, 4) if m else 0.0,
        "mrr": round(sum(1.0 / r for r in ranks if r is not None) / m, 4) if m else 0.0,
        "per_question": per_question,
    }

    print(f"corpus: {corpus}  sections indexed: {len(sections)}  (k1={k1}, b={b}, scope from {scope}"
          f"{', substring match' if substring else ''}{', html stripped' if strip_markup else ''})")
    if unreachable:
        print(f"warning: {len(unreachable)} gold entr{'y' if len(unreachable) == 1 else 'ies'} match no indexed section:")
        for u in unreachable:
            print(f"  {u[0]}: {u[1]} :: {u[2]!r}")
    if verbose:
        print()
        print(f"{'id':<5} {'kind':<17} {'version':<11} {'rank':>5}  top-1 section")
        for q, first, top in rows:
            top_s = f"{top.path} :: {' > '.join(top.breadcrumb)}{f' p.{top.page}' if top and top.page else ''}" if top else "-"
            print(f"{q['id']:<5} {q['kind']:<17} {str(q.get('version')):<11} {str(first or '-'):>5}  {top_s[:110]}")
    # By kind
    by_kind: dict[str, list] = {}
    for q, first, _ in rows:
        by_kind.setdefault(q["kind"], []).append(first)
    print()
    print(f"{'kind':<17} {'n':>3} {'R@5':>6} {'R@10':>6} {'MRR':>6}")
    for kind in sorted(by_kind):
        rs = by_kind[kind]
        n = len(rs)
        r5 = sum(1 for r in rs if r is not None and r <= 5) / n
        r10 = sum(1 for r in rs if r is not None and r <= 10) / n
        mrr = sum(1.0 / r for r in rs if r is not None) / n
        print(f"{kind:<17} {n:>3} {r5:>6.3f} {r10:>6.3f} {mrr:>6.3f}")
    print(f"{'ALL':<17} {m:>3} {result['recall_at_5']:>6.3f} {result['recall_at_10']:>6.3f} {result['mrr']:>6.3f}")
    print(f"(questions: {len(questions)}, answerable: {m}; recall@k = share of answerable questions with a hit in the top k)")
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="corpus folder (gold paths are relative to it)")
    ap.add_argument("--questions", required=True, help="questions.jsonl")
    ap.add_argument("--json", dest="json_out", help="write the metrics as JSON to this file")
    ap.add_argument("--k1", type=float, default=1.5)
    ap.add_argument("--b", type=float, default=0.75)
    ap.add_argument("--substring-match", action="store_true",
                    help="hit when the gold heading is a substring of the joined breadcrumb (looser)")
    ap.add_argument("--strip-html", action="store_true",
                    help="remove HTML tags and decode entities in section text before indexing")
    ap.add_argument("--verbose", "-v", action="store_true", help="print the rank and top-1 section per question")
    ap.add_argument("--scope", choices=["field", "named"], default="field",
                    help="version scope: the question's `version` field only (default), or also its `named_version`")
    args = ap.parse_args(argv)

    result = evaluate(args.corpus, args.questions, args.k1, args.b, args.substring_match, args.strip_html,
                      args.verbose, args.scope)
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
