import { makeZip, type ZipInput } from './generate'

/**
 * Minimal office files for the parsers' tests: the parts each format's reader needs, written as
 * Office and LibreOffice write them (namespaces, relationships), and nothing more.
 */

const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'
const A = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
const P = 'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"'

export const escapeXml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

function rels(list: { id: string; type: string; target: string }[]): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
    list.map((r) => `<Relationship Id="${r.id}" Type="${REL}/${r.type}" Target="${r.target}"/>`).join('') +
    '</Relationships>'
  )
}

function core(title?: string): ZipInput {
  return {
    name: 'docProps/core.xml',
    data: `<?xml version="1.0"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/">${title ? `<dc:title>${escapeXml(title)}</dc:title>` : ''}</cp:coreProperties>`,
  }
}

export type SlideShape =
  | { title: string; type?: 'title' | 'ctrTitle' }
  | { body: (string | { text: string; level?: number; bullet?: 'none' | 'char' | 'auto' })[]; placeholder?: boolean }
  | { table: string[][] }

const para = (text: string, pPr = '') => `<a:p>${pPr}<a:r><a:rPr/><a:t>${escapeXml(text)}</a:t></a:r></a:p>`

function shape(s: SlideShape): string {
  if ('table' in s) {
    const rows = s.table.map((r) => `<a:tr>${r.map((c) => `<a:tc><a:txBody>${para(c)}</a:txBody></a:tc>`).join('')}</a:tr>`)
    return `<p:graphicFrame><p:nvGraphicFramePr><p:nvPr/></p:nvGraphicFramePr><a:graphic><a:graphicData><a:tbl>${rows.join('')}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>`
  }
  if ('title' in s)
    return `<p:sp><p:nvSpPr><p:nvPr><p:ph type="${s.type ?? 'title'}"/></p:nvPr></p:nvSpPr><p:txBody>${para(s.title)}</p:txBody></p:sp>`
  const ps = s.body.map((b) => {
    const p = typeof b === 'string' ? { text: b } : b
    const mark =
      p.bullet === 'none'
        ? '<a:buNone/>'
        : p.bullet === 'char'
          ? '<a:buChar char="•"/>'
          : p.bullet === 'auto'
            ? '<a:buAutoNum type="arabicPeriod"/>'
            : ''
    return para(p.text, `<a:pPr lvl="${p.level ?? 0}">${mark}</a:pPr>`)
  })
  const ph = s.placeholder === false ? '' : '<p:ph idx="1"/>'
  return `<p:sp><p:nvSpPr><p:nvPr>${ph}</p:nvPr></p:nvSpPr><p:txBody>${ps.join('')}</p:txBody></p:sp>`
}

const slideXml = (root: 'sld' | 'notes', shapes: SlideShape[]) =>
  `<?xml version="1.0"?><p:${root} ${A} ${P}><p:cSld><p:spTree>${shapes.map(shape).join('')}</p:spTree></p:cSld></p:${root}>`

export interface Slide {
  shapes: SlideShape[]
  notes?: string
}

/** A PPTX's parts; slides are stored in reverse file order, so that only the presentation's list gives their order. */
export function pptxParts(slides: Slide[], opts: { title?: string } = {}): ZipInput[] {
  const n = slides.length
  const parts: ZipInput[] = [core(opts.title)]
  const ids = slides.map((_, i) => `<p:sldId id="${256 + i}" r:id="rId${i + 1}"/>`).join('')
  parts.push({
    name: 'ppt/presentation.xml',
    data: `<?xml version="1.0"?><p:presentation ${P} xmlns:r="${REL}"><p:sldIdLst>${ids}</p:sldIdLst></p:presentation>`,
  })
  parts.push({
    name: 'ppt/_rels/presentation.xml.rels',
    data: rels(slides.map((_, i) => ({ id: `rId${i + 1}`, type: 'slide', target: `slides/slide${n - i}.xml` }))),
  })
  slides.forEach((s, i) => {
    const file = n - i
    parts.push({ name: `ppt/slides/slide${file}.xml`, data: slideXml('sld', s.shapes) })
    if (s.notes !== undefined) {
      parts.push({
        name: `ppt/slides/_rels/slide${file}.xml.rels`,
        data: rels([{ id: 'rId1', type: 'notesSlide', target: `../notesSlides/notesSlide${file}.xml` }]),
      })
      // As PowerPoint writes notes: a body placeholder, paragraphs without bullet marks.
      const notes: SlideShape[] = [{ body: [s.notes] }]
      parts.push({ name: `ppt/notesSlides/notesSlide${file}.xml`, data: slideXml('notes', notes) })
    }
  })
  return parts
}

