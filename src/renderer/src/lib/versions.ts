// Mirrors the engine's pre-release words (src/main/engine/ingest/versions.ts), which the renderer may not import.
const PRERELEASE_WORDS = new Set(['draft', 'next', 'latest', 'unreleased', 'canary', 'nightly', 'preview'])
export const isPrerelease = (v: string): boolean => PRERELEASE_WORDS.has(v.toLowerCase())

function versionKey(v: string): number[] {
  const clean = v.replace(/^v/i, '')
  return /^\d+([.-]\d+)*$/.test(clean) ? clean.split(/[.-]/).map(Number) : []
}

/** Newest released version first, then pre-releases (draft, next, …). */
export function compareVersionsDesc(a: string, b: string): number {
  const pa = isPrerelease(a)
  const pb = isPrerelease(b)
  if (pa !== pb) return pa ? 1 : -1
  const ka = versionKey(a)
  const kb = versionKey(b)
  for (let i = 0; i < Math.max(ka.length, kb.length); i++) {
    const d = (kb[i] ?? 0) - (ka[i] ?? 0)
    if (d !== 0) return d
  }
  return b.localeCompare(a)
}
