import { z } from 'zod'
import { ModelRole } from './models'
import { Scope, ScopeInfo, SearchMode, SearchResult } from './search'
import { AskEvent, Thread, ThreadSummary } from './answer'
import { StoredTrace } from './trace'
import { PassageText } from './passage'
import { ConnectionTest, ConnectionTestInput, type LibraryLocationInfo, type SaveLibraryLocation } from './library'

export { ModelRole }

/**
 * The one contract between the renderer and the engine, in the style of Actual Budget's handler
 * maps: every invokable method with the zod schemas of its input and output, and every pushed
 * event with its payload schema. The preload, the main-process relay, the engine host and the
 * browser e2e stand-in all derive their types and runtime validation from these maps, so a
 * channel cannot exist on one side only.
 *
 * Plain data only; no Node, Electron or DOM imports.
 */

const Id = z.string().min(1).max(200)

export const CollectionInfo = z.object({
  id: z.string(),
  root: z.string(),
  documents: z.number().int(),
  failed: z.number().int(),
  chunks: z.number().int(),
  embedded: z.number().int(),
  versions: z.array(z.string()),
  last_sync_at: z.string().nullable(),
  /** Pages read by text recognition (scans, images), over every document. */
  ocr_pages: z.number().int(),
  /** Of those, pages whose recognised text is unsure (low confidence): check the page. */
  low_confidence_pages: z.number().int(),
  /** Documents with at least one such page. */
  low_confidence_documents: z.number().int(),
  /** Text recognition of scanned pages and images is on for this collection (its setting). */
  ocr: z.boolean(),
})
export type CollectionInfo = z.infer<typeof CollectionInfo>

/**
 * Progress inside the file being imported: `pages` parsed of a long PDF's (or `ocr`: pages read by
 * text recognition so far).
 */
export const FileProgress = z.object({ stage: z.enum(['pages', 'ocr']), done: z.number().int(), total: z.number().int() })
export type FileProgress = z.infer<typeof FileProgress>

export const FileIssue = z.object({ path: z.string(), reason: z.string() })
export type FileIssue = z.infer<typeof FileIssue>

/** How far an import is; the engine reports it as it goes, the host adds the job it belongs to. */
export const ImportProgress = z.object({
  phase: z.enum(['scanning', 'importing', 'embedding', 'pruning', 'done', 'cancelled']),
  collection: z.string(),
  filesTotal: z.number(),
  filesDone: z.number(),
  currentFile: z.string().nullable(),
  /** Inside the current file (a long PDF): how far it is; null between files and for a file read in one go. */
  fileProgress: FileProgress.nullable().optional(),
  imported: z.number(),
  unchanged: z.number(),
  failed: z.number(),
  skipped: z.number(),
  chunksWritten: z.number(),
  textsEmbedded: z.number(),
  bytesTotal: z.number(),
  bytesDone: z.number(),
  elapsedMs: z.number(),
  /**
   * Estimated time left: the bytes still to go at the rate of the documents actually read since
   * the import phase began (files skipped as unchanged by size and time do not count, or a resumed
   * import would promise to end at once); null until there is a rate, 0 when done.
   */
  etaMs: z.number().nullable(),
})
export type ImportProgress = z.infer<typeof ImportProgress>
export const ImportJobProgress = ImportProgress.extend({ jobId: z.string() })
export type ImportJobProgress = z.infer<typeof ImportJobProgress>

export const ImportReport = z.object({
  collection: z.string(),
  root: z.string(),
  files_seen: z.number().int(),
  imported: z.number().int(),
  unchanged: z.number().int(),
  skipped: z.number().int(),
  failed: z.array(FileIssue),
  skipped_files: z.array(FileIssue),
  pruned: z.number().int(),
  chunks_total: z.number().int(),
  chunks_written: z.number().int(),
  texts_embedded: z.number().int(),
  cancelled: z.boolean(),
  notices: z.array(z.string()),
  ms: z.number(),
  /** Where the time went, in ms: listing files, reading, parsing, chunking, embedding (model calls only), writing. */
  timings: z.object({
    walk: z.number(),
    read: z.number(),
    parse: z.number(),
    chunk: z.number(),
    embed: z.number(),
    write: z.number(),
  }),
})
export type ImportReport = z.infer<typeof ImportReport>

