import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'

/**
 * A real PostgreSQL server with pgvector on this machine, from PyPI's `pgserver` wheel (its
 * pgserver/pginstall/ folder holds PostgreSQL's binaries and pgvector). `npm run pg:dev` and the
 * server tests use it; nothing here is part of the app, which only ever gets a URL.
 */

export const PGSERVER_WHEEL = 'pgserver==0.1.4'
/** The system user postgres runs as when we are root (postgres refuses to run as root). */
const SERVICE_USER = 'docent-pg'
const SUPERUSER = 'docent'

export interface PgServer {
  url: string
  dataDir: string
  port: number
}

export function binDir(installDir: string): string {
  return path.join(installDir, 'pgserver', 'pginstall', 'bin')
}

export function isInstalled(installDir: string): boolean {
  return existsSync(path.join(binDir(installDir), 'postgres')) && existsSync(path.join(binDir(installDir), 'pg_ctl'))
}

/**
 * Unpacks PostgreSQL + pgvector from the pgserver wheel into `installDir` (pgserver/pginstall and
 * pgserver.libs): `pip download`
 * (the wheel only, none of its Python dependencies) into a throwaway folder, then the wheel is
 * unzipped with each file's mode kept (the binaries must stay executable).
 */
export function installPgserver(installDir: string, opts: { python?: string; log?: (s: string) => void } = {}): void {
  if (isInstalled(installDir)) return
  const python = opts.python ?? 'python3'
  const log = opts.log ?? (() => {})
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'docent-pg-wheel-'))
  try {
    log(`downloading ${PGSERVER_WHEEL} from PyPI`)
    const args = ['-m', 'pip', 'download', PGSERVER_WHEEL, '--no-deps', '--only-binary=:all:', '-d', tmp, '-q']
    if (process.platform === 'linux' && process.arch === 'x64')
      args.push('--platform', 'manylinux2014_x86_64', '--python-version', '3.11')
    execFileSync(python, args, { stdio: ['ignore', 'inherit', 'inherit'] })
    const staging = path.join(tmp, 'unpacked')
    const unzip = [
      'import sys, zipfile, os',
      'z = zipfile.ZipFile(next(p for p in __import__("glob").glob(sys.argv[1] + "/*.whl")))',
      'for i in z.infolist():',
      '    if not i.filename.startswith(("pgserver/pginstall/", "pgserver.libs/")): continue',
      '    p = z.extract(i, sys.argv[2])',
      '    mode = i.external_attr >> 16',
      '    if mode: os.chmod(p, mode & 0o777)',
    ].join('\n')
    execFileSync(python, ['-c', unzip, tmp, staging], { stdio: ['ignore', 'inherit', 'inherit'] })
    if (!existsSync(path.join(binDir(staging), 'postgres')))
      throw new Error('the pgserver wheel had no PostgreSQL binaries at pgserver/pginstall/bin')
    // The binaries find their shared libraries at $ORIGIN/../../../pgserver.libs: keep the layout.
    mkdirSync(installDir, { recursive: true })
    for (const part of ['pgserver', 'pgserver.libs']) {
      rmSync(path.join(installDir, part), { recursive: true, force: true })
      execFileSync('mv', [path.join(staging, part), path.join(installDir, part)])
    }
    log(`PostgreSQL installed in ${installDir}`)
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}

function serviceUser(): { uid: number; gid: number } | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null
  const id = (flag: string) => spawnSync('id', [flag, SERVICE_USER], { encoding: 'utf8' })
  if (id('-u').status !== 0)
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', SERVICE_USER])
  return { uid: Number(id('-u').stdout.trim()), gid: Number(id('-g').stdout.trim()) }
}

/** Lets the service user reach and read the install and the data folder's parents (as root only). */
function openPathFor(dir: string): void {
  for (let p = path.resolve(dir); ; p = path.dirname(p)) {
    chmodSync(p, statSync(p).mode | 0o055)
    if (p === path.dirname(p)) break
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port
      srv.close(() => resolve(port))
    })
  })
}

function run(installDir: string, cmd: string, args: string[], user: { uid: number; gid: number } | null): string {
  const res = spawnSync(path.join(binDir(installDir), cmd), args, {
    encoding: 'utf8',
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LC_ALL: 'C', HOME: os.tmpdir() },
    cwd: os.tmpdir(),
  })
  if (res.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${res.status ?? res.signal}): ${res.stderr || res.stdout}`)
  return res.stdout
}

/**
 * initdb into `dataDir` (once; superuser `docent` with a random password, password auth over
 * TCP) and starts postgres on a free port of 127.0.0.1, as a background process that outlives
 * this one until stopPostgres(). Returns the server's `postgres://` URL (database `postgres`).
 */
export async function startPostgres(
  installDir: string,
  dataDir: string,
  opts: { port?: number; /** fsync off: for throwaway test servers only. */ fast?: boolean } = {},
): Promise<PgServer> {
  if (!isInstalled(installDir)) throw new Error(`PostgreSQL is not installed in ${installDir}: run npm run pg:dev -- start`)
  const user = serviceUser()
  if (user) openPathFor(path.join(installDir, 'pgserver.libs'))
  mkdirSync(dataDir, { recursive: true })
  const pwFile = path.join(dataDir, '..', `${path.basename(dataDir)}.password`)
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    writeFileSync(pwFile, randomBytes(12).toString('hex') + '\n', { mode: 0o644 })
    if (user) {
      openPathFor(path.dirname(dataDir))
      chownSync(dataDir, user.uid, user.gid)
    }
    run(
      installDir,
      'initdb',
      [
        '-D',
        dataDir,
        '-U',
        SUPERUSER,
        `--pwfile=${pwFile}`,
        '--auth-local=trust',
        '--auth-host=scram-sha-256',
        '-E',
        'UTF8',
        '--lc-collate=C',
        '--lc-ctype=C.UTF-8',
      ],
      user,
    )
    chmodSync(pwFile, 0o600)
  }
  const password = readFileSync(pwFile, 'utf8').trim()
  const port = opts.port ?? (await freePort())
  run(
    installDir,
    'pg_ctl',
    [
      '-D',
      dataDir,
      '-l',
      path.join(dataDir, 'server.log'),
      '-w',
      '-t',
      '120',
      '-o',
      `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=200${opts.fast ? ' -c fsync=off' : ''}`,
      'start',
    ],
    user,
  )
  const url = `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`
  writeFileSync(path.join(dataDir, '..', `${path.basename(dataDir)}.url`), url + '\n', { mode: 0o600 })
  return { url, dataDir, port }
}

export function stopPostgres(installDir: string, dataDir: string): void {
  if (!existsSync(path.join(dataDir, 'postmaster.pid'))) return
  run(installDir, 'pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop'], serviceUser())
}

/** The URL a running server was started with (written beside its data folder), or null. */
export function runningUrl(dataDir: string): string | null {
  const file = path.join(dataDir, '..', `${path.basename(dataDir)}.url`)
  const pidFile = path.join(dataDir, 'postmaster.pid')
  if (!existsSync(pidFile) || !existsSync(file)) return null
  // A postmaster.pid left by a machine that went down names a process that is gone.
  try {
    process.kill(Number(readFileSync(pidFile, 'utf8').split('\n')[0]), 0)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return null
  }
  return readFileSync(file, 'utf8').trim()
}
