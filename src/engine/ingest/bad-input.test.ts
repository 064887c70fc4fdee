import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'
import type { ImportReport } from './importer'
import { makeDocx, makeZip } from './parsers/__fixtures__/generate'
import { makeXlsx, odfParts, oleFile } from './parsers/__fixtures__/office'

/**
 * Every kind of bad input named in the brief gets a per-file reason, and the rest of the folder
 * still imports. Real files on disk, a real PGlite.
 */
describe('bad input', () => {
  let root: string
  let engine: Engine
  let report: ImportReport
  const cleanups: (() => Promise<void>)[] = []
  const isRoot = process.getuid?.() === 0

  beforeAll(async () => {
    const a = await tempDir()
    const b = await tempDir()
    cleanups.push(a.cleanup, b.cleanup)
    root = a.dir
    const w = (rel: string, data: string | Uint8Array) => writeFile(path.join(root, rel), data)
    await mkdir(path.join(root, 'good'), { recursive: true })
    await mkdir(path.join(root, 'bad'), { recursive: true })
    await w('good/ok.md', '# Fine\n\nThis document about the flux capacitor imports.\n')
    await w('good/notes.txt', 'Plain text notes about the flux capacitor.\n')
    await w('bad/broken.pdf', '%PDF-1.7\nthis is not really a pdf\n')
    await w('bad/binary.md', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01, 0x02, 0x00, 0x00, 0xff]))
    await w('bad/latin1.md', Buffer.from('caf\xe9 cr\xe8me br\xfbl\xe9e\n', 'latin1'))
    await w('bad/not-a-zip.docx', 'plain text pretending to be a docx')
    // Office files: one good workbook; an old binary deck, a Word file named .xlsx, a password-protected ODT.
    await w(
      'good/parts.xlsx',
      makeXlsx([
        {
          name: 'Parts',
          rows: [
            ['Part', 'Qty'],
            ['sprocket wrench', 4],
          ],
        },
      ]),
    )
    await w('bad/old.pptx', oleFile(['PowerPoint Document']))
    await w('bad/word.xlsx', makeDocx([{ text: 'x' }]))
    const lockedManifest =
      '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data/></manifest:file-entry></manifest:manifest>'
    await w('bad/locked.odt', makeZip(odfParts('text', '<text:p>x</text:p>', { manifest: lockedManifest })))
    // 50 MB text file: over the size limit for text, refused with a reason rather than read whole.
    await w('bad/huge.txt', Buffer.alloc(50 * 1024 * 1024, 'a'))
    await symlink(path.join(root, 'bad'), path.join(root, 'bad', 'loop'))
    await symlink(path.join(root, 'missing-target.md'), path.join(root, 'bad', 'dangling.md'))
    if (!isRoot) {
      await w('bad/secret.md', '# Secret\n')
      await chmod(path.join(root, 'bad/secret.md'), 0o000)
    }
    engine = await Engine.open({ dataDir: b.dir, modelsDir: path.join(b.dir, 'none') })
    report = await engine.importFolder(root, { collection: 'bad-input' })
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  const reasonFor = (p: string) =>
    report.failed.find((f) => f.path === p)?.reason ?? report.skipped_files.find((f) => f.path === p)?.reason

  it('imports the good files', () => {
    expect(report.imported).toBe(3)
  })

  it('gives each bad file a reason a person can act on', () => {
    expect(reasonFor('bad/broken.pdf')).toMatch(/pdf/i)
    expect(reasonFor('bad/binary.md')).toMatch(/binary|not valid UTF-8|text/i)
    expect(reasonFor('bad/latin1.md')).toMatch(/UTF-8/i)
    expect(reasonFor('bad/not-a-zip.docx')).toMatch(/docx|zip/i)
    expect(reasonFor('bad/huge.txt')).toMatch(/larger than/i)
    expect(reasonFor('bad/old.pptx')).toMatch(/old-format PowerPoint presentation \(\.ppt\); save it as \.pptx/)
    expect(reasonFor('bad/word.xlsx')).toMatch(/not a valid XLSX \(it is a Word document/)
    expect(reasonFor('bad/locked.odt')).toMatch(/ODT is password-protected/)
    expect(reasonFor('bad/loop')).toMatch(/loop/i)
    expect(reasonFor('bad/dangling.md')).toMatch(/symbolic link/i)
    if (!isRoot) expect(reasonFor('bad/secret.md')).toMatch(/permission/i)
  })

  it('records failures on the document rows so the app can list them', async () => {
    const { rows } = await engine.db.query<{ path: string; error: string }>(
      `SELECT path, error FROM documents WHERE collection_id = 'bad-input' AND status = 'failed' ORDER BY path`,
    )
    expect(rows.map((r) => r.path)).toEqual(
      expect.arrayContaining(['bad/binary.md', 'bad/broken.pdf', 'bad/latin1.md', 'bad/not-a-zip.docx']),
    )
    for (const r of rows) expect(r.error.length).toBeGreaterThan(5)
  })

  it('keeps serving searches over what did import', async () => {
    const res = await engine.search('flux capacitor', { mode: 'keyword', k: 5 })
    expect(res.results.map((h) => h.path).sort()).toEqual(['good/notes.txt', 'good/ok.md'])
    const sheet = await engine.search('sprocket wrench', { mode: 'keyword', k: 5 })
    expect(sheet.results[0]?.path).toBe('good/parts.xlsx')
  })
})
