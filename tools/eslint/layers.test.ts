import path from 'node:path'
import { ESLint } from 'eslint'
import { describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '../..')
const eslint = new ESLint({ cwd: root })

/** The docent/layers messages for `code` as if it were the file at `file` (its imports resolve against the real tree). */
async function layerErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) })
  return result!.messages.filter((m) => m.ruleId === 'docent/layers').map((m) => m.message)
}

describe('the engine floors (docs/architecture.md, "Floors of the engine")', () => {
  it('lets a file import its own folder and the floors below it', async () => {
    expect(
      await layerErrors(
        'src/engine/answer/x.ts',
        "import { round } from '../core/numbers'\nimport { retrieveKeyword } from '../retrieve/keyword'\nimport { checkRelease } from './release'\n",
      ),
    ).toEqual([])
    expect(await layerErrors('src/engine/eval/x.ts', "import { Engine } from '../engine'\n")).toEqual([])
  })

  it('refuses an import that runs back up a floor, naming both ends and the floors', async () => {
    const [msg, ...rest] = await layerErrors('src/engine/models/x.ts', "import { checkRelease } from '../answer/release'\n")
    expect(rest).toEqual([])
    expect(msg).toContain(
      'src/engine/models/x.ts (models) may not import src/engine/answer/release.ts: that is answer, a floor above',
    )
    expect(msg).toContain(
      'core, paths.ts < store < ingest, retrieve, models < answer, watch, index-embedder.ts < engine.ts < host, eval',
    )
    expect(await layerErrors('src/engine/answer/x.ts', "import { Engine } from '../engine'\n")).toHaveLength(1)
    expect(await layerErrors('src/engine/core/x.ts', "import { sha256Hex } from '../store/ids'\n")).toHaveLength(1)
  })

  it('refuses an import between neighbours on one floor: ingest and retrieve share through core', async () => {
    const [msg] = await layerErrors('src/engine/ingest/sync/x.ts', "import { retrieveKeyword } from '../../retrieve/keyword'\n")
    expect(msg).toContain('that is its neighbour on the same floor, retrieve')
  })

  it('lets tests import across floors', async () => {
    expect(await layerErrors('src/engine/ingest/x.test.ts', "import { isHit } from '../eval/questions'\n")).toEqual([])
  })
})
