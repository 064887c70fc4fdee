/**
 * pdf.js says that it left an image out (over its `maxImageSize`, pdf.ts MAX_IMAGE_PIXELS) only as
 * a warning on the console. While a PDF is read, pdf.js's warnings are taken off the console (they
 * never reached it before: verbosity was 0) and the one about a removed image is counted, so that
 * a page whose scan was too large to read is named instead of passing for a blank one.
 */

const REMOVED = 'Image exceeded maximum allowed size'

let readers = 0
let removed = 0
let original: typeof console.warn | null = null

/** Images pdf.js has left out so far; compare before and after a page's operator list is built. */
export function removedImages(): number {
  return removed
}

/** Runs `read` with pdf.js's warnings counted instead of printed. */
export async function countingPdfWarnings<T>(read: () => Promise<T>): Promise<T> {
  if (readers++ === 0) {
    const warn = (original = console.warn)
    console.warn = (...args: unknown[]) => {
      const first = args[0]
      if (typeof first === 'string' && first.startsWith('Warning: ')) {
        if (first.includes(REMOVED)) removed++
        return
      }
      warn(...args)
    }
  }
  try {
    return await read()
  } finally {
    if (--readers === 0 && original) {
      console.warn = original
      original = null
    }
  }
}
