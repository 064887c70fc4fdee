import { BrowserWindow, dialog, shell, type Session, type WebContents } from 'electron'
import { contentSecurityPolicy, decideNavigation, externalLinkTarget } from './security'

/**
 * The window and its hardening: sandboxed renderer, no Node, context isolation, a strict CSP on
 * every response, no navigation away from the app page, no new windows, no permissions, no remote
 * requests. Web links leave for the system browser only after the person confirms.
 */

export interface WindowConfig {
  /** The renderer page: the built index.html as a file:// URL, or the dev server URL. */
  appUrl: string
  devServerUrl: string | null
  preloadPath: string
}

async function offerExternal(contents: WebContents, url: string): Promise<void> {
  const target = externalLinkTarget(url)
  if (!target) return
  const owner = BrowserWindow.fromWebContents(contents)
  const options = {
    type: 'question' as const,
    buttons: ['Open in browser', 'Cancel'],
    defaultId: 1,
    cancelId: 1,
    message: 'Open this link in your web browser?',
    detail: target,
  }
  const { response } = owner ? await dialog.showMessageBox(owner, options) : await dialog.showMessageBox(options)
  if (response === 0) await shell.openExternal(target)
}

/** Applies to every web contents the app creates (windows, devtools, anything a bug might open). */
export function hardenWebContents(contents: WebContents, config: WindowConfig): void {
  contents.on('will-attach-webview', (event) => event.preventDefault())
  // will-navigate: the main frame (links, location changes). A web link is offered to the browser.
  contents.on('will-navigate', (event) => {
    const decision = decideNavigation(event.url, config.appUrl)
    if (decision.action === 'allow') return
    event.preventDefault()
    if (decision.action === 'external') void offerExternal(contents, decision.url)
  })
  // Subframes (the CSP already forbids them) and redirects never leave the app page.
  contents.on('will-frame-navigate', (event) => {
    if (!event.isMainFrame) event.preventDefault()
  })
  contents.on('will-redirect', (event) => {
    if (decideNavigation(event.url, config.appUrl).action !== 'allow') event.preventDefault()
  })
  contents.setWindowOpenHandler(({ url }) => {
    void offerExternal(contents, url)
    return { action: 'deny' }
  })
}

export function hardenSession(ses: Session, config: WindowConfig): void {
  const csp = contentSecurityPolicy(config.devServerUrl)
  ses.webRequest.onHeadersReceived((details, callback) => {
    const headers = { ...details.responseHeaders }
    for (const key of Object.keys(headers)) if (key.toLowerCase() === 'content-security-policy') delete headers[key]
    callback({ responseHeaders: { ...headers, 'Content-Security-Policy': [csp] } })
  })
  // No remote content: the only network origin the renderer may reach is the dev server in development.
  const devOrigin = config.devServerUrl ? new URL(config.devServerUrl).host : null
  ses.webRequest.onBeforeRequest({ urls: ['http://*/*', 'https://*/*', 'ws://*/*', 'wss://*/*'] }, (details, callback) => {
    let host: string | null = null
    try {
      host = new URL(details.url).host
    } catch {
      // unparsable: refused below
    }
    callback({ cancel: !(devOrigin && host === devOrigin) })
  })
  ses.setPermissionRequestHandler((_contents, _permission, callback) => callback(false))
  ses.setPermissionCheckHandler(() => false)
  ses.setDevicePermissionHandler(() => false)
}

export function createMainWindow(config: WindowConfig): BrowserWindow {
  const win = new BrowserWindow({
    width: 1280,
    height: 820,
    minWidth: 880,
    minHeight: 560,
    show: false,
    title: 'Docent',
    webPreferences: {
      preload: config.preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
    },
  })
  win.once('ready-to-show', () => win.show())
  void win.loadURL(config.appUrl)
  return win
}
