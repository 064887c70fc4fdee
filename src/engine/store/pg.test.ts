import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { retrieveKeyword, sameRanking } from '../retrieve/keyword'
import { resolveScope } from '../retrieve/scope'
import { checkIndexConsistency } from './consistency'
import { MIGRATIONS, SchemaBehindError } from './migrations'
import { KeywordPostings, keywordPostingsOf } from './postings'
import { openPostgres, redactUrl } from './pg'
import { collectionTurn } from './writer'
import { grantRead } from './access'
import { tempDir } from '../../test-support/paths'
import { freshDatabase, pgSkipReason, UTF8_DATABASE, sqlAt, readOnlyRole } from '../../test-support/pg-test'

/**
 * The store on a real PostgreSQL server (pgserver's PostgreSQL 16 + pgvector, see
 * test-support/pg-test.ts): roles and grants, errors that name what is missing without a password,
 * migrations from two processes at once, and several writers with a reader meanwhile.
 */

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const noModels = '/nonexistent/docent-no-models'
const words = Array.from({ length: 400 }, (_, i) => `term${i.toString(36)}x`)

/** A folder of `n` markdown files of made-up words (deterministic per seed). */
async function corpus(n: number, seed: number): Promise<string> {
  const d = await tempDir('docent-pgcorpus-')
  cleanups.push(d.cleanup)
  let s = seed
  const next = () => ((s = (s * 1664525 + 1013904223) >>> 0), s / 4294967296)
  for (let f = 0; f < n; f++) {
    const sections = Array.from({ length: 3 }, (_, h) => {
      // Skewed towards the first words, as real text is towards common ones.
      const text = Array.from({ length: 60 }, () => words[Math.floor(words.length * next() ** 3)]!).join(' ')
      return `## Part ${h}\n\n${text}.\n`
    })
    await mkdir(path.join(d.dir, `s${f % 4}`), { recursive: true })
    await writeFile(path.join(d.dir, `s${f % 4}`, `doc${f}.md`), `# Document ${f}\n\n${sections.join('\n')}`)
  }
  return d.dir
}

async function open(url: string, opts: { readOnly?: boolean } = {}): Promise<Engine> {
  const e = await Engine.open({ database: url, modelsDir: noModels, ...opts })
  cleanups.push(() => e.close())
  return e
}

const sql = sqlAt

function as(url: string, user: string, password: string): string {
  const u = new URL(url)
  u.username = user
  u.password = password
  return u.toString()
}

const uniq = () => Math.random().toString(36).slice(2, 8)

