import { parseArgs } from 'node:util'
import path from 'node:path'
import { Engine } from '../../src/engine/engine'
import { loadQuestions, isHit } from '../../src/engine/eval/questions'
import { verifyReply, type Verification } from '../../src/engine/answer/verify'
import type { PromptPassage } from '../../src/engine/answer/prompt'
import { similarityFloorFor, type Similarity } from '../../src/engine/answer/support'

/**
 * Re-verifies the model replies stored in the traces of an `eval answers --data <dir>` run with
 * the verifier as it is now, without calling the model again: the effect of a verification change
 * on the very same replies. A reply the current verifier refuses counts as an abstention (the
 * corrective retry it would get is not run).
 *
 *   npx tsx evals/answers/reverify.ts --data <dir> --questions <file.jsonl> [--since <ISO time>] [--json]
 *       [--models <dir>]  (the embedding model for the similarity check; without it the check is skipped)
 *       [--coverage-floor x] [--similarity-floor x]  (try another floor on the same replies)
 */
const { values } = parseArgs({
  options: {
    data: { type: 'string' },
    questions: { type: 'string' },
    since: { type: 'string' },
    json: { type: 'boolean' },
    models: { type: 'string' },
    'coverage-floor': { type: 'string' },
    'similarity-floor': { type: 'string' },
  },
})

async function main(): Promise<void> {
  if (!values.data || !values.questions) throw new Error('needs --data <dir> and --questions <file.jsonl>')
  const engine = await Engine.open({
    dataDir: path.resolve(values.data),
    modelsDir: values.models ? path.resolve(values.models) : path.join(path.resolve(values.data), 'no-models'),
    readOnly: true,
  })
  try {
    const { model: embedder } = await engine.embedder()
    const floor = values['similarity-floor'] !== undefined ? Number(values['similarity-floor']) : similarityFloorFor(embedder?.id ?? null)
    const similarity: Similarity | undefined = embedder
      ? async (sentence, units) => {
          if (!units.length) return null
          const [s, ...us] = await embedder.embedDocuments([sentence, ...units])
          return Math.max(...us.map((u) => u.reduce((acc, x, i) => acc + x * s![i]!, 0)))
        }
      : undefined
    const byText = new Map((await loadQuestions(values.questions)).map((q) => [q.question, q]))
    const { rows } = await engine.db.query<{
      question: string
      outcome: string
      data: { passages?: string[]; attempts?: { raw: string }[]; standalone?: string }
    }>(`SELECT question, outcome, data FROM traces WHERE created_at >= $1 ORDER BY created_at`, [values.since ?? '1970-01-01'])
    const latest = new Map<string, (typeof rows)[number]>()
    for (const r of rows) if (byText.has(r.question)) latest.set(r.question, r)
    const per: {
      id: string
      answerable: boolean
      stored: string
      now: string
      repairs: string[]
      unverified_claims: string[]
      cites_gold: boolean | null
      removed: string[]
      gold_in_passages: boolean | null
    }[] = []
    for (const [question, r] of latest) {
      const q = byText.get(question)!
      const ids = r.data.passages ?? []
      const { rows: chunks } = await engine.db.query<{
        id: string
        path: string
        heading: string
        kind: string | null
        version: string | null
        page_start: number | null
        page_end: number | null
        text: string
      }>('SELECT id, path, heading, kind, version, page_start, page_end, text FROM chunks WHERE id = ANY($1::text[])', [ids])
      const byId = new Map(chunks.map((c) => [c.id, c]))
      const passages: PromptPassage[] = ids.flatMap((id, i) => {
        const c = byId.get(id)
        return c
          ? [
              {
                n: i + 1,
                chunk_id: id,
                path: c.path,
                heading: c.heading,
                kind: c.kind,
                version: c.version,
                page: c.page_start,
                text: c.text,
              },
            ]
          : []
      })
      const hit = (id: string | undefined) => {
        const c = id ? byId.get(id) : undefined
        return !!c && q.gold.some((g) => isHit({ path: c.path, heading: c.heading, page: c.page_start, page_end: c.page_end }, g))
      }
      const attempts = r.data.attempts ?? []
      const last = attempts.at(-1)
      let outcome = r.outcome
      let v: Verification | null = null
      if (last) {
        let parsed: unknown = null
        try {
          parsed = JSON.parse(last.raw)
        } catch {
          parsed = null
        }
        v = await verifyReply(parsed, passages, {
          question: r.data.standalone ?? question,
          similarity,
          similarityFloor: floor,
          ...(values['coverage-floor'] !== undefined ? { coverageFloor: Number(values['coverage-floor']) } : {}),
        })
        outcome = !v.ok ? 'unverifiable_citations' : v.reply?.answerable ? 'answer' : 'not_in_context'
      }
      const answered = outcome === 'answer'
      per.push({
        id: q.id,
        answerable: q.answerable,
        stored: r.outcome,
        now: outcome,
        repairs: v?.repairs.map((x) => x.code) ?? [],
        unverified_claims: answered && v ? [...v.unsupported_numbers, ...v.unsupported_quotes, ...v.unsupported_terms] : [],
        cites_gold: answered && v ? v.markers.some((n) => hit(ids[n - 1])) : null,
        removed: v?.removed.map((x) => `${x.code}: ${x.text}`) ?? [],
        gold_in_passages: q.answerable ? ids.some((id) => hit(id)) : null,
      })
    }
    const A = per.filter((p) => p.answerable)
    const U = per.filter((p) => !p.answerable)
    const answered = (xs: typeof per, key: 'stored' | 'now') => xs.filter((p) => p[key] === 'answer')
    const summary = (key: 'stored' | 'now') => ({
      answerable_answered: `${answered(A, key).length}/${A.length}`,
      unverifiable_citations: A.filter((p) => p[key] === 'unverifiable_citations').length,
      unanswerable_abstained: `${U.filter((p) => p[key] !== 'answer').length}/${U.length}`,
      ...(key === 'now'
        ? {
            answers_citing_gold: `${answered(A, key).filter((p) => p.cites_gold).length}/${answered(A, key).length}`,
            answers_with_removed_sentences: answered(per, key).filter((p) => p.removed.length > 0).length,
          }
        : {}),
    })
    const report = { questions: per.length, as_run: summary('stored'), verified_now: summary('now'), per_question: per }
    process.stdout.write(
      values.json
        ? JSON.stringify(report, null, 2) + '\n'
        : `${JSON.stringify({ as_run: report.as_run, verified_now: report.verified_now }, null, 1)}\n${per.map((p) => `${p.id} ${p.answerable ? 'answerable' : 'unanswerable'}: ${p.stored} -> ${p.now}${p.repairs.length ? ` [${p.repairs.join(', ')}]` : ''}${p.removed.length ? `\n    removed: ${p.removed.join('\n    removed: ')}` : ''}${p.cites_gold === false ? ' (cites no gold section)' : ''}`).join('\n')}\n`,
    )
  } finally {
    await engine.close()
  }
}

main().catch((err: unknown) => {
  console.error(`reverify: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})
