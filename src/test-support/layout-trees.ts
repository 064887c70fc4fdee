import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { VersionLayouts } from '../engine/ingest/version-layouts'
import { detectKind, detectVersion } from '../engine/ingest/versions'
import { tempDir } from './paths'

/**
 * Documentation trees on disk for the version-layout tests: real files (and real folder links,
 * as mike and typedoc-plugin-versions make them) in a temporary folder, and the verdict the import
 * gives each path.
 */
export class LayoutTrees {
  private readonly cleanups: (() => Promise<void>)[] = []

  /** Writes `files` (relative path -> text) and `links` (relative path -> link target, as written). */
  async tree(files: Record<string, string>, links: Record<string, string> = {}): Promise<string> {
    const t = await tempDir('docent-layout-')
    this.cleanups.push(t.cleanup)
    for (const [rel, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(t.dir, rel)), { recursive: true })
      await writeFile(path.join(t.dir, rel), text)
    }
    for (const [rel, target] of Object.entries(links)) {
      await mkdir(path.dirname(path.join(t.dir, rel)), { recursive: true })
      await symlink(target, path.join(t.dir, rel))
    }
    return realpath(t.dir)
  }

  async cleanup(): Promise<void> {
    for (const c of this.cleanups.splice(0)) await c()
  }
}

export type Row = [version: string | null, kind: string | null, skip?: string]

/** Version, source kind and skip reason of each path, as the import decides them (front matter empty). */
export async function verdicts(root: string, paths: string[]): Promise<Record<string, Row>> {
  const layouts = new VersionLayouts(root)
  const out: Record<string, Row> = {}
  for (const p of paths) {
    const v = await layouts.verdict(p)
    const row: Row = [detectVersion(p, {}, v), detectKind(p, undefined, v.base)]
    if (v.skip) row.push(v.skip)
    out[p] = row
  }
  return out
}

/** The paths of a fixture that are pages (what the walk would hand the import), in order. */
export function pages(files: Record<string, string>): string[] {
  return Object.keys(files).filter((p) => /\.(md|mdx|html|adoc|rst)$/.test(p))
}
