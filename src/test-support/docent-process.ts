import { execFile, spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { repoRoot } from './paths'

/**
 * Real `docent` processes for the tests of one library shared by many clients: a command that runs
 * to its end, a long-running one (watch) whose output can be waited on, and the MCP server behind
 * the SDK's own client.
 */

export const CLI = path.join(repoRoot, 'src/apps/cli/main.ts')
const TSX = ['--import', 'tsx']

export interface Ran {
  code: number
  stdout: string
  stderr: string
}

/** Runs `docent <args>` to its end. */
export function docent(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...TSX, CLI, ...args],
      { cwd: repoRoot, env: { ...process.env, ...env }, maxBuffer: 64 * 2 ** 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0
        resolve({ code, stdout, stderr })
      },
    )
  })
}

export interface Running {
  child: ChildProcess
  readonly pid: number
  stdout: () => string
  stderr: () => string
  /** Resolves when stdout or stderr (so far or later) matches. */
  waitForOutput: (re: RegExp, timeoutMs?: number) => Promise<void>
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Starts a long-running `docent <args>` (watch, a slow ingest). */
export function startDocent(args: string[], env: NodeJS.ProcessEnv = {}): Running {
  const child = spawn(process.execPath, [...TSX, CLI, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  const waiters: (() => void)[] = []
  const poke = () => {
    for (const w of waiters.splice(0)) w()
  }
  child.stdout!.on('data', (d: Buffer) => ((out += d.toString()), poke()))
  child.stderr!.on('data', (d: Buffer) => ((err += d.toString()), poke()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => (poke(), resolve({ code, signal }))),
  )
  const waitForOutput = (re: RegExp, timeoutMs = 120_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no ${re} in the output of docent ${args[0]}:\n${out}\n${err}`)),
        timeoutMs,
      )
      const check = () => {
        if (re.test(out) || re.test(err)) {
          clearTimeout(timer)
          resolve()
        } else if (child.exitCode !== null || child.signalCode !== null) {
          clearTimeout(timer)
          reject(new Error(`docent ${args[0]} exited before printing ${re}:\n${out}\n${err}`))
        } else waiters.push(check)
      }
      check()
    })
  return { child, pid: child.pid!, stdout: () => out, stderr: () => err, waitForOutput, exited }
}

export interface McpProcess {
  client: Client
  readonly pid: number
  stderr: () => string
  /** Resolves with the match once stderr (so far or later) matches. */
  waitForStderr: (re: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>
  call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>
  close: () => Promise<void>
}

/** `docent mcp` over stdio, driven by the SDK's Client (which checks structuredContent against each output schema). */
export async function startMcp(data: string, models: string, extra: string[] = []): Promise<McpProcess> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...TSX, CLI, 'mcp', '--data', data, '--models', models, ...extra],
    cwd: repoRoot,
    stderr: 'pipe',
  })
  let stderr = ''
  const waiters: (() => void)[] = []
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString()
    for (const w of waiters.splice(0)) w()
  })
  const waitForStderr = (re: RegExp, timeoutMs = 120_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${re} on docent mcp's stderr:\n${stderr}`)), timeoutMs)
      const check = () => {
        const m = stderr.match(re)
        if (m) {
          clearTimeout(timer)
          resolve(m)
        } else waiters.push(check)
      }
      check()
    })
  const client = new Client({ name: 'docent-test', version: '1.0.0' })
  await client.connect(transport)
  const pid = transport.pid
  if (pid === null) throw new Error('docent mcp did not start')
  return {
    client,
    pid,
    stderr: () => stderr,
    waitForStderr,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 300_000 })) as CallToolResult,
    close: () => client.close(),
  }
}

export const toolText = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')
