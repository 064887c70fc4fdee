import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/**
 * Where Docent keeps its data when no --data / --models is given: the same folder the desktop app
 * uses (Electron's userData for productName "Docent"), so the CLI and the app share one index.
 * DOCENT_HOME overrides it (tests, portable installs).
 */
export function appHome(): string {
  if (process.env['DOCENT_HOME']) return path.resolve(process.env['DOCENT_HOME'])
  const home = os.homedir()
  if (process.platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'Docent')
  if (process.platform === 'win32') return path.join(process.env['APPDATA'] ?? path.join(home, 'AppData', 'Roaming'), 'Docent')
  return path.join(process.env['XDG_CONFIG_HOME'] ?? path.join(home, '.config'), 'Docent')
}

export const defaultDataDir = (): string => path.join(appHome(), 'index')
export const defaultModelsDir = (): string => path.join(appHome(), 'models')

export type ModelRole = 'embedding' | 'reranker' | 'llm'

/**
 * The model to use for a role: the one named in <models>/settings.json, else the only one (or the
 * first by name) installed for that role. Returns the model's folder (or .gguf file) or null.
 */
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
