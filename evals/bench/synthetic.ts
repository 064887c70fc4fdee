import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'

/**
 * Deterministic synthetic data for benchmarks: a Zipf-distributed vocabulary (so some words are
 * very common and most are rare, as in real text) and clustered unit vectors (so nearest
 * neighbours exist, as with real embeddings; uniformly random vectors would be unrealistically hard).
 */

export function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'ta',
  'vo',
  'xi',
  'po',
  'se',
  'da',
  'fu',
  'gi',
  'ho',
  'ju',
  'ze',
  'bra',
  'ctl',
  'str',
  'qua',
]

export function vocabulary(size: number, seed = 1): string[] {
  const r = rng(seed)
  const words = new Set<string>()
  while (words.size < size) {
    const n = 2 + Math.floor(r() * 3)
    let w = ''
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(r() * SYLLABLES.length)]
    words.add(w)
  }
  return [...words]
}

/** Samples word indexes with probability proportional to 1/rank. */
export function zipfSampler(n: number, r: () => number): () => number {
  const cdf = new Float64Array(n)
  let sum = 0
  for (let i = 0; i < n; i++) cdf[i] = sum += 1 / (i + 1)
  return () => {
    const x = r() * sum
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cdf[mid]! < x) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

export function sentence(words: string[], sample: () => number, length: number): string {
  const out: string[] = []
  for (let i = 0; i < length; i++) out.push(words[sample()]!)
  return out.join(' ') + '.'
}

export function clusteredVectors(count: number, dims: number, clusters: number, seed = 7): Float32Array[] {
  const r = rng(seed)
  const gauss = () => Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r())
  const centroids = Array.from({ length: clusters }, () => Float32Array.from({ length: dims }, gauss))
  const out: Float32Array[] = []
  for (let i = 0; i < count; i++) {
    const c = centroids[Math.floor(r() * clusters)]!
    const v = Float32Array.from({ length: dims }, (_, d) => c[d]! + 0.9 * gauss())
    out.push(normalise(v))
  }
  return out
}

export function normalise(v: Float32Array): Float32Array {
  let n = 0
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!
  n = Math.sqrt(n) || 1
  for (let i = 0; i < v.length; i++) v[i]! /= n
  return v
}

/** Writes `count` Markdown documents of a few sections each into `dir`, in folders of 100. */
export async function writeMarkdownCorpus(dir: string, count: number, seed = 3): Promise<{ bytes: number }> {
  const r = rng(seed)
  const words = vocabulary(20_000, seed)
  const sample = zipfSampler(words.length, r)
  let bytes = 0
  for (let i = 0; i < count; i++) {
    const sub = path.join(dir, `part-${String(Math.floor(i / 100)).padStart(3, '0')}`)
    if (i % 100 === 0) await mkdir(sub, { recursive: true })
    const sections = 2 + Math.floor(r() * 3)
    let text = `# ${sentence(words, sample, 4).slice(0, -1)}\n\n${sentence(words, sample, 30)}\n`
    for (let s = 0; s < sections; s++) {
      text += `\n## ${sentence(words, sample, 3).slice(0, -1)}\n\n`
      const paragraphs = 1 + Math.floor(r() * 3)
      for (let p = 0; p < paragraphs; p++) text += Array.from({ length: 4 }, () => sentence(words, sample, 12)).join(' ') + '\n\n'
    }
    bytes += Buffer.byteLength(text)
    await writeFile(path.join(sub, `doc-${i}.md`), text)
  }
  return { bytes }
}
