import { existsSync } from 'node:fs'
import { tryAcquireLock } from './lock'

/**
 * One contender in lock.test.ts's race: says it is ready, waits for the go file to appear, tries
 * to take the lock of the folder given, prints whether it won, holds a won lock for a while, then
 * releases it.
 */
const [dataDir, goFile, holdMs] = process.argv.slice(2)
process.stdout.write('ready\n')
while (!existsSync(goFile!)) {
  // Spin rather than sleep: every contender should reach the lock within the same few milliseconds.
}
const got = tryAcquireLock(dataDir!, { role: 'cli', socket: null })
const won = 'release' in got
process.stdout.write(JSON.stringify({ pid: process.pid, won }) + '\n')
setTimeout(() => {
  if (won) got.release()
}, Number(holdMs))
