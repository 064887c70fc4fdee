import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** Repository root, from this file's location. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
/** The MCP docs corpus shipped beside the repository (../shared/corpora/mcp-docs). */
export const mcpCorpus = path.resolve(repoRoot, '../shared/corpora/mcp-docs')
export const fixtureModels = path.join(repoRoot, 'test-fixtures/models')
export const goldenQuestions = path.join(repoRoot, 'evals/datasets/mcp-docs/questions.jsonl')
/**
 * The Fastify docs in a Docusaurus layout, built from pinned npm packages by
 * `bash evals/corpora/build-fastify-docusaurus.sh .corpora/fastify-docs` (.ci/run does).
 */
export const fastifyDocsCorpus = path.resolve(process.env['DOCENT_FASTIFY_DOCS'] ?? path.join(repoRoot, '.corpora/fastify-docs'))

/** A real temporary directory, removed by the returned cleanup. */
export async function tempDir(prefix = 'docent-test-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix))
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) }
}

/**
 * Real models installed by `npm run models:dev -- <dir>` (CI: `.models` in the checkout, embedder
 * only). The real-model suite (npm run test:real) needs them; nothing else does.
 */
export const realModels = path.resolve(process.env['DOCENT_REAL_MODELS'] ?? path.join(repoRoot, '.models'))
