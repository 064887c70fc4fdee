import type { Dispatcher } from 'undici'

/**
 * How model downloads reach the network. Node's global `fetch` ignores proxies, so:
 * - in the app's engine (an Electron utility process) downloads use Electron's `net.fetch`, Chromium's
 *   network stack, which follows the system's proxy settings (PAC, WPAD, per-platform settings);
 * - in plain Node (the CLI, tests) they honour HTTPS_PROXY / HTTP_PROXY / NO_PROXY (lower-case
 *   first, as curl reads them) through undici's EnvHttpProxyAgent, loaded only when a proxy is set;
 * - otherwise they use the global `fetch`, looked up at each call (tests replace it).
 * The engine never loads Electron itself: the caller that knows it runs inside Electron passes a
 * loader for Electron's `net` (src/apps/engine-host.ts).
 */

/** The one request shape downloads make: a GET with headers, cancellable, following redirects. */
export interface DownloadRequest {
  headers?: Record<string, string>
  signal?: AbortSignal
  redirect?: 'follow'
}

/** What the downloader needs of a fetch; the global `fetch` and Electron's `net.fetch` both fit. */
export type DownloadFetch = (url: string, init?: DownloadRequest) => Promise<Response>

export interface ProxySettings {
  /** Proxy URL for http:// targets ('' = none). */
  httpProxy: string
  /** Proxy URL for https:// targets ('' = none; falls back to httpProxy, as undici and curl do). */
  httpsProxy: string
  /** Comma- or space-separated hosts (optionally :port, leading '.' or '*.') reached directly; '*' = all. */
  noProxy: string
}

export type DownloadRoute = 'electron-net' | 'env-proxy' | 'direct'

// An empty variable counts as unset, so `http_proxy=` does not hide HTTP_PROXY.
const pick = (env: NodeJS.ProcessEnv, name: string): string =>
  (env[name.toLowerCase()]?.trim() || env[name.toUpperCase()]?.trim()) ?? ''

/** The proxy variables of an environment, or null when no proxy is set (NO_PROXY alone changes nothing). */
export function proxySettingsFromEnv(env: NodeJS.ProcessEnv): ProxySettings | null {
  const httpProxy = pick(env, 'http_proxy')
  const httpsProxy = pick(env, 'https_proxy') || httpProxy
  if (!httpProxy && !httpsProxy) return null
  return { httpProxy, httpsProxy, noProxy: pick(env, 'no_proxy') }
}

interface ProxyRoute {
  dispatcher: Dispatcher
  fetch: typeof import('undici').fetch
}

// One agent per proxy configuration for the life of the process, so connections to the proxy are reused.
const agents = new Map<string, Promise<ProxyRoute>>()

function proxyAgent(settings: ProxySettings): Promise<ProxyRoute> {
  const key = JSON.stringify(settings)
  let agent = agents.get(key)
  if (!agent) {
    // Loaded lazily: only a process with a proxy configured pays for undici. undici's own fetch is used
    // with its agent, because a dispatcher from another undici copy than Node's built-in fetch is not
    // guaranteed to speak the same handler protocol.
    agent = import('undici')
      .catch((err: unknown) => {
        // undici is not a declared dependency of the app (docs/adr/0003-default-models.md): say so plainly.
        const why = err instanceof Error ? err.message : String(err)
        throw new Error(
          `A proxy is set (HTTP(S)_PROXY), but the undici package that routes downloads through it is missing: ${why}`,
        )
      })
      .then((undici) => ({
        // Explicit values (never undefined), so the agent reads this environment, not process.env again.
        dispatcher: new undici.EnvHttpProxyAgent(settings),
        fetch: undici.fetch,
      }))
    agents.set(key, agent)
    agent.catch(() => agents.delete(key))
  }
  return agent
}

/** A fetch that goes through the proxy an environment names (see proxySettingsFromEnv), or directly. */
export function envProxyFetch(env: NodeJS.ProcessEnv = process.env): DownloadFetch {
  const settings = proxySettingsFromEnv(env)
  if (settings === null) return (url, init) => globalThis.fetch(url, init)
  return async (url, init) => {
    const { dispatcher, fetch } = await proxyAgent(settings)
    return fetch(url, { headers: init?.headers, signal: init?.signal, redirect: init?.redirect, dispatcher })
  }
}

/** What the process knows about itself; facts, so the choice below can be tested without Electron. */
export interface RuntimeFacts {
  /** `process.versions.electron`: set in every Electron process. */
  electronVersion: string | undefined
  /** Electron's `process.type` ('browser', 'renderer', 'utility', ...); undefined in Node. */
  processType: unknown
  /** Loads Electron's `net` module; called only inside an Electron utility process. */
  loadElectronNet: () => { fetch: DownloadFetch }
}

/**
 * The fetch model downloads use in this process. Electron's `net` is exposed to utility processes (it
 * is in Electron's Utility API), where the engine runs in the app; in any other Electron process the
 * engine does not run, so the environment route is used there too.
 */
export function chooseDownloadFetch(
  runtime: RuntimeFacts,
  env: NodeJS.ProcessEnv = process.env,
): { route: DownloadRoute; fetch: DownloadFetch } {
  if (runtime.electronVersion && runtime.processType === 'utility') {
    const net = runtime.loadElectronNet()
    return { route: 'electron-net', fetch: (url, init) => net.fetch(url, init) }
  }
  return { route: proxySettingsFromEnv(env) ? 'env-proxy' : 'direct', fetch: envProxyFetch(env) }
}
