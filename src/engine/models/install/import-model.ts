import { createHash, randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, open, readFile, rename, rm, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { isSafeName } from './catalog'
import { ChecksumError } from './download'
import { ModelManagerError } from './errors'
import { exists, hashFile, walkFiles } from './files'
import { STAGING, type ModelFolder } from './folder'
import type { InstalledRecord } from './store'
import { isModelRole, type InstalledModel, type ModelRole } from './types'

/** Installing a model a person already has on disk: checked, copied (never moved) and verified. */

/**
 * Copies a model from disk into the models folder (never moves it): a .gguf file goes to llm/, an ONNX model folder
 * (config.json + tokenizer.json + onnx/*.onnx) to reranker/ when config.json's architectures name a
 * SequenceClassification model, else to embedding/ (or to `role` when given). Every copied file is hashed while
 * copying and hashed again from the copy; the two must agree. Local only.
 */
export async function importModel(folder: ModelFolder, sourcePath: string, role?: ModelRole): Promise<InstalledModel> {
  const src = path.resolve(sourcePath)
  let st
  try {
    st = await stat(src)
  } catch {
    throw new ModelManagerError(`${src} does not exist.`)
  }
  if (role !== undefined && !isModelRole(role)) throw new ModelManagerError(`Unknown model role "${String(role)}".`)

  let targetRole: ModelRole
  let name: string
  let files: { rel: string; abs: string }[]
  if (st.isFile()) {
    if (!src.toLowerCase().endsWith('.gguf')) {
      throw new ModelManagerError(`${path.basename(src)} is not a .gguf file or an ONNX model folder.`)
    }
    if (role !== undefined && role !== 'llm') throw new ModelManagerError(`A .gguf file is an llm model, not ${role}.`)
    if (!(await hasGgufMagic(src))) throw new ModelManagerError(`${path.basename(src)} does not start like a GGUF file.`)
    targetRole = 'llm'
    name = path.basename(src)
    files = [{ rel: name, abs: src }]
  } else if (st.isDirectory()) {
    if (role === 'llm') throw new ModelManagerError('An ONNX model folder cannot be an llm model; import a .gguf file.')
    const walked = await walkFiles(src)
    const rels = new Set(walked.map((f) => f.rel))
    const missing = ['config.json', 'tokenizer.json'].filter((f) => !rels.has(f))
    if (!walked.some((f) => /^onnx\/[^/]+\.onnx$/i.test(f.rel))) missing.push('onnx/*.onnx')
    if (missing.length > 0) {
      throw new ModelManagerError(`${path.basename(src)} is not an ONNX model folder: it lacks ${missing.join(', ')}.`)
    }
    targetRole = role ?? (await detectOnnxRole(path.join(src, 'config.json')))
    name = path.basename(src)
    files = walked.map((f) => ({ rel: f.rel, abs: path.join(src, ...f.rel.split('/')) }))
  } else {
    throw new ModelManagerError(`${src} is neither a file nor a folder.`)
  }
  if (!isSafeName(name)) throw new ModelManagerError(`"${name}" cannot be used as a model name; rename it first.`)
  const finalPath = folder.modelPath(targetRole, name)
  if (await exists(finalPath)) {
    throw new ModelManagerError(`A ${targetRole} model named "${name}" is already installed; delete it first.`)
  }

  const stageDir = path.join(folder.dir, STAGING, `import-${randomBytes(6).toString('hex')}`)
  try {
    const recorded: { path: string; size: number; sha256: string }[] = []
    for (const f of files) {
      const dest = path.join(stageDir, ...f.rel.split('/'))
      const { size, sha256 } = await copyVerified(f.abs, dest, f.rel)
      recorded.push({ path: f.rel, size, sha256 })
    }
    if (targetRole === 'llm') {
      await mkdir(path.dirname(finalPath), { recursive: true })
      await rename(path.join(stageDir, name), finalPath)
    } else {
      await folder.moveIntoPlace(stageDir, finalPath)
    }
    const rec: InstalledRecord = {
      role: targetRole,
      name,
      source: 'import',
      catalogId: null,
      repo: null,
      revision: null,
      importedFrom: src,
      files: recorded,
      installedAt: new Date().toISOString(),
    }
    await folder.recordInstall(rec)
    return folder.fromRecord(rec)
  } finally {
    await rm(stageDir, { recursive: true, force: true })
  }
}

/** Copies while hashing the source, then hashes the copy from disk; the two hashes must agree. */
async function copyVerified(src: string, dest: string, label: string): Promise<{ size: number; sha256: string }> {
  await mkdir(path.dirname(dest), { recursive: true })
  const h = createHash('sha256')
  let size = 0
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      h.update(chunk)
      size += chunk.length
      cb(null, chunk)
    },
  })
  await pipeline(createReadStream(src, { highWaterMark: 1 << 20 }), tap, createWriteStream(dest, { flags: 'wx' }))
  const expected = h.digest('hex')
  const actual = await hashFile(dest)
  if (actual !== expected) {
    await unlink(dest).catch(() => undefined)
    throw new ChecksumError(label, expected, actual)
  }
  return { size, sha256: actual }
}

async function detectOnnxRole(configPath: string): Promise<ModelRole> {
  let config: unknown
  try {
    config = JSON.parse(await readFile(configPath, 'utf8'))
  } catch {
    throw new ModelManagerError('config.json of this model folder cannot be read as JSON.')
  }
  const archs = (config as { architectures?: unknown }).architectures
  const names = Array.isArray(archs) ? archs.filter((a): a is string => typeof a === 'string') : []
  return names.some((a) => a.includes('SequenceClassification')) ? 'reranker' : 'embedding'
}

async function hasGgufMagic(p: string): Promise<boolean> {
  const fh = await open(p, 'r')
  try {
    const buf = Buffer.alloc(4)
    const { bytesRead } = await fh.read(buf, 0, 4, 0)
    return bytesRead === 4 && buf.toString('latin1') === 'GGUF'
  } finally {
    await fh.close()
  }
}
