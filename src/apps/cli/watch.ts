import path from 'node:path'
import { parseArgs } from 'node:util'
import { Engine } from '../../engine/engine'
import { collectionSlug } from '../../engine/store/ids'
import type { CollectionWatch, WatchEvent } from '../../engine/watch/collection-watcher'

/**
 * `docent watch [--collection <name>...] [--data <dir>] [--models <dir>]`: keeps collections in
 * step with their folders until Ctrl-C. Each applied change set is printed on stdout; notes go
 * to stderr.
 */

const MARK = { added: '+', changed: '~', removed: '-', failed: '!' } as const

function clock(ms: number): string {
  return new Date(ms).toTimeString().slice(0, 8)
}

export function formatWatchEvent(e: WatchEvent): string | null {
  switch (e.type) {
    case 'sync-finished': {
      if (e.reason === 'changes' && e.changes.length === 0) return null
      const parts = [
        e.added && `${e.added} added`,
        e.changed && `${e.changed} changed`,
        e.removed && `${e.removed} removed`,
        e.failed && `${e.failed} failed`,
      ].filter(Boolean)
      const what = parts.length ? parts.join(', ') : 'no changes'
      const how =
        e.reason === 'catch-up'
          ? `catch-up, ${e.unchanged} unchanged`
          : `${e.paths} path${e.paths === 1 ? '' : 's'}${e.full ? ', full sync' : ''}`
      const latency =
        e.first_event_at !== null ? `, searchable ${e.finished_at - e.first_event_at} ms after the first change` : ''
      const lines = [
        `${clock(e.finished_at)} ${e.collection}: ${what} (${how}, sync ${e.ms} ms${latency})${e.cancelled ? ' [cancelled]' : ''}`,
      ]
      for (const c of e.changes) lines.push(`  ${MARK[c.change]} ${c.path}${c.reason ? `: ${c.reason}` : ''}`)
      return lines.join('\n')
    }
    case 'sync-failed':
      return `${clock(Date.now())} ${e.collection}: sync failed: ${e.error}`
    case 'watch-error':
      return `${clock(Date.now())} ${e.collection}: watcher error: ${e.error}`
    default:
      return null
  }
}

export async function cmdWatch(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { collection: { type: 'string', multiple: true }, data: { type: 'string' }, models: { type: 'string' } },
  })
  const engine = await Engine.open({
    ...(values.data ? { dataDir: path.resolve(values.data) } : {}),
    ...(values.models ? { modelsDir: path.resolve(values.models) } : {}),
  })
  const watches: CollectionWatch[] = []
  try {
    const all = await engine.collections()
    if (all.length === 0)
      throw new Error('there are no collections to watch; import one first: docent ingest <folder> --collection <name>')
    const wanted = values.collection?.map((c) => collectionSlug(c))
    for (const w of wanted ?? []) {
      if (!all.some((c) => c.id === w)) throw new Error(`there is no collection "${w}"; run "docent collections" for the list`)
    }
    const stop = new Promise<void>((resolve) => {
      process.once('SIGINT', resolve)
      process.once('SIGTERM', resolve)
    })
    const print = (e: WatchEvent) => {
      const line = formatWatchEvent(e)
      if (line) process.stdout.write(line + '\n')
    }
    for (const c of all.filter((c) => !wanted || wanted.includes(c.id))) {
      try {
        watches.push(await engine.watch(c.id, { onEvent: print }))
        process.stderr.write(`Watching "${c.id}" in ${c.root}\n`)
      } catch (err) {
        process.stderr.write(`note: not watching "${c.id}": ${err instanceof Error ? err.message : String(err)}\n`)
      }
    }
    if (watches.length === 0) throw new Error('none of the collections could be watched (see the notes above)')
    process.stderr.write('Press Ctrl-C to stop.\n')
    await stop
    process.stderr.write('Stopping…\n')
  } finally {
    // A sync in progress is cancelled: every document it finished stays, the next watch catches up.
    await Promise.all(watches.map((w) => w.stop()))
    await engine.close()
  }
}
