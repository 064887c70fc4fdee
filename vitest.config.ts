import os from 'node:os'
import path from 'node:path'
import { defineConfig } from 'vitest/config'
import react from '@vitejs/plugin-react'

// Unit and integration tests: next to the code (*.test.ts / *.test.tsx). Renderer component tests
// opt into jsdom with a `// @vitest-environment jsdom` docblock. The e2e tests (a real browser, or
// Electron, on the built app) run here too, after `npm run build` (npm test builds first), and alone
// with test:e2e. Fault tests have their own config and command (test:faults): they kill processes.
export default defineConfig({
  plugins: [react()],
  test: {
    // New libraries start from one template per schema (src/engine/store/template.ts), kept outside
    // the person's own app folder; the engines the tests start in child processes inherit it.
    env: { DOCENT_TEMPLATE_DIR: process.env['DOCENT_TEMPLATE_DIR'] ?? path.join(os.tmpdir(), 'docent-test-templates') },
    include: ['src/**/*.test.{ts,tsx}', 'evals/**/*.test.ts', 'e2e/**/*.test.ts', 'scripts/**/*.test.ts', 'tools/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/*.faults.test.ts', '**/*.real.test.ts'],
    environment: 'node',
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 2,
  },
})
