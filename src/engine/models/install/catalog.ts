import { MODEL_ROLES, type ModelRole } from './types'

/**
 * The default model set, sized for a typical laptop CPU (8-16 GB RAM, no GPU). See
 * docs/adr/0003-default-models.md for why these, their licences, sizes and expected speed.
 *
 * Pinning policy (the ADR's "trust on first use"):
 * - `revision` is a hub COMMIT hash, or null when it was not known with certainty when this file was written.
 *   A null revision is resolved once, at the first download the person starts, to the commit `main` points at,
 *   and that commit is recorded in <models>/pins.lock.json; every later download of the entry uses the recorded
 *   commit, never `main` again.
 * - `sha256` / `size` are the values the hub publishes for the file (LFS `oid` / `size`), or null when not known
 *   with certainty. A null hash is taken from the hub's tree API at download time, verified against the bytes, and
 *   recorded in pins.lock.json, so a later download of the same pin must produce the same bytes. Small non-LFS files
 *   (JSON) have no published SHA-256: they are checked against the git blob id the tree API lists, and their
 *   SHA-256 is recorded the same way.
 * - Never put a hash here that was not read from the hub for exactly this repo + revision.
 * - `pin` says which of the two an entry is, so nobody has to infer it from nulls; validateCatalog keeps it honest.
 *   Today every entry is trust-on-first-use: the hub was unreachable when this was written and no copy of the
 *   publisher's metadata for these repos was found (docs/adr/0003-default-models.md, "Pins per model").
 */

/**
 * Where an entry's integrity rests:
 * - 'publisher': `revision` and every file's `size` and `sha256` were read from the publisher's own metadata
 *   (the hub's commit and LFS records) for exactly that revision; downloads are checked against them from the first.
 * - 'trust-on-first-use': some of them are null; the first download takes them from the hub and locks them in
 *   <models>/pins.lock.json, and every later download must match the lock.
 */
export type PinSource = 'publisher' | 'trust-on-first-use'

export interface CatalogFile {
  /** Path inside the hub repository; also the path inside the installed folder. */
  path: string
  /** Exact byte size published by the hub, or null (taken from the tree API at download time). */
  size: number | null
  /** SHA-256 published by the hub for this file (LFS oid), lower-case hex, or null (trust on first use). */
  sha256: string | null
  /** Rough size for showing the person what a download costs before any network call. */
  approxBytes: number
  /** A missing optional file is skipped instead of failing the download. */
  optional?: boolean
}

export interface CatalogEntry {
  id: string
  role: ModelRole
  displayName: string
  /** Hub repository, "owner/name". */
  repo: string
  /** Commit hash (40 hex), or null: resolved from `main` at first download and locked (see above). */
  revision: string | null
  /** Where the revision and hashes come from (see PinSource). */
  pin: PinSource
  files: CatalogFile[]
  /**
   * Name under <models>/<role>/: a folder name for embedding/reranker, the .gguf file name for llm (which must be
   * the single file of the entry).
   */
  installName: string
  /** Written as docent.json into an embedding/reranker folder; read by the loaders. */
  docent?: { pooling: 'cls' | 'mean'; queryPrefix: string }
  parameters: string
  licence: string
  /** Rough resident memory while loaded, for the settings screen. */
  approxRamBytes: number
  /** One default per role. */
  isDefault: boolean
}

const MB = 1_000_000
const GB = 1_000_000_000

export const BGE_QUERY_PREFIX = 'Represent this sentence for searching relevant passages: '

export const CATALOG: readonly CatalogEntry[] = [
  {
    id: 'bge-small-en-v1.5',
    role: 'embedding',
    displayName: 'BGE small English v1.5 (ONNX)',
    repo: 'Xenova/bge-small-en-v1.5',
    revision: null,
    pin: 'trust-on-first-use',
    files: [
      { path: 'config.json', size: null, sha256: null, approxBytes: 1_000 },
      { path: 'tokenizer.json', size: null, sha256: null, approxBytes: 711_000 },
      { path: 'tokenizer_config.json', size: null, sha256: null, approxBytes: 1_300 },
      { path: 'special_tokens_map.json', size: null, sha256: null, approxBytes: 200, optional: true },
      { path: 'onnx/model.onnx', size: null, sha256: null, approxBytes: 133 * MB },
    ],
    installName: 'bge-small-en-v1.5',
    docent: { pooling: 'cls', queryPrefix: BGE_QUERY_PREFIX },
    parameters: '33M',
    licence: 'MIT',
    approxRamBytes: 300 * MB,
    isDefault: true,
  },
  {
    id: 'ms-marco-MiniLM-L-6-v2',
    role: 'reranker',
    displayName: 'MS MARCO MiniLM-L-6 v2 cross-encoder (ONNX)',
    repo: 'Xenova/ms-marco-MiniLM-L-6-v2',
    revision: null,
    pin: 'trust-on-first-use',
    files: [
      { path: 'config.json', size: null, sha256: null, approxBytes: 1_000 },
      { path: 'tokenizer.json', size: null, sha256: null, approxBytes: 711_000 },
      { path: 'tokenizer_config.json', size: null, sha256: null, approxBytes: 1_300 },
      { path: 'special_tokens_map.json', size: null, sha256: null, approxBytes: 200, optional: true },
      { path: 'onnx/model.onnx', size: null, sha256: null, approxBytes: 91 * MB },
    ],
    installName: 'ms-marco-MiniLM-L-6-v2',
    parameters: '23M',
    licence: 'Apache-2.0 (trained on MS MARCO: verify the data terms for commercial use)',
    approxRamBytes: 250 * MB,
    isDefault: true,
  },
  {
    id: 'llama-3.2-3b-instruct-q4_k_m',
    role: 'llm',
    displayName: 'Llama 3.2 3B Instruct, Q4_K_M (GGUF)',
    repo: 'unsloth/Llama-3.2-3B-Instruct-GGUF',
    revision: null,
    pin: 'trust-on-first-use',
    files: [{ path: 'Llama-3.2-3B-Instruct-Q4_K_M.gguf', size: null, sha256: null, approxBytes: 2.02 * GB }],
    installName: 'Llama-3.2-3B-Instruct-Q4_K_M.gguf',
    parameters: '3.2B',
    licence: 'Llama 3.2 Community License',
    approxRamBytes: 3.2 * GB,
    isDefault: true,
  },
  {
    // Lighter alternative for 8 GB machines, and the Apache-2.0 option.
    id: 'qwen2.5-1.5b-instruct-q4_k_m',
    role: 'llm',
    displayName: 'Qwen2.5 1.5B Instruct, Q4_K_M (GGUF)',
    repo: 'Qwen/Qwen2.5-1.5B-Instruct-GGUF',
    revision: null,
    pin: 'trust-on-first-use',
    files: [{ path: 'qwen2.5-1.5b-instruct-q4_k_m.gguf', size: null, sha256: null, approxBytes: 1.12 * GB }],
    installName: 'qwen2.5-1.5b-instruct-q4_k_m.gguf',
    parameters: '1.5B',
    licence: 'Apache-2.0',
    approxRamBytes: 1.6 * GB,
    isDefault: false,
  },
]

