import { deflateRawSync } from 'node:zlib'

/**
 * Test-only generators for real binary fixtures: minimal valid PDFs (hand-written syntax with a
 * correct xref table) and ZIP archives / DOCX files. Kept in code so fixtures stay tiny and
 * reviewable, and so large cases (2,000 pages, zip bombs) need not be committed.
 */

// ---- PDF ----------------------------------------------------------------------------------------

export interface PdfText {
  size: number
  /** Baseline y in points from the bottom of a 612x792 page. */
  y: number
  text: string
  x?: number
  /** Set in Courier (a monospace font, as code is) instead of Helvetica. */
  mono?: boolean
  /**
   * Set in a font whose text cannot be read back, as some real PDFs are:
   * - `controls`: a subset-style font with no ToUnicode map whose glyphs are named G01..G1A (a..z
   *   drawn as codes 1..26), which readers can only map back to the codes themselves (C0 controls);
   * - `nul`: a font whose ToUnicode map sends every letter to U+0000, as Chromium writes for glyphs
   *   it had no font for.
   * Spaces and other characters keep their usual codes.
   */
  broken?: 'controls' | 'nul'
}

export interface PdfOptions {
  title?: string
  /** Adds an /Encrypt dictionary whose user password is not empty: readers must ask for a password. */
  encrypted?: boolean
}

function pdfString(s: string): string {
  const escaped = s.replace(/\\/g, '\\\\').replace(/\(/g, '\\(').replace(/\)/g, '\\)')
  // Control bytes as octal escapes: a raw CR or LF inside a string is read as a line end.
  // eslint-disable-next-line no-control-regex
  return `(${escaped.replace(/[\u0000-\u001f]/g, (c) => '\\' + c.charCodeAt(0).toString(8).padStart(3, '0'))})`
}

/** a..z (either case) as the codes 1..26 of the `broken` fonts. */
function brokenCodes(text: string): string {
  return text.replace(/[a-z]/gi, (c) => String.fromCharCode(c.toLowerCase().charCodeAt(0) - 96))
}

const GLYPH_NAMES = Array.from({ length: 26 }, (_, i) => `/G${(i + 1).toString(16).toUpperCase().padStart(2, '0')}`)

function brokenFont(kind: 'controls' | 'nul', add: (body: string) => number): number {
  const encoding = `/Encoding << /Type /Encoding /Differences [1 ${GLYPH_NAMES.join(' ')}] >>`
  if (kind === 'controls') return add(`<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica ${encoding} >>`)
  const cmap = [
    '/CIDInit /ProcSet findresource begin 12 dict begin begincmap',
    '/CMapName /Docent-NUL def /CMapType 2 def',
    '1 begincodespacerange <00> <FF> endcodespacerange',
    `26 beginbfchar ${GLYPH_NAMES.map((_, i) => `<${(i + 1).toString(16).padStart(2, '0')}> <0000>`).join(' ')} endbfchar`,
    'endcmap CMapName currentdict /CMap defineresource pop end end',
  ].join('\n')
  const toUnicode = add(`<< /Length ${cmap.length} >>\nstream\n${cmap}\nendstream`)
  return add(`<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica ${encoding} /ToUnicode ${toUnicode} 0 R >>`)
}

function fontOf(l: PdfText): string {
  return l.broken === 'controls' ? 'F3' : l.broken === 'nul' ? 'F4' : l.mono ? 'F2' : 'F1'
}

/** A PDF whose pages hold the given lines of Helvetica (or Courier) text. */
export function makePdf(pages: PdfText[][], opts: PdfOptions = {}): Uint8Array {
  const objs: string[] = []
  const add = (body: string) => {
    objs.push(body)
    return objs.length
  }
  const catalogId = add('')
  const pagesId = add('')
  const fontId = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>')
  const monoId = add('<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>')
  // Only PDFs that use them carry the broken fonts: every other fixture stays byte for byte as it was.
  const all = pages.flat()
  const extra = (['controls', 'nul'] as const)
    .filter((k) => all.some((l) => l.broken === k))
    .map((k) => `/${k === 'controls' ? 'F3' : 'F4'} ${brokenFont(k, add)} 0 R`)
    .join(' ')
  const kids: number[] = []
  for (const lines of pages) {
    const content = lines
      .map((l) => {
        const text = l.broken ? brokenCodes(l.text) : l.text
        return `BT /${fontOf(l)} ${l.size} Tf ${l.x ?? 72} ${l.y} Td ${pdfString(text)} Tj ET`
      })
      .join('\n')
    const contentId = add(`<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`)
    kids.push(
      add(
        `<< /Type /Page /Parent ${pagesId} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${fontId} 0 R /F2 ${monoId} 0 R${extra ? ' ' + extra : ''} >> >> /Contents ${contentId} 0 R >>`,
      ),
    )
  }
  objs[catalogId - 1] = `<< /Type /Catalog /Pages ${pagesId} 0 R >>`
  objs[pagesId - 1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`
  const infoId = opts.title !== undefined ? add(`<< /Title ${pdfString(opts.title)} /Producer (Docent test generator) >>`) : null
  const encryptId = opts.encrypted
    ? add(`<< /Filter /Standard /V 1 /R 2 /O <${'7a'.repeat(32)}> /U <${'5c'.repeat(32)}> /P -3904 >>`)
    : null

  const chunks: string[] = ['%PDF-1.4\n%\xe2\xe3\xcf\xd3\n']
  let offset = Buffer.byteLength(chunks[0]!, 'latin1')
  const offsets: number[] = []
  objs.forEach((body, i) => {
    offsets.push(offset)
    const s = `${i + 1} 0 obj\n${body}\nendobj\n`
    chunks.push(s)
    offset += Buffer.byteLength(s, 'latin1')
  })
  const xrefAt = offset
  const xref = [
    `xref\n0 ${objs.length + 1}\n`,
    '0000000000 65535 f \n',
    ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`),
  ]
  const trailer =
    `trailer\n<< /Size ${objs.length + 1} /Root ${catalogId} 0 R` +
    (infoId ? ` /Info ${infoId} 0 R` : '') +
    (encryptId ? ` /Encrypt ${encryptId} 0 R /ID [<${'01'.repeat(16)}> <${'01'.repeat(16)}>]` : '') +
    ` >>\nstartxref\n${xrefAt}\n%%EOF\n`
  return new Uint8Array(Buffer.from(chunks.join('') + xref.join('') + trailer, 'latin1'))
}

