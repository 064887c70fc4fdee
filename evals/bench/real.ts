import { existsSync } from 'node:fs'
import path from 'node:path'
import * as ort from 'onnxruntime-node'
import { getLlama, LlamaLogLevel } from 'node-llama-cpp'
import { Engine } from '../../src/engine/engine'
import { loadQuestions } from '../../src/engine/eval/questions'
import { activeModelPath } from '../../src/engine/models/active'
import { loadEmbedder } from '../../src/engine/models/runtime/embedder'
import type { ChatModel, GenerateArgs } from '../../src/engine/core/model-ports'
import type { AskEvent } from '../../src/shared/answer'
import { goldenQuestions, mcpCorpus, tempDir } from '../../src/test-support/paths'
import { peakMemory, pct, printTable, r1 } from './machine'
import { rawEncoder } from './models'

/**
 * Speed with the real models on this machine (`npm run bench -- real [--models DIR]`, models
 * installed by `npm run models:dev`): import with the real embedder beside a keyword-only import,
 * query embedding and search latency beside keyword search, the answer model per question beside
 * node-llama-cpp's own throughput on the same prompts, and peak memory. Each baseline runs in the
 * same process, on the same texts. No real cross-encoder is available here: nothing is reranked.
 */
const median = (xs: number[]) => pct(xs, 50)

async function benchImport(models: string) {
  const rows: Record<string, unknown>[] = []
  let data = ''
  for (const m of [
    { label: 'real embedder', dir: models },
    { label: 'no model (keyword only)', dir: null },
  ]) {
    const t = await tempDir('docent-bench-real-')
    const engine = await Engine.open({ dataDir: t.dir, modelsDir: m.dir ?? path.join(t.dir, 'none') })
    const mem = peakMemory()
    const report = await engine.importFolder(mcpCorpus, { collection: 'mcp' })
    const peak = mem.stop()
    await engine.close()
    const total = Object.values(report.timings).reduce((a, b) => a + b, 0) || 1
    rows.push({
      models: m.label,
      chunks: report.chunks_written,
      seconds: r1(report.ms / 1000),
      chunks_per_s: r1(report.chunks_written / (report.ms / 1000)),
      embed_share: r1((100 * report.timings.embed) / total),
      outside_embedder_share: r1((100 * (total - report.timings.embed)) / total),
      peak_rss_mb: peak,
      timings_ms: report.timings,
    })
    if (m.dir) data = t.dir
    else await t.cleanup()
  }
  return { rows, data }
}

async function benchQueries(data: string, models: string, n: number) {
  const questions = (await loadQuestions(goldenQuestions)).filter((q) => q.answerable).slice(0, n)
  const engine = await Engine.open({ dataDir: data, modelsDir: models })
  const emb = (await engine.embedder()).model
  if (!emb) throw new Error(`no embedding model in ${models}`)
  const embedMs: number[] = []
  const lat: Record<'keyword' | 'vector' | 'hybrid', number[]> = { keyword: [], vector: [], hybrid: [] }
  for (const q of questions) {
    let t0 = performance.now()
    await emb.embedQuery(q.question)
    embedMs.push(performance.now() - t0)
    for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
      t0 = performance.now()
      await engine.search(q.question, { scope: { collections: ['mcp'], version: q.version ?? 'all' }, mode, k: 10 })
      lat[mode].push(performance.now() - t0)
    }
  }
  // Raw onnxruntime on the same texts the pipeline embeds: 64 stored passages of the corpus.
  const { rows: chunkRows } = await engine.db.query<{ text: string }>('SELECT text FROM chunks ORDER BY id LIMIT 64')
  const texts = chunkRows.map((r) => r.text)
  await engine.close()
  const dir = activeModelPath(models, 'embedding')!
  const pipeline = await loadEmbedder(dir)
  const tokens = texts.reduce((s, t) => s + Math.min(pipeline.countTokens(t), pipeline.maxTokens), 0)
  const times = async (fn: () => Promise<unknown>) => {
    await fn()
    const ts: number[] = []
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now()
      await fn()
      ts.push(performance.now() - t0)
    }
    return median(ts)
  }
  const pipelineMs = await times(() => pipeline.embedDocuments(texts))
  const raw = await rawEncoder(dir)
  const batches: ort.InferenceSession.FeedsType[] = []
  for (let i = 0; i < texts.length; i += 16) batches.push(raw.feeds(texts.slice(i, i + 16).map((t) => raw.encoder.encode(t))))
  const rawMs = await times(async () => {
    for (const feeds of batches) await raw.session.run(feeds)
  })
  await pipeline.dispose()
  await raw.session.release()
  const p = (xs: number[]) => [r1(median(xs)), r1(pct(xs, 95))]
  return {
    questions: questions.length,
    query_embedding_ms: p(embedMs),
    keyword_ms: p(lat.keyword),
    vector_ms: p(lat.vector),
    hybrid_ms: p(lat.hybrid),
    embedding_throughput: {
      texts: texts.length,
      tokens,
      pipeline_ms: r1(pipelineMs),
      raw_onnxruntime_ms: r1(rawMs),
      pipeline_tokens_per_s: Math.round(tokens / (pipelineMs / 1000)),
      raw_tokens_per_s: Math.round(tokens / (rawMs / 1000)),
    },
  }
}

