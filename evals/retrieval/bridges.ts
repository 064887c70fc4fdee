/**
 * Which questions of the golden sets have a word that no passage holds, and what the search
 * bridges it to (src/engine/retrieve/bridge.ts), with the real embedder. The answer and retrieval
 * evals measure what the bridges change; this lists them, so a reader can see every bridge and
 * judge it (docs/benchmarks.md, "Features asked about in words the documents never use").
 *
 *   npx tsx evals/retrieval/bridges.ts --models <dir> \
 *     --set mcp-docs=<data dir>:<collection>:evals/datasets/mcp-docs/questions.jsonl [--set ...]
 *
 * With --words, it prints the three title words nearest to each given word instead, with their
 * cosines, before the floor and the prefix rule: what the floor was read from.
 *
 *   npx tsx evals/retrieval/bridges.ts --models <dir> --words pictures,sound --set mcp=<data dir>:<collection>
 */
import path from 'node:path'
import { parseArgs } from 'node:util'
import { Engine } from '../../src/engine/engine'
import { loadQuestions, searchQuestion } from '../../src/engine/eval/questions'
import { bridgeWords, canBridge, titleWords, unknownWords, type WordEmbedder } from '../../src/engine/retrieve/bridge'
import { resolveSearchScope } from '../../src/engine/retrieve/search'
import { searchText } from '../../src/engine/retrieve/scope'

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { models: { type: 'string' }, set: { type: 'string', multiple: true }, words: { type: 'string' } },
  })
  if (!values.models || !values.set?.length)
    throw new Error('usage: --models <dir> --set name=<data>:<collection>:<questions.jsonl> ...')
  for (const spec of values.set) {
    const [name, rest] = spec.split('=') as [string, string]
    const [data, collection, file] = rest.split(':') as [string, string, string]
    const engine = await Engine.open({ dataDir: path.resolve(data), modelsDir: values.models, readOnly: true })
    try {
      const embedder = (await engine.embedder()).model
      if (!canBridge(embedder)) throw new Error(`the embedder in ${values.models} has no bridge floor`)
      if (values.words) {
        await nearest(engine, embedder, collection, values.words.split(','))
        continue
      }
      let unknown = 0
      let bridged = 0
      const questions = await loadQuestions(file)
      for (const q of questions) {
        const scope = await resolveSearchScope(
          engine.db,
          { collections: [collection], version: q.version ?? 'auto' },
          searchQuestion(q),
        )
        const text = searchText(searchQuestion(q), scope)
        const words = await unknownWords(engine.db, [collection], text)
        if (words.length === 0) continue
        unknown++
        const bridges = await bridgeWords(engine.db, embedder, [collection], text)
        if (bridges.length) bridged++
        const shown = bridges.map((b) => `${b.word} -> ${b.term} (${b.cosine.toFixed(3)})`).join('; ') || 'none'
        process.stdout.write(
          `${name}\t${q.id}\t${q.answerable ? 'answerable' : 'unanswerable'}\tunknown: ${words.join(' ')}\tbridged: ${shown}\n`,
        )
      }
      process.stdout.write(
        `# ${name}: ${questions.length} questions, ${unknown} with a word no passage holds, ${bridged} bridged\n`,
      )
    } finally {
      await engine.close()
    }
  }
}

/** The three title words nearest to each word, by cosine, before the floor and the prefix rule. */
async function nearest(engine: Engine, embedder: WordEmbedder, collection: string, words: string[]): Promise<void> {
  const titles = await titleWords(engine.db, [collection])
  const vectors = await embedder.embedDocuments(titles)
  for (const word of words) {
    const [v] = await embedder.embedDocuments([word.trim()])
    const top = titles
      .map((t, i) => ({ t, c: vectors[i]!.reduce((s, x, j) => s + x * v![j]!, 0) }))
      .sort((a, b) => b.c - a.c)
      .slice(0, 3)
    process.stdout.write(`${word.trim()}\t${top.map((x) => `${x.t} ${x.c.toFixed(2)}`).join(', ')}\n`)
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
