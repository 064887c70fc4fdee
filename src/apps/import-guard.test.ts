import { execFile } from 'node:child_process'
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { Engine } from '../engine/engine'
import { repoRoot, tempDir } from '../test-support/paths'

/**
 * The engine refuses to import a collection from a folder other than its own (its documents would
 * all be pruned and replaced), and a sync that would empty a collection: through the engine, the
 * `docent ingest` command and the MCP server's import_folder alike.
 */

const run = promisify(execFile)
const CLI = path.join(repoRoot, 'src/apps/cli/main.ts')

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: repoRoot })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

describe('import guards in every front end', () => {
  let data: string
  let models: string
  let first: string
  let second: string
  const cleanups: (() => Promise<void>)[] = []

  const documentsOf = async (collection: string) => {
    const engine = await Engine.open({ dataDir: data, modelsDir: models })
    try {
      return (await engine.catalog.list()).find((c) => c.id === collection)
    } finally {
      await engine.close()
    }
  }

  beforeAll(async () => {
    const [a, b, d] = [await tempDir(), await tempDir(), await tempDir()]
    cleanups.push(a.cleanup, b.cleanup, d.cleanup)
    first = a.dir
    second = b.dir
    data = d.dir
    models = path.join(d.dir, 'none')
    await mkdir(models)
    for (let i = 0; i < 3; i++) await writeFile(path.join(first, `p${i}.md`), `# Page ${i}\n\nAbout cormorants ${i}.\n`)
    await writeFile(path.join(second, 'other.md'), '# Other\n\nAbout puffins.\n')
    const engine = await Engine.open({ dataDir: data, modelsDir: models })
    try {
      await engine.importFolder(first, { collection: 'birds' })
    } finally {
      await engine.close()
    }
  })
  afterAll(async () => {
    for (const c of cleanups) await c()
  })

  it('the engine refuses another folder for an existing collection, naming both', async () => {
    const engine = await Engine.open({ dataDir: data, modelsDir: models })
    try {
      expect((await engine.catalog.root('birds'))?.root).toBe(first)
      const err = await engine.importFolder(second, { collection: 'birds' }).catch((e: unknown) => e)
      expect(err).toMatchObject({ code: 'other_folder' })
      expect(String((err as Error).message)).toContain(first)
      expect(String((err as Error).message)).toContain(second)
      expect((await engine.catalog.root('birds'))?.root).toBe(first)
    } finally {
      await engine.close()
    }
    expect(await documentsOf('birds')).toMatchObject({ root: first, documents: 3 })
  })

  it('docent ingest refuses it too, and exits non-zero', async () => {
    const r = await cli(['ingest', second, '--collection', 'birds', '--data', data, '--models', models])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain(first)
    expect(r.stderr).toContain(second)
    expect(r.stderr).toMatch(/another collection name/)
    expect(await documentsOf('birds')).toMatchObject({ root: first, documents: 3 })
  })

  it('MCP import_folder refuses it too', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', CLI, 'mcp', '--data', data, '--models', models, '--allow-writes'],
      cwd: repoRoot,
      stderr: 'pipe',
    })
    const client = new Client({ name: 'docent-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const r = (await client.callTool({
        name: 'import_folder',
        arguments: { folder: second, collection: 'birds' },
      })) as CallToolResult
      expect(r.isError).toBe(true)
      const text = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')
      expect(text).toContain(first)
      expect(text).toContain(second)
    } finally {
      await client.close()
    }
    expect(await documentsOf('birds')).toMatchObject({ root: first, documents: 3 })
  })

  it('docent ingest of an emptied folder removes nothing without --allow-empty', async () => {
    for (const f of await readdir(first)) await rm(path.join(first, f))
    expect(await readdir(first)).toEqual([])
    const refused = await cli(['ingest', first, '--collection', 'birds', '--data', data, '--models', models])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toMatch(/would remove all 3 documents.*--allow-empty/)
    expect(await documentsOf('birds')).toMatchObject({ documents: 3 })
    const allowed = await cli([
      'ingest',
      first,
      '--collection',
      'birds',
      '--data',
      data,
      '--models',
      models,
      '--allow-empty',
      '--json',
    ])
    expect(allowed.code).toBe(0)
    expect(JSON.parse(allowed.stdout)).toMatchObject({ pruned: 3 })
    expect(await documentsOf('birds')).toMatchObject({ documents: 0 })
  })
})
