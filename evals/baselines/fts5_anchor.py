"""Query latency of SQLite FTS5 ranked by bm25() on the query bench's corpus.

Run by `npm run bench -- query` (evals/bench/anchors.ts) on the same synthetic chunks and queries
as Docent. Python's standard-library sqlite3, so it needs no install and no compiler (a Node
binding would compile SQLite from source here: its prebuilt binaries are not on the package
registries). SQLite does the work in C; the per-query Python overhead is a few microseconds.
Reads one chunk per line and one query per line; queries are the words OR-ed, top 50 by bm25();
times each query alone after indexing; prints one JSON object.

    python3 fts5_anchor.py --corpus chunks.txt --queries queries.txt --db fts5.sqlite [--k 50]
"""

import argparse
import json
import os
import re
import resource
import sqlite3
import time

WORD = re.compile(r"\w+")


def match(query):
    words = list(dict.fromkeys(WORD.findall(query.lower())))
    return " OR ".join(f'"{w}"' for w in words)


def percentile(times, q):
    # Nearest rank on the sorted times, as the bench's own pct() does.
    s = sorted(times)
    return s[max(0, min(len(s) - 1, -(-q * len(s) // 100) - 1))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--k", type=int, default=50)
    args = ap.parse_args()
    with open(args.queries, encoding="utf-8") as f:
        queries = [line.rstrip("\n") for line in f if line.strip()]

    db = sqlite3.connect(args.db, isolation_level=None)
    t0 = time.perf_counter()
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE VIRTUAL TABLE chunks USING fts5(text)")
    with open(args.corpus, encoding="utf-8") as f:
        batch = []
        for i, line in enumerate(f):
            batch.append((i + 1, line.rstrip("\n")))
            if len(batch) == 10_000:
                db.execute("BEGIN")
                db.executemany("INSERT INTO chunks (rowid, text) VALUES (?, ?)", batch)
                db.execute("COMMIT")
                batch = []
        if batch:
            db.execute("BEGIN")
            db.executemany("INSERT INTO chunks (rowid, text) VALUES (?, ?)", batch)
            db.execute("COMMIT")
    db.execute("INSERT INTO chunks (chunks) VALUES ('optimize')")
    build_s = time.perf_counter() - t0

    sql = f"SELECT rowid FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT {args.k}"
    db.execute(sql, (match(queries[0] if queries else "x"),)).fetchall()  # warm-up, not timed
    times = []
    hits = 0
    for q in queries:
        s = time.perf_counter()
        hits += len(db.execute(sql, (match(q),)).fetchall())
        times.append((time.perf_counter() - s) * 1000)
    version = db.execute("SELECT sqlite_version()").fetchone()[0]
    db.close()
    size = sum(os.path.getsize(p) for p in (args.db, args.db + "-wal") if os.path.exists(p))
    print(
        json.dumps(
            {
                "sqlite": version,
                "build_s": round(build_s, 2),
                "query_ms": [round(percentile(times, q), 2) for q in (50, 95, 99)],
                "index_mb": round(size / 2**20, 1),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "hits": hits,
            }
        )
    )


if __name__ == "__main__":
    main()
