import { cp, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { Engine } from '../../engine/engine'
import { fixtureModels, mcpCorpus, repoRoot, tempDir } from '../../test-support/paths'

/**
 * The MCP server as a client sees it: `docent mcp` spawned over stdio and driven through the
 * SDK's own Client, which also checks every structuredContent against the tool's output schema.
 */

interface Started {
  client: Client
  stderr: () => string
  errors: Error[]
  close: () => Promise<void>
}

async function startServer(data: string, models: string, extra: string[] = []): Promise<Started> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', path.join(repoRoot, 'src/apps/cli/main.ts'), 'mcp', '--data', data, '--models', models, ...extra],
    cwd: repoRoot,
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  const client = new Client({ name: 'docent-test', version: '1.0.0' })
  const errors: Error[] = []
  client.onerror = (e) => errors.push(e)
  await client.connect(transport)
  return { client, stderr: () => stderr, errors, close: () => client.close() }
}

const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')

describe('docent mcp over stdio', () => {
  const cleanups: (() => Promise<void>)[] = []
  let data: string
  let corpus: string
  let noModels: string
  let server: Started

  beforeAll(async () => {
    const c = await tempDir()
    const d = await tempDir()
    cleanups.push(c.cleanup, d.cleanup)
    corpus = c.dir
    data = d.dir
    noModels = path.join(d.dir, 'no-models')
    await mkdir(noModels)
    // Two releases of the same pages: version scoping has something to keep apart.
    for (const v of ['2025-03-26', '2025-06-18']) {
      for (const dir of ['basic', 'server']) {
        await cp(path.join(mcpCorpus, 'specification', v, dir), path.join(corpus, 'specification', v, dir), { recursive: true })
      }
    }
    const engine = await Engine.open({ dataDir: data, modelsDir: noModels })
    await engine.importFolder(corpus, { collection: 'mcp' })
    await engine.close()
    server = await startServer(data, noModels)
  })
  afterAll(async () => {
    await server?.close()
    for (const c of cleanups) await c()
  })

  it('lists the tools with input and output schemas', async () => {
    const { tools } = await server.client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual([
      'ask',
      'get_passage',
      'import_folder',
      'list_collections',
      'remove_collection',
      'search_docs',
    ])
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object')
      expect(t.outputSchema?.type).toBe('object')
      expect(t.description).toBeTruthy()
    }
    const search = tools.find((t) => t.name === 'search_docs')!
    expect(search.inputSchema.required).toEqual(['query'])
    expect(Object.keys(search.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['query', 'collection', 'version', 'mode', 'top_k']),
    )
    expect(search.annotations?.readOnlyHint).toBe(true)
    expect(tools.find((t) => t.name === 'remove_collection')!.annotations?.destructiveHint).toBe(true)
    expect(tools.find((t) => t.name === 'import_folder')!.description).toContain('--allow-writes')
    const instructions = server.client.getInstructions()
    expect(instructions).toContain('list_collections')
  })

  it('lists collections with versions and counts', async () => {
    const r = (await server.client.callTool({ name: 'list_collections', arguments: {} })) as CallToolResult
    expect(r.isError).toBeFalsy()
    const { collections } = r.structuredContent as {
      collections: { id: string; versions: string[]; latest_version: string; documents: number; chunks: number }[]
    }
    expect(collections).toHaveLength(1)
    expect(collections[0]).toMatchObject({ id: 'mcp', versions: ['2025-03-26', '2025-06-18'], latest_version: '2025-06-18' })
    expect(collections[0]!.documents).toBeGreaterThan(10)
    expect(collections[0]!.chunks).toBeGreaterThan(collections[0]!.documents)
  })

  it('searches one version, reporting each score under its own name', async () => {
    const r = (await server.client.callTool({
      name: 'search_docs',
      arguments: { query: 'tools/call', version: '2025-06-18', mode: 'keyword', top_k: 5 },
    })) as CallToolResult
    expect(r.isError).toBeFalsy()
    const out = r.structuredContent as {
      mode: string
      degraded: boolean
      scope: string
      passages: {
        chunk_id: string
        path: string
        breadcrumb: string
        version: string | null
        scores: Record<string, number | null>
      }[]
    }
    expect(out.mode).toBe('keyword')
    expect(out.degraded).toBe(false)
    expect(out.passages.length).toBeGreaterThan(0)
    expect(out.passages.length).toBeLessThanOrEqual(5)
    expect(out.passages[0]!.path).toBe('specification/2025-06-18/server/tools.mdx')
    for (const p of out.passages) {
      expect(p.version === '2025-06-18' || p.version === null).toBe(true)
      expect(typeof p.scores['bm25']).toBe('number')
      expect(p.scores['cosine']).toBeNull()
      expect(p.scores['reranker']).toBeNull()
    }
    // The text content is the same JSON, for clients that ignore structuredContent.
    expect(JSON.parse(text(r))).toEqual(out)

    // Hybrid without an embedding model says so instead of failing.
    const hybrid = (await server.client.callTool({
      name: 'search_docs',
      arguments: { query: 'list resources' },
    })) as CallToolResult
    const h = hybrid.structuredContent as { degraded: boolean; notices: string[]; passages: unknown[] }
    expect(h.degraded).toBe(true)
    expect(h.notices.join(' ')).toMatch(/Vector search is unavailable/)
    expect(h.passages.length).toBeGreaterThan(0)
  })

  it('reads a passage with its neighbours in document order', async () => {
    const s = (await server.client.callTool({
      name: 'search_docs',
      arguments: { query: 'pagination cursor', mode: 'keyword', top_k: 1 },
    })) as CallToolResult
    const id = (s.structuredContent as { passages: { chunk_id: string }[] }).passages[0]!.chunk_id
    const r = (await server.client.callTool({
      name: 'get_passage',
      arguments: { chunk_id: id, neighbours: 2 },
    })) as CallToolResult
    expect(r.isError).toBeFalsy()
    const out = r.structuredContent as {
      passage: { chunk_id: string; path: string; position: number }
      previous: { path: string; position: number }[]
      next: { path: string; position: number }[]
    }
    expect(out.passage.chunk_id).toBe(id)
    const around = [...out.previous, out.passage, ...out.next]
    expect(around.length).toBeGreaterThan(1)
    for (const p of around) expect(p.path).toBe(out.passage.path)
    const positions = around.map((p) => p.position)
    expect(positions).toEqual(positions.map((_, i) => positions[0]! + i))

    const missing = (await server.client.callTool({ name: 'get_passage', arguments: { chunk_id: 'c_nope' } })) as CallToolResult
    expect(missing.isError).toBe(true)
    expect(text(missing)).toMatch(/No passage has id/)
  })

  it('asks through the grounded pipeline (search-only without a language model)', async () => {
    const r = (await server.client.callTool({
      name: 'ask',
      arguments: { question: 'How does a client list the tools a server offers?', version: '2025-06-18' },
    })) as CallToolResult
    expect(r.isError).toBeFalsy()
    const out = r.structuredContent as {
      mode: string
      answer: string | null
      citations: { path: string; version: string | null }[]
      trace_id: string
      scope_label: string
    }
    expect(out.mode).toBe('search-only')
    expect(out.answer).toBeNull()
    expect(out.trace_id).toBeTruthy()
    expect(out.scope_label).toContain('2025-06-18')
    for (const c of out.citations) expect(c.version === '2025-06-18' || c.version === null).toBe(true)
  })

  it('refuses writes when not started with --allow-writes', async () => {
    const imp = (await server.client.callTool({
      name: 'import_folder',
      arguments: { folder: corpus, collection: 'other' },
    })) as CallToolResult
    expect(imp.isError).toBe(true)
    expect(text(imp)).toMatch(/read-only.*--allow-writes/)
    const rm = (await server.client.callTool({ name: 'remove_collection', arguments: { collection: 'mcp' } })) as CallToolResult
    expect(rm.isError).toBe(true)
    const after = (await server.client.callTool({ name: 'list_collections', arguments: {} })) as CallToolResult
    expect((after.structuredContent as { collections: unknown[] }).collections).toHaveLength(1)
  })

  it('answers bad arguments with an error result and keeps serving', async () => {
    const bad: { name: string; arguments: Record<string, unknown> }[] = [
      { name: 'search_docs', arguments: {} },
      { name: 'search_docs', arguments: { query: 42 } },
      { name: 'search_docs', arguments: { query: 'x', top_k: 10_000 } },
      { name: 'search_docs', arguments: { query: 'x', mode: 'telepathy' } },
      { name: 'search_docs', arguments: { query: 'x', collection: 'no-such-collection' } },
      { name: 'ask', arguments: { question: '' } },
      { name: 'get_passage', arguments: { chunk_id: ['a'] } },
      { name: 'no_such_tool', arguments: {} },
    ]
    for (const call of bad) {
      const r = (await server.client.callTool(call)) as CallToolResult
      expect(r.isError, JSON.stringify(call)).toBe(true)
      expect(text(r).length).toBeGreaterThan(0)
    }
    const unknownCollection = (await server.client.callTool(bad[4]!)) as CallToolResult
    expect(text(unknownCollection)).toMatch(/no collection named "no-such-collection"/)
    const still = (await server.client.callTool({
      name: 'search_docs',
      arguments: { query: 'resources/list', mode: 'keyword' },
    })) as CallToolResult
    expect(still.isError).toBeFalsy()
    // Nothing but protocol on stdout: the client saw no parse errors.
    expect(server.errors).toEqual([])
    expect(server.stderr()).toContain('read-only')
  })

  it('with --allow-writes imports and removes collections', async () => {
    await server.close()
    const more = await tempDir()
    cleanups.push(more.cleanup)
    await cp(path.join(mcpCorpus, 'specification', '2025-06-18', 'basic'), path.join(more.dir, 'basic'), { recursive: true })
    const writer = await startServer(data, noModels, ['--allow-writes'])
    try {
      const imp = (await writer.client.callTool({
        name: 'import_folder',
        arguments: { folder: more.dir, collection: 'basics' },
      })) as CallToolResult
      expect(imp.isError, text(imp)).toBeFalsy()
      expect(imp.structuredContent).toMatchObject({ collection: 'basics', failed: [], cancelled: false })
      expect((imp.structuredContent as { imported: number }).imported).toBeGreaterThan(0)
      const relative = (await writer.client.callTool({
        name: 'import_folder',
        arguments: { folder: 'basic', collection: 'x' },
      })) as CallToolResult
      expect(relative.isError).toBe(true)
      const rm = (await writer.client.callTool({
        name: 'remove_collection',
        arguments: { collection: 'basics' },
      })) as CallToolResult
      expect(rm.structuredContent).toEqual({ collection: 'basics', removed: true })
      const list = (await writer.client.callTool({ name: 'list_collections', arguments: {} })) as CallToolResult
      expect((list.structuredContent as { collections: { id: string }[] }).collections.map((c) => c.id)).toEqual(['mcp'])
      expect(writer.errors).toEqual([])
    } finally {
      await writer.close()
    }
    // Closing stdin shuts the server down cleanly: engine closed, nothing thrown on the way out.
    expect(writer.stderr()).not.toMatch(/Error|Exception/)
  })
})

