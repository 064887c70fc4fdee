/** Small formatting helpers shared by the library, models and chat screens. */

export function formatBytes(n: number | null | undefined): string {
  if (n == null || !Number.isFinite(n)) return '—'
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  let v = n
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${v >= 100 || i === 0 ? Math.round(v) : v.toFixed(1)} ${units[i]}`
}

export function formatDuration(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms) || ms < 0) return '—'
  const s = Math.round(ms / 1000)
  if (s < 1) return 'under a second'
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min ${s % 60 ? `${s % 60} s` : ''}`.trim()
  const h = Math.floor(m / 60)
  return `${h} h ${m % 60} min`
}

/**
 * Time left, as an estimate should read: rounded (to 5 s, then to minutes) so it does not flicker
 * with every update, and "almost done" at the end instead of "under a second" or a negative time.
 */
export function formatTimeLeft(ms: number): string {
  const s = Math.max(0, ms) / 1000
  if (s < 5) return 'almost done'
  if (s < 90) return `about ${Math.round(s / 5) * 5} s left`
  const min = Math.round(s / 60)
  if (min < 60) return `about ${min} min left`
  return `about ${Math.floor(min / 60)} h ${min % 60 ? `${min % 60} min ` : ''}left`
}

/** Time since something started, to the second: "7 s", "1 min 05 s". */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000))
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`
}

export function formatRate(perSecond: number | null | undefined, unit: string): string {
  if (perSecond == null || !Number.isFinite(perSecond) || perSecond <= 0) return `— ${unit}/s`
  return `${perSecond >= 10 ? Math.round(perSecond) : perSecond.toFixed(1)} ${unit}/s`
}

export function formatMs(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms)) return '—'
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms >= 10 ? Math.round(ms) : ms.toFixed(1)} ms`
}

export function formatRelativeTime(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return 'never'
  const t = Date.parse(iso)
  if (!Number.isFinite(t)) return 'unknown'
  const s = Math.round((now - t) / 1000)
  if (s < 45) return 'just now'
  const m = Math.round(s / 60)
  if (m < 60) return `${m} min ago`
  const h = Math.round(m / 60)
  if (h < 24) return `${h} h ago`
  const d = Math.round(h / 24)
  if (d < 30) return `${d} day${d === 1 ? '' : 's'} ago`
  return new Date(t).toLocaleDateString()
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`
}

export function formatScore(n: number | null | undefined, digits = 3): string {
  if (n == null || !Number.isFinite(n)) return '—'
  return n.toFixed(digits)
}

/** The last path segment, for compact display of long paths. */
export function baseName(path: string): string {
  return path.split(/[\\/]/).filter(Boolean).at(-1) ?? path
}