export const JobRef = z.object({ jobId: z.string() })

export const SearchRequest = z.object({
  query: z.string().min(1).max(2000),
  scope: Scope,
  mode: SearchMode.default('hybrid'),
  rerank: z.boolean().default(true),
  k: z.number().int().min(1).max(100).default(10),
})

/** A document opened at a cited passage. Content is raw text or HTML-from-Markdown that the renderer sanitizes before display. */
export const SourceView = PassageText.omit({ kind: true, text: true }).extend({
  format: z.enum(['markdown', 'html', 'text', 'pdf', 'docx', 'image']),
  /** The passage to highlight, exactly as stored. */
  passage: PassageText.shape.text,
  /** Document text (markdown/text/html) for non-PDF formats; null for PDF. */
  content: z.string().nullable(),
  /** PDF bytes, base64, for pdf.js in the renderer; null otherwise. */
  pdf_base64: z.string().nullable(),
  /** An image file (format 'image'): its bytes, base64, and MIME type (png, jpeg or tiff). */
  image_base64: z.string().optional(),
  image_type: z.string().optional(),
  /**
   * The passage's pages that text recognition read (absent when none): each with tesseract's
   * mean confidence, whether that is low ("recognised text: check the page"), and the boxes of the
   * passage's words as [left, top, right, bottom] fractions of the page, to draw at any scale.
   */
  ocr: z
    .array(
      z.object({
        page: z.number().int(),
        confidence: z.number(),
        low_confidence: z.boolean(),
        boxes: z.array(z.tuple([z.number(), z.number(), z.number(), z.number()])),
      }),
    )
    .optional(),
})
export type SourceView = z.infer<typeof SourceView>

export const ModelStatus = z.object({
  role: ModelRole,
  installed: z.boolean(),
  active: z.string().nullable(),
  name: z.string().nullable(),
  sizeBytes: z.number().nullable(),
  source: z.enum(['download', 'import', 'models-dev', 'folder']).nullable(),
  problem: z.string().nullable(),
})
export type ModelStatus = z.infer<typeof ModelStatus>

export const ModelProgress = z.object({
  jobId: z.string(),
  role: ModelRole,
  file: z.string(),
  bytesDone: z.number(),
  bytesTotal: z.number(),
  bytesPerSecond: z.number(),
  etaSeconds: z.number().nullable(),
})

export const Settings = z.object({
  searchOnly: z.boolean().default(false),
  /** The version picker's starting value; 'auto' = not chosen: the version a question names, else every version. */
  defaultVersion: z.string().default('auto'),
  theme: z.enum(['system', 'light', 'dark']).default('system'),
})
export type Settings = z.infer<typeof Settings>
/**
 * A change to some settings. Absent fields stay as they are: unlike `Settings.partial()`, whose
 * fields keep their defaults (zod 4 fills them in), so a one-field change would reset the others.
 */
export const SettingsPatch = z
  .object({ searchOnly: z.boolean(), defaultVersion: z.string().max(64), theme: z.enum(['system', 'light', 'dark']) })
  .partial()

