import { randomUUID } from 'node:crypto'
import type { Queryable } from '../store/db'
import { sha256Hex } from '../store/ids'
import { chunksById } from '../store/passages'
import { accessKey, readableCollections } from '../store/access'
import { AskResult, type Thread, type ThreadSummary } from '../../shared/answer'
import { AskTrace, type AskOutcome, type StoredTrace } from '../../shared/trace'
import type { PriorTurn } from './followup'

/**
 * Persistence for answers: traces, conversation threads and the verified-answer cache (tables
 * from migration 2). Plain PostgreSQL, so it runs on PGlite and on a server alike.
 */

/** Per collection, a fingerprint of everything that changes what a search can return. */
export type IndexState = Record<string, string>

export interface CacheEntry {
  result: AskResult
  trace_id: string
}

export function normaliseQuestion(q: string): string {
  return q
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[\s?!.]+$/, '')
    .trim()
}

export class AnswerStore {
  /**
   * `readOnly` (a read-only engine, e.g. the MCP server on a SELECT-only role): answers are made
   * and cached answers are read, but nothing is written: no trace, thread or cache entry is kept.
   */
  constructor(
    private readonly db: Queryable,
    private readonly opts: { readOnly?: boolean } = {},
  ) {}

  async saveTrace(t: {
    id: string
    thread_id: string | null
    question: string
    outcome: AskOutcome
    ms: number
    data: AskTrace
  }): Promise<void> {
    if (this.opts.readOnly) return
    // The collections it was answered from: on a server only roles that may read them all see it (migration 8).
    await this.db.query(
      `INSERT INTO traces (id, thread_id, question, outcome, ms, data, collections) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::text[])`,
      [t.id, t.thread_id, t.question, t.outcome, t.ms, JSON.stringify(t.data), t.data.scope?.collections ?? []],
    )
  }

  /** A stored trace; null when there is none, or when it does not read as a trace of this version. */
  async trace(id: string): Promise<StoredTrace | null> {
    const { rows } = await this.db.query<{
      id: string
      thread_id: string | null
      question: string
      outcome: AskOutcome
      ms: number
      created_at: Date
      data: unknown
    }>(
      // Only a trace of collections the role may read them all (the policies say the same on a server).
      `SELECT id, thread_id, question, outcome, ms, created_at, data FROM traces, (SELECT docent_readable_collections() AS r) a
        WHERE id = $1 AND (a.r IS NULL OR collections <@ a.r)`,
      [id],
    )
    const r = rows[0]
    if (!r) return null
    const data = AskTrace.safeParse(r.data)
    if (!data.success) return null
    const places = await this.places(data.data)
    return { ...r, ms: Number(r.ms), created_at: new Date(r.created_at).toISOString(), data: data.data, places }
  }

  /** The path, heading and version of every passage a trace names, so its table can say where each one is. */
  private async places(data: AskTrace): Promise<NonNullable<StoredTrace['places']>> {
    const ret = data.retrieval
    const ids = new Set<string>([
      ...(ret?.fused ?? []).map((f) => f.chunk_id),
      ...(ret?.keyword ?? []).map((k) => k.chunk_id),
      ...(ret?.vector ?? []).map((v) => v.chunk_id),
      ...(ret?.reranked ?? []).map((x) => x.chunk_id),
      ...(data.passages ?? data.result.passages),
    ])
    return [...(await chunksById(this.db, [...ids], ['path', 'heading', 'version'])).values()]
  }

  /** The thread to answer in: the given one (created if it does not exist yet) or a new one. */
  async ensureThread(id: string | undefined, title: string): Promise<string> {
    const threadId = id ?? randomUUID()
    if (this.opts.readOnly) return threadId
    await this.db.query(`INSERT INTO threads (id, title) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET updated_at = now()`, [
      threadId,
      title.slice(0, 200),
    ])
    return threadId
  }

