/**
 * Shapes shared by the model manager's parts. Plain data; the roles are the contract's (src/shared/models.ts).
 *
 * Layout of a models folder (what the loaders in ../models read):
 *   <models>/embedding/<name>/   ONNX model folder (config.json, tokenizer.json, tokenizer_config.json,
 *                                onnx/model.onnx, optional docent.json {pooling, queryPrefix})
 *   <models>/reranker/<name>/    same shape
 *   <models>/llm/<file>.gguf
 *   <models>/settings.json       {"embedding": "<name>", "reranker": "<name>", "llm": "<file>.gguf"}
 * and, owned by the manager only:
 *   <models>/installed.json      what the manager installed, with every file's size and SHA-256
 *   <models>/pins.lock.json      hashes and revisions first seen on the hub (trust on first use)
 *   <models>/.staging/<id>/      downloads and imports in progress; never read by loaders
 */

import type { ModelRole } from '../../../shared/models'

export { MODEL_ROLES, isModelRole, type ModelRole } from '../../../shared/models'

/**
 * How an installed model came to be there. 'models-dev': put in the folder by `npm run models:dev`
 * (its manifest.json lists it); 'folder': found in the folder, put there by hand or another tool.
 * The manager installed neither, so their hashes are unknown.
 */
export type ModelSource = 'download' | 'import' | 'models-dev' | 'folder'

export interface InstalledFile {
  /** Path relative to the model's folder (for a .gguf: the file name itself). */
  path: string
  size: number
  /** Lower-case hex SHA-256; null only for models the manager did not install ('models-dev', 'folder'), whose files it never hashed. */
  sha256: string | null
}

export interface InstalledModel {
  role: ModelRole
  /** Folder name (embedding, reranker) or file name ending in .gguf (llm). */
  name: string
  /** Absolute path of the folder or .gguf file. */
  path: string
  source: ModelSource
  /** Catalog entry it was downloaded from; null for imports and fixtures. */
  catalogId: string | null
  /** Hub repository and commit it was downloaded from; null for imports and fixtures. */
  repo: string | null
  revision: string | null
  /** Where an import was copied from; null otherwise. */
  importedFrom: string | null
  files: InstalledFile[]
  totalBytes: number
  /** ISO time of installation; null for fixtures. */
  installedAt: string | null
}

export interface ModelStatus {
  role: ModelRole
  /** Name recorded in settings.json for this role, or null. */
  active: string | null
  /** True when the active model is present on disk. */
  installed: boolean
  /**
   * The model the engine loads for this role (../active.ts): the active one when it is on disk,
   * else the first installed one; null when there is none.
   */
  inUse: string | null
  /** The active model's details (sizes, hashes, source), when it is installed. */
  activeModel: InstalledModel | null
  /** Every model of this role present on disk. */
  models: InstalledModel[]
  /** The catalog's default for this role, for an offer to download it. */
  defaultCatalogId: string
  /** True while this manager is downloading a model of this role. */
  downloading: boolean
}
