import { PassThrough } from 'node:stream'
import { main } from './main'

/**
 * Entry of the built CLI, out/main/docent-cli.js: under Node (`node out/main/docent-cli.js
 * <command> ...`), or in the installed app's utility process for `Docent --mcp` and `Docent --cli
 * <command>` (src/main/cli-mode.ts). There the arguments and stdin arrive as messages on the
 * parent port, because a utility process cannot inherit stdin; stdout and stderr are inherited.
 */

interface ParentPortLike {
  on(event: 'message', listener: (e: { data: unknown }) => void): void
}

const parentPort = Reflect.get(process, 'parentPort') as ParentPortLike | undefined
if (parentPort) {
  const stdin = new PassThrough({ encoding: 'utf8' })
  parentPort.on('message', ({ data }) => {
    const m = data as { type?: string; argv?: unknown; text?: unknown; version?: unknown }
    if (m.type === 'cli' && Array.isArray(m.argv)) {
      const argv = m.argv.filter((a): a is string => typeof a === 'string')
      const version = typeof m.version === 'string' ? m.version : undefined
      void main(argv, { stdin, ...(version ? { version } : {}) }).then((code) => process.exit(code))
    } else if (m.type === 'stdin' && typeof m.text === 'string') stdin.write(m.text)
    else if (m.type === 'stdin-end') stdin.end()
  })
} else {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code
  })
}
