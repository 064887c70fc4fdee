import path from 'node:path'
import type { SpawnEngine } from '../engine/host/client'
import { nodeEngineSpawner } from '../engine/host/node-spawner'
import { repoRoot } from './paths'

/** The real engine host (src/apps/engine-host.ts) as a Node child with these arguments and this environment. */
export function engineHostSpawner(args: string[], env: NodeJS.ProcessEnv): SpawnEngine {
  return nodeEngineSpawner(path.join(repoRoot, 'src/apps/engine-host.ts'), args, { execArgv: ['--import', 'tsx'], env })
}
