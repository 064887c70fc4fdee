/**
 * Security decisions of the main process as pure functions (no Electron imports), so each is unit
 * tested: which frames may call the engine, where the window may navigate, which links may leave
 * the app, and the Content-Security-Policy of every response.
 */

/** Production CSP: scripts only from the app bundle, no remote anything, no plugins, no frames. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-src 'none'",
  "worker-src 'self' blob:",
].join('; ')

/**
 * The dev server (electron-vite dev) needs an inline React-refresh preamble and a websocket for hot
 * reload; this relaxation applies only when the renderer is loaded from the dev server URL.
 */
export function contentSecurityPolicy(devServerUrl: string | null): string {
  if (!devServerUrl) return CONTENT_SECURITY_POLICY
  const origin = new URL(devServerUrl)
  const ws = `ws://${origin.host}`
  return CONTENT_SECURITY_POLICY.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'").replace(
    "connect-src 'self'",
    `connect-src 'self' ${ws}`,
  )
}

function parse(url: string | null | undefined): URL | null {
  if (!url) return null
  try {
    return new URL(url)
  } catch {
    return null
  }
}

/**
 * True when `frameUrl` is the app's own renderer page: the built index.html (file://, exact path,
 * any query or hash) or, in development, a page of the dev server's origin. Everything else — other
 * files, other origins, about:blank, data: and blob: documents — is foreign.
 */
export function isAppRendererUrl(frameUrl: string | null | undefined, appUrl: string): boolean {
  const frame = parse(frameUrl)
  const app = parse(appUrl)
  if (!frame || !app) return false
  if (app.protocol === 'file:') {
    return (
      frame.protocol === 'file:' &&
      frame.host === app.host &&
      decodeURIComponent(frame.pathname) === decodeURIComponent(app.pathname)
    )
  }
  if (app.protocol === 'http:' || app.protocol === 'https:') return frame.origin === app.origin
  return false
}

/** An http(s) URL that may be offered to the system browser (after the person confirms); null otherwise. */
export function externalLinkTarget(url: string): string | null {
  const u = parse(url)
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) return null
  if (u.username || u.password) return null
  return u.href
}

export type NavigationDecision = { action: 'allow' } | { action: 'deny' } | { action: 'external'; url: string }

/**
 * What to do when the window is about to navigate (`will-navigate`, `will-redirect`). The renderer
 * is a single page: it may only reload itself. A clicked web link is offered to the system browser;
 * every other target (other files, javascript:, data:, custom schemes) is refused.
 */
export function decideNavigation(targetUrl: string, appUrl: string): NavigationDecision {
  if (isAppRendererUrl(targetUrl, appUrl)) {
    const target = parse(targetUrl)
    const app = parse(appUrl)
    // The dev server origin serves more than the app page (source files, @vite/...): only the page itself.
    if (target && app && (app.protocol === 'file:' || target.pathname === app.pathname)) return { action: 'allow' }
    return { action: 'deny' }
  }
  const external = externalLinkTarget(targetUrl)
  return external ? { action: 'external', url: external } : { action: 'deny' }
}
