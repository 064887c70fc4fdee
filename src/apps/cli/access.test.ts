import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../../engine/engine'
import { AccessError, readRoleName } from '../../engine/store/access'
import { tempDir } from '../../test-support/paths'
import { adminQuery, freshDatabase, pgSkipReason, sqlAt } from '../../test-support/pg-test'
import { cmdAccess } from './access'

/**
 * `docent access grant|revoke|list` on a real PostgreSQL server (the policies themselves are
 * tested in src/engine/store/rls.test.ts): what it prints, and its errors. The library is made by
 * the test superuser; bob is a plain login role.
 */

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined)
})

/** Runs `docent access …`, returning what it printed on stdout. */
async function access(args: string[]): Promise<string> {
  const written: string[] = []
  const write = process.stdout.write.bind(process.stdout)
  process.stdout.write = ((s: string) => (written.push(String(s)), true)) as typeof process.stdout.write
  try {
    await cmdAccess(args)
  } finally {
    process.stdout.write = write
  }
  return written.join('')
}

describe.skipIf(pgSkipReason)('docent access on a server library', () => {
  const uniq = Math.random().toString(36).slice(2, 8)
  const bob = `bob_${uniq}`
  let url: string
  let bobUrl: string
  let db: string

  beforeAll(async () => {
    url = await freshDatabase()
    db = new URL(url).pathname.slice(1)
    cleanups.unshift(async () => {
      await adminQuery(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`)
      for (const r of [readRoleName('nda', db), readRoleName('manuals', db), bob]) await adminQuery(`DROP ROLE IF EXISTS ${r}`)
    })
    const e = await Engine.open({ database: url, modelsDir: '/nonexistent/docent-no-models' })
    const corpus = await tempDir('docent-access-')
    cleanups.push(corpus.cleanup)
    for (const c of ['manuals', 'nda']) {
      await mkdir(path.join(corpus.dir, c))
      await writeFile(path.join(corpus.dir, c, 'a.md'), `# ${c}\n\nSome words about ${c} here.\n`)
      await e.importFolder(path.join(corpus.dir, c), { collection: c })
    }
    await e.close()
    await adminQuery(`CREATE ROLE ${bob} LOGIN PASSWORD 'pw-bob'`)
    await sqlAt(url, `GRANT CONNECT ON DATABASE ${db} TO ${bob}; GRANT USAGE ON SCHEMA public TO ${bob};`)
    const u = new URL(url)
    u.username = bob
    u.password = 'pw-bob'
    bobUrl = u.toString()
  }, 120_000)

  it('grants, lists and revokes in plain words', async () => {
    const run = (args: string[]) => access([...args, '--database', url])
    expect(await run(['grant', bob, 'nda'])).toBe(
      `${bob} may now read "nda" (granted ${readRoleName('nda', db)}, created now).\n` +
        `note: ${bob} has no SELECT on the library's tables yet: GRANT SELECT ON ALL TABLES IN SCHEMA public TO "${bob}" (docs/postgres.md)\n`,
    )
    expect(await run(['grant', bob, 'nda'])).toMatch(new RegExp(`^${bob} could already read "nda"`))
    const list = JSON.parse(await run(['list', '--json'])) as {
      collections: { collection: string; read_role: string | null; readers: string[] }[]
    }
    expect(list.collections).toEqual([
      { collection: 'manuals', read_role: null, readers: [] },
      { collection: 'nda', read_role: readRoleName('nda', db), readers: [bob] },
    ])
    expect(await run(['list'])).toMatch(new RegExp(`nda +${readRoleName('nda', db)} +${bob}`))
    await sqlAt(url, `GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${bob}`)
    const bobSees = await Engine.open({ database: bobUrl, modelsDir: '/nonexistent/docent-no-models', readOnly: true })
    try {
      expect((await bobSees.catalog.list()).map((c) => c.id)).toEqual(['nda'])
      expect(await run(['revoke', bob, 'nda'])).toMatch(new RegExp(`^${bob} may no longer read "nda"`))
      // The same open engine, next request: nothing.
      expect(await bobSees.catalog.list()).toEqual([])
    } finally {
      await bobSees.close()
    }
  })

  it('says what is wrong: unknown collection, missing role, nothing to revoke, bad words, a reader granting', async () => {
    const run = (args: string[]) => access([...args, '--database', url])
    await expect(run(['grant', bob, 'payroll'])).rejects.toThrow(
      /there is no collection "payroll" in this library \(it has: manuals, nda\)/,
    )
    await expect(run(['grant', `nobody_${uniq}`, 'nda'])).rejects.toThrow(
      new RegExp(`there is no role "nobody_${uniq}" on the server`),
    )
    await expect(run(['revoke', bob, 'manuals'])).rejects.toThrow(/nobody was granted "manuals"/)
    await expect(run(['grant', bob])).rejects.toThrow(/grant needs a collection/)
    await expect(run(['allow', bob, 'nda'])).rejects.toThrow(/unknown access command "allow"/)
    await expect(run(['grant', 'x'.repeat(64), 'nda'])).rejects.toThrow(/at most 63 bytes/)
    await expect(access(['grant', bob, 'nda', '--database', bobUrl])).rejects.toThrow(
      new RegExp(`the role ${bob} may not manage permissions`),
    )
  })
})

describe('docent access on a data-folder library', () => {
  it('says permissions are for a server library, without opening the folder', async () => {
    const d = await tempDir('docent-access-pglite-')
    cleanups.push(d.cleanup)
    const prev = process.env['DOCENT_DATABASE_URL']
    delete process.env['DOCENT_DATABASE_URL']
    try {
      await expect(access(['grant', 'alice', 'hr', '--data', d.dir])).rejects.toThrow(AccessError)
      await expect(access(['list', '--data', d.dir])).rejects.toThrow(/permissions are for a server library/)
      await expect(access(['list'])).rejects.toThrow(/permissions are for a server library/)
    } finally {
      if (prev !== undefined) process.env['DOCENT_DATABASE_URL'] = prev
    }
  })
})
