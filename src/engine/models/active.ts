import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import type { ModelRole } from '../../shared/models'

/**
 * Which model the engine uses for a role. The loaders, the model manager's status and the host all
 * ask here, so what the settings screen says is in use is what the engine loads.
 *
 * The rule: the model named in <models>/settings.json when it is on disk, else the only one (or the
 * first by name) installed for that role, so a fresh install works before anyone chooses.
 */

/** The model's folder (or .gguf file) for a role, or null when none is installed. Synchronous: loaders call it on start. */
export function activeModelPath(modelsDir: string, role: ModelRole): string | null {
  const roleDir = path.join(modelsDir, role)
  if (!existsSync(roleDir)) return null
  let chosen: string | undefined
  try {
    const settings = JSON.parse(readFileSync(path.join(modelsDir, 'settings.json'), 'utf8')) as Record<string, unknown>
    const name = settings[role]
    if (typeof name === 'string' && name && !name.includes('..')) chosen = name
  } catch {
    // No settings yet: fall back to what is installed.
  }
  if (chosen && existsSync(path.join(roleDir, chosen))) return path.join(roleDir, chosen)
  const entries = readdirSync(roleDir)
    .filter((n) => !n.startsWith('.'))
    .filter((n) => {
      const st = statSync(path.join(roleDir, n))
      return role === 'llm' ? st.isFile() && n.endsWith('.gguf') : st.isDirectory()
    })
    .sort()
  return entries.length ? path.join(roleDir, entries[0]!) : null
}

/** The name (folder or .gguf file name) of the model in use for a role, or null. */
export function activeModelName(modelsDir: string, role: ModelRole): string | null {
  const p = activeModelPath(modelsDir, role)
  return p === null ? null : path.basename(p)
}
