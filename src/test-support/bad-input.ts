import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { docxParts, makeDocx, makePdf, makeZip } from '../engine/ingest/parsers/__fixtures__/generate'

/**
 * A folder of hostile and awkward inputs, written fresh by code (nothing binary is committed):
 * each entry says what Docent must do with it. Used by the fault suite and runnable by hand:
 *   npx tsx evals/bad-input/generate.ts <folder>
 * (that script is a thin command-line wrapper around this module)
 */
export interface BadInput {
  path: string
  /** What must happen: imported (and searchable by `probe`), or failed/skipped with a reason matching `reason`. */
  expect: { imported: true; probe?: string } | { imported: false; reason: RegExp }
}

export async function writeBadInputCorpus(dir: string): Promise<BadInput[]> {
  const out: BadInput[] = []
  const put = async (rel: string, data: string | Uint8Array, expect: BadInput['expect']) => {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true })
    await writeFile(path.join(dir, rel), data)
    out.push({ path: rel, expect })
  }
  await put('good/manual.md', '# Manual\n\n## Reset\n\nHold the zebra button for ten seconds.\n', {
    imported: true,
    probe: 'zebra button',
  })
  // A zip bomb named .docx: an entry declaring almost 4 GB unpacked.
  await put(
    'bad/bomb.docx',
    makeZip([...docxParts([{ text: 'x' }]), { name: 'word/media/image1.png', data: 'tiny', declaredSize: 0xfffffff0 }]),
    { imported: false, reason: /bomb|too large/i },
  )
  // A 2,000-page PDF: imported, page numbers kept.
  const pages = Array.from({ length: 2000 }, (_, i) => [
    { size: 11, y: 700, text: `Page ${i + 1} of the long report about quokka habitats.` },
  ])
  await put('long/report.pdf', makePdf(pages, { title: 'Long report' }), { imported: true, probe: 'quokka habitats' })
  await put('bad/broken.pdf', '%PDF-1.7\n1 0 obj <<>> endobj\ntruncated', { imported: false, reason: /pdf/i })
  await put('long/one-line.txt', 'narwhal '.repeat((5 * 1024 * 1024) / 8), { imported: true, probe: 'narwhal' })
  await put('bad/nul.md', Buffer.concat([Buffer.from('# Title\n\nText'), Buffer.from([0, 0, 0]), Buffer.from('more')]), {
    imported: false,
    reason: /binary/i,
  })
  await put('bad/latin1.md', Buffer.from('# Caf\xe9\n\nCr\xe8me br\xfbl\xe9e.\n', 'latin1'), {
    imported: false,
    reason: /UTF-8/i,
  })
  await put('ok/utf16.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('UTF-16 text about axolotls.\n', 'utf16le')]), {
    imported: true,
    probe: 'axolotls',
  })
  await put(
    'ok/mixed-bom.md',
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('# BOM\n\nA byte-order mark before the ocelot.\n')]),
    { imported: true, probe: 'ocelot' },
  )
  await put('bad/not-a-docx.docx', 'just text', { imported: false, reason: /docx|zip/i })
  await put(
    'ok/deep.html',
    '<html><body>' +
      '<div>'.repeat(10_000) +
      '<p>Deep inside lives the pangolin.</p>' +
      '</div>'.repeat(10_000) +
      '</body></html>',
    { imported: true, probe: 'pangolin' },
  )
  let nested = 'ok'
  for (let i = 0; i < 40; i++) nested += `/level-${i}`
  await put(`${nested}/bottom.md`, '# Bottom\n\nThe capybara lives at the bottom.\n', { imported: true, probe: 'capybara' })
  await put('ok/odd names ünïcødé (1) [draft] #hash & co.md', '# Odd\n\nThe okapi has an odd file name.\n', {
    imported: true,
    probe: 'okapi',
  })
  await put('ok/-leading-dash.md', '# Dash\n\nThe tapir starts with a dash.\n', { imported: true, probe: 'tapir' })
  await put('ok/docx/notes.docx', makeDocx([{ style: 'Heading1', text: 'Notes' }, { text: 'The wombat note.' }]), {
    imported: true,
    probe: 'wombat',
  })
  await put('bad/huge.txt', Buffer.alloc(30 * 1024 * 1024, 'a'), { imported: false, reason: /larger than/i })
  await mkdir(path.join(dir, 'bad/loop'), { recursive: true })
  await symlink(path.join(dir, 'bad'), path.join(dir, 'bad/loop/back'))
  out.push({ path: 'bad/loop/back', expect: { imported: false, reason: /loop/i } })
  return out
}
