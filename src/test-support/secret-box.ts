import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

/**
 * A stand-in for Electron's safeStorage where there is no Electron binary (tests, the browser e2e):
 * real AES-256-GCM under a random key that lives only in this process, so what is written to disk is
 * ciphertext as it is in the app. It is not a keychain: the app uses src/main/secrets.ts. (The shape
 * of main's SecretBox, written out: the engine's tsconfig, which builds test-support, has no main.)
 */
export function testSecretBox(opts: { available?: boolean } = {}): {
  available(): boolean
  encrypt(plain: string): string
  decrypt(cipher: string): string
  encrypted: number
} {
  const key = randomBytes(32)
  const box = {
    encrypted: 0,
    available: () => opts.available ?? true,
    encrypt(plain: string): string {
      box.encrypted++
      const iv = randomBytes(12)
      const c = createCipheriv('aes-256-gcm', key, iv)
      const body = Buffer.concat([c.update(plain, 'utf8'), c.final()])
      return Buffer.concat([iv, c.getAuthTag(), body]).toString('base64')
    },
    decrypt(cipher: string): string {
      const raw = Buffer.from(cipher, 'base64')
      const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12))
      d.setAuthTag(raw.subarray(12, 28))
      return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8')
    },
  }
  return box
}
