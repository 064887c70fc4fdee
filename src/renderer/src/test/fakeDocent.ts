import type { DocentApi, EventName, EventPayload, InvokeInput, InvokeName, InvokeOutput, Result } from '../../../shared/api'
import { askResultBase, type AskResult } from '../../../shared/answer'
import type { LibraryLocationInfo, SaveLibraryLocation } from '../../../shared/library'

/**
 * A fake `window.docent` for component tests: every method of DocentApi, with invoke answered by
 * per-method handlers (override what a test needs), every call recorded, and `emit` to push engine
 * events to the listeners the bridge registered.
 */

type Handler<K extends InvokeName> = (input: InvokeInput<K>) => InvokeOutput<K> | Promise<InvokeOutput<K>>
export type Handlers = { [K in InvokeName]?: Handler<K> }

export class FakeDocentError extends Error {
  constructor(
    message: string,
    readonly code = 'test',
  ) {
    super(message)
  }
}

export interface FakeDocent extends DocentApi {
  calls: { name: InvokeName; input: unknown }[]
  callsTo<K extends InvokeName>(name: K): InvokeInput<K>[]
  emit<E extends EventName>(event: E, payload: EventPayload<E>): void
  listenerCount(event?: EventName): number
  handlers: Handlers
  dropPaths: Record<string, string>
  opened: string[]
  pickFolderAnswer: string | null
  /** What libraryLocation() answers; setLibraryLocation() records its input in `savedLocations` and updates it. */
  location: LibraryLocationInfo
  savedLocations: SaveLibraryLocation[]
  /** When set, setLibraryLocation() fails with this message (main's refusal). */
  saveLocationError: string | null
}

const defaults: Handlers = {
  'collections.list': () => [],
  'collections.failures': () => [],
  'collections.import': () => ({ jobId: 'job-1' }),
  'collections.resync': () => ({ jobId: 'job-resync' }),
  'collections.remove': () => ({ removed: true }),
  'collections.setOcr': () => ({ changed: true }),
  'jobs.cancel': () => ({ cancelled: true }),
  ask: () => ({ requestId: 'req-1' }),
  'ask.cancel': () => ({ cancelled: true }),
  'threads.list': () => [],
  'threads.get': ({ threadId }) => ({ id: threadId, title: '', messages: [] }),
  'threads.delete': () => ({ deleted: true }),
  'models.status': () => [
    {
      role: 'embedding',
      installed: true,
      active: 'fixture-embed',
      name: 'fixture-embed',
      sizeBytes: 1000,
      source: 'folder',
      problem: null,
    },
    {
      role: 'reranker',
      installed: true,
      active: 'fixture-rerank',
      name: 'fixture-rerank',
      sizeBytes: 1000,
      source: 'folder',
      problem: null,
    },
    {
      role: 'llm',
      installed: true,
      active: 'fixture-llm',
      name: 'fixture-llm',
      sizeBytes: 1000,
      source: 'folder',
      problem: null,
    },
  ],
  'settings.get': () => ({ searchOnly: false, defaultVersion: 'auto', theme: 'system' }),
  'settings.set': (input) => ({
    searchOnly: input.searchOnly ?? false,
    defaultVersion: input.defaultVersion ?? 'auto',
    theme: input.theme ?? 'system',
  }),
  'app.info': () => ({ version: 'test', dataDir: '/data', modelsDir: '/models', hardware: '2 CPU cores, no GPU' }),
}

export function createFakeDocent(handlers: Handlers = {}): FakeDocent {
  const listeners = new Map<EventName, Set<(p: unknown) => void>>()
  const fake: FakeDocent = {
    calls: [],
    handlers: { ...defaults, ...handlers },
    dropPaths: {},
    opened: [],
    pickFolderAnswer: null,
    location: { location: { kind: 'local' }, canSavePassword: true, environmentPassword: false },
    savedLocations: [],
    saveLocationError: null,
    callsTo<K extends InvokeName>(name: K) {
      return fake.calls.filter((c) => c.name === name).map((c) => c.input as InvokeInput<K>)
    },
    async invoke<K extends InvokeName>(name: K, input: InvokeInput<K>): Promise<Result<InvokeOutput<K>>> {
      fake.calls.push({ name, input })
      const h = fake.handlers[name] as Handler<K> | undefined
      if (!h) return { ok: false, error: { message: `${name} is not available in this test`, code: 'not_available' } }
      try {
        return { ok: true, value: await h(input) }
      } catch (err) {
        return { ok: false, error: { message: err instanceof Error ? err.message : String(err), code: 'test' } }
      }
    },
    on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void) {
      const set = listeners.get(event) ?? new Set()
      listeners.set(event, set)
      const wrapped = (p: unknown) => listener(p as EventPayload<E>)
      set.add(wrapped)
      return () => {
        set.delete(wrapped)
      }
    },
    emit(event, payload) {
      for (const l of [...(listeners.get(event) ?? [])]) l(payload)
    },
    listenerCount(event) {
      if (event) return listeners.get(event)?.size ?? 0
      let n = 0
      for (const s of listeners.values()) n += s.size
      return n
    },
    pathForFile: (file: File) => fake.dropPaths[file.name] ?? '',
    pickFolder: async () => fake.pickFolderAnswer,
    openExternal: async (chunkId: string) => {
      fake.opened.push(chunkId)
      return { ok: true, value: null }
    },
    libraryLocation: async () => ({ ok: true, value: fake.location }),
    setLibraryLocation: async (input: SaveLibraryLocation) => {
      fake.savedLocations.push(input)
      if (fake.saveLocationError) return { ok: false, error: { message: fake.saveLocationError, code: 'failed' } }
      fake.location = {
        ...fake.location,
        location:
          input.kind === 'local'
            ? { kind: 'local' }
            : { kind: 'server', url: input.url, requireTls: input.requireTls, password: input.password ? 'saved' : 'none' },
      }
      return { ok: true, value: fake.location }
    },
  }
  return fake
}

/** A complete AskResult with test defaults. */
export function askResult(over: Partial<AskResult> = {}): AskResult {
  return {
    ...askResultBase({ trace_id: 'trace-1', thread_id: 'thread-1' }),
    answer: null,
    abstained: false,
    reason: null,
    mode: 'answer',
    scope_label: 'the 2025-03-26 docs',
    ...over,
  }
}

export const COLLECTIONS = [
  {
    id: 'mcp-docs',
    root: '/docs/mcp',
    documents: 120,
    failed: 2,
    chunks: 900,
    embedded: 900,
    versions: ['2024-11-05', '2025-03-26', '2025-06-18', 'draft'],
    last_sync_at: new Date(Date.now() - 5 * 60_000).toISOString(),
    ocr_pages: 0,
    low_confidence_pages: 0,
    low_confidence_documents: 0,
    ocr: true,
  },
  {
    id: 'widget-manual',
    root: '/docs/widget',
    documents: 8,
    failed: 0,
    chunks: 40,
    embedded: 40,
    versions: ['v1.2', 'v2.0'],
    last_sync_at: null,
    ocr_pages: 12,
    low_confidence_pages: 1,
    low_confidence_documents: 1,
    ocr: true,
  },
]