/** Wraps the answer model to keep each prompt, so the raw baseline can be run on the very same text. */
function recording(model: ChatModel, prompts: GenerateArgs[]): ChatModel {
  return { ...model, generateJson: (args) => (prompts.push(args), model.generateJson(args)) }
}

async function benchAnswers(data: string, models: string, n: number) {
  const questions = (await loadQuestions(goldenQuestions)).filter((q) => q.answerable).slice(0, n)
  const mem = peakMemory()
  const engine = await Engine.open({ dataDir: data, modelsDir: models })
  const loadT0 = performance.now()
  const chat = (await engine.chatModel()).model
  const loadMs = performance.now() - loadT0
  if (!chat) throw new Error(`no chat model in ${models}`)
  await engine.embedder()
  const prompts: GenerateArgs[] = []
  const model = recording(chat, prompts)
  const per: Record<string, unknown>[] = []
  for (const q of questions) {
    const t0 = performance.now()
    let first: number | null = null
    let shown: number | null = null
    const result = await engine.ask(
      { question: q.question, scope: { collections: ['mcp'], version: q.version ?? 'all' } },
      {
        chat: model,
        useCache: false,
        rerank: false,
        onEvent: (e: AskEvent) => {
          if (e.type === 'token') first ??= performance.now()
          if (e.type === 'passages') shown ??= performance.now()
        },
      },
    )
    const total = performance.now() - t0
    const trace = (await engine.answers.trace(result.trace_id))?.data
    const attempts = trace?.attempts ?? []
    per.push({
      id: q.id,
      outcome: result.abstained ? `abstained (${result.reason})` : 'answered',
      passages_shown_ms: shown === null ? null : r1(shown - t0),
      first_token_ms: first === null ? null : r1(first - t0),
      total_ms: r1(total),
      llm_calls: attempts.length,
      prompt_tokens: attempts[0]?.prompt_tokens ?? null,
      tokens_in: attempts[0]?.tokens_in ?? null,
      tokens_out: attempts.reduce((s, a) => s + a.tokens_out, 0),
      llm_ms: r1(attempts.reduce((s, a) => s + a.ms, 0)),
      attempt_first_token_ms: attempts[0]?.first_token_ms ?? null,
    })
  }
  const peak = mem.stop()
  const id = chat.id
  await engine.close()
  const raw = await rawLlama(models, prompts)
  return { model: id, load_ms: r1(loadMs), per_question: per, ...raw, peak_rss_mb_all_models: peak }
}

/**
 * node-llama-cpp on its own, nothing of Docent around it: the same prompts, each evaluated from an
 * empty sequence, then continued greedily without a grammar; and the first prompt with 1 thread and
 * with every math core, for the thread default.
 */
async function rawLlama(models: string, prompts: GenerateArgs[]) {
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error })
  const lm = await llama.loadModel({ modelPath: activeModelPath(models, 'llm')! })
  const run = async (threads: number, pr: GenerateArgs) => {
    const ctx = await lm.createContext({ contextSize: { max: 8192 }, threads: { ideal: threads, min: 1 } })
    const seq = ctx.getSequence()
    const tokens = lm.tokenize(`${pr.system}\n\n${pr.user}`)
    let t0 = performance.now()
    await seq.evaluateWithoutGeneratingNewTokens(tokens.slice(0, -1))
    const promptMs = performance.now() - t0
    t0 = performance.now()
    let generated = 0
    for await (const _ of seq.evaluate(tokens.slice(-1), { temperature: 0 })) if (++generated >= 64) break
    const genMs = performance.now() - t0
    await seq.dispose()
    await ctx.dispose()
    return {
      threads,
      prompt_tokens: tokens.length,
      prompt_tok_s: r1(tokens.length / (promptMs / 1000)),
      gen_tok_s: r1(generated / (genMs / 1000)),
    }
  }
  const cores = llama.cpuMathCores
  const out: Awaited<ReturnType<typeof run>>[] = []
  for (const pr of prompts.slice(0, 5)) out.push(await run(cores, pr))
  const threads: Awaited<ReturnType<typeof run>>[] = []
  if (prompts[0])
    for (const t of [...new Set([1, 2, cores])].filter((t) => t <= Math.max(cores, 2))) threads.push(await run(t, prompts[0]))
  await lm.dispose()
  return { raw_node_llama_cpp: out, threads_compared: threads, math_cores: cores }
}

