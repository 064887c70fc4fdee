import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { repoRoot, tempDir } from '../../test-support/paths'

/**
 * The built CLI, out/main/docent-cli.js (what `Docent --mcp` and `Docent --cli` run in the installed
 * app's utility process), under plain Node: no tsx, no TypeScript at start-up. `npm test` builds
 * before it runs the tests; run `npm run build` first when running this file alone.
 */

const BUILT = path.join(repoRoot, 'out/main/docent-cli.js')
const run = promisify(execFile)

describe('the built CLI (out/main/docent-cli.js)', () => {
  let data: string
  let models: string
  let docs: string
  const cleanups: (() => Promise<void>)[] = []

  beforeAll(async () => {
    if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run npm run build first`)
    const t = await tempDir('docent-built-')
    cleanups.push(t.cleanup)
    data = path.join(t.dir, 'index')
    models = path.join(t.dir, 'none')
    docs = path.join(t.dir, 'docs')
    await mkdir(docs)
    await writeFile(path.join(docs, 'kestrel.md'), '# Kestrel\n\nThe kestrel hovers before it stoops.\n')
  })
  afterAll(async () => {
    for (const c of cleanups) await c()
  })

  it('runs CLI commands under Node', async () => {
    const ingest = await run(process.execPath, [
      BUILT,
      'ingest',
      docs,
      '--collection',
      'birds',
      '--data',
      data,
      '--models',
      models,
      '--json',
    ])
    expect(JSON.parse(ingest.stdout)).toMatchObject({ collection: 'birds', imported: 1 })
    const search = await run(process.execPath, [BUILT, 'search', 'hovers', '--mode', 'keyword', '--data', data, '--json'])
    expect((JSON.parse(search.stdout) as { results: { path: string }[] }).results.map((r) => r.path)).toEqual(['kestrel.md'])
    // A command that ends closes its own library: that is not news for the person (it used to say
    // "closed; the next request opens the library again" after every command).
    expect(search.stderr).not.toMatch(/closed|opens the library again/)
  })

  it('serves MCP on stdio', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BUILT, 'mcp', '--data', data, '--models', models],
      cwd: repoRoot,
      stderr: 'pipe',
    })
    const client = new Client({ name: 'docent-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'docent' })
      const r = await client.callTool({ name: 'list_collections', arguments: {} })
      expect(r.structuredContent).toMatchObject({ collections: [{ id: 'birds', documents: 1 }] })
    } finally {
      await client.close()
    }
  })
})
