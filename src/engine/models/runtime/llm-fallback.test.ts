import { copyFile, mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Engine } from '../../engine'
import { fixtureModels, tempDir } from '../../../test-support/paths'

describe('chat model fallback', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const c of cleanups) await c()
  })

  it('when the chosen GGUF cannot load, another installed one answers and the reason is kept', async () => {
    const models = await tempDir()
    const data = await tempDir()
    cleanups.push(models.cleanup, data.cleanup)
    await mkdir(path.join(models.dir, 'llm'), { recursive: true })
    await writeFile(path.join(models.dir, 'llm', 'a-broken.gguf'), Buffer.from('GGUF this is not a model'))
    await copyFile(path.join(fixtureModels, 'llm/tiny-random-llama.gguf'), path.join(models.dir, 'llm', 'b-working.gguf'))
    await writeFile(path.join(models.dir, 'settings.json'), JSON.stringify({ llm: 'a-broken.gguf' }))
    const engine = await Engine.open({ dataDir: data.dir, modelsDir: models.dir })
    try {
      const { model, problem } = await engine.chatModel()
      expect(model).not.toBeNull()
      expect(problem).toMatch(/chosen language model could not be loaded.*using b-working\.gguf instead/)
    } finally {
      await engine.close()
    }
  })
})
