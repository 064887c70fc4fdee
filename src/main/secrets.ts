import { safeStorage } from 'electron'
import type { SecretBox } from './location-setting'

/**
 * The OS keychain through Electron's safeStorage (macOS Keychain, Windows DPAPI, the Secret Service
 * or KWallet on Linux). On Linux without a keyring safeStorage falls back to a key hard-coded in
 * Chromium ('basic_text'), which protects nothing: then no password is saved and the app asks for
 * PGPASSWORD instead. Not run here: this machine has no Electron binary (docs/postgres.md).
 */
export const keychain: SecretBox = {
  available: () =>
    safeStorage.isEncryptionAvailable() &&
    !(process.platform === 'linux' && safeStorage.getSelectedStorageBackend() === 'basic_text'),
  encrypt: (plain) => safeStorage.encryptString(plain).toString('base64'),
  decrypt: (cipher) => safeStorage.decryptString(Buffer.from(cipher, 'base64')),
}
