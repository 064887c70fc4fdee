/**
 * Answers with a line a person cannot read as written (src/engine/eval/layout.ts), counted in
 * answer-eval reports (`docent eval answers --json`): the answers themselves, as rendered, no model.
 *
 *   npx tsx evals/answers/layout.ts evals/reports/answers-mcp-docs-held-out-10.json [more reports...]
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { layoutDefects, type LayoutDefect } from '../../src/engine/eval/layout'

for (const file of process.argv.slice(2)) {
  const report = JSON.parse(await readFile(file, 'utf8')) as {
    per_question: { id: string; answer: string | null; abstained: boolean }[]
  }
  const answered = report.per_question.filter((q) => !q.abstained && q.answer)
  const byKind = new Map<LayoutDefect, string[]>()
  let withAny = 0
  for (const q of answered) {
    const found = layoutDefects(q.answer!)
    if (found.length) withAny++
    for (const d of found) byKind.set(d, [...(byKind.get(d) ?? []), q.id])
  }
  const kinds = [...byKind].map(([k, ids]) => `${k} ${ids.length} (${ids.join(' ')})`).join('; ')
  process.stdout.write(
    `${path.basename(file)}: ${withAny}/${answered.length} answers with a line that does not read${kinds ? `: ${kinds}` : ''}\n`,
  )
}
