import { defineConfig } from 'vitest/config'

// The fault suite (npm run test:faults): kills engine processes, truncates models, fills disks.
// Separate from `npm test` because it is slower and its tests own whole processes.
export default defineConfig({
  test: {
    include: ['src/**/*.faults.test.ts'],
    environment: 'node',
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    maxWorkers: 1,
  },
})