  /** Conversation threads, most recently used first. */
  async listThreads(limit = 200): Promise<ThreadSummary[]> {
    const { rows } = await this.db.query<{ id: string; title: string; updated_at: Date }>(
      `SELECT id, title, updated_at FROM threads ORDER BY updated_at DESC LIMIT $1`,
      [limit],
    )
    return rows.map((r) => ({ id: r.id, title: r.title, updated_at: new Date(r.updated_at).toISOString() }))
  }

  /** A thread with its messages in order; each assistant message keeps the full verified result. */
  async getThread(id: string): Promise<Thread | null> {
    const { rows: t } = await this.db.query<{ id: string; title: string }>(`SELECT id, title FROM threads WHERE id = $1`, [id])
    if (!t[0]) return null
    const { rows } = await this.db.query<{
      id: string
      role: 'user' | 'assistant'
      content: string | null
      trace_id: string | null
      created_at: Date
      result: unknown
    }>(`SELECT id, role, content, trace_id, created_at, result FROM messages WHERE thread_id = $1 ORDER BY seq`, [id])
    return {
      id: t[0].id,
      title: t[0].title,
      messages: rows.map((r) => ({
        ...r,
        created_at: new Date(r.created_at).toISOString(),
        // A result stored by an older version may not read as one any more: the chat then shows the
        // message text and fills the rest in from its trace.
        result: r.result === null ? null : (AskResult.safeParse(r.result).data ?? null),
      })),
    }
  }

  async deleteThread(id: string): Promise<boolean> {
    const { rows } = await this.db.query<{ id: string }>(`DELETE FROM threads WHERE id = $1 RETURNING id`, [id])
    return rows.length > 0
  }

  /** The last `limit` question/answer pairs of a thread, oldest first. */
  async history(threadId: string, limit = 3): Promise<PriorTurn[]> {
    const { rows } = await this.db.query<{ seq: number; role: string; content: string | null; standalone: string | null }>(
      `SELECT seq, role, content, standalone FROM messages WHERE thread_id = $1 ORDER BY seq DESC LIMIT $2`,
      [threadId, limit * 2],
    )
    const turns: PriorTurn[] = []
    for (const r of rows.reverse()) {
      if (r.role === 'user') turns.push({ question: r.content ?? '', standalone: r.standalone ?? r.content ?? '', answer: null })
      else if (turns.length) turns[turns.length - 1]!.answer = r.content
    }
    return turns.slice(-limit)
  }

  /**
   * Adds a question and its answer to a thread. `collections` are those the answer was read from:
   * on a server a turn is seen only by its maker, while it may read them all (migration 8). The
   * turn's number comes from the thread (next_seq), not from the turns this role can still see.
   */
  async appendTurn(
    threadId: string,
    turn: { question: string; standalone: string; result: AskResult; collections: string[] },
  ): Promise<void> {
    if (this.opts.readOnly) return
    const { rows } = await this.db.query<{ seq: number }>(
      `UPDATE threads SET updated_at = now(),
              next_seq = coalesce(next_seq, (SELECT coalesce(max(m.seq), 0)::int + 1 FROM messages m WHERE m.thread_id = $1)) + 2
        WHERE id = $1 RETURNING next_seq - 2 AS seq`,
      [threadId],
    )
    if (!rows[0]) throw new Error(`there is no conversation ${threadId} to add to`)
    const seq = Number(rows[0].seq)
    await this.db.query(
      `INSERT INTO messages (id, thread_id, seq, role, content, standalone, result, trace_id, collections) VALUES
         ($1, $3, $4, 'user', $5, $6, NULL, $8, $10::text[]),
         ($2, $3, $4 + 1, 'assistant', $7, NULL, $9::jsonb, $8, $10::text[])`,
      [
        randomUUID(),
        randomUUID(),
        threadId,
        seq,
        turn.question,
        turn.standalone,
        turn.result.answer,
        turn.result.trace_id,
        JSON.stringify(turn.result),
        turn.collections,
      ],
    )
  }

