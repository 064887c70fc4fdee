/**
 * The words of golden questions scoped to a release that no document of the collection uses
 * ("voice" for audio, typos such as "elicitaiton"), each with the feature words of the collection
 * (words of short section titles, answer/release-terms.ts loadTitles) closest to it by the
 * embedding model. It answers whether the embedder could map a person's word onto the documents'
 * feature for the release rules: only if a floor separates synonyms ("voice" → audio) from
 * neighbours ("figure", as in "figure out" → image). ADR 0013, "a field the release lacks".
 *
 *   npx tsx evals/answers/unknown-words.ts --data <copy of the data folder> --models <models-dir> \
 *     --collection mcp --embedder all-minilm-l6-v2-int8 mcp-docs mcp-docs-people mcp-docs-releases …
 */
import path from 'node:path'
import { parseArgs } from 'node:util'
import { Engine } from '../../src/engine/engine'
import { loadQuestions } from '../../src/engine/eval/questions'
import { AUTHORITATIVE_KINDS, checkRelease } from '../../src/engine/answer/release'
import { loadTitles } from '../../src/engine/answer/release-terms'
import { resolveSearchScope } from '../../src/engine/retrieve/search'
import { loadEmbedderAt } from '../../src/engine/models/loaded'

const { values, positionals } = parseArgs({
  options: {
    data: { type: 'string' },
    models: { type: 'string' },
    collection: { type: 'string' },
    embedder: { type: 'string', default: 'all-minilm-l6-v2-int8' },
  },
  allowPositionals: true,
})
if (!values.data || !values.models || !values.collection || positionals.length === 0)
  throw new Error('needs --data, --models, --collection and the names of the question sets')

const engine = await Engine.open({ dataDir: path.resolve(values.data), modelsDir: `${values.data}/no-models`, readOnly: true })
const unknown = new Map<string, string[]>()
let features: string[] = []
try {
  for (const set of positionals)
    for (const q of await loadQuestions(`evals/datasets/${set}/questions.jsonl`)) {
      const scope = await resolveSearchScope(
        engine.db,
        { collections: [values.collection], version: q.version ?? 'auto' },
        q.question,
      )
      const r = await checkRelease(engine.db, scope, q.question)
      for (const t of r.trace.terms)
        if (t.form === 'word' && t.elsewhere + t.in_scope_authoritative + t.in_scope_other === 0)
          unknown.set(t.term, [...(unknown.get(t.term) ?? []), `${q.id}${q.answerable ? '' : ' (unanswerable)'}`])
    }
  const titles = await loadTitles(engine.db, [values.collection], AUTHORITATIVE_KINDS)
  features = [...titles.words].filter((w) => w.length >= 3).sort()
} finally {
  await engine.close()
}

const embedder = await loadEmbedderAt(path.join(path.resolve(values.models), 'embedding', values.embedder!))
try {
  const words = [...unknown.keys()]
  const [fv, wv] = [await embedder.embedDocuments(features), await embedder.embedDocuments(words)]
  const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0)
  console.log(`${words.length} words no document uses; ${features.length} feature words; embedder ${values.embedder}`)
  words.forEach((w, i) => {
    const near = features
      .map((f, j) => [f, dot(wv[i]!, fv[j]!)] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
    console.log(
      `${w.padEnd(14)} ${unknown.get(w)!.join(', ').padEnd(24)} ${near.map(([f, s]) => `${f} ${s.toFixed(2)}`).join(' | ')}`,
    )
  })
} finally {
  await embedder.dispose()
}
