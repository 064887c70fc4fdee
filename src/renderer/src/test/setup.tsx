import { act, render, type RenderResult } from '@testing-library/react'
import { App } from '../App'
import { loadInitialState, startBridge, stopBridge } from '../bridge'
import { useChat } from '../stores/chat'
import { useCollections } from '../stores/collections'
import { useModels } from '../stores/models'
import { useNav } from '../stores/nav'
import { useViewer } from '../stores/viewer'
import { createFakeDocent, type FakeDocent, type Handlers } from './fakeDocent'

const stores = [useChat, useCollections, useModels, useNav, useViewer] as const

/**
 * Puts every store back to its initial state and detaches the bridge, between tests. The window's
 * storage (lib/remember.ts) is cleared too, unless a test restarts the app on purpose.
 */
export function resetApp(opts: { keepStorage?: boolean } = {}): void {
  stopBridge()
  if (!opts.keepStorage) window.localStorage.clear()
  for (const s of stores)
    (s as { setState(v: unknown, replace: true): void; getInitialState(): unknown }).setState(s.getInitialState(), true)
}

/** Installs a fake window.docent, starts the bridge like main.tsx does, loads state and renders the app. */
export async function renderApp(
  handlers: Handlers = {},
  opts: { keepStorage?: boolean } = {},
): Promise<{ docent: FakeDocent; view: RenderResult }> {
  resetApp(opts)
  const docent = createFakeDocent(handlers)
  Object.defineProperty(window, 'docent', { value: docent, configurable: true, writable: true })
  startBridge(docent)
  await act(async () => {
    await loadInitialState()
  })
  const view = render(<App />)
  return { docent, view }
}
