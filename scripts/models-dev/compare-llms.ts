/**
 * Compares the installed chat-model candidates the way the engine runs them (loadChatModel,
 * CPU, grammar-constrained JSON under ANSWER_SCHEMA):
 *
 *   npx tsx scripts/models-dev/compare-llms.ts <models-dir>
 *
 * Each model runs in its own child process so RSS and load time are not polluted by the others.
 * Prompt speed is taken up to the first streamed token, generation speed after it.
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadChatModel } from '../../src/engine/models/runtime/llm'
import { LLMS } from './catalog'
import { judgeAnswer, qaPrompt } from './verify'

const UNANSWERABLE = 'Which port does the MCP inspector listen on by default?'

async function measure(file: string): Promise<Record<string, unknown>> {
  const rss0 = process.memoryUsage().rss
  const t0 = performance.now()
  const model = await loadChatModel(file, { gpu: false, contextSize: 2048 })
  const loadS = (performance.now() - t0) / 1000
  const rows: Record<string, unknown>[] = []
  for (const question of [null, UNANSWERABLE]) {
    const { system, user, schema } = qaPrompt()
    const prompt = question ? user.replace(/<question>\n[^<]*\n<\/question>/, `<question>\n${question}\n</question>`) : user
    let first = 0
    const t1 = performance.now()
    const res = await model.generateJson({
      system,
      user: prompt,
      schema,
      maxTokens: 200,
      onToken: () => {
        if (first === 0) first = performance.now()
      },
    })
    const end = performance.now()
    const promptS = ((first || end) - t1) / 1000
    const genS = (end - (first || end)) / 1000
    const judged = judgeAnswer(res.parsed)
    const parsed = res.parsed as Record<string, unknown> | undefined
    rows.push({
      tokensIn: res.tokensIn,
      tokensOut: res.tokensOut,
      promptTokPerS: Number((res.tokensIn / promptS).toFixed(1)),
      genTokPerS: genS > 0 ? Number(((res.tokensOut - 1) / genS).toFixed(1)) : null,
      validJson: judged.validJson,
      // For the unanswerable question the useful reply is answerable:false.
      useful: question ? judged.validJson && parsed?.['answerable'] === false : judged.useful,
      raw: res.raw.slice(0, 300),
    })
  }
  const rss = process.memoryUsage().rss
  await model.dispose()
  return {
    loadS: Number(loadS.toFixed(2)),
    rssMiB: Math.round(rss / 2 ** 20),
    rssDeltaMiB: Math.round((rss - rss0) / 2 ** 20),
    rows,
  }
}

async function main(): Promise<void> {
  const [a, b] = process.argv.slice(2)
  if (a === '--one' && b) {
    process.stdout.write(JSON.stringify(await measure(b)) + '\n')
    process.exit(0)
  }
  if (!a) throw new Error('usage: npx tsx scripts/models-dev/compare-llms.ts <models-dir>')
  const self = fileURLToPath(import.meta.url)
  console.log(
    '| model | size MiB | load s | RSS MiB | prompt tok/s | gen tok/s | valid JSON | useful (answerable / unanswerable) |',
  )
  console.log('|---|---|---|---|---|---|---|---|')
  for (const spec of LLMS) {
    const file = path.join(path.resolve(a), 'llm', spec.fileName)
    if (!existsSync(file)) continue
    const out = spawnSync(process.execPath, ['--import', 'tsx', self, '--one', file], { encoding: 'utf8' })
    const line = out.stdout.trim().split('\n').at(-1) ?? ''
    let r: {
      loadS: number
      rssMiB: number
      rows: { promptTokPerS: number; genTokPerS: number; validJson: boolean; useful: boolean; raw: string }[]
    }
    try {
      r = JSON.parse(line) as typeof r
    } catch {
      console.log(`| ${spec.key} | failed: ${out.stderr.trim().split('\n').at(-1)} |`)
      continue
    }
    const { size } = await import('node:fs/promises').then((fs) => fs.stat(file))
    const col = (f: (x: (typeof r.rows)[number]) => unknown): string => r.rows.map(f).join(' / ')
    console.log(
      `| ${spec.key} | ${Math.round(size / 2 ** 20)} | ${r.loadS} | ${r.rssMiB} | ${col((x) => x.promptTokPerS)} | ${col((x) => x.genTokPerS)} | ${col((x) => (x.validJson ? 'yes' : 'no'))} | ${col((x) => (x.useful ? 'yes' : 'no'))} |`,
    )
    for (const row of r.rows) console.error(`${spec.key}: ${row.raw}`)
  }
}

void main()
