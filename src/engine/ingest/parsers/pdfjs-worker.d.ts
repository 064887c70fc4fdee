// pdfjs-dist ships no types for its worker module; it is imported only for its side effect
// (setting globalThis.pdfjsWorker so pdf.js runs its "worker" in this thread).
declare module 'pdfjs-dist/legacy/build/pdf.worker.mjs'
