import os from 'node:os'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { repoRoot } from '../../src/test-support/paths'
import { formatTable } from '../../src/apps/cli/table'

/** The machine a benchmark ran on, printed above every table and stored in every report. */
export function machine(): Record<string, string | number> {
  const cpus = os.cpus()
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${os.release()}`,
    load_avg_1m: Math.round(os.loadavg()[0]! * 100) / 100,
    date: new Date().toISOString(),
  }
}

export function printMachine(): void {
  const m = machine()
  process.stdout.write(
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memory_gb} GB, Node ${m.node}, ${m.platform}, load ${m.load_avg_1m}\n\n`,
  )
}

export function printTable(title: string, headers: string[], rows: (string | number | null)[][]): void {
  process.stdout.write(`${title}\n${formatTable(headers, rows)}\n\n`)
}

export async function writeReport(name: string, data: unknown): Promise<string> {
  const dir = path.join(repoRoot, 'evals/reports')
  await mkdir(dir, { recursive: true })
  const file = path.join(dir, `bench-${name}.json`)
  await writeFile(file, JSON.stringify({ machine: machine(), ...(data as object) }, null, 2) + '\n')
  return file
}

export function pct(values: number[], p: number): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

export const r1 = (x: number) => Math.round(x * 10) / 10
export const r3 = (x: number) => Math.round(x * 1000) / 1000

/** Samples the process's resident memory until stopped; returns the peak in MB. */
export function peakMemory(intervalMs = 50): { stop: () => number } {
  let peak = process.memoryUsage.rss()
  const t = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), intervalMs)
  return {
    stop: () => {
      clearInterval(t)
      return Math.round(Math.max(peak, process.memoryUsage.rss()) / 2 ** 20)
    },
  }
}

/** Bytes of all files below `dir` (hidden entries skipped when asked). */
export async function dirBytes(dir: string, skipHidden = false): Promise<number> {
  const { readdir, stat } = await import('node:fs/promises')
  let total = 0
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (skipHidden && e.name.startsWith('.')) continue
      const p = path.join(d, e.name)
      if (e.isDirectory()) await walk(p)
      else total += (await stat(p)).size
    }
  }
  await walk(dir)
  return total
}

export async function dirSizeMb(dir: string): Promise<number> {
  return r1((await dirBytes(dir)) / 2 ** 20)
}
