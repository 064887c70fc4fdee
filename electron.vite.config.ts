import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'electron-vite'
import react from '@vitejs/plugin-react'

const root = dirname(fileURLToPath(import.meta.url))

// Native or heavy modules the engine loads at run time from node_modules (unpacked from the asar
// where they carry binaries): never bundled.
const nativeDeps = [
  '@electric-sql/pglite',
  '@electric-sql/pglite-pgvector',
  'node-llama-cpp',
  '@huggingface/transformers',
  'onnxruntime-node',
  'pdfjs-dist',
  'mammoth',
  // Text recognition: tesseract.js starts its worker script by path and reads the language data
  // from its package folder; @napi-rs/canvas is a native add-on.
  'tesseract.js',
  'tesseract.js-core',
  '@tesseract.js-data/eng',
  '@napi-rs/canvas',
]

export default defineConfig({
  main: {
    build: {
      // Dependencies stay external (electron-vite's default); the native ones are listed so that
      // stays true even if someone turns the default off.
      externalizeDeps: { include: nativeDeps },
      rollupOptions: {
        input: {
          index: resolve(root, 'src/main/index.ts'),
          // The engine's utility process entry: utilityProcess.fork(out/main/engine-host.js).
          'engine-host': resolve(root, 'src/apps/engine-host.ts'),
          // The CLI and MCP server from built JavaScript: `node out/main/docent-cli.js`, and the
          // installed app's `Docent --mcp` / `Docent --cli` (src/main/cli-mode.ts) in a utility process.
          'docent-cli': resolve(root, 'src/apps/cli/bin.ts'),
          // The embedding model's worker thread, started by models/embedder-thread.ts from beside the host bundle.
          'embedder-thread-entry': resolve(root, 'src/engine/models/runtime/embedder-thread-entry.ts'),
          // The parser's worker thread, started by ingest/parsers/worker-pool.ts from beside the host bundle.
          'parse-worker-entry': resolve(root, 'src/engine/ingest/parsers/parse-worker-entry.ts'),
        },
        external: nativeDeps.flatMap((d) => [d, new RegExp(`^${d.replace('/', '\\/')}/`)]),
      },
    },
  },
  preload: {
    build: {
      rollupOptions: {
        input: { index: resolve(root, 'src/preload/index.ts') },
        // Sandboxed preloads cannot be ES modules; .cjs because package.json says "type": "module".
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(root, 'src/renderer'),
    plugins: [react()],
    build: {
      rollupOptions: { input: { index: resolve(root, 'src/renderer/index.html') } },
    },
  },
})
