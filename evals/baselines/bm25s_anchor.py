"""Query latency of bm25s (precomputed sparse BM25 scores, in memory) on the query bench's corpus.

Run by `npm run bench -- query` (evals/bench/anchors.ts) on the same synthetic chunks and queries
as Docent, from a throw-away venv with requirements-bm25s.txt. Reads one chunk per line and one
query per line; times each query alone (top 50, one thread) after indexing; prints one JSON object.

    python bm25s_anchor.py --corpus chunks.txt --queries queries.txt [--k 50]
"""

import argparse
import json
import re
import resource
import time

import bm25s
import numpy as np

WORD = re.compile(r"\w+")


def tokens(text):
    return WORD.findall(text.lower())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--k", type=int, default=50)
    args = ap.parse_args()
    with open(args.corpus, encoding="utf-8") as f:
        corpus = [line.rstrip("\n") for line in f]
    with open(args.queries, encoding="utf-8") as f:
        queries = [line.rstrip("\n") for line in f if line.strip()]

    t0 = time.perf_counter()
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index([tokens(t) for t in corpus], show_progress=False)
    build_s = time.perf_counter() - t0
    scores = retriever.scores
    index_bytes = sum(a.nbytes for a in (scores["data"], scores["indices"], scores["indptr"]))

    warm = [t for t in tokens(queries[0] if queries else "") if t in retriever.vocab_dict][:1]
    if warm:  # the first call warms numpy's code paths; not timed
        retriever.retrieve([warm], k=1, show_progress=False, n_threads=1)
    times = []
    hits = 0
    for q in queries:
        qt = [t for t in tokens(q) if t in retriever.vocab_dict]
        s = time.perf_counter()
        if qt:
            docs, _ = retriever.retrieve([qt], k=min(args.k, len(corpus)), show_progress=False, n_threads=1)
            hits += docs.shape[1]
        times.append((time.perf_counter() - s) * 1000)
    p = lambda q: float(np.percentile(times, q, method="inverted_cdf"))
    print(
        json.dumps(
            {
                "bm25s": bm25s.__version__,
                "chunks": len(corpus),
                "queries": len(queries),
                "build_s": round(build_s, 2),
                "query_ms": [round(p(50), 2), round(p(95), 2), round(p(99), 2)],
                "index_mb": round(index_bytes / 2**20, 1),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "hits": hits,
            }
        )
    )


if __name__ == "__main__":
    main()
