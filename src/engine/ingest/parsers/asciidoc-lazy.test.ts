import { describe, expect, it, vi } from 'vitest'

/** Asciidoctor is big: it is loaded by the first AsciiDoc file, not by loading the parsers or reading other formats. */
const loads = vi.hoisted(() => ({ n: 0 }))
vi.mock('@asciidoctor/core', async (importOriginal) => {
  loads.n++
  return await importOriginal()
})

describe('loading Asciidoctor', () => {
  it('happens on the first AsciiDoc file only, once', async () => {
    const { parseFile } = await import('./index')
    const enc = (s: string) => new Uint8Array(Buffer.from(s))
    await parseFile(enc('# Markdown\n\nText.\n'), 'a.md')
    await parseFile(enc('Title\n=====\n\nText.\n'), 'a.rst')
    await parseFile(enc('a,b\n1,2\n'), 'a.csv')
    expect(loads.n).toBe(0)
    expect((await parseFile(enc('= Title\n\nText.\n'), 'a.adoc')).title).toBe('Title')
    expect((await parseFile(enc('= Again\n\nText.\n'), 'b.adoc')).title).toBe('Again')
    expect(loads.n).toBe(1)
  })
})
