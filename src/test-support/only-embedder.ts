import { mkdir, symlink } from 'node:fs/promises'
import path from 'node:path'

/** A models folder under `root` holding only `dir` as its embedder, so the engine has no choice to make. */
export async function onlyEmbedder(dir: string, root: string): Promise<string> {
  const models = path.join(root, 'models-' + path.basename(dir))
  await mkdir(path.join(models, 'embedding'), { recursive: true })
  await symlink(dir, path.join(models, 'embedding', path.basename(dir)))
  return models
}
