import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import type { Result } from '../shared/api'
import { LibraryLocationInfo, SaveLibraryLocation, ServerUrl, connectionUrl, type LibraryLocation } from '../shared/library'
import { ErrorCode, errorResult } from '../engine/host/protocol'

/**
 * The app's "Library location" setting, kept by the main process outside the index (which index to
 * open depends on it): `<app home>/library.json`, mode 0600. A server's password is never in that
 * file in plain text: it is encrypted with the OS keychain (Electron's safeStorage, behind
 * SecretBox so this module runs without Electron in tests), and handed to the engine process only in
 * its environment (PGPASSWORD). Where no keychain is available, the password comes from PGPASSWORD
 * in the app's own environment and nothing is saved.
 */

export interface SecretBox {
  /** An OS keychain protects what encrypt() returns (not Chromium's hard-coded fallback key). */
  available(): boolean
  /** Ciphertext, base64. */
  encrypt(plain: string): string
  decrypt(cipher: string): string
}

const Stored = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('local') }),
  z.object({
    kind: z.literal('server'),
    url: ServerUrl,
    requireTls: z.boolean(),
    /** safeStorage ciphertext, base64. */
    encryptedPassword: z.string().optional(),
  }),
])
type Stored = z.infer<typeof Stored>

/** How the engine process is started on the current location: extra arguments, extra environment. */
export interface EngineLaunch {
  args: string[]
  env: Record<string, string>
}

export class LocationSettingStore {
  constructor(
    readonly file: string,
    private readonly secrets: SecretBox,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /** The saved location; a missing or unreadable file means this computer. */
  private read(): Stored {
    if (!existsSync(this.file)) return { kind: 'local' }
    try {
      const parsed = Stored.safeParse(JSON.parse(readFileSync(this.file, 'utf8')))
      return parsed.success ? parsed.data : { kind: 'local' }
    } catch {
      return { kind: 'local' }
    }
  }

  private write(s: Stored): void {
    mkdirSync(path.dirname(this.file), { recursive: true })
    const tmp = `${this.file}.tmp`
    writeFileSync(tmp, JSON.stringify(s, null, 2) + '\n', { mode: 0o600 })
    chmodSync(tmp, 0o600)
    renameSync(tmp, this.file)
  }

  /** What the renderer may see: no password, only where it comes from. */
  info(): LibraryLocationInfo {
    const s = this.read()
    const environmentPassword = !!this.env['PGPASSWORD']
    const location: LibraryLocation =
      s.kind === 'local'
        ? { kind: 'local' }
        : {
            kind: 'server',
            url: s.url,
            requireTls: s.requireTls,
            password: s.encryptedPassword ? 'saved' : environmentPassword ? 'environment' : 'none',
          }
    return { location, canSavePassword: this.secrets.available(), environmentPassword }
  }

  /**
   * Saves a new location. A server's password, when given, is encrypted with the keychain; when
   * absent the saved one is kept if the URL names the same host, port and user (never sent to
   * another server). Throws a message for people when the password cannot be kept safely.
   */
  save(input: SaveLibraryLocation): LibraryLocationInfo {
    if (input.kind === 'local') {
      this.write({ kind: 'local' })
      return this.info()
    }
    const before = this.read()
    let encryptedPassword: string | undefined
    if (input.password !== undefined) {
      if (!this.secrets.available())
        throw new Error(
          'This computer has no keychain Docent can keep the password in. Leave the password empty and start Docent with PGPASSWORD set in its environment.',
        )
      encryptedPassword = this.secrets.encrypt(input.password)
    } else if (before.kind === 'server' && before.encryptedPassword && sameAccount(before.url, input.url)) {
      encryptedPassword = before.encryptedPassword
    }
    this.write({
      kind: 'server',
      url: input.url,
      requireTls: input.requireTls,
      ...(encryptedPassword ? { encryptedPassword } : {}),
    })
    return this.info()
  }

  /** Arguments and environment for the engine process on the saved location. */
  engineLaunch(): EngineLaunch {
    const s = this.read()
    if (s.kind === 'local') return { args: [], env: {} }
    const env: Record<string, string> = {}
    if (s.encryptedPassword) env['PGPASSWORD'] = this.secrets.decrypt(s.encryptedPassword)
    return { args: ['--database', connectionUrl(s)], env }
  }
}

function sameAccount(a: string, b: string): boolean {
  try {
    const x = new URL(a)
    const y = new URL(b)
    return x.hostname === y.hostname && (x.port || '5432') === (y.port || '5432') && x.username === y.username
  } catch {
    return false
  }
}

export interface LocationRelayDeps {
  store: LocationSettingStore
  isTrustedSender: (frameUrl: string | null | undefined) => boolean
  /** Stops the engine process so that the next request starts it on the new location. */
  restartEngine: () => Promise<void>
}

const FORBIDDEN = 'This window may not call Docent.'

/** The two IPC handlers of the setting, free of Electron: sender check and validation first, as for every call. */
export function createLocationRelays(deps: LocationRelayDeps): {
  get(frameUrl: string | null | undefined): Promise<Result<LibraryLocationInfo>>
  set(frameUrl: string | null | undefined, input: unknown): Promise<Result<LibraryLocationInfo>>
} {
  return {
    async get(frameUrl) {
      if (!deps.isTrustedSender(frameUrl)) return errorResult(FORBIDDEN, ErrorCode.forbidden)
      return { ok: true, value: deps.store.info() }
    },
    async set(frameUrl, input) {
      if (!deps.isTrustedSender(frameUrl)) return errorResult(FORBIDDEN, ErrorCode.forbidden)
      const parsed = SaveLibraryLocation.safeParse(input)
      if (!parsed.success)
        return errorResult(parsed.error.issues[0]?.message ?? 'Invalid library location.', ErrorCode.invalidInput)
      let info: LibraryLocationInfo
      try {
        info = deps.store.save(parsed.data)
      } catch (err) {
        return errorResult(err instanceof Error ? err.message : String(err), ErrorCode.failed)
      }
      await deps.restartEngine()
      return { ok: true, value: info }
    },
  }
}
