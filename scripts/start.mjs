// `npm start`: the app, built and previewed by electron-vite. Without Electron's binary (installed
// with ELECTRON_SKIP_BINARY_DOWNLOAD=1, or its download failed) electron-vite would only print
// "Electron uninstall"; this says what to do instead.
import { spawnSync } from 'node:child_process'
import process from 'node:process'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
try {
  require('electron')
} catch {
  process.stderr.write(
    [
      "Docent's desktop app needs Electron's binary, and it is not installed here",
      '(npm install was run with ELECTRON_SKIP_BINARY_DOWNLOAD=1, or the download failed).',
      '',
      "To get it, with a connection to Electron's download host: rm -rf node_modules/electron && npm install",
      'Without it, the same UI runs in Chromium against the same engine and library:',
      '  npm run build && npm run ui:browser',
      'and everything works from the command line: npm run --silent cli -- --help',
      '',
    ].join('\n'),
  )
  process.exit(1)
}
const r = spawnSync('npx', ['electron-vite', 'preview', ...process.argv.slice(2)], { stdio: 'inherit' })
process.exit(r.status ?? 1)
