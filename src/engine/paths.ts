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

/** Where new libraries' templates are kept (store/template.ts); DOCENT_TEMPLATE_DIR overrides it, and `off` gives none. */
export function templatesDir(): string | null {
  const env = process.env['DOCENT_TEMPLATE_DIR']
  if (env === 'off') return null
  return env ? path.resolve(env) : path.join(appHome(), 'templates')
}
