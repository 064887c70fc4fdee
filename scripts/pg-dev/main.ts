/**
 * `npm run --silent pg:dev -- install|start|stop|url [--dir DIR] [--port N]`
 *
 * A PostgreSQL server with pgvector on this machine, for trying a team library and for the server
 * tests. `install` unpacks PostgreSQL + pgvector from PyPI's pgserver wheel into DIR (default .pg
 * in the checkout); `start` installs if needed, runs initdb into DIR/data once and starts postgres
 * on a free port of 127.0.0.1 (or --port), then prints the postgres:// URL (with the generated
 * password of the `docent` superuser); `url` prints it again; `stop` stops the server. The data
 * stays in DIR/data until you delete the folder.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { installPgserver, runningUrl, startPostgres, stopPostgres } from '../../src/test-support/pg-server'

const USAGE = 'usage: npm run --silent pg:dev -- install|start|stop|url [--dir DIR] [--port N]'

async function main(argv: string[]): Promise<number> {
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
  let dir = path.join(repo, '.pg')
  let port: number | undefined
  const [cmd, ...rest] = argv
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]
    if (a === '--dir') dir = path.resolve(rest[++i] ?? '')
    else if (a === '--port') port = Number(rest[++i])
    else {
      console.error(`unknown option ${a}\n${USAGE}`)
      return 2
    }
  }
  const data = path.join(dir, 'data')
  const log = (s: string) => console.error(`pg:dev: ${s}`)
  switch (cmd) {
    case 'install':
      installPgserver(dir, { log })
      return 0
    case 'start': {
      installPgserver(dir, { log })
      const already = runningUrl(data)
      if (already) {
        log('already running')
        console.log(already)
        return 0
      }
      const s = await startPostgres(dir, data, { port })
      log(`PostgreSQL running on port ${s.port}, data in ${data}; stop it with: npm run pg:dev -- stop`)
      console.log(s.url)
      return 0
    }
    case 'url': {
      const url = runningUrl(data)
      if (!url) {
        log('not running: npm run pg:dev -- start')
        return 1
      }
      console.log(url)
      return 0
    }
    case 'stop':
      stopPostgres(dir, data)
      log('stopped')
      return 0
    default:
      console.error(USAGE)
      return 2
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`pg:dev: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  },
)
