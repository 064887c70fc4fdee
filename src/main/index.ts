import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { BrowserWindow, Menu, app, dialog, ipcMain, session, shell, type IpcMainInvokeEvent } from 'electron'
import { appHome, defaultDataDir, defaultModelsDir } from '../engine/paths'
import { EngineClient } from '../engine/host/client'
import { utilityEngineSpawner } from './engine-process'
import { IPC_CHANNELS, createInvokeRelay, createOpenExternalRelay } from './ipc-relay'
import { LocationSettingStore, createLocationRelays } from './location-setting'
import { cliModeArgs } from './cli-args'
import { runCliMode } from './cli-mode'
import { buildMenu, pickFolder } from './menu'
import { keychain } from './secrets'
import { isAppRendererUrl } from './security'
import { createMainWindow, hardenSession, hardenWebContents, type WindowConfig } from './window'

/**
 * Electron main: windows, menus, dialogs, security and the IPC relay. Nothing heavy runs here; the
 * engine (database, import, models) lives in a utility process behind EngineClient.
 */

const here = path.dirname(fileURLToPath(import.meta.url))

// Same folder as the CLI's default (engine/paths.ts appHome), whatever package.json's name says.
app.setName('Docent')
app.enableSandbox()
// `Docent --mcp` / `Docent --cli <command>`: a command without a window, beside the app if it is open.
const cliArgs = cliModeArgs(process.argv)
if (cliArgs) runCliMode(cliArgs, path.join(here, 'docent-cli.js'))
else if (!app.requestSingleInstanceLock()) app.quit()

const devServerUrl = !app.isPackaged && process.env['ELECTRON_RENDERER_URL'] ? process.env['ELECTRON_RENDERER_URL'] : null
const config: WindowConfig = {
  appUrl: devServerUrl ?? pathToFileURL(path.join(here, '../renderer/index.html')).href,
  devServerUrl,
  preloadPath: path.join(here, '../preload/index.cjs'),
}
const dataDir = path.resolve(process.env['DOCENT_DATA_DIR'] ?? defaultDataDir())
const modelsDir = path.resolve(process.env['DOCENT_MODELS_DIR'] ?? defaultModelsDir())
// The "Library location" setting: this computer (dataDir) or a PostgreSQL server.
const locations = new LocationSettingStore(path.join(appHome(), 'library.json'), keychain)

const engine = new EngineClient({
  spawn: utilityEngineSpawner(
    path.join(here, 'engine-host.js'),
    ['--data', dataDir, '--models', modelsDir, '--app-version', app.getVersion()],
    () => locations.engineLaunch(),
  ),
  onEvent: (event, payload) => {
    for (const win of BrowserWindow.getAllWindows()) {
      if (!win.isDestroyed()) win.webContents.send(IPC_CHANNELS.event, event, payload)
    }
  },
})

/** The sending frame's URL when it is the top frame of a window (the renderer has no subframes). */
function senderUrl(event: IpcMainInvokeEvent): string | null {
  const frame = event.senderFrame
  return frame && frame.parent === null ? frame.url : null
}
const isTrustedSender = (url: string | null | undefined): boolean => isAppRendererUrl(url, config.appUrl)

const relayInvoke = createInvokeRelay({ engine, isTrustedSender })
const relayOpenExternal = createOpenExternalRelay({ engine, isTrustedSender, openPath: (p) => shell.openPath(p) })
// Saving a location stops the engine process; the renderer's next request starts it on the new one.
const relayLocation = createLocationRelays({ store: locations, isTrustedSender, restartEngine: () => engine.restart() })

ipcMain.handle(IPC_CHANNELS.invoke, (event, name: unknown, input: unknown) => relayInvoke(senderUrl(event), name, input))
ipcMain.handle(IPC_CHANNELS.openExternal, (event, chunkId: unknown) => relayOpenExternal(senderUrl(event), chunkId))
ipcMain.handle(IPC_CHANNELS.libraryLocation, (event) => relayLocation.get(senderUrl(event)))
ipcMain.handle(IPC_CHANNELS.setLibraryLocation, (event, input: unknown) => relayLocation.set(senderUrl(event), input))
ipcMain.handle(IPC_CHANNELS.pickFolder, async (event) => {
  if (!isTrustedSender(senderUrl(event))) return null
  return pickFolder(BrowserWindow.fromWebContents(event.sender))
})

async function addFolder(win: BrowserWindow | null): Promise<void> {
  const folder = await pickFolder(win)
  if (!folder) return
  // Progress reaches the renderer as import.* events, like an import started from the library.
  const res = await engine.invoke('collections.import', { folder })
  if (!res.ok) dialog.showErrorBox('Could not import the folder', res.error.message)
}

async function about(win: BrowserWindow | null): Promise<void> {
  const info = await engine.invoke('app.info', {})
  const detail = info.ok
    ? `Version ${info.value.version}\nIndex: ${info.value.dataDir}\nModels: ${info.value.modelsDir}\n${info.value.hardware}`
    : `Version ${app.getVersion()}\n${info.error.message}`
  const options = { type: 'info' as const, message: 'Docent', detail }
  if (win) await dialog.showMessageBox(win, options)
  else await dialog.showMessageBox(options)
}

app.on('web-contents-created', (_event, contents) => hardenWebContents(contents, config))

app.on('second-instance', () => {
  const win = BrowserWindow.getAllWindows()[0]
  if (win) {
    if (win.isMinimized()) win.restore()
    win.focus()
  }
})

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit()
})

let quitting = false
app.on('before-quit', (event) => {
  if (quitting) return
  // Let the engine cancel its jobs and close the database cleanly before the app exits.
  event.preventDefault()
  quitting = true
  void engine.dispose().finally(() => app.quit())
})

if (!cliArgs)
  void app.whenReady().then(() => {
    hardenSession(session.defaultSession, config)
    Menu.setApplicationMenu(buildMenu({ addFolder, about, dataDir }))
    createMainWindow(config)
    app.on('activate', () => {
      if (BrowserWindow.getAllWindows().length === 0) createMainWindow(config)
    })
  })