// ---- ZIP / DOCX ---------------------------------------------------------------------------------

const CRC_TABLE = (() => {
  const t = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    t[n] = c >>> 0
  }
  return t
})()

export function crc32(data: Uint8Array): number {
  let c = 0xffffffff
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

export interface ZipInput {
  name: string
  data: Uint8Array | string
  /** Store instead of deflate. */
  store?: boolean
  /** Lie about the uncompressed size in both headers (zip bomb tests). */
  declaredSize?: number
}

export function makeZip(entries: ZipInput[]): Uint8Array {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const e of entries) {
    const raw = typeof e.data === 'string' ? Buffer.from(e.data, 'utf8') : Buffer.from(e.data)
    const comp = e.store ? raw : deflateRawSync(raw)
    const name = Buffer.from(e.name, 'utf8')
    const size = e.declaredSize ?? raw.length
    const crc = crc32(raw)
    const method = e.store ? 0 : 8
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(0x0800, 6)
    local.writeUInt16LE(method, 8)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(comp.length, 18)
    local.writeUInt32LE(size >>> 0, 22)
    local.writeUInt16LE(name.length, 26)
    locals.push(local, name, comp)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE(20, 4)
    central.writeUInt16LE(20, 6)
    central.writeUInt16LE(0x0800, 8)
    central.writeUInt16LE(method, 10)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(comp.length, 20)
    central.writeUInt32LE(size >>> 0, 24)
    central.writeUInt16LE(name.length, 28)
    central.writeUInt32LE(offset, 42)
    centrals.push(central, name)
    offset += 30 + name.length + comp.length
  }
  const cd = Buffer.concat(centrals)
  const eocd = Buffer.alloc(22)
  eocd.writeUInt32LE(0x06054b50, 0)
  eocd.writeUInt16LE(entries.length, 8)
  eocd.writeUInt16LE(entries.length, 10)
  eocd.writeUInt32LE(cd.length, 12)
  eocd.writeUInt32LE(offset, 16)
  return new Uint8Array(Buffer.concat([...locals, cd, eocd]))
}

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main'

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

export type DocxBlock = { style?: string; text: string } | { table: string[][] }

function docxBody(blocks: DocxBlock[]): string {
  const para = (text: string, style?: string) =>
    `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${esc(text)}</w:t></w:r></w:p>`
  return blocks
    .map((b) =>
      'table' in b
        ? `<w:tbl><w:tblPr/><w:tblGrid/>${b.table.map((row) => `<w:tr>${row.map((c) => `<w:tc>${para(c)}</w:tc>`).join('')}</w:tr>`).join('')}</w:tbl>`
        : para(b.text, b.style),
    )
    .join('')
}

/** The parts of a minimal .docx (before zipping), so tests can tamper with them. */
export function docxParts(blocks: DocxBlock[], opts: { title?: string } = {}): ZipInput[] {
  const styles = ['Heading1', 'Heading2', 'Heading3', 'Title']
    .map(
      (id) =>
        `<w:style w:type="paragraph" w:styleId="${id}"><w:name w:val="${id === 'Title' ? 'Title' : id.replace('Heading', 'heading ')}"/></w:style>`,
    )
    .join('')
  return [
    {
      name: '[Content_Types].xml',
      data:
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
        '<Default Extension="xml" ContentType="application/xml"/>' +
        '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
        '<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>' +
        '<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>' +
        '</Types>',
    },
    {
      name: '_rels/.rels',
      data:
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>' +
        '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>' +
        '</Relationships>',
    },
    {
      name: 'word/_rels/document.xml.rels',
      data:
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>' +
        '</Relationships>',
    },
    {
      name: 'word/styles.xml',
      data: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles xmlns:w="${W}">${styles}</w:styles>`,
    },
    {
      name: 'word/document.xml',
      data: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="${W}"><w:body>${docxBody(blocks)}</w:body></w:document>`,
    },
    {
      name: 'docProps/core.xml',
      data:
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
        '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/">' +
        (opts.title ? `<dc:title>${esc(opts.title)}</dc:title>` : '') +
        '<dc:creator>Test Author</dc:creator></cp:coreProperties>',
    },
  ]
}

export function makeDocx(blocks: DocxBlock[], opts: { title?: string } = {}): Uint8Array {
  return makeZip(docxParts(blocks, opts))
}
