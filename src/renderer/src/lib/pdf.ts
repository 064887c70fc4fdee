import * as pdfjs from 'pdfjs-dist'
import workerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url'

/**
 * pdf.js, loaded on demand (this module is imported dynamically by the PDF view, so the chat and
 * library never pay for it). The worker is bundled by Vite and served from the app itself, which
 * is what the CSP's `worker-src 'self'` allows.
 */
pdfjs.GlobalWorkerOptions.workerSrc = workerUrl

export { pdfjs }

export function base64ToBytes(b64: string): Uint8Array {
  const bin = atob(b64)
  const out = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  return out
}

export async function openPdf(b64: string): Promise<pdfjs.PDFDocumentProxy> {
  // No eval in font rendering (CSP script-src 'self'); no network for fonts or resources.
  return pdfjs.getDocument({ data: base64ToBytes(b64), isEvalSupported: false, useSystemFonts: true }).promise
}
