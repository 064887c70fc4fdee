import { readFileSync } from 'node:fs'
import type { Readable, Writable } from 'node:stream'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { Library, requireLibraryFolder } from '../library'
import { createDocentMcpServer } from '../mcp/server'

/**
 * `docent mcp [--data <dir> | --database <url>] [--models <dir>] [--allow-writes]`: an MCP server on stdio over the
 * library: attached to the app, `docent watch` or another owner of the index when one runs, else
 * owning it (and then serving the others that start meanwhile). stdout carries the protocol and
 * nothing else, so every log (ours, and any library's console.log) goes to stderr. It runs until
 * the client closes stdin or a signal stops it.
 */

/** The version in the nearest package.json above this file (the source tree, or the built app's out/main). */
function packageVersion(): string {
  for (const rel of ['../../../package.json', '../../package.json', '../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string }
      if (pkg.name === 'docent' && pkg.version) return pkg.version
    } catch {
      // Not there: try the next folder up.
    }
  }
  return '0.0.0'
}

export interface McpFlags {
  data?: string
  database?: string
  models?: string
  allowWrites?: boolean
}

export async function cmdMcp(
  values: McpFlags,
  io: { stdin?: Readable; stdout?: Writable; version?: string } = {},
): Promise<void> {
  // A stray console.log from a library would corrupt the protocol stream.
  const toStderr = (...args: unknown[]) => console.error(...args)
  console.log = toStderr
  console.info = toStderr
  console.debug = toStderr

  const allowWrites = !!values.allowWrites
  // Read-only, a mistyped --data must not become an empty library the client then searches; the
  // app's own folder may be new (an MCP client starts the server before the first import).
  if (!allowWrites) requireLibraryFolder(values, { explicitOnly: true })
  const library = new Library({
    data: values.data,
    database: values.database,
    // Without --allow-writes it only reads: a read-only role on a server is enough.
    readOnly: !allowWrites,
    models: values.models,
    role: 'mcp',
    log: (m) => process.stderr.write(`docent mcp: ${m}\n`),
  })
  const server = createDocentMcpServer(library, { allowWrites, version: io.version ?? packageVersion() })
  const stdin = io.stdin ?? process.stdin
  const transport = new StdioServerTransport(stdin, io.stdout ?? process.stdout)

  let closing: Promise<void> | null = null
  // Closing the server closes the transport, which calls onclose again: record the promise before any of it runs.
  const shutdown = () =>
    (closing ??= Promise.resolve().then(async () => {
      await server.close().catch(() => undefined)
      await library.close()
    }))
  const stopped = new Promise<void>((resolve) => {
    transport.onclose = () => void shutdown().then(resolve)
    stdin.once('end', () => void shutdown().then(resolve))
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void shutdown().then(resolve))
  })
  await server.connect(transport)
  // Opens the library now (attach or own), so the first tool call does not pay for it.
  const where = await library.invoke('app.info', {}).then(
    () => {
      const s = library.state
      return s.kind === 'attached' ? `attached to pid ${s.owner.pid} (${s.owner.role})` : 'owning it'
    },
    (err: unknown) => `not open yet: ${err instanceof Error ? err.message : String(err)}`,
  )
  process.stderr.write(
    `docent mcp: serving ${library.dataDir} on stdio, ${where} (${allowWrites ? 'imports and removals allowed' : 'read-only'})\n`,
  )
  await stopped
}
