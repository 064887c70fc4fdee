import os from 'node:os'
import path from 'node:path'
import { defineConfig } from 'vitest/config'

// The fault suite (npm run test:faults): kills engine processes, truncates models, fills disks.
// Separate from `npm test` because it is slower and its tests own whole processes.
export default defineConfig({
  test: {
    // New libraries start from one template per schema (src/engine/store/template.ts), kept outside
    // the person's own app folder; the engines the tests start in child processes inherit it.
    env: { DOCENT_TEMPLATE_DIR: process.env['DOCENT_TEMPLATE_DIR'] ?? path.join(os.tmpdir(), 'docent-test-templates') },
    include: ['src/**/*.faults.test.ts'],
    environment: 'node',
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    maxWorkers: 1,
  },
})
