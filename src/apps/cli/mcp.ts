import { readFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { Engine } from '../../engine/engine'
import { createDocentMcpServer } from '../mcp/server'

/**
 * `docent mcp [--data <dir>] [--models <dir>] [--allow-writes]`: an MCP server on stdio over one
 * long-lived engine. stdout carries the protocol and nothing else, so every log (ours, and any
 * library's console.log) goes to stderr. It runs until the client closes stdin or a signal stops it.
 */

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string }
    return pkg.version ?? '0.0.0'
  } catch {
    return '0.0.0'
  }
}

export async function cmdMcp(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { data: { type: 'string' }, models: { type: 'string' }, 'allow-writes': { type: 'boolean' } },
  })
  // A stray console.log from a library would corrupt the protocol stream.
  const toStderr = (...args: unknown[]) => console.error(...args)
  console.log = toStderr
  console.info = toStderr
  console.debug = toStderr

  const engine = await Engine.open({
    ...(values.data ? { dataDir: path.resolve(values.data) } : {}),
    ...(values.models ? { modelsDir: path.resolve(values.models) } : {}),
  })
  const allowWrites = !!values['allow-writes']
  const server = createDocentMcpServer(engine, { allowWrites, version: packageVersion() })
  const transport = new StdioServerTransport()

  let closing: Promise<void> | null = null
  // Closing the server closes the transport, which calls onclose again: record the promise before any of it runs.
  const shutdown = () =>
    (closing ??= Promise.resolve().then(async () => {
      await server.close().catch(() => undefined)
      await engine.close()
    }))
  const stopped = new Promise<void>((resolve) => {
    transport.onclose = () => void shutdown().then(resolve)
    process.stdin.once('end', () => void shutdown().then(resolve))
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void shutdown().then(resolve))
  })
  await server.connect(transport)
  process.stderr.write(
    `docent mcp: serving ${engine.db.dataDir ?? 'an in-memory index'} on stdio (${allowWrites ? 'imports and removals allowed' : 'read-only'})\n`,
  )
  await stopped
}