  /**
   * Fingerprint per collection: document count, newest document change, passage count and how
   * many passages are embedded. Every import that changes, adds or removes a document moves
   * max(updated_at) or the count; embedding backfills move the embedded count.
   */
  async indexState(collections: string[]): Promise<IndexState> {
    if (collections.length === 0) return {}
    const { rows } = await this.db.query<{
      id: string
      chunk_count: number
      docs: number
      newest: Date | null
      embedded: number
    }>(
      `SELECT c.id, c.chunk_count,
              (SELECT count(*)::int FROM documents d WHERE d.collection_id = c.id) AS docs,
              (SELECT max(d.updated_at) FROM documents d WHERE d.collection_id = c.id) AS newest,
              (SELECT count(*)::int FROM chunks ch WHERE ch.collection_id = c.id AND ch.embedding_model IS NOT NULL) AS embedded
         FROM collections c WHERE c.id = ANY($1::text[])`,
      [collections],
    )
    const state: IndexState = {}
    for (const r of rows) {
      state[r.id] =
        `docs=${r.docs};chunks=${r.chunk_count};embedded=${r.embedded};newest=${r.newest ? new Date(r.newest).toISOString() : '-'}`
    }
    return state
  }

  /**
   * The key of a cached answer. `access` is what the connected role may read (accessKey): roles
   * with other grants never share an entry, even for the same question and scope.
   */
  static cacheKey(parts: { question: string; scope: object; pipeline: object; access?: string }): string {
    const key: unknown[] = [normaliseQuestion(parts.question), parts.scope, parts.pipeline]
    if (parts.access !== undefined && parts.access !== '*') key.push(parts.access)
    return sha256Hex(JSON.stringify(key))
  }

  /** What the connected role may read now, as a cache key part (store/access.ts). */
  async access(): Promise<string> {
    return accessKey(await readableCollections(this.db))
  }

  /** Drops cached answers made from an earlier state of any of these collections. */
  async dropStale(state: IndexState): Promise<number> {
    const cols = Object.keys(state)
    if (cols.length === 0 || this.opts.readOnly) return 0
    const { rows } = await this.db.query<{ key: string }>(
      `DELETE FROM answer_cache a
        WHERE a.collections && $1::text[]
          AND EXISTS (SELECT 1 FROM jsonb_each_text(a.index_state) e
                       WHERE e.key = ANY($1::text[]) AND e.value IS DISTINCT FROM ($2::jsonb ->> e.key))
       RETURNING a.key`,
      [cols, JSON.stringify(state)],
    )
    return rows.length
  }

  async cacheGet(key: string, state: IndexState): Promise<CacheEntry | null> {
    const { rows } = await this.db.query<{ result: unknown; trace_id: string; index_state: IndexState }>(
      this.opts.readOnly
        ? `SELECT result, trace_id, index_state FROM answer_cache WHERE key = $1`
        : `UPDATE answer_cache SET hits = hits + 1 WHERE key = $1 RETURNING result, trace_id, index_state`,
      [key],
    )
    const r = rows[0]
    if (!r) return null
    if (JSON.stringify(sortKeys(r.index_state)) !== JSON.stringify(sortKeys(state))) return null
    const parsed = AskResult.safeParse(r.result)
    return parsed.success ? { result: parsed.data, trace_id: r.trace_id } : null
  }

  async cachePut(key: string, entry: { question: string; state: IndexState; result: AskResult }): Promise<void> {
    if (this.opts.readOnly) return
    await this.db.query(
      `INSERT INTO answer_cache (key, question, collections, index_state, result, trace_id)
       VALUES ($1, $2, $3::text[], $4::jsonb, $5::jsonb, $6)
       ON CONFLICT (key) DO UPDATE SET question = excluded.question, collections = excluded.collections,
         index_state = excluded.index_state, result = excluded.result, trace_id = excluded.trace_id,
         hits = 0, created_at = now()`,
      [
        key,
        normaliseQuestion(entry.question),
        Object.keys(entry.state),
        JSON.stringify(entry.state),
        JSON.stringify(entry.result),
        entry.result.trace_id,
      ],
    )
  }
}

function sortKeys(o: Record<string, string>): [string, string][] {
  return Object.entries(o).sort(([a], [b]) => a.localeCompare(b))
}