export const makePptx = (slides: Slide[], opts: { title?: string } = {}) => makeZip(pptxParts(slides, opts))

/** A cell of a test workbook: text goes to the shared strings, a number is stored as is. */
export type XlsxCell = string | number | boolean | null

/** An XLSX's parts; every sheet's cells from A1, rows as given. */
export function xlsxParts(sheets: { name: string; rows: XlsxCell[][] }[], opts: { title?: string } = {}): ZipInput[] {
  const strings: string[] = []
  // Columns A..Z are enough for the tests.
  const col = (i: number) => String.fromCharCode(65 + i)
  const parts: ZipInput[] = [core(opts.title)]
  const main = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
  parts.push({
    name: 'xl/workbook.xml',
    data: `<?xml version="1.0"?><workbook ${main} xmlns:r="${REL}"><sheets>${sheets.map((s, i) => `<sheet name="${escapeXml(s.name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('')}</sheets></workbook>`,
  })
  sheets.forEach((s, i) => {
    const rows = s.rows.map((r, ri) => {
      const cells = r.map((v, ci) => {
        const ref = `${col(ci)}${ri + 1}`
        if (v === null) return ''
        if (typeof v === 'number') return `<c r="${ref}"><v>${v}</v></c>`
        if (typeof v === 'boolean') return `<c r="${ref}" t="b"><v>${v ? 1 : 0}</v></c>`
        strings.push(v)
        return `<c r="${ref}" t="s"><v>${strings.length - 1}</v></c>`
      })
      return `<row r="${ri + 1}">${cells.join('')}</row>`
    })
    parts.push({
      name: `xl/worksheets/sheet${i + 1}.xml`,
      data: `<?xml version="1.0"?><worksheet ${main}><sheetData>${rows.join('')}</sheetData></worksheet>`,
    })
  })
  parts.push({
    name: 'xl/_rels/workbook.xml.rels',
    data: rels([
      ...sheets.map((_, i) => ({ id: `rId${i + 1}`, type: 'worksheet', target: `worksheets/sheet${i + 1}.xml` })),
      { id: 'rIdS', type: 'sharedStrings', target: 'sharedStrings.xml' },
    ]),
  })
  parts.push({
    name: 'xl/sharedStrings.xml',
    data: `<?xml version="1.0"?><sst ${main}>${strings.map((t) => `<si><t>${escapeXml(t)}</t></si>`).join('')}</sst>`,
  })
  return parts
}

export const makeXlsx = (sheets: { name: string; rows: XlsxCell[][] }[], opts: { title?: string } = {}) =>
  makeZip(xlsxParts(sheets, opts))

const ODF_NS = [
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"',
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"',
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"',
  'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"',
  'xmlns:dc="http://purl.org/dc/elements/1.1/"',
].join(' ')

/** An ODT or ODS: `body` is the inner XML of office:text or office:spreadsheet; `styles` goes into office:automatic-styles. */
export function odfParts(
  kind: 'text' | 'spreadsheet',
  body: string,
  opts: { title?: string; styles?: string; manifest?: string } = {},
): ZipInput[] {
  const mimetype = `application/vnd.oasis.opendocument.${kind}`
  return [
    { name: 'mimetype', data: mimetype, store: true },
    {
      name: 'META-INF/manifest.xml',
      data:
        opts.manifest ??
        `<?xml version="1.0"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" manifest:media-type="${mimetype}"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>`,
    },
    {
      name: 'content.xml',
      data: `<?xml version="1.0"?><office:document-content ${ODF_NS}><office:automatic-styles>${opts.styles ?? ''}</office:automatic-styles><office:body><office:${kind}>${body}</office:${kind}></office:body></office:document-content>`,
    },
    {
      name: 'meta.xml',
      data: `<?xml version="1.0"?><office:document-meta ${ODF_NS}><office:meta>${opts.title ? `<dc:title>${escapeXml(opts.title)}</dc:title>` : ''}</office:meta></office:document-meta>`,
    },
  ]
}

/** An OLE compound file's first bytes, as old .doc/.xls/.ppt and password-protected OOXML files start; `streams` are written as their directory names are (UTF-16). */
export function oleFile(streams: string[]): Uint8Array {
  const head = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])
  return new Uint8Array(
    Buffer.concat([head, Buffer.alloc(504), ...streams.map((s) => Buffer.from(s, 'utf16le')), Buffer.alloc(512)]),
  )
}
