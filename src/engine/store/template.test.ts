import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { repoRoot, tempDir } from '../../test-support/paths'
import { SCHEMA_MARK, schemaVersion, LATEST_MIGRATION } from './migrations'
import { PGLITE, PGVECTOR, templateFile } from './template'

/**
 * A new library from the template (template.ts): the first new data folder runs initdb and leaves
 * the template behind; the next one unpacks it and is the same empty, migrated library, its own.
 */
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined)
})

async function scratch(): Promise<string> {
  const t = await tempDir('docent-template-')
  cleanups.push(t.cleanup)
  return t.dir
}

async function open(dataDir: string, dir: string): Promise<Engine> {
  const e = await Engine.open({ dataDir, modelsDir: path.join(dataDir, 'no-models'), templates: { dir, schema: SCHEMA_MARK } })
  cleanups.push(() => e.close())
  return e
}

const madeBy = (e: Engine) => (e.db as unknown as { madeBy: string | null }).madeBy

describe('a new library starts from the template', () => {
  it('the first new folder runs initdb and leaves the template; the next unpacks it, migrated and empty, and its own', async () => {
    const root = await scratch()
    const dir = path.join(root, 'templates')
    const first = await open(path.join(root, 'a'), dir)
    expect(madeBy(first)).toBe('initdb')
    expect(existsSync(templateFile(dir, SCHEMA_MARK))).toBe(true)

    await mkdir(path.join(root, 'a-docs'))
    await writeFile(path.join(root, 'a-docs', 'note.md'), '# Note\n\nThe quokka lives on Rottnest Island.\n')
    expect((await first.importFolder(path.join(root, 'a-docs'), { collection: 'first' })).failed).toEqual([])
    const second = await open(path.join(root, 'b'), dir)
    expect(madeBy(second)).toBe('template')
    expect(await schemaVersion(second.db)).toBe(LATEST_MIGRATION)
    // Made before anything was written: the first library's collection is not in it.
    expect(await second.catalog.list()).toEqual([])
    const sub = path.join(root, 'b-docs')
    await mkdir(sub)
    await writeFile(path.join(sub, 'other.md'), '# Other\n\nThe wombat digs burrows.\n')
    const r = await second.importFolder(sub, { collection: 'second' })
    expect(r.failed).toEqual([])
    const hits = await second.search('wombat burrows', { mode: 'keyword', k: 5 })
    expect(hits.results.map((h) => h.collection)).toEqual(['second'])
    expect((await first.catalog.list()).map((c) => c.id)).toEqual(['first'])

    // An existing library opens as itself, from its own files.
    await second.close()
    const again = await open(path.join(root, 'b'), dir)
    expect(madeBy(again)).toBeNull()
    expect((await again.catalog.list()).map((c) => c.id)).toEqual(['second'])
  })

  it('a template that does not unpack is replaced, and the folder keeps nothing of it', async () => {
    const root = await scratch()
    const dir = path.join(root, 'templates')
    await mkdir(dir)
    const file = templateFile(dir, SCHEMA_MARK)
    await writeFile(file, 'this is not a tarball of a database')
    const dataDir = path.join(root, 'lib')
    const e = await open(dataDir, dir)
    // The fault happened: the bad file was found and not used.
    expect(madeBy(e)).toBe('initdb')
    expect(await schemaVersion(e.db)).toBe(LATEST_MIGRATION)
    expect(readFileSync(file).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b])) // a gzip file now
    expect(readdirSync(dataDir)).toContain('PG_VERSION')
  })

  it('is named for the PGlite and pgvector releases installed', () => {
    const version = (pkg: string) =>
      (JSON.parse(readFileSync(path.join(repoRoot, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version
    expect(PGLITE).toBe(version('@electric-sql/pglite'))
    expect(PGVECTOR).toBe(version('@electric-sql/pglite-pgvector'))
  })
})
