import { describe, expect, it } from 'vitest'
import {
  CONTENT_SECURITY_POLICY,
  contentSecurityPolicy,
  decideNavigation,
  externalLinkTarget,
  isAppRendererUrl,
} from './security'

const PROD = 'file:///opt/Docent/resources/app.asar/out/renderer/index.html'
const DEV = 'http://localhost:5173/'

describe('navigation', () => {
  it('blocks every navigation away from the app page', () => {
    for (const target of [
      'file:///etc/passwd',
      'file:///opt/Docent/resources/app.asar/out/renderer/other.html',
      'javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'about:blank',
      'docent://whatever',
      'chrome://settings',
      'ftp://example.com/x',
      'mailto:someone@example.com',
      'not a url',
    ]) {
      expect(decideNavigation(target, PROD), target).toEqual({ action: 'deny' })
    }
  })

  it('sends web links to the system browser (after confirmation), never into the window', () => {
    expect(decideNavigation('https://modelcontextprotocol.io/docs', PROD)).toEqual({
      action: 'external',
      url: 'https://modelcontextprotocol.io/docs',
    })
    expect(decideNavigation('http://example.com/', PROD)).toEqual({ action: 'external', url: 'http://example.com/' })
    // Credentials in a link are a phishing trick: refused outright.
    expect(decideNavigation('https://user:pw@example.com/', PROD)).toEqual({ action: 'deny' })
  })

  it('lets the app page reload itself, and in development only the dev server page', () => {
    expect(decideNavigation(PROD + '#/library', PROD)).toEqual({ action: 'allow' })
    expect(decideNavigation('http://localhost:5173/', DEV)).toEqual({ action: 'allow' })
    expect(decideNavigation('http://localhost:5173/@fs/etc/passwd', DEV)).toEqual({ action: 'deny' })
    expect(decideNavigation('http://localhost:5174/', DEV)).toEqual({ action: 'external', url: 'http://localhost:5174/' })
  })

  it('offers only http(s) links outside', () => {
    expect(externalLinkTarget('https://a.example/')).toBe('https://a.example/')
    expect(externalLinkTarget('file:///etc/passwd')).toBeNull()
    expect(externalLinkTarget('javascript:alert(1)')).toBeNull()
    expect(externalLinkTarget('smb://host/share')).toBeNull()
  })
})

describe('sender check', () => {
  it('accepts only the app renderer page', () => {
    expect(isAppRendererUrl(PROD, PROD)).toBe(true)
    expect(isAppRendererUrl(PROD + '?x=1#/chat', PROD)).toBe(true)
    expect(isAppRendererUrl('http://localhost:5173/', DEV)).toBe(true)
  })

  it('rejects foreign origins and documents', () => {
    for (const foreign of [
      'https://evil.example/',
      'http://localhost:5174/',
      'file:///tmp/evil.html',
      'file:///opt/Docent/resources/app.asar/out/renderer/index.html.evil',
      'file://remote-host/opt/Docent/resources/app.asar/out/renderer/index.html',
      'about:blank',
      'data:text/html,hi',
      'blob:file:///1234',
      '',
      null,
      undefined,
    ]) {
      expect(isAppRendererUrl(foreign, PROD), String(foreign)).toBe(false)
    }
    expect(isAppRendererUrl('https://localhost:5173/', DEV)).toBe(false)
    expect(isAppRendererUrl(PROD, DEV)).toBe(false)
  })
})

describe('content security policy', () => {
  it('allows scripts only from the app, and nothing remote', () => {
    expect(CONTENT_SECURITY_POLICY).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-src 'none'; worker-src 'self' blob:",
    )
    expect(contentSecurityPolicy(null)).toBe(CONTENT_SECURITY_POLICY)
  })

  it('relaxes only for the dev server, and only towards it', () => {
    const dev = contentSecurityPolicy(DEV)
    expect(dev).toContain("script-src 'self' 'unsafe-inline'")
    expect(dev).toContain("connect-src 'self' ws://localhost:5173")
    expect(dev).toContain("object-src 'none'")
  })
})
