import { describe, expect, it } from 'vitest'
import { BGE_QUERY_PREFIX, CATALOG, defaultCatalogEntry, findCatalogEntry, validateCatalog, type CatalogEntry } from './catalog'
import { resolveUrl } from './hub'

describe('catalog', () => {
  it('is well-formed: one default per role, commits and hashes either pinned in full or null (trust on first use)', () => {
    expect(validateCatalog(CATALOG)).toEqual([])
  })

  it('has the default set for a laptop CPU', () => {
    const emb = defaultCatalogEntry('embedding')
    expect(emb.repo).toBe('Xenova/bge-small-en-v1.5')
    expect(emb.docent).toEqual({ pooling: 'cls', queryPrefix: 'Represent this sentence for searching relevant passages: ' })
    expect(emb.docent?.queryPrefix).toBe(BGE_QUERY_PREFIX)
    expect(defaultCatalogEntry('reranker').repo).toBe('Xenova/ms-marco-MiniLM-L-6-v2')
    const llm = defaultCatalogEntry('llm')
    expect(llm.files).toHaveLength(1)
    expect(llm.installName).toMatch(/Q4_K_M\.gguf$/)
    // Roughly 1-4B parameters at Q4_K_M: 0.8-2.6 GB.
    expect(llm.files[0]!.approxBytes).toBeGreaterThan(0.8e9)
    expect(llm.files[0]!.approxBytes).toBeLessThan(2.6e9)
    expect(findCatalogEntry('qwen2.5-1.5b-instruct-q4_k_m')?.licence).toBe('Apache-2.0')
  })

  it('catches malformed entries', () => {
    const bad = [{ ...defaultCatalogEntry('llm'), revision: 'main' }]
    expect(validateCatalog(bad).join('\n')).toMatch(/40-hex commit/)
    const badHash = [
      { ...defaultCatalogEntry('embedding'), files: [{ path: 'onnx/model.onnx', size: 1, sha256: 'abc', approxBytes: 1 }] },
    ]
    expect(validateCatalog(badHash).join('\n')).toMatch(/sha256 must be 64 hex/)
  })

  it('says for every entry where its pins come from, and a publisher pin is complete', () => {
    // No publisher metadata for these repos was reachable when the catalog was written (ADR 0003, "Pins per model").
    expect(CATALOG.map((e) => [e.id, e.pin])).toEqual([
      ['bge-small-en-v1.5', 'trust-on-first-use'],
      ['ms-marco-MiniLM-L-6-v2', 'trust-on-first-use'],
      ['llama-3.2-3b-instruct-q4_k_m', 'trust-on-first-use'],
      ['qwen2.5-1.5b-instruct-q4_k_m', 'trust-on-first-use'],
    ])
    const llm = defaultCatalogEntry('llm')
    const half: CatalogEntry[] = [{ ...llm, pin: 'publisher', revision: 'a'.repeat(40) }]
    expect(validateCatalog(half).join('\n')).toMatch(/publisher pin needs size and sha256/)
    const full: CatalogEntry[] = [
      {
        ...llm,
        pin: 'publisher',
        revision: 'a'.repeat(40),
        files: llm.files.map((f) => ({ ...f, size: 1, sha256: 'b'.repeat(64) })),
      },
      defaultCatalogEntry('embedding'),
      defaultCatalogEntry('reranker'),
    ]
    expect(validateCatalog(full)).toEqual([])
  })

  it('builds resolve URLs as {endpoint}/{repo}/resolve/{revision}/{file}', () => {
    expect(resolveUrl('https://huggingface.co/', 'Xenova/bge-small-en-v1.5', 'abc123', 'onnx/model.onnx')).toBe(
      'https://huggingface.co/Xenova/bge-small-en-v1.5/resolve/abc123/onnx/model.onnx',
    )
  })
})
