import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { Engine } from '../../src/engine/engine'
import { activeModelPath } from '../../src/engine/models/active'
import { mcpCorpus, repoRoot } from '../../src/test-support/paths'
import { startHarness } from '../../e2e/harness/index'

/**
 * docs/screenshots/answer.png, answer-reading.png (while the model reads) and trace.png from the real pipeline: the built renderer in Chromium
 * over the real engine with the real embedder and chat model (`npm run models:dev`), the MCP docs
 * imported, one question asked through the chat box. Nothing is injected: the picture is whatever
 * the pipeline produced and verified, and answer.json beside it records the question, the answer,
 * its citations and the models. If the pipeline abstains, nothing is written and the script says
 * why (ask another question with --question).
 *
 *   npm run build && npm run screenshots:real -- --models <models-dir>
 */
const { values } = parseArgs({
  options: {
    models: { type: 'string', default: process.env['DOCENT_REAL_MODELS'] ?? path.join(repoRoot, '.models') },
    data: { type: 'string' },
    question: { type: 'string', default: 'How can a client resume a Streamable HTTP stream after the connection drops?' },
    version: { type: 'string', default: '2025-06-18' },
    /** The collection to import into (reuse an index built by `eval answers --data … --collection …`). */
    collection: { type: 'string', default: 'mcp-docs' },
    /** The folder to import (the MCP docs by default). */
    corpus: { type: 'string', default: mcpCorpus },
  },
})

async function main(): Promise<void> {
  const models = path.resolve(values.models!)
  const embedding = activeModelPath(models, 'embedding')
  const llm = activeModelPath(models, 'llm')
  if (!embedding || !llm) throw new Error(`need a real embedder and chat model in ${models}: npm run models:dev -- ${models}`)
  const temp = await mkdtemp(path.join(os.tmpdir(), 'docent-shots-'))
  // The app's models layout with only the two models in use, linked rather than copied (1+ GB).
  const linked = path.join(temp, 'models')
  for (const [role, target] of [
    ['embedding', embedding],
    ['llm', llm],
  ] as const) {
    await mkdir(path.join(linked, role), { recursive: true })
    await symlink(target, path.join(linked, role, path.basename(target)))
  }
  const data = values.data ? path.resolve(values.data) : path.join(temp, 'index')
  const engine = await Engine.open({ dataDir: data, modelsDir: linked })
  const report = await engine.importFolder(path.resolve(values.corpus!), { collection: values.collection! })
  await engine.close()
  console.log(`imported ${report.imported + report.unchanged} documents, ${report.chunks_total} chunks`)

  const t0 = Date.now()
  const say = (what: string) => console.log(`${((Date.now() - t0) / 1000).toFixed(0).padStart(5)} s  ${what}`)
  say('starting the app over the real engine')
  const h = await startHarness({ dataDir: data, modelsDir: linked, viewport: { width: 1360, height: 860 } })
  try {
    const { page } = h
    say('the page loaded; waiting for the question box')
    // The engine host loads the real models first: on two busy cores that can take minutes.
    await page.getByRole('textbox', { name: 'Ask a question about your documents' }).waitFor({ timeout: 300_000 })
    await page.getByRole('combobox', { name: 'Version' }).selectOption(values.version!)
    const box = page.getByRole('textbox', { name: 'Ask a question about your documents' })
    await box.fill(values.question!)
    await box.press('Enter')
    say('asked; waiting for the model to read the passages')
    // While the model reads: the passages on screen and how far it has read (answer-reading.png).
    const reading = await Promise.race([
      h.waitForEvent('ask.event', (e) => e.event.type === 'progress' && e.event.phase === 'reading' && e.event.read > 0, 900_000),
      h.waitForEvent('ask.event', (e) => e.event.type === 'final', 900_000),
    ])
    if (reading.event.type === 'progress') {
      await page.getByRole('group', { name: 'Model progress' }).waitFor({ timeout: 30_000 })
      await page.locator('.passage-previews .preview').first().waitFor({ timeout: 30_000 })
      await h.screenshot('answer-reading')
      say('answer-reading.png written (the model reading its passages)')
    } else say('the answer came before any reading progress: no answer-reading.png')
    say('waiting for the verified answer (the chat model answers on the CPU)')
    const final = await h.waitForEvent('ask.event', (e) => e.event.type === 'final', 900_000)
    if (final.event.type !== 'final') throw new Error('unreachable')
    const result = final.event.result
    say(`final event: ${result.mode}${result.abstained ? ` (abstained: ${result.reason})` : ''}`)
    if (result.abstained || result.mode !== 'answer')
      throw new Error(`the pipeline did not answer (${result.mode}, ${result.reason}); nothing written. Try another --question.`)
    const answer = page.getByLabel('Answer', { exact: true })
    await answer.waitFor()
    await page.getByRole('region', { name: 'Sources' }).waitFor()
    await h.screenshot('answer')
    await page
      .getByRole('button', { name: /Why this answer\?/ })
      .last()
      .click()
    const panel = page.getByRole('complementary', { name: 'Answer trace' })
    await panel.locator('table.trace-table tbody tr').first().waitFor({ timeout: 30_000 })
    await h.screenshot('trace')
    const trace = await h.engine.answers.trace(result.trace_id)
    await writeFile(
      path.join(repoRoot, 'docs/screenshots/answer.json'),
      JSON.stringify(
        {
          note: 'Produced by evals/screenshots/real-answer.ts: the real pipeline, nothing injected.',
          question: values.question,
          version: values.version,
          models: trace?.data.models ?? null,
          embedder: trace?.data.retrieval?.embedder ?? null,
          answer: result.answer,
          citations: result.citations,
          trace_id: result.trace_id,
          stages_ms: trace?.data.stages_ms ?? null,
        },
        null,
        2,
      ) + '\n',
    )
    console.log(`answer.png, trace.png and answer.json written: ${result.answer}`)
  } catch (err) {
    // What the page showed at that moment, for the person who runs this (never in docs/).
    const shot = await h.screenshot('real-answer-failure', { docs: false }).catch(() => [])
    const text = await h.page
      .locator('body')
      .innerText({ timeout: 5_000 })
      .catch(() => '(no page text)')
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}\nThe page (${shot.join(', ')}):\n${text.slice(0, 2000)}\nPage errors: ${h.pageErrors.join('\n') || 'none'}`,
      {
        cause: err,
      },
    )
  } finally {
    await h.close()
    if (!values.data) await rm(temp, { recursive: true, force: true })
    else await rm(linked, { recursive: true, force: true })
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`screenshots: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  },
)
