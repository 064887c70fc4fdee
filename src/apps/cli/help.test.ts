import { afterEach, describe, expect, it, vi } from 'vitest'
import { main } from './main'

/**
 * The command line's surface as docs/contracts.md ("CLI") promises it: the help the parser
 * generates names every command and flag of the contract, and a mistyped command or flag fails
 * with exit 1 and one line on stderr. Runs `main` in this process, reading what it writes.
 */

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = []
  const err: string[] = []
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true))
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true))
  const code = await main(argv)
  vi.restoreAllMocks()
  return { code, stdout: out.join(''), stderr: err.join('') }
}

afterEach(() => vi.restoreAllMocks())

describe('docent help and usage errors', () => {
  it('lists every command of the contract; `docent` alone does too, and exits 1', async () => {
    const help = await run(['help'])
    expect(help.code).toBe(0)
    for (const cmd of ['ingest', 'search', 'ask', 'collections', 'watch', 'mcp', 'access', 'eval'])
      expect(help.stdout).toMatch(new RegExp(`^ {2}${cmd} `, 'm'))
    expect(help.stdout).toMatch(/--database postgres:\/\//)
    const bare = await run([])
    expect(bare.code).toBe(1)
    expect(bare.stdout).toMatch(/^ {2}ingest /m)
  })

  it("names each command's flags of the contract", async () => {
    const flags: Record<string, string[]> = {
      ingest: ['--collection <name>', '--data <dir>', '--models <dir>', '--json', '--allow-empty'],
      search: ['--collection <name>', '--version <v>', '--mode <mode>', '--rerank', '-k, --k <n>', '--data <dir>', '--json'],
      ask: ['--collection <name>', '--version <v>', '--data <dir>', '--models <dir>', '--json'],
      mcp: ['--data <dir>', '--models <dir>', '--allow-writes'],
    }
    for (const [cmd, names] of Object.entries(flags)) {
      const help = await run(['help', cmd])
      expect(help.code).toBe(0)
      for (const name of names) expect(help.stdout, `${cmd} ${name}`).toContain(name)
    }
    const retrieval = await run(['eval', 'retrieval', '--help'])
    for (const name of ['--corpus <folder>', '--questions <file>', '--mode <mode>', '--rerank', '--json <out.json>'])
      expect(retrieval.stdout).toContain(name)
  })

  it('fails a mistyped command, flag or eval with exit 1 and one line on stderr', async () => {
    for (const argv of [['serch', 'x'], ['search', 'x', '--frobnicate'], ['eval', 'recall'], ['ingest']]) {
      const r = await run(argv)
      expect(r.code, argv.join(' ')).toBe(1)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(/^docent: [^\n]+\n$/)
    }
  })
})
