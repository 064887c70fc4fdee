/**
 * Small choices the window remembers across restarts (a notice already shown), in the renderer's
 * own storage: they are about this window, not the library, so they stay out of the engine's
 * settings. Storage that is full or switched off only means the choice is asked again.
 */

const PREFIX = 'docent.'

export function recallList(key: string): string[] {
  try {
    const raw = window.localStorage.getItem(PREFIX + key)
    const value: unknown = raw ? JSON.parse(raw) : []
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
  } catch {
    return []
  }
}

export function rememberInList(key: string, item: string): void {
  try {
    const list = recallList(key)
    if (!list.includes(item)) window.localStorage.setItem(PREFIX + key, JSON.stringify([...list, item].slice(-20)))
  } catch {
    // Not remembered: the notice comes back once more, nothing worse.
  }
}
