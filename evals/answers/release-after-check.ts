/**
 * The release check after generation (src/engine/answer/release-after.ts) on answers the real chat
 * model already wrote, without running it again: each answered question of a stored answer-eval
 * report (evals/reports/answers-*.json) is scoped as the app scopes it, and every sentence of its
 * shown answer is checked. On an answerable question a removal is one the check would now make to
 * an answer that was shown (a false removal unless the sentence names a feature the release
 * lacks, which the listing lets a reader judge); on an unanswerable one it is a slip caught.
 *
 *   npx tsx evals/answers/release-after-check.ts --data <dir> --collection mcp \
 *     --questions evals/datasets/mcp-docs/questions.jsonl --report evals/reports/answers-mcp-docs-held-out-2.json [--report ...]
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { Engine } from '../../src/engine/engine'
import { loadQuestions } from '../../src/engine/eval/questions'
import { checkRelease } from '../../src/engine/answer/release'
import { splitLegacyAnswer } from '../../src/engine/answer/verify'
import { resolveSearchScope } from '../../src/engine/retrieve/search'

const { values } = parseArgs({
  options: {
    data: { type: 'string' },
    collection: { type: 'string', default: 'mcp' },
    questions: { type: 'string', multiple: true },
    report: { type: 'string', multiple: true },
  },
})

interface Stored {
  id: string
  answerable: boolean
  abstained: boolean
  answer: string | null
}

const questions = new Map<string, Awaited<ReturnType<typeof loadQuestions>>[number]>()
for (const file of values.questions ?? []) for (const q of await loadQuestions(file)) questions.set(q.id, q)
const engine = await Engine.open({ dataDir: values.data!, modelsDir: `${values.data}/no-models`, readOnly: true })
try {
  for (const file of values.report ?? []) {
    const report = JSON.parse(readFileSync(file, 'utf8')) as { per_question: Stored[] }
    let answered = 0
    let scoped = 0
    let sentences = 0
    const removals: string[] = []
    for (const p of report.per_question) {
      const q = questions.get(p.id)
      if (!q || p.abstained || !p.answer) continue
      answered++
      const scope = await resolveSearchScope(
        engine.db,
        { collections: [values.collection!], version: q.version ?? 'auto' },
        q.question,
      )
      const release = await checkRelease(engine.db, scope, q.question)
      if (!release.checkSentences) continue
      scoped++
      // The shown answer, its release labels ("2025-06-18: ") taken off as the model never wrote them.
      const texts = splitLegacyAnswer(p.answer, []).map((s) => s.text.replace(/^[\w.-]+(?:, [\w.-]+)*: /, ''))
      sentences += texts.length
      for (const r of await release.checkSentences(texts))
        removals.push(`  ${p.id} ${q.answerable ? 'ANSWERABLE' : 'unanswerable'}: "${texts[r.index]}" (${r.reason})`)
    }
    console.log(
      `${file}: ${answered} answers shown, ${scoped} scoped to a release (${sentences} sentences), ${removals.length} sentences removed`,
    )
    for (const r of removals) console.log(r)
  }
} finally {
  await engine.close()
}
