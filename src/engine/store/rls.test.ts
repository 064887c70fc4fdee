import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { Engine } from '../engine'
import type { AskRequest, AskResult } from '../../shared/answer'
import type { EngineAskOptions } from '../answer/ask'
import type { GenerateArgs } from '../core/model-ports'
import { OverlapReranker, ScriptedChat, reply } from '../answer/scripted.testutil'
import { ScopeError } from '../retrieve/scope'
import { grantRead, listAccess, readableCollections, readRoleName, revokeRead } from './access'
import { keywordPostingsOf } from './postings'
import { fixtureModels, tempDir } from '../../test-support/paths'
import { adminQuery, freshDatabase, pgSkipReason, sqlAt } from '../../test-support/pg-test'

/**
 * Cross-tenant suite (issue 27, ADR 0011) on a real PostgreSQL server: one library owned by a
 * non-superuser importer, three collections, two reader roles. alice reads hr and manuals, bob
 * reads manuals only. Every "cannot" below is checked against the same data read by a role that
 * may (the owner, or alice before a revoke), so each case proves the forbidden rows were there.
 * Models: the fixture embedder (test-fixtures/models, a real ONNX model) for vector and hybrid
 * search; the chat model is scripted (ScriptedChat) and the reranker a word-overlap stand-in,
 * since the real ones are too heavy for CI; both record what they were given.
 */

const SECRET = 'The severance formula grants zorblaxian quintuple salary to departing staff'
const NDA = 'Project quillfeather ships the vantablack hinge in the third quarter'
const MANUAL = 'To reset the printer hold the zorblaxian button for ten seconds'

const FILES: Record<string, Record<string, string>> = {
  hr: { 'handbook.md': `# Handbook\n\n## Leaving\n\n${SECRET}. Ask your manager first.\n` },
  nda: { 'roadmap.md': `# Roadmap\n\n## Hinge\n\n${NDA}. Tell no one.\n` },
  manuals: { 'printer.md': `# Printer\n\n## Reset\n\n${MANUAL}. The light blinks twice.\n` },
}

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined)
})

function as(url: string, user: string, password: string): string {
  const u = new URL(url)
  u.username = user
  u.password = password
  return u.toString()
}

async function rows<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return (await c.query(sql, params)).rows as T[]
  } finally {
    await c.end()
  }
}

/** Every chunk id a result names, in passages, citations and the closest passages. */
function chunkIdsOf(r: AskResult): string[] {
  return [...r.passages, ...r.citations.map((c) => c.chunk_id), ...r.closest.map((c) => c.chunk_id)]
}

