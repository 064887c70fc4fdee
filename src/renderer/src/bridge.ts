import type { DocentApi } from '../../shared/api'
import { useChat } from './stores/chat'
import { useCollections } from './stores/collections'
import { useModels } from './stores/models'

/**
 * The one place that listens to engine events. It subscribes once at startup, routes each event to
 * its feature store, and keeps every unsubscribe so `stopBridge` (tests, hot reload) leaves no
 * listener behind. Components never call `window.docent.on` themselves.
 */

let unsubscribes: (() => void)[] = []

export function startBridge(api: DocentApi): () => void {
  if (unsubscribes.length > 0) return stopBridge
  unsubscribes = [
    api.on('import.progress', (p) => useCollections.getState().onProgress(p)),
    api.on('import.done', (d) => useCollections.getState().onDone(d)),
    api.on('collections.changed', () => void useCollections.getState().refresh()),
    api.on('ask.event', ({ requestId, event }) => useChat.getState().receive(requestId, event)),
    api.on('ask.done', ({ requestId, error }) => useChat.getState().finish(requestId, error)),
    api.on('models.progress', (p) => useModels.getState().onProgress(p)),
    api.on('models.done', (d) => useModels.getState().onDone(d)),
  ]
  return stopBridge
}

export function stopBridge(): void {
  const list = unsubscribes
  unsubscribes = []
  for (const off of list) off()
}

/** First load of everything the screens need. */
export async function loadInitialState(): Promise<void> {
  await Promise.all([
    useCollections.getState().refresh(),
    useChat.getState().refreshThreads(),
    useModels.getState().refresh(),
    useModels.getState().loadSettings(),
    useModels.getState().loadInfo(),
  ])
  const settings = useModels.getState().settings
  if (settings?.defaultVersion) useChat.getState().setScope({ ...useChat.getState().scope, version: settings.defaultVersion })
}