describe('docent mcp with models installed (fixture models: random weights, plumbing only)', () => {
  const cleanups: (() => Promise<void>)[] = []
  let server: Started

  beforeAll(async () => {
    const c = await tempDir()
    const d = await tempDir()
    cleanups.push(c.cleanup, d.cleanup)
    await cp(
      path.join(mcpCorpus, 'specification', '2025-06-18', 'basic'),
      path.join(c.dir, 'specification', '2025-06-18', 'basic'),
      { recursive: true },
    )
    const engine = await Engine.open({ dataDir: d.dir, modelsDir: fixtureModels })
    await engine.importFolder(c.dir, { collection: 'mcp' })
    await engine.close()
    server = await startServer(d.dir, fixtureModels)
  })
  afterAll(async () => {
    await server?.close()
    for (const c of cleanups) await c()
  })

  it('hybrid search reports bm25, cosine, rrf and reranker scores', async () => {
    const r = (await server.client.callTool({
      name: 'search_docs',
      arguments: { query: 'lifecycle initialization', top_k: 5 },
    })) as CallToolResult
    expect(r.isError, text(r)).toBeFalsy()
    const out = r.structuredContent as {
      mode: string
      rerank: boolean
      degraded: boolean
      passages: { scores: Record<string, number | null> }[]
    }
    expect(out).toMatchObject({ mode: 'hybrid', rerank: true, degraded: false })
    expect(out.passages).toHaveLength(5)
    for (const p of out.passages) {
      expect(typeof p.scores['reranker']).toBe('number')
      expect(typeof p.scores['rrf']).toBe('number')
      expect(p.scores['bm25'] !== null || p.scores['cosine'] !== null).toBe(true)
    }
  })

  it('ask runs the answer model and returns a verified answer or a reasoned abstention, with progress on the way', async () => {
    const progress: { progress: number; total?: number; message?: string }[] = []
    const r = (await server.client.callTool(
      { name: 'ask', arguments: { question: 'How does the initialization phase of the lifecycle work?' } },
      undefined,
      // The SDK sends a progress token and, with resetTimeoutOnProgress, restarts its time-out on each notification.
      { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true },
    )) as CallToolResult
    expect(r.isError, text(r)).toBeFalsy()
    const out = r.structuredContent as {
      mode: string
      abstained: boolean
      reason: string | null
      answer: string | null
      passages: string[]
    }
    expect(out.mode).toBe('answer')
    // A random-weight model rarely writes a checkable answer: either outcome must be well-formed.
    if (out.abstained) expect(out.reason).toMatch(/^(no_relevant_sources|not_in_context|unverifiable_citations)$/)
    else expect(out.answer).toBeTruthy()
    expect(server.errors).toEqual([])
    // Stages, the passages read, and the model's reading: each notification's progress is larger than the last.
    expect(progress.length).toBeGreaterThan(3)
    expect(progress.every((p, i) => i === 0 || p.progress > progress[i - 1]!.progress)).toBe(true)
    expect(progress.map((p) => p.message).join('\n')).toMatch(/Reading \d+ passages? from/)
  })
})