export function findCatalogEntry(id: string, catalog: readonly CatalogEntry[] = CATALOG): CatalogEntry | undefined {
  return catalog.find((e) => e.id === id)
}

export function defaultCatalogEntry(role: ModelRole, catalog: readonly CatalogEntry[] = CATALOG): CatalogEntry {
  const entry = catalog.find((e) => e.role === role && e.isDefault) ?? catalog.find((e) => e.role === role)
  if (!entry) throw new Error(`The model catalog has no ${role} model.`)
  return entry
}

const HEX40 = /^[0-9a-f]{40}$/
const HEX64 = /^[0-9a-f]{64}$/

/** Structural checks of a catalog; returns the problems found (empty when fine). Used by tests and at start-up. */
export function validateCatalog(catalog: readonly CatalogEntry[]): string[] {
  const problems: string[] = []
  const ids = new Set<string>()
  for (const e of catalog) {
    if (ids.has(e.id)) problems.push(`${e.id}: duplicate id`)
    ids.add(e.id)
    if (!/^[\w.-]+\/[\w.-]+$/.test(e.repo)) problems.push(`${e.id}: repo "${e.repo}" is not owner/name`)
    if (e.revision !== null && !HEX40.test(e.revision)) problems.push(`${e.id}: revision must be a 40-hex commit or null`)
    if (!isSafeName(e.installName)) problems.push(`${e.id}: installName "${e.installName}" is not a plain name`)
    if (e.files.length === 0) problems.push(`${e.id}: no files`)
    if (e.pin === 'publisher') {
      // A publisher pin is complete, or it is not one: a single null would quietly fall back to trust on first use.
      if (e.revision === null) problems.push(`${e.id}: a publisher pin needs a revision`)
      for (const f of e.files) {
        if (f.sha256 === null || f.size === null) problems.push(`${e.id}: ${f.path}: a publisher pin needs size and sha256`)
      }
    } else if (e.pin !== 'trust-on-first-use') {
      problems.push(`${e.id}: pin must be 'publisher' or 'trust-on-first-use'`)
    }
    for (const f of e.files) {
      if (f.sha256 !== null && !HEX64.test(f.sha256)) problems.push(`${e.id}: ${f.path}: sha256 must be 64 hex or null`)
      if (f.size !== null && (!Number.isInteger(f.size) || f.size < 0)) problems.push(`${e.id}: ${f.path}: bad size`)
      if (!isSafeRelativePath(f.path)) problems.push(`${e.id}: ${f.path}: not a safe relative path`)
    }
    if (e.role === 'llm') {
      if (e.files.length !== 1 || !e.installName.endsWith('.gguf') || !e.files[0]?.path.endsWith('.gguf')) {
        problems.push(`${e.id}: an llm entry is exactly one .gguf file installed under a .gguf name`)
      }
    } else {
      for (const required of ['config.json', 'tokenizer.json', 'onnx/model.onnx']) {
        if (!e.files.some((f) => f.path === required && !f.optional)) problems.push(`${e.id}: missing ${required}`)
      }
    }
  }
  for (const role of MODEL_ROLES) {
    const defaults = catalog.filter((e) => e.role === role && e.isDefault).length
    if (defaults !== 1) problems.push(`${role}: ${defaults} defaults (want exactly 1)`)
  }
  return problems
}

/** A single path segment usable as a folder or file name: no separators, no "..", no leading dot. */
export function isSafeName(name: string): boolean {
  return (
    name.length > 0 &&
    name.length <= 200 &&
    !name.startsWith('.') &&
    !/[/\\:*?"<>|]/.test(name) &&
    ![...name].some((c) => c.charCodeAt(0) < 0x20)
  )
}

/** A forward-slash relative path whose every segment is a safe name. */
export function isSafeRelativePath(p: string): boolean {
  return p.split('/').every(isSafeName)
}
