import { spawn } from 'node:child_process'
import path from 'node:path'
import type { ImportProgress } from '../engine/ingest/importer'
import { repoRoot } from './paths'

/**
 * Runs a real `docent ingest` in a child process and SIGKILLs it `delayMs` after it has written
 * `killAfterDocs` documents (read from its JSON-lines progress on stderr). Progress arrives
 * between write batches; the delay puts the kill anywhere: mid-embedding, mid-transaction.
 * Resolves with the progress seen and how the child ended: `killed` only when this kill was sent
 * and the child died of SIGKILL (the import may finish first; a test must then fail, not pass).
 */
export function ingestAndKill(
  folder: string,
  opts: {
    /** The data folder, or `database`: a PostgreSQL server's URL. */
    data?: string
    database?: string
    models: string
    collection: string
    killAfterDocs: number
    delayMs?: number
  },
): Promise<{
  killed: boolean
  signal: NodeJS.Signals | null
  code: number | null
  /** The last progress line before the kill was sent. */
  atKill: ImportProgress | null
  last: ImportProgress | null
  progress: ImportProgress[]
}> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(repoRoot, 'src/apps/cli/main.ts'),
        'ingest',
        folder,
        '--collection',
        opts.collection,
        ...(opts.database ? ['--database', opts.database] : ['--data', opts.data ?? '']),
        '--models',
        opts.models,
        '--json',
      ],
      { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, DOCENT_PROGRESS: 'jsonl' } },
    )
    let buffer = ''
    let stderr = ''
    const progress: ImportProgress[] = []
    let armed = false
    let sent = false
    let atKill: ImportProgress | null = null
    child.stderr.on('data', (d: Buffer) => {
      buffer += d.toString()
      const lines = buffer.split('\n')
      buffer = lines.pop() ?? ''
      for (const line of lines) {
        let p: ImportProgress
        try {
          p = JSON.parse(line) as ImportProgress
        } catch {
          stderr += line + '\n'
          continue
        }
        progress.push(p)
        if (!armed && p.imported >= opts.killAfterDocs) {
          armed = true
          setTimeout(() => {
            if (child.exitCode !== null || child.signalCode !== null) return
            atKill = progress.at(-1) ?? null
            sent = child.kill('SIGKILL')
          }, opts.delayMs ?? 0)
        }
      }
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL' || code === 0)
        resolve({ killed: sent && signal === 'SIGKILL', signal, code, atKill, last: progress.at(-1) ?? null, progress })
      else reject(new Error(`ingest exited with ${code}: ${stderr.trim().split('\n').at(-1) ?? ''}`))
    })
  })
}
