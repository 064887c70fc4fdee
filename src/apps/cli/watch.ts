import type { Engine } from '../../engine/engine'
import { describeOwner } from '../../engine/store/lock'
import { collectionSlug } from '../../engine/store/ids'
import type { CollectionWatch, WatchEvent } from '../../engine/watch/collection-watcher'
import type { EventPayload } from '../../shared/api'
import { Library, requireLibraryFolder } from '../library'

/**
 * `docent watch [--collection <name>...] [--data <dir> | --database <url>] [--models <dir>]`: keeps collections in
 * step with their folders until Ctrl-C. Each applied change set is printed on stdout; notes go
 * to stderr. It owns the index and serves the CLI and the MCP server meanwhile; when the app or
 * `docent mcp` owns it already, it has that owner watch every collection and shows its changes.
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

export interface WatchFlags {
  collection?: string[]
  data?: string
  database?: string
  models?: string
}

export async function cmdWatch(values: WatchFlags): Promise<void> {
  // Nothing to watch where no folder was ever imported (a mistyped --data).
  requireLibraryFolder(values)
  const print = (e: WatchEvent) => {
    const line = formatWatchEvent(e)
    if (line) process.stdout.write(line + '\n')
  }
  let owned: Engine | null = null
  const library = new Library({
    data: values.data,
    database: values.database,
    models: values.models,
    role: 'watch',
    onOwn: (e) => (owned = e),
  })
  const watches: CollectionWatch[] = []
  const stopWatches = () => Promise.all(watches.splice(0).map((w) => w.stop()))
  const stop = new Promise<'stop'>((resolve) => {
    process.once('SIGINT', () => resolve('stop'))
    process.once('SIGTERM', () => resolve('stop'))
  })
  const offChanges = library.on((event, payload) => {
    if (event !== 'collections.changed' || library.state.kind !== 'attached') return
    const { collection } = payload as EventPayload<'collections.changed'>
    process.stdout.write(`${clock(Date.now())} ${collection}: changed (synced by pid ${library.state.owner.pid})\n`)
  })
  try {
    let wanted: string[] | undefined
    for (let first = true; ; first = false) {
      const connection = library.connection
      // Opens the library: this process owns it, or attaches to its owner.
      const all = await library.invoke('collections.list', {})
      if (first) {
        if (all.length === 0)
          throw new Error('there are no collections to watch; import one first: docent ingest <folder> --collection <name>')
        wanted = values.collection?.map((c) => collectionSlug(c))
        for (const w of wanted ?? []) {
          if (!all.some((c) => c.id === w))
            throw new Error(`there is no collection "${w}"; run "docent collections" for the list`)
        }
      }
      const state = library.state
      if (state.kind === 'attached') {
        process.stderr.write(
          `The index is open in ${describeOwner(state.owner)}, which now keeps every collection in step with its folder; ` +
            'showing its changes here.\n',
        )
      } else if (owned) {
        const engine: Engine = owned
        for (const c of all.filter((c) => !wanted || wanted.includes(c.id))) {
          try {
            watches.push(await engine.watch(c.id, { onEvent: print }))
            process.stderr.write(`Watching "${c.id}" in ${c.root}\n`)
          } catch (err) {
            process.stderr.write(`note: not watching "${c.id}": ${err instanceof Error ? err.message : String(err)}\n`)
          }
        }
        if (watches.length === 0) throw new Error('none of the collections could be watched (see the notes above)')
      }
      if (first) process.stderr.write('Press Ctrl-C to stop.\n')
      // Until Ctrl-C, or until the owner goes away: then this process opens the library again (and may own it).
      if ((await Promise.race([stop, library.whenLost(connection).then(() => 'lost' as const)])) === 'stop') break
      await stopWatches()
      owned = null
    }
    process.stderr.write('Stopping…\n')
  } finally {
    offChanges()
    // A sync in progress is cancelled: every document it finished stays, the next watch catches up.
    await stopWatches()
    await library.close()
  }
}
