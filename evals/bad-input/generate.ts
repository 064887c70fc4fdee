import path from 'node:path'
import { writeBadInputCorpus } from '../../src/test-support/bad-input'

// Writes the bad-input corpus used by the fault suite into a folder, to try it by hand in the app.
const dir = process.argv[2]
if (!dir) throw new Error('usage: tsx evals/bad-input/generate.ts <folder>')
void writeBadInputCorpus(path.resolve(dir)).then((items) => console.log(`wrote ${items.length} inputs to ${dir}`))
