import os from 'node:os'
import path from 'node:path'
import { defineConfig } from 'vitest/config'

// The real-model suite (npm run test:real): tests that need the real weights installed by
// `npm run models:dev` (CI installs the embedder first). Separate from `npm test`, which runs on
// the committed fixture models only and needs nothing from a registry.
export default defineConfig({
  test: {
    // New libraries start from one template per schema (src/engine/store/template.ts), kept outside
    // the person's own app folder; the engines the tests start in child processes inherit it.
    env: { DOCENT_TEMPLATE_DIR: process.env['DOCENT_TEMPLATE_DIR'] ?? path.join(os.tmpdir(), 'docent-test-templates') },
    include: ['src/**/*.real.test.ts'],
    environment: 'node',
    testTimeout: 600_000,
    hookTimeout: 900_000,
    pool: 'forks',
    maxWorkers: 1,
  },
})
