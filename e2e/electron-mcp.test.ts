import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { repoRoot, tempDir } from '../src/test-support/paths'

/**
 * `Docent --mcp` and `Docent --cli` as the installed app runs them: Electron's main process without
 * a window, the built CLI in a utility process, stdin relayed by main. Needs the Electron binary,
 * which this machine does not download (ELECTRON_SKIP_BINARY_DOWNLOAD): then skipped with that
 * reason. The same built CLI runs under Node in src/apps/cli/bin.test.ts everywhere.
 */

function electronBinary(): string | null {
  try {
    const p: unknown = createRequire(import.meta.url)('electron')
    return typeof p === 'string' && existsSync(p) ? p : null
  } catch {
    return null
  }
}

const binary = electronBinary()
const built = existsSync(path.join(repoRoot, 'out/main/index.js')) && existsSync(path.join(repoRoot, 'out/main/docent-cli.js'))
const skipReason = !binary
  ? 'Electron binary not installed (ELECTRON_SKIP_BINARY_DOWNLOAD): skipped'
  : !built
    ? 'App not built (run `npm run build`): skipped'
    : null
if (skipReason) console.warn(`e2e/electron-mcp.test.ts: ${skipReason}`)

describe('Docent --mcp (Electron)', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const c of cleanups) await c()
  })

  it.skipIf(skipReason !== null)('serves MCP on stdio from the app binary, with no window', async () => {
    const home = await tempDir('docent-electron-mcp-')
    cleanups.push(home.cleanup)
    const transport = new StdioClientTransport({
      command: binary!,
      args: [path.join(repoRoot, 'out/main/index.js'), '--mcp'],
      env: { ...process.env, DOCENT_HOME: home.dir, ELECTRON_RENDERER_URL: '' } as Record<string, string>,
      stderr: 'pipe',
    })
    const client = new Client({ name: 'docent-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const r = await client.callTool({ name: 'list_collections', arguments: {} })
      expect(r.structuredContent).toEqual({ collections: [] })
    } finally {
      await client.close()
    }
  })
})
