import { BrowserWindow, Menu, app, dialog, shell, type MenuItemConstructorOptions } from 'electron'

/** The application menu: File (Add folder…, Quit), Edit, View, Help. */

export interface MenuActions {
  addFolder(window: BrowserWindow | null): Promise<void>
  about(window: BrowserWindow | null): Promise<void>
  dataDir: string
}

export async function pickFolder(window: BrowserWindow | null): Promise<string | null> {
  const options = { title: 'Add a folder of documents', properties: ['openDirectory' as const] }
  const result = window ? await dialog.showOpenDialog(window, options) : await dialog.showOpenDialog(options)
  return result.canceled ? null : (result.filePaths[0] ?? null)
}

export function buildMenu(actions: MenuActions): Menu {
  const isMac = process.platform === 'darwin'
  const focused = (): BrowserWindow | null => BrowserWindow.getFocusedWindow()
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' as const }] : []),
    {
      label: 'File',
      submenu: [
        { label: 'Add folder…', accelerator: 'CmdOrCtrl+O', click: () => void actions.addFolder(focused()) },
        { type: 'separator' },
        isMac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        ...(app.isPackaged
          ? []
          : [{ role: 'reload' as const }, { role: 'toggleDevTools' as const }, { type: 'separator' as const }]),
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    {
      role: 'help',
      submenu: [
        { label: 'About Docent', click: () => void actions.about(focused()) },
        { label: 'Open data folder', click: () => void shell.openPath(actions.dataDir) },
      ],
    },
  ]
  return Menu.buildFromTemplate(template)
}