export async function benchReal(opts: { models: string; questions: number; answers: number }): Promise<Record<string, unknown>> {
  if (!existsSync(path.join(opts.models, 'embedding')))
    throw new Error(`no real models in ${opts.models}: run npm run models:dev -- ${opts.models}`)
  const imp = await benchImport(opts.models)
  printTable(
    'Import of the MCP docs with the real embedder, beside a keyword-only import (same run)',
    ['models', 'chunks', 's', 'chunks/s', 'embed %', 'outside embedder %', 'peak RSS MB'],
    imp.rows.map(
      (r) =>
        [r.models, r.chunks, r.seconds, r.chunks_per_s, r.embed_share, r.outside_embedder_share, r.peak_rss_mb] as (
          string | number
        )[],
    ),
  )
  const q = await benchQueries(imp.data, opts.models, opts.questions)
  printTable(
    `Queries (${q.questions} golden questions, ms p50 / p95)`,
    ['query embedding', 'keyword', 'vector', 'hybrid'],
    [[q.query_embedding_ms.join(' / '), q.keyword_ms.join(' / '), q.vector_ms.join(' / '), q.hybrid_ms.join(' / ')]],
  )
  const e = q.embedding_throughput
  printTable(
    `Embedding ${e.texts} stored passages (${e.tokens} tokens), median of 3`,
    ['pipeline ms', 'raw onnxruntime ms', 'pipeline tokens/s', 'raw tokens/s', 'pipeline / raw'],
    [
      [
        e.pipeline_ms,
        e.raw_onnxruntime_ms,
        e.pipeline_tokens_per_s,
        e.raw_tokens_per_s,
        r1((10 * e.pipeline_ms) / e.raw_onnxruntime_ms) / 10,
      ],
    ],
  )
  let answers: Awaited<ReturnType<typeof benchAnswers>> | null = null
  if (opts.answers > 0 && activeModelPath(opts.models, 'llm')) {
    answers = await benchAnswers(imp.data, opts.models, opts.answers)
    const rate = median(answers.raw_node_llama_cpp.map((r) => r.prompt_tok_s))
    printTable(
      `Answers with ${answers.model} (no reranker; loaded in ${answers.load_ms} ms; limit = tokens read / node-llama-cpp's own prefill rate, ${rate} tok/s)`,
      [
        'question',
        'outcome',
        'passages shown ms',
        'first token ms',
        'limit ms',
        'first token / limit',
        'total ms',
        'LLM calls',
        'prompt tok',
        'tok read',
        'tok out',
      ],
      answers.per_question.map((r) => {
        const limit = typeof r.tokens_in === 'number' ? (1000 * (r.tokens_in as number)) / rate : null
        const ttft = r.attempt_first_token_ms as number | null
        return [
          r.id as string,
          r.outcome as string,
          (r.passages_shown_ms as number | null) ?? '',
          (r.first_token_ms as number | null) ?? '',
          limit === null ? '' : r1(limit),
          limit && ttft ? r1((10 * ttft) / limit) / 10 : '',
          r.total_ms as number,
          r.llm_calls as number,
          (r.prompt_tokens as number | null) ?? '',
          (r.tokens_in as number | null) ?? '',
          r.tokens_out as number,
        ]
      }),
    )
    const answered = answers.per_question.filter((r) => (r.llm_calls as number) > 0)
    process.stdout.write(
      `Median time to a verified answer (questions the model was asked): ${r1(median(answered.map((r) => r.total_ms as number)))} ms; median prompt ${median(answered.map((r) => (r.prompt_tokens as number) ?? 0))} tokens\n`,
    )
    printTable(
      'node-llama-cpp alone on the same prompts (prompt evaluated, then 64 greedy tokens)',
      ['prompt tokens', 'prompt tokens/s', 'generation tokens/s'],
      answers.raw_node_llama_cpp.map((r) => [r.prompt_tokens, r.prompt_tok_s, r.gen_tok_s]),
    )
    printTable(
      `Threads on the first prompt (${answers.math_cores} math cores)`,
      ['threads', 'prompt tokens/s', 'generation tokens/s'],
      answers.threads_compared.map((r) => [r.threads, r.prompt_tok_s, r.gen_tok_s]),
    )
    process.stdout.write(`Peak RSS with the embedder and the chat model loaded: ${answers.peak_rss_mb_all_models} MB\n`)
  }
  return { import: imp.rows, queries: q, answers }
}