describe.skipIf(pgSkipReason)('a team library: who reads which collection, enforced by PostgreSQL', () => {
  const uniq = Math.random().toString(36).slice(2, 8)
  const ownerRole = `lib_owner_${uniq}`
  const alice = `alice_${uniq}`
  const bob = `bob_${uniq}`
  let superUrl: string
  let db: string
  let ownerUrl: string
  let aliceUrl: string
  let bobUrl: string
  let owner: Engine
  let aliceE: Engine
  let bobE: Engine
  const reranker = new OverlapReranker()
  /** hr's, nda's and manuals' chunk ids, read by the owner. */
  const chunkOf: Record<string, string> = {}

  const open = async (url: string) => {
    const e = await Engine.open({ database: url, modelsDir: fixtureModels })
    cleanups.push(() => e.close())
    return e
  }

  beforeAll(async () => {
    superUrl = await freshDatabase()
    db = new URL(superUrl).pathname.slice(1)
    // The importer owns the tables it creates and may create read roles; it is no superuser, so
    // its access comes from the policies (FORCE), not from bypassing them.
    await adminQuery(`CREATE ROLE ${ownerRole} LOGIN PASSWORD 'pw-owner' CREATEROLE`)
    await adminQuery(`CREATE ROLE ${alice} LOGIN PASSWORD 'pw-alice'`)
    await adminQuery(`CREATE ROLE ${bob} LOGIN PASSWORD 'pw-bob'`)
    // Roles belong to the server, not the database: drop the test's own when it ends (last, after the engines close).
    cleanups.unshift(async () => {
      await adminQuery(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`)
      for (const r of [...Object.keys(FILES).map((c) => readRoleName(c, db)), ownerRole, alice, bob, `carol_${uniq}`])
        await adminQuery(`DROP ROLE IF EXISTS ${r}`).catch(() => undefined)
    })
    await sqlAt(superUrl, `CREATE EXTENSION IF NOT EXISTS vector; GRANT CREATE, USAGE ON SCHEMA public TO ${ownerRole};`)
    ownerUrl = as(superUrl, ownerRole, 'pw-owner')
    aliceUrl = as(superUrl, alice, 'pw-alice')
    bobUrl = as(superUrl, bob, 'pw-bob')
    owner = await open(ownerUrl)
    const corpus = await tempDir('docent-rls-')
    cleanups.push(corpus.cleanup)
    for (const [c, files] of Object.entries(FILES)) {
      for (const [rel, text] of Object.entries(files)) {
        await mkdir(path.join(corpus.dir, c), { recursive: true })
        await writeFile(path.join(corpus.dir, c, rel), text)
      }
      const r = await owner.importFolder(path.join(corpus.dir, c), { collection: c })
      expect(r.failed).toEqual([])
      expect(r.texts_embedded).toBeGreaterThan(0)
    }
    for (const c of Object.keys(FILES)) {
      const found = await owner.db.query<{ id: string }>(
        `SELECT id FROM chunks WHERE collection_id = $1 AND text LIKE '%' || $2 || '%'`,
        [c, { hr: 'severance', nda: 'quillfeather', manuals: 'printer' }[c]],
      )
      expect(found.rows).toHaveLength(1)
      chunkOf[c] = found.rows[0]!.id
    }
    // Both readers as the app would run them: read everything the grants allow, and keep their
    // own traces, threads and cached answers.
    for (const r of [alice, bob]) await readerGrants(r)
    await grantRead(owner.db, alice, 'hr')
    await grantRead(owner.db, alice, 'manuals')
    await grantRead(owner.db, bob, 'manuals')
    aliceE = await open(aliceUrl)
    bobE = await open(bobUrl)
  }, 240_000)

  /** What docs/postgres.md grants a team member's app: read the tables, keep its own answers. */
  const readerGrants = async (r: string) => {
    await sqlAt(superUrl, `GRANT CONNECT ON DATABASE ${db} TO ${r}; GRANT USAGE ON SCHEMA public TO ${r};`)
    await sqlAt(
      ownerUrl,
      `GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${r};
       GRANT INSERT, UPDATE, DELETE ON traces, threads, messages, answer_cache TO ${r};`,
    )
  }

  const ask = (e: Engine, request: AskRequest, chat: ScriptedChat, opts: Partial<EngineAskOptions> = {}) =>
    e.ask(request, { chat, reranker, mode: 'hybrid', ...opts })

  /** A model reply citing the first passage it was shown, answering from what that passage says. */
  const ANSWERS: [string, string][] = [
    ['severance', 'Yes: departing staff get quintuple salary, and they should ask their manager first'],
    ['quillfeather', 'The hinge ships in the third quarter'],
    ['printer', 'Hold the button for ten seconds to reset the printer; the light then blinks twice'],
  ]
  const citeFirst = (args: GenerateArgs) => {
    const m = /<passage n="(\d+)"[^>]*>([\s\S]*?)<\/passage>/.exec(args.user)
    const answer = m && ANSWERS.find(([needle]) => m[2]!.includes(needle))
    if (!m || !answer) return { answerable: false, sentences: [], unanswered_parts: [] }
    return reply(`${answer[1]} [${m[1]}].`, [Number(m[1])])
  }

  it('lists, per role, only the collections it may read; the owner lists all three', async () => {
    expect((await owner.catalog.list()).map((c) => c.id)).toEqual(['hr', 'manuals', 'nda'])
    expect((await aliceE.catalog.list()).map((c) => c.id)).toEqual(['hr', 'manuals'])
    expect((await bobE.catalog.list()).map((c) => c.id)).toEqual(['manuals'])
    expect(await readableCollections(bobE.db)).toEqual(['manuals'])
    expect(await readableCollections(owner.db)).toBeNull()
    // Even the table of grants names only bob's own.
    expect(await rows(bobUrl, 'SELECT collection_id FROM docent_collection_access')).toEqual([{ collection_id: 'manuals' }])
    const list = await listAccess(owner.db)
    expect(list.owner).toBe(ownerRole)
    expect(list.collections).toEqual([
      { collection: 'hr', read_role: readRoleName('hr', db), readers: [alice] },
      { collection: 'manuals', read_role: readRoleName('manuals', db), readers: [alice, bob].sort() },
      { collection: 'nda', read_role: null, readers: [] },
    ])
  })

  it('the database itself refuses the rows, for plain SQL as well as for the engine', async () => {
    const tables = ['chunks', 'documents', 'term_stats', 'import_jobs']
    for (const t of tables) {
      const q = `SELECT count(*)::int AS n FROM ${t} WHERE collection_id = 'hr'`
      expect((await rows<{ n: number }>(ownerUrl, q))[0]!.n, `${t} as the owner`).toBeGreaterThan(0)
      expect((await rows<{ n: number }>(bobUrl, q))[0]!.n, `${t} as bob`).toBe(0)
      expect((await rows<{ n: number }>(aliceUrl, q))[0]!.n, `${t} as alice`).toBeGreaterThan(0)
    }
    expect((await rows<{ n: number }>(ownerUrl, 'SELECT count(*)::int AS n FROM embedding_cache'))[0]!.n).toBeGreaterThan(0)
    expect((await rows<{ n: number }>(bobUrl, 'SELECT count(*)::int AS n FROM embedding_cache'))[0]!.n).toBe(0)
    // A reader cannot write content, nor give itself a grant.
    await expect(sqlAt(bobUrl, `INSERT INTO docent_collection_access VALUES ('nda', '${bob}')`)).rejects.toThrow(
      /row-level security|permission denied/,
    )
    await expect(sqlAt(aliceUrl, `UPDATE chunks SET text = 'x' WHERE collection_id = 'hr'`)).rejects.toThrow(/permission denied/)
  })

  it('searches (keyword from memory and in SQL, vector, hybrid) never return an unreadable chunk, even for its exact text', async () => {
    // The owner finds the secret passage by its own words in every mode: the data is there.
    for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
      const hit = await owner.search(SECRET, { mode, k: 10, scope: { version: 'all' } })
      expect(
        hit.results.map((h) => h.chunk_id),
        `owner ${mode}`,
      ).toContain(chunkOf['hr'])
    }
    await keywordPostingsOf(bobE.db)!.warm()
    expect(keywordPostingsOf(bobE.db)!.stats().chunks).toBe(1)
    for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
      for (const text of [SECRET, NDA]) {
        const hit = await bobE.search(text, { mode, k: 10, scope: { version: 'all' } })
        const ids = hit.results.map((h) => h.chunk_id)
        expect(ids, `bob ${mode}`).not.toContain(chunkOf['hr'])
        expect(ids).not.toContain(chunkOf['nda'])
        expect(hit.results.every((h) => h.collection === 'manuals')).toBe(true)
      }
    }
    // Naming the collection does not help, and the error does not say it exists.
    await expect(bobE.search(SECRET, { scope: { collections: ['hr'], version: 'all' } })).rejects.toThrow(ScopeError)
    await expect(bobE.search(SECRET, { scope: { collections: ['hr'], version: 'all' } })).rejects.toThrow(
      /no collection named "hr"/,
    )
    // alice may: the same search finds it for her.
    const a = await aliceE.search(SECRET, { mode: 'hybrid', k: 10, scope: { version: 'all' } })
    expect(a.results.map((h) => h.chunk_id)).toContain(chunkOf['hr'])
  })

  it("a neighbour's newer import costs a reader one catch-up, not one per search (the mark moves past rows it cannot read)", async () => {
    const bobPostings = keywordPostingsOf(bobE.db)!
    await bobPostings.warm()
    const neighbour = await tempDir('docent-rls-neighbour-')
    cleanups.push(neighbour.cleanup)
    await writeFile(path.join(neighbour.dir, 'plans.md'), `# Plans\n\n## Next\n\n${NDA} again, with a second hinge.\n`)
    expect((await owner.importFolder(neighbour.dir, { collection: 'plans' })).failed).toEqual([])
    // The fault: newer chunk rows that bob cannot read, so what he sees ends below the store's newest row.
    const [seen] = await rows<{ mine: string; store: string }>(
      bobUrl,
      'SELECT (SELECT max(seq) FROM chunks)::text AS mine, docent_chunk_seq()::text AS store',
    )
    expect(Number(seen!.store)).toBeGreaterThan(Number(seen!.mine))
    const spy = vi.spyOn(bobE.db, 'query')
    const catchUps = () => spy.mock.calls.filter(([sql]) => String(sql).includes("'c' AS kind")).length
    try {
      expect(await bobPostings.current()).toBe(true)
      expect(catchUps(), 'the first look after the import catches up').toBe(1)
      for (let i = 0; i < 3; i++) expect(await bobPostings.current()).toBe(true)
      expect(catchUps(), 'later searches find the postings current').toBe(1)
    } finally {
      spy.mockRestore()
    }
    expect(bobPostings.stats().chunks).toBe(1)
    const hit = await bobE.search(NDA, { mode: 'keyword', k: 10, scope: { version: 'all' } })
    expect(hit.results.every((h) => h.collection === 'manuals')).toBe(true)
  })

  it('get_passage and chunk sources of an unreadable chunk are not found', async () => {
    expect((await owner.passages.inContext(chunkOf['hr']!))?.passage.text).toContain('zorblaxian quintuple')
    expect(await bobE.passages.inContext(chunkOf['hr']!)).toBeNull()
    expect(await bobE.passages.source(chunkOf['nda']!)).toBeNull()
    expect((await bobE.passages.inContext(chunkOf['manuals']!))?.passage.collection).toBe('manuals')
  })

  it('asks never show the model, cite or cache an unreadable chunk, even when the question quotes it', async () => {
    const question = `Is it true that "${SECRET}"?`
    const aliceChat = new ScriptedChat([citeFirst])
    const mine = await ask(aliceE, { question, scope: { collections: [], version: 'all' } }, aliceChat)
    // alice may read hr: the model saw the passage and the answer cites it (so the forbidden chunk was reachable).
    expect(aliceChat.calls[0]!.user).toContain('zorblaxian quintuple')
    expect(chunkIdsOf(mine)).toContain(chunkOf['hr'])
    expect(mine.abstained).toBe(false)
    // Cached for alice: the same question again is served from the cache.
    const again = await ask(aliceE, { question, scope: { collections: [], version: 'all' } }, new ScriptedChat([]))
    expect(again.cached).toBe(true)
    expect(
      (await rows<{ n: number }>(ownerUrl, `SELECT count(*)::int AS n FROM answer_cache WHERE 'hr' = ANY(collections)`))[0]!.n,
    ).toBe(1)

    // bob asks the very same question: nothing of hr reaches his model, his result or his cache.
    const bobChat = new ScriptedChat([citeFirst, citeFirst, citeFirst])
    const his = await ask(bobE, { question, scope: { collections: [], version: 'all' } }, bobChat)
    expect(his.cached).toBe(false)
    for (const call of bobChat.calls) {
      expect(call.user).not.toContain('quintuple')
      expect(call.user).not.toContain('quillfeather')
    }
    expect(chunkIdsOf(his)).not.toContain(chunkOf['hr'])
    expect(his.scope?.collections).toEqual(['manuals'])
    expect(JSON.stringify(his)).not.toContain('quintuple')
    // The cache rows and traces alice made are not there for bob, by SQL either.
    expect(
      (await rows<{ n: number }>(bobUrl, `SELECT count(*)::int AS n FROM answer_cache WHERE 'hr' = ANY(collections)`))[0]!.n,
    ).toBe(0)
    expect(await bobE.answers.trace(mine.trace_id)).toBeNull()
    expect((await aliceE.answers.trace(mine.trace_id))?.question).toBe(question)
    expect(await bobE.answers.getThread(mine.thread_id)).toBeNull()
    expect((await bobE.answers.listThreads()).map((t) => t.id)).not.toContain(mine.thread_id)
    // Asking in alice's thread does not let bob into it.
    await expect(
      ask(
        bobE,
        { question: 'and what else?', threadId: mine.thread_id, scope: { collections: [], version: 'all' } },
        new ScriptedChat([citeFirst]),
      ),
    ).rejects.toThrow(/row-level security/)
  })

  it('a revoked grant takes effect on the next request of a running process: search, ask, follow-ups, cache, traces', async () => {
    const carol = `carol_${uniq}`
    await adminQuery(`CREATE ROLE ${carol} LOGIN PASSWORD 'pw-carol'`)
    await readerGrants(carol)
    await grantRead(owner.db, carol, 'hr')
    await grantRead(owner.db, carol, 'manuals')
    const carolE = await open(as(superUrl, carol, 'pw-carol'))
    // Before: carol's postings are built with hr, her search finds it, and she asks in a thread.
    await keywordPostingsOf(carolE.db)!.warm()
    expect(keywordPostingsOf(carolE.db)!.stats().chunks).toBe(2)
    expect((await carolE.search(SECRET, { mode: 'keyword', k: 5 })).results.map((h) => h.chunk_id)).toContain(chunkOf['hr'])
    const question = `What does "${SECRET}" mean?`
    const first = await ask(carolE, { question, scope: { collections: [], version: 'all' } }, new ScriptedChat([citeFirst]))
    expect(chunkIdsOf(first)).toContain(chunkOf['hr'])
    expect(first.abstained).toBe(false)
    // Her answer was cached, from hr: what must not be served after the revoke.
    const cachedBefore = await rows<{ n: number }>(
      ownerUrl,
      `SELECT count(*)::int AS n FROM answer_cache WHERE 'hr' = ANY(collections) AND result->>'trace_id' = $1`,
      [first.trace_id],
    )
    expect(cachedBefore[0]!.n).toBe(1)
    expect((await carolE.answers.getThread(first.thread_id))?.messages).toHaveLength(2)

    const r = await revokeRead(owner.db, carol, 'hr')
    expect(r).toEqual({ read_role: readRoleName('hr', db), still_through: [] })

    // The same process, no restart: the next requests read without hr.
    expect((await carolE.catalog.list()).map((c) => c.id)).toEqual(['manuals'])
    for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
      const ids = (await carolE.search(SECRET, { mode, k: 10, scope: { version: 'all' } })).results.map((h) => h.chunk_id)
      expect(ids, mode).not.toContain(chunkOf['hr'])
    }
    expect(await carolE.passages.inContext(chunkOf['hr']!)).toBeNull()
    expect(await carolE.answers.trace(first.trace_id)).toBeNull()
    // The cached answer is not served: the same question now reads manuals only.
    const chat = new ScriptedChat([citeFirst, citeFirst, citeFirst])
    const after = await ask(carolE, { question, scope: { collections: [], version: 'all' } }, chat)
    expect(after.cached).toBe(false)
    expect(chunkIdsOf(after)).not.toContain(chunkOf['hr'])
    for (const call of chat.calls) expect(call.user).not.toContain('quintuple')
    // A follow-up in the thread answered from hr: the earlier turn is hidden from her now, so it
    // neither reaches the model (as history) nor shows in the thread; the new turn is numbered after it.
    const followChat = new ScriptedChat([citeFirst, citeFirst, citeFirst, citeFirst])
    const follow = await ask(
      carolE,
      { question: 'and does it apply to contractors?', threadId: first.thread_id, scope: { collections: [], version: 'all' } },
      followChat,
    )
    for (const call of followChat.calls) {
      expect(call.user).not.toContain('quintuple')
      expect(call.system).not.toContain('quintuple')
    }
    expect(chunkIdsOf(follow)).not.toContain(chunkOf['hr'])
    const thread = await carolE.answers.getThread(first.thread_id)
    expect(thread?.messages.map((m) => m.content)).toEqual(['and does it apply to contractors?', follow.answer])
    // (The thread's title is her own first question, in her own words: it stays hers.)
    expect(JSON.stringify(thread?.messages)).not.toContain('quintuple')
    // The owner still sees all four turns, numbered without a collision.
    const seqs = await rows<{ seq: number }>(ownerUrl, 'SELECT seq FROM messages WHERE thread_id = $1 ORDER BY seq', [
      first.thread_id,
    ])
    expect(seqs.map((s) => s.seq)).toEqual([1, 2, 3, 4])

    // Granted again: the next request reads hr again (the postings rebuild under the new grants).
    await grantRead(owner.db, carol, 'hr')
    expect((await carolE.search(SECRET, { mode: 'keyword', k: 5 })).results.map((h) => h.chunk_id)).toContain(chunkOf['hr'])
    await keywordPostingsOf(carolE.db)!.warm()
    expect(keywordPostingsOf(carolE.db)!.stats().chunks).toBe(2)
  }, 120_000)
})

describe('an embedded library', () => {
  it('reads every collection: migration 8 is recorded, not run, and grants are refused', async () => {
    const e = await Engine.open({ dataDir: null, modelsDir: '/nonexistent/docent-no-models' })
    cleanups.push(() => e.close())
    expect(await readableCollections(e.db)).toBeNull()
    const { rows: v } = await e.db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')
    expect(v.map((r) => Number(r.version))).toContain(8)
    // Migration 8 was recorded, not run: no policies, no table of grants.
    expect((await e.db.query(`SELECT 1 FROM pg_policies`)).rows).toHaveLength(0)
    expect(
      (await e.db.query<{ t: string | null }>(`SELECT to_regclass('docent_collection_access')::text AS t`)).rows[0]!.t,
    ).toBeNull()
    await expect(grantRead(e.db, 'alice', 'hr')).rejects.toThrow(/permissions are for a server library/)
  })
})
