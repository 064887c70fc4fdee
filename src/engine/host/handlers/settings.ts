import { Settings } from '../../../shared/api'
import type { Engine } from '../../engine'
import type { HostDeps } from '../context'
import type { HandlerMap } from '../types'

export type SettingsHandlers = HandlerMap<'settings.get' | 'settings.set'>

/** The app's settings, one JSON row in the index's settings table. */
async function readSettings(engine: Engine): Promise<Settings> {
  const { rows } = await engine.db.query<{ value: unknown }>(`SELECT value FROM settings WHERE key = 'app'`)
  const stored = rows[0]?.value
  const record: Record<string, unknown> = stored && typeof stored === 'object' ? { ...stored } : {}
  // Field by field, so one bad stored value falls back to its default without losing the others.
  const out: Record<string, unknown> = {}
  for (const [key, schema] of Object.entries(Settings.shape)) {
    const r = schema.safeParse(record[key])
    out[key] = r.success ? r.data : schema.parse(undefined)
  }
  return Settings.parse(out)
}

export function settingsHandlers({ engine }: HostDeps): SettingsHandlers {
  return {
    'settings.get': async () => readSettings(engine),

    'settings.set': async (patch) => {
      const current = await readSettings(engine)
      const changes = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined))
      const next = Settings.parse({ ...current, ...changes })
      await engine.db.query(
        `INSERT INTO settings (key, value) VALUES ('app', $1::jsonb) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
        [JSON.stringify(next)],
      )
      return next
    },
  }
}