describe.skipIf(pgSkipReason)('a library on a PostgreSQL server', () => {
  it('serves a SELECT-only role without migrating or writing, and the role cannot write', async () => {
    const url = await freshDatabase()
    const owner = await open(url)
    await owner.importFolder(await corpus(6, 1), { collection: 'team' })
    const { url: readerUrl, role } = await readOnlyRole(url)
    const reader = await open(readerUrl, { readOnly: true })
    // Row-level security (migration 8, ADR 0011): SELECT on the tables shows no collection until one is granted.
    expect(await reader.catalog.list()).toEqual([])
    await grantRead(owner.db, role, 'team')
    expect((await reader.catalog.list()).map((c) => c.id)).toEqual(['team'])
    const hits = await reader.search(words[3]!, { mode: 'keyword', k: 5 })
    expect(hits.results.length).toBeGreaterThan(0)
    // A question too (search-only without a chat model), keeping no trace, thread or cached answer.
    const answer = await reader.ask({ question: `what is ${words[3]}?`, scope: { collections: ['team'], version: 'all' } })
    expect(answer.citations.length).toBeGreaterThan(0)
    for (const t of ['traces', 'threads', 'messages', 'answer_cache'])
      expect(Number((await owner.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${t}`)).rows[0]!.n)).toBe(0)
    // Its grants hold: an import is refused by the server, and leaves the library as it was.
    const before = await owner.catalog.list()
    await expect(reader.importFolder(await corpus(2, 9), { collection: 'other' })).rejects.toThrow(/permission denied/)
    expect(await owner.catalog.list()).toEqual(before)
  })

  it('refuses to open read-only a library whose schema is behind, saying what to do', async () => {
    const url = await freshDatabase()
    const err = await Engine.open({ database: url, modelsDir: noModels, readOnly: true }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SchemaBehindError)
    expect((err as Error).message).toMatch(/schema is at version 0 .* needs version \d+.*CREATE on the schema/)
  })

  it('says pgvector is missing when CREATE EXTENSION vector is not allowed, without the password', async () => {
    const role = `owner_${uniq()}`
    const password = `secret-${uniq()}-pw`
    const admin = await freshDatabase()
    await sql(admin, `CREATE ROLE ${role} LOGIN PASSWORD '${password}'`)
    const name = `docent_np_${uniq()}`
    await sql(admin, `CREATE DATABASE ${name} OWNER ${role} ${UTF8_DATABASE}`)
    cleanups.push(() => sql(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    const u = new URL(as(admin, role, password))
    u.pathname = `/${name}`
    const err = (await Engine.open({ database: u.toString(), modelsDir: noModels }).catch((e: unknown) => e)) as Error
    expect(err.message).toMatch(/CREATE EXTENSION vector failed .*permission denied.*pgvector/)
    expect(`${err.message}\n${err.stack}`).not.toContain(password)
    expect(err.message).toContain(redactUrl(u.toString()))
  })

  it('refuses a database whose LC_CTYPE is C, whose text search would read "access—handling" as one word', async () => {
    const admin = await freshDatabase()
    const name = `docent_c_${uniq()}`
    await sql(admin, `CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`)
    cleanups.push(() => sql(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    const u = new URL(admin)
    u.pathname = `/${name}`
    // The fault is real: on that database the word and the punctuation stay one lexeme.
    const c = new pg.Client({ connectionString: u.toString() })
    await c.connect()
    const glued = (await c.query<{ t: string }>(`SELECT to_tsvector('simple', 'access\u2014handling')::text AS t`)).rows[0]!.t
    await c.end()
    expect(glued).toBe(`'access\u2014handling':1`)
    const err = (await Engine.open({ database: u.toString(), modelsDir: noModels }).catch((e: unknown) => e)) as Error
    expect(err).toBeInstanceOf(Error)
    expect(err.message).toMatch(/LC_CTYPE C: Docent needs UTF8 with a UTF-8 LC_CTYPE.*CREATE DATABASE/)
    expect(err.message).toContain(name)
  })

  it('never prints the password of a URL it cannot use', async () => {
    const url = await freshDatabase()
    const password = new URL(url).password
    expect(password.length).toBeGreaterThan(0)
    const wrong = as(url, new URL(url).username, `${password}-wrong`)
    const err = (await openPostgres(wrong).catch((e: unknown) => e)) as Error
    expect(err.message).toMatch(/password authentication failed/)
    expect(`${err.message}\n${err.stack}`).not.toContain(password)
    expect(err.message).toContain(':***@')
    // A failing statement's error is scrubbed too.
    const db = await openPostgres(url)
    cleanups.push(() => db.close())
    const bad = (await db.query(`SELECT '${password}'::int`).catch((e: unknown) => e)) as Error
    expect(bad.message).toMatch(/invalid input syntax/)
    expect(`${bad.message}\n${bad.stack}`).not.toContain(password)
  })

  it('asks for TLS with sslmode=require, and refuses a server that cannot speak it', async () => {
    // pgserver's PostgreSQL is built without SSL, so this is the refusing half: the URL's sslmode
    // reaches the driver, which will not fall back to plain text (docs/postgres.md, TLS).
    const url = await freshDatabase()
    const admin = await openPostgres(url)
    cleanups.push(() => admin.close())
    expect((await admin.query<{ ssl: string }>('SHOW ssl')).rows[0]!.ssl).toBe('off')
    const password = new URL(url).password
    for (const tls of ['sslmode=require', 'uselibpqcompat=true&sslmode=require']) {
      const refused = (await openPostgres(`${url}?${tls}`).catch((e: unknown) => e)) as Error
      expect(refused.message, tls).toMatch(/does not support SSL/)
      expect(`${refused.message}\n${refused.stack}`).not.toContain(password)
    }
  })

  it('migrates once when two processes open a new library at the same moment', async () => {
    const url = await freshDatabase()
    const [a, b] = await Promise.all([open(url), open(url)])
    expect(a).not.toBe(b)
    const { rows } = await a.db.query<{ version: number; n: string }>(
      'SELECT version, count(*) AS n FROM schema_migrations GROUP BY version ORDER BY version',
    )
    expect(rows.map((r) => [r.version, Number(r.n)])).toEqual(MIGRATIONS.map((m) => [m.version, 1]))
  })

  it('never blocks a reader while a writer holds the collection and chunk-write turns', async () => {
    const url = await freshDatabase()
    const writer = await open(url)
    await writer.importFolder(await corpus(4, 2), { collection: 'team' })
    const reader = await open(url)
    let committed = false
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    let locked!: () => void
    const isLocked = new Promise<void>((r) => (locked = r))
    const tx = writer.db.transaction(async (t) => {
      await collectionTurn(t, 'team')
      await t.query(`UPDATE chunks SET heading = heading || ' (draft)' WHERE collection_id = 'team'`)
      locked()
      await held
      committed = true
    })
    await isLocked
    // The writer's transaction is open, holding both locks and uncommitted rows: the reader answers.
    const hits = await reader.search(words[3]!, { mode: 'keyword', k: 5 })
    const cols = await reader.catalog.list()
    expect(committed).toBe(false)
    expect(hits.results.every((h) => !h.heading.includes('(draft)'))).toBe(true)
    expect(cols[0]!.chunks).toBeGreaterThan(0)
    release()
    await tx
    expect(committed).toBe(true)
  })

  it('keeps statistics exact and other processes’ keyword postings current under concurrent imports', async () => {
    const url = await freshDatabase()
    const [first, second, third, reader] = await Promise.all([open(url), open(url), open(url), open(url)])
    const folderA = await corpus(40, 3)
    const folderB = await corpus(40, 4)
    // The reader builds its postings before the imports, then follows them.
    await reader.importFolder(await corpus(3, 5), { collection: 'seed-docs' })
    const postings = keywordPostingsOf(reader.db)!
    await postings.warm()
    let importing = true
    let searches = 0
    const unfinishedSeen: string[] = []
    const searching = (async () => {
      while (importing) {
        await reader.search(words[(searches * 7) % words.length]!, { mode: 'keyword', k: 10 })
        // Jobs the importers are running are theirs, not interrupted ones.
        for (const u of await reader.unfinishedImports()) unfinishedSeen.push(`${u.collection} ${u.state}`)
        searches++
      }
    })()
    // Two importers into one collection (the same folder), and a third into another, all at once.
    const reports = await Promise.all([
      first.importFolder(folderA, { collection: 'shared' }),
      second.importFolder(folderA, { collection: 'shared' }),
      third.importFolder(folderB, { collection: 'other' }),
    ])
    importing = false
    await searching
    expect(searches).toBeGreaterThan(0)
    for (const r of reports) expect(r.failed).toEqual([])
    expect(unfinishedSeen).toEqual([])
    // No importer took another's running job for an interrupted one.
    const { rows: jobs } = await reader.db.query<{ state: string; n: string }>(
      `SELECT state, count(*) AS n FROM import_jobs WHERE collection_id <> 'seed-docs' GROUP BY state`,
    )
    expect(jobs.map((j) => [j.state, Number(j.n)])).toEqual([['done', 3]])

    // Statistics equal a recount from the chunks table (checkIndexConsistency recounts them).
    expect(await checkIndexConsistency(reader.db)).toEqual([])
    const { rows } = await reader.db.query<{ id: string; stored: string; actual: string; len: string; actual_len: string }>(
      `SELECT c.id, c.chunk_count AS stored, (SELECT count(*) FROM chunks WHERE collection_id = c.id) AS actual,
              c.total_len AS len, (SELECT coalesce(sum(lex_len), 0) FROM chunks WHERE collection_id = c.id) AS actual_len
         FROM collections c ORDER BY c.id`,
    )
    expect(rows.map((r) => r.id)).toEqual(['other', 'seed-docs', 'shared'])
    for (const r of rows) {
      expect(Number(r.stored)).toBe(Number(r.actual))
      expect(Number(r.len)).toBe(Number(r.actual_len))
    }
    expect(Number(rows.find((r) => r.id === 'shared')!.actual)).toBe(reports[0]!.chunks_total)

    // The reader's postings, kept current from the store while others wrote, equal a fresh build.
    await postings.warm()
    const fresh = await openPostgres(url)
    cleanups.push(() => fresh.close())
    const rebuilt = new KeywordPostings(fresh)
    await rebuilt.warm()
    // Live chunks and terms (list lengths include replaced chunks until the lists are compacted).
    expect(postings.stats().chunks).toBe(rebuilt.stats().chunks)
    expect(postings.stats().terms).toBe(rebuilt.stats().terms)
    const scope = await resolveScope(reader.db, { collections: [], version: 'all' })
    for (const q of [words[1]!, `${words[5]} ${words[40]}`, `${words[2]} ${words[90]} ${words[200]}`]) {
      const mem = await retrieveKeyword(reader.db, q, scope, 20, { path: 'memory' })
      const sqlHits = await retrieveKeyword(reader.db, q, scope, 20, { path: 'sql' })
      expect(mem.length).toBeGreaterThan(0)
      expect(sameRanking(mem, sqlHits), q).toBe(true)
    }
  })
})