/** Invokable methods: name -> input and output schemas. */
export const InvokeMap = {
  'collections.list': { input: z.object({}), output: z.array(CollectionInfo) },
  // allowEmpty: the person confirmed a sync that removes every document (import.done said would_empty_collection).
  'collections.import': {
    input: z.object({ folder: z.string().min(1).max(4096), collection: Id.optional(), allowEmpty: z.boolean().optional() }),
    output: JobRef,
  },
  'collections.resync': { input: z.object({ collection: Id, allowEmpty: z.boolean().optional() }), output: JobRef },
  'collections.remove': { input: z.object({ collection: Id }), output: z.object({ removed: z.boolean() }) },
  'collections.failures': { input: z.object({ collection: Id }), output: z.array(FileIssue) },
  // Text recognition of scanned pages and images, on or off; the next sync reads again what it concerns.
  'collections.setOcr': { input: z.object({ collection: Id, on: z.boolean() }), output: z.object({ changed: z.boolean() }) },
  'jobs.cancel': { input: JobRef, output: z.object({ cancelled: z.boolean() }) },
  // `scope`: what was searched and why (the CLI and the MCP server show it).
  search: { input: SearchRequest, output: SearchResult.extend({ scope: ScopeInfo }) },
  ask: {
    input: z.object({
      question: z.string().min(1).max(4000),
      threadId: Id.optional(),
      scope: Scope,
      searchOnly: z.boolean().optional(),
    }),
    output: z.object({ requestId: z.string() }),
  },
  'ask.cancel': { input: z.object({ requestId: Id }), output: z.object({ cancelled: z.boolean() }) },
  'threads.list': { input: z.object({}), output: z.array(ThreadSummary) },
  'threads.get': { input: z.object({ threadId: Id }), output: Thread },
  'threads.delete': { input: z.object({ threadId: Id }), output: z.object({ deleted: z.boolean() }) },
  'trace.get': { input: z.object({ traceId: Id }), output: StoredTrace },
  'source.open': { input: z.object({ chunkId: Id }), output: SourceView },
  'models.status': { input: z.object({}), output: z.array(ModelStatus) },
  'models.download': { input: z.object({ role: ModelRole }), output: JobRef },
  'models.import': { input: z.object({ path: z.string().min(1).max(4096), role: ModelRole.optional() }), output: ModelStatus },
  'models.setActive': { input: z.object({ role: ModelRole, name: z.string().min(1).max(300) }), output: z.array(ModelStatus) },
  'settings.get': { input: z.object({}), output: Settings },
  'settings.set': { input: SettingsPatch, output: Settings },
  // Checks a PostgreSQL server as the library's location would use it; reads only (src/shared/library.ts).
  'library.testConnection': { input: ConnectionTestInput, output: ConnectionTest },
  'app.info': {
    input: z.object({}),
    output: z.object({ version: z.string(), dataDir: z.string(), modelsDir: z.string(), hardware: z.string() }),
  },
} as const

/** Events pushed from the engine to the renderer: name -> payload schema. */
export const EventMap = {
  'import.progress': ImportJobProgress,
  /**
   * `code` says why an import was refused when the app can act on it: `would_empty_collection`
   * (nothing was removed; the folder is empty or not there) asks the person before syncing again
   * with allowEmpty.
   */
  'import.done': z.object({
    jobId: z.string(),
    report: ImportReport.nullable(),
    error: z.string().nullable(),
    code: z.enum(['would_empty_collection']).optional(),
  }),
  'ask.event': z.object({ requestId: z.string(), event: AskEvent }),
  /**
   * Exactly once per `ask`, last: after the `final` ask.event (error null), or instead of it when the
   * question failed, was cancelled, or the engine process died (error says why).
   */
  'ask.done': z.object({ requestId: z.string(), error: z.string().nullable() }),
  'models.progress': ModelProgress,
  'models.done': z.object({ jobId: z.string(), role: ModelRole, error: z.string().nullable() }),
  'collections.changed': z.object({ collection: z.string() }),
} as const

export type InvokeName = keyof typeof InvokeMap
export type InvokeInput<K extends InvokeName> = z.input<(typeof InvokeMap)[K]['input']>
export type InvokeOutput<K extends InvokeName> = z.output<(typeof InvokeMap)[K]['output']>
export type EventName = keyof typeof EventMap
export type EventPayload<E extends EventName> = z.output<(typeof EventMap)[E]>

/** Errors cross process boundaries as data, never as thrown exceptions. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: { message: string; code?: string } }

/** What the preload exposes as `window.docent`. */
export interface DocentApi {
  invoke<K extends InvokeName>(name: K, input: InvokeInput<K>): Promise<Result<InvokeOutput<K>>>
  on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void
  /** The filesystem path of a dropped folder (Electron's webUtils.getPathForFile), '' when unknown. */
  pathForFile(file: File): string
  /** Opens a folder picker in the main process; null when cancelled. */
  pickFolder(): Promise<string | null>
  /** Opens a document in the system's default app, after the main process checks it is indexed. */
  openExternal(chunkId: string): Promise<Result<null>>
  /** Where the library is (main keeps it, outside the index; never the password). */
  libraryLocation(): Promise<Result<LibraryLocationInfo>>
  /** Moves the library (validated in main with SaveLibraryLocation); main then restarts the engine process on it. */
  setLibraryLocation(location: SaveLibraryLocation): Promise<Result<LibraryLocationInfo>>
}

export function isInvokeName(name: unknown): name is InvokeName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(InvokeMap, name)
}
