import { rmSync } from 'node:fs'
import path from 'node:path'
import { app, utilityProcess } from 'electron'

/**
 * `Docent --mcp` and `Docent --cli <command>`: the installed app serves MCP and runs the CLI from
 * its built JavaScript (out/main/docent-cli.js, src/apps/cli/bin.ts), without a window. The
 * Electron fuses turn RunAsNode off (electron-builder.yml), so the app binary cannot run a script
 * as Node; the command runs in a utility process instead, like the engine. A utility process can
 * inherit stdout and stderr but not stdin, so this process reads stdin and passes it on as
 * messages (only for `mcp`, whose protocol arrives there). The command opens the library as the
 * CLI does: it attaches to the app when the app is open, or owns the index while it runs.
 */
export function runCliMode(args: string[], entry: string): void {
  app.setName('Docent')
  // A command, not an app: no dock icon, and no single-instance lock (the app may be open beside it).
  app.dock?.hide()
  // Chromium's own profile data in a folder of this process's, never the running app's.
  const session = path.join(app.getPath('temp'), `docent-cli-${process.pid}`)
  app.setPath('sessionData', session)
  const done = (code: number): void => {
    rmSync(session, { recursive: true, force: true })
    app.exit(code)
  }
  void app.whenReady().then(() => {
    const child = utilityProcess.fork(entry, [], { serviceName: 'Docent CLI', stdio: ['ignore', 'inherit', 'inherit'] })
    child.on('exit', (code: number) => done(code))
    child.postMessage({ type: 'cli', argv: args, version: app.getVersion() })
    if (args[0] !== 'mcp') return
    process.stdin.setEncoding('utf8')
    process.stdin.on('data', (text: string) => child.postMessage({ type: 'stdin', text }))
    process.stdin.on('end', () => child.postMessage({ type: 'stdin-end' }))
  })
}
