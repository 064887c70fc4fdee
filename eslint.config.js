import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import docent from './tools/eslint/layers.js'

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'release/**', 'node_modules/**', 'test-fixtures/**', 'evals/reports/**', 'e2e/artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // Layers (docs/architecture.md): shared imports nothing; engine imports shared; apps import
    // engine and shared; main imports shared and the host protocol; preload and renderer import
    // shared. Inside the engine, floors: core < store < ingest, retrieve, models < answer, watch <
    // engine.ts < host, eval. No import cycles anywhere in src/.
    files: ['src/**/*.{ts,tsx}'],
    plugins: { docent },
    rules: { 'docent/layers': 'error', 'docent/no-cycle': 'error' },
  },
  {
    // A function that does not fit on a screen does more than one thing: source functions stay
    // within 80 lines (tests, whose describe blocks are lists of cases, are not held to it).
    files: ['src/**/*.{ts,tsx}'],
    ignores: ['src/**/*.test.{ts,tsx}', 'src/**/*.testutil.{ts,tsx}', 'src/test-support/**'],
    rules: { 'max-lines-per-function': ['error', { max: 80, IIFEs: true }] },
  },
  {
    // The renderer must not reach Node either: everything goes through the preload's typed api.
    files: ['src/renderer/**/*.{ts,tsx}'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['node:*'] }] },
  },
  {
    files: ['tools/**/*.js'],
    languageOptions: { globals: { console: 'readonly' } },
  },
)
