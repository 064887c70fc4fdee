import { createRequire } from 'node:module'
import { deflateSync } from 'node:zlib'

/**
 * Test-only "scans": lines of text drawn on a white image by @napi-rs/canvas, as PNG, and PDFs
 * whose pages are nothing but such an image (no text layer), as a scanner writes them. Small
 * (150 dpi, a few lines) so that text recognition of them takes a second or two.
 */

interface Canvas {
  getContext(k: '2d'): {
    fillStyle: string
    font: string
    fillRect(x: number, y: number, w: number, h: number): void
    fillText(t: string, x: number, y: number): void
    getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray }
  }
  encode(f: 'png'): Promise<Buffer>
}

function canvasLib(): { createCanvas: (w: number, h: number) => Canvas } {
  return createRequire(import.meta.url)('@napi-rs/canvas') as { createCanvas: (w: number, h: number) => Canvas }
}

export interface ScanImage {
  width: number
  height: number
  png: Uint8Array
  /** One byte per pixel, row by row. */
  gray: Uint8Array
}

/**
 * `lines` drawn at `px` pixels a line (about 12 pt at 150 dpi) on an image of `width` x `height`,
 * in `ink` (a small grey text reads badly: a low-confidence page).
 */
export async function scanImage(lines: string[], width = 1240, height = 400, px = 32, ink = 'black'): Promise<ScanImage> {
  const c = canvasLib().createCanvas(width, height)
  const g = c.getContext('2d')
  g.fillStyle = 'white'
  g.fillRect(0, 0, width, height)
  g.fillStyle = ink
  g.font = `${px}px serif`
  lines.forEach((l, i) => g.fillText(l, 60, 80 + i * px * 1.6))
  const rgba = g.getImageData(0, 0, width, height).data
  const gray = new Uint8Array(width * height)
  for (let i = 0; i < gray.length; i++) gray[i] = rgba[i * 4]!
  return { width, height, png: new Uint8Array(await c.encode('png')), gray }
}

/**
 * A PDF with one page per image, each page showing only its image at 150 dpi (no text layer); a
 * string instead of an image is a page with that line as real text (Helvetica), for mixed PDFs.
 */
export function makeScannedPdf(images: (ScanImage | string)[]): Uint8Array {
  const parts: Buffer[] = []
  const objs: (string | Buffer)[] = []
  const add = (body: string | Buffer) => objs.push(body)
  add('') // 1 catalog
  add('') // 2 pages
  const kids: number[] = []
  let fontId = 0
  for (const img of images) {
    if (typeof img === 'string') {
      if (!fontId) {
        add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>')
        fontId = objs.length
      }
      const content = `BT /F1 12 Tf 72 700 Td (${img.replace(/[\\()]/g, '\\$&')}) Tj ET`
      add(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`)
      add(
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${fontId} 0 R >> >> /Contents ${objs.length} 0 R >>`,
      )
      kids.push(objs.length)
      continue
    }
    const w = (img.width * 72) / 150
    const h = (img.height * 72) / 150
    const data = deflateSync(img.gray)
    add(
      Buffer.concat([
        Buffer.from(
          `<< /Type /XObject /Subtype /Image /Width ${img.width} /Height ${img.height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length ${data.length} >>\nstream\n`,
          'latin1',
        ),
        data,
        Buffer.from('\nendstream', 'latin1'),
      ]),
    )
    const imageId = objs.length
    const content = `q ${w} 0 0 ${h} 0 0 cm /Im0 Do Q`
    add(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`)
    const contentId = objs.length
    add(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${w} ${h}] /Resources << /XObject << /Im0 ${imageId} 0 R >> >> /Contents ${contentId} 0 R >>`,
    )
    kids.push(objs.length)
  }
  objs[0] = '<< /Type /Catalog /Pages 2 0 R >>'
  objs[1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`
  parts.push(Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1'))
  let offset = parts[0]!.length
  const offsets: number[] = []
  objs.forEach((body, i) => {
    offsets.push(offset)
    const b = Buffer.concat([
      Buffer.from(`${i + 1} 0 obj\n`, 'latin1'),
      Buffer.from(body as never),
      Buffer.from('\nendobj\n', 'latin1'),
    ])
    parts.push(b)
    offset += b.length
  })
  const xref = `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`, 'latin1'))
  return new Uint8Array(Buffer.concat(parts))
}

/** An uncompressed 8-bit grayscale TIFF (little-endian) with one page per image. */
export function makeTiff(images: ScanImage[]): Uint8Array {
  const parts: Buffer[] = [Buffer.from([0x49, 0x49, 42, 0, 8, 0, 0, 0])]
  let offset = 8
  images.forEach((img, k) => {
    const n = 8
    const ifdSize = 2 + n * 12 + 4
    const dataAt = offset + ifdSize
    const ifd = Buffer.alloc(ifdSize)
    ifd.writeUInt16LE(n, 0)
    const entries: [number, number, number][] = [
      [256, 4, img.width], // ImageWidth
      [257, 4, img.height], // ImageLength
      [258, 3, 8], // BitsPerSample
      [259, 3, 1], // Compression: none
      [262, 3, 1], // PhotometricInterpretation: black is zero
      [273, 4, dataAt], // StripOffsets
      [278, 4, img.height], // RowsPerStrip
      [279, 4, img.gray.length], // StripByteCounts
    ]
    entries.forEach(([tag, type, value], i) => {
      const e = 2 + i * 12
      ifd.writeUInt16LE(tag, e)
      ifd.writeUInt16LE(type, e + 2)
      ifd.writeUInt32LE(1, e + 4)
      if (type === 3) ifd.writeUInt16LE(value, e + 8)
      else ifd.writeUInt32LE(value, e + 8)
    })
    const next = k + 1 < images.length ? dataAt + img.gray.length : 0
    ifd.writeUInt32LE(next, 2 + n * 12)
    parts.push(ifd, Buffer.from(img.gray))
    offset = dataAt + img.gray.length
  })
  return new Uint8Array(Buffer.concat(parts))
}

/** A JPEG of the image (quality 90). */
export async function scanJpeg(lines: string[]): Promise<Uint8Array> {
  const c = canvasLib().createCanvas(1240, 300) as Canvas & { encode(f: 'jpeg', q: number): Promise<Buffer> }
  const g = c.getContext('2d')
  g.fillStyle = 'white'
  g.fillRect(0, 0, 1240, 300)
  g.fillStyle = 'black'
  g.font = '32px serif'
  lines.forEach((l, i) => g.fillText(l, 60, 80 + i * 51))
  return new Uint8Array(await c.encode('jpeg', 90))
}
