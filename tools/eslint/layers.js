// Local ESLint rules that keep the source tree and the dependency graph saying the same thing
// (docs/architecture.md, "Layers" and "Floors of the engine"): which folder may import which, and no import cycles.
import fs from 'node:fs'
import path from 'node:path'

const SRC = path.resolve(import.meta.dirname, '../../src')
const EXTS = ['.ts', '.tsx', '.d.ts', '/index.ts', '/index.tsx']

/** Allowed targets per layer; a layer may always import itself. Tests may also import test-support. */
const ALLOWED = {
  shared: [],
  engine: ['shared'],
  apps: ['engine', 'shared'],
  // Electron main talks to the engine only through the host protocol, its client and the default folders.
  main: ['shared', 'engine/host/protocol', 'engine/host/client', 'engine/paths'],
  preload: ['shared'],
  renderer: ['shared'],
  'test-support': ['*'],
}

/**
 * Floors inside the engine, lowest first. A file imports its own folder and the floors below it,
 * never a floor above nor a neighbour on its own floor (ingest and retrieve share what both need
 * through core). The unit is the first name under src/engine: a folder, or a file at its root.
 */
const ENGINE_FLOORS = [
  ['core', 'paths.ts'],
  ['store'],
  ['ingest', 'retrieve', 'models'],
  ['answer', 'watch', 'index-embedder.ts'],
  ['engine.ts'],
  ['host', 'eval'],
]
const floorOf = (unit) => ENGINE_FLOORS.findIndex((f) => f.includes(unit))
const FLOORS_TEXT = ENGINE_FLOORS.map((f) => f.join(', ')).join(' < ')

/** The engine unit of a path inside src/engine: `ingest` for engine/ingest/sync/chunk.ts, `engine.ts` for engine/engine.ts. */
function engineUnit(rel) {
  const parts = rel.split('/')
  return parts.length > 2 ? parts[1] : parts[1].replace(/\.d\.ts$/, '.ts')
}

/** Why an import inside the engine runs against its floors, or null when it keeps them. */
function floorProblem(fromRel, toRel) {
  const a = engineUnit(fromRel)
  const b = engineUnit(toRel)
  if (a === b) return null
  const fa = floorOf(a)
  const fb = floorOf(b)
  if (fa < 0) return `src/engine/${a} stands on no floor: add it to ENGINE_FLOORS in tools/eslint/layers.js and to docs/architecture.md`
  if (fb < 0) return `src/engine/${b} stands on no floor: add it to ENGINE_FLOORS in tools/eslint/layers.js and to docs/architecture.md`
  if (fb < fa) return null
  const where = fb === fa ? `its neighbour on the same floor, ${b}` : `${b}, a floor above`
  return `src/${fromRel} (${a}) may not import src/${toRel}: that is ${where}. Engine floors: ${FLOORS_TEXT}; move what both need down a floor (core), or the caller up`
}

function layerOf(abs) {
  const rel = path.relative(SRC, abs).split(path.sep).join('/')
  if (rel.startsWith('..')) return null
  return { layer: rel.split('/')[0], rel }
}

function resolveRelative(fromFile, spec) {
  const base = path.resolve(path.dirname(fromFile), spec)
  for (const e of ['', ...EXTS]) {
    const p = base + e
    if (fs.existsSync(p) && fs.statSync(p).isFile()) return p
  }
  return null
}

const isTest = (file) => /\.(test|faults\.test|testutil)\.tsx?$/.test(file)

function allowed(from, to, file) {
  if (from.layer === to.layer) return true
  if (isTest(file) && to.layer === 'test-support') return true
  const rules = ALLOWED[from.layer]
  if (!rules) return true
  const target = to.rel.replace(/\.(d\.)?tsx?$/, '').replace(/\/index$/, '')
  return rules.some((r) => r === '*' || r === to.layer || target === r || target.startsWith(r + '/'))
}

const layers = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      forbidden: '{{from}} may not import {{to}} ({{allowed}}); see docs/architecture.md',
      floor: '{{problem}} (docs/architecture.md, "Floors of the engine")',
    },
  },
  create(context) {
    const file = context.filename
    const from = layerOf(file)
    if (!from || !(from.layer in ALLOWED)) return {}
    const check = (node, spec) => {
      if (typeof spec !== 'string') return
      if (spec === 'electron' && from.layer !== 'main' && from.layer !== 'preload') {
        context.report({ node, messageId: 'forbidden', data: { from: from.layer, to: 'electron', allowed: 'only src/main and src/preload load Electron' } })
        return
      }
      if (!spec.startsWith('.')) return
      const target = resolveRelative(file, spec)
      const to = target && layerOf(target)
      if (!to) return
      // Tests may import across floors: they set up what they check from any side.
      if (from.layer === 'engine' && to.layer === 'engine' && !isTest(file)) {
        const problem = floorProblem(from.rel, to.rel)
        if (problem) context.report({ node, messageId: 'floor', data: { problem } })
        return
      }
      if (allowed(from, to, file)) return
      const list = ALLOWED[from.layer]
      context.report({ node, messageId: 'forbidden', data: { from: `src/${from.layer}`, to: `src/${to.rel}`, allowed: list.length ? `allowed: ${list.join(', ')}` : 'it imports nothing else' } })
    }
    return {
      ImportDeclaration: (n) => check(n, n.source.value),
      ExportNamedDeclaration: (n) => n.source && check(n, n.source.value),
      ExportAllDeclaration: (n) => check(n, n.source.value),
      ImportExpression: (n) => n.source.type === 'Literal' && check(n, n.source.value),
    }
  },
}

// The whole graph is read once per lint run: a cycle is a property of all files, not of one.
let cycleMembers = null
function importsOf(file) {
  const text = fs.readFileSync(file, 'utf8')
  const out = []
  for (const m of text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]/gm)) {
    const line = m[0]
    // Type-only imports vanish at run time but still tangle the design, so they count too.
    const target = resolveRelative(file, m[1])
    if (target) out.push({ target, line })
  }
  return out
}
function walk(dir, acc) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) walk(p, acc)
    else if (/\.tsx?$/.test(e.name) && !isTest(e.name)) acc.push(p)
  }
  return acc
}
function computeCycles() {
  const files = walk(SRC, [])
  const graph = new Map(files.map((f) => [f, importsOf(f).map((i) => i.target).filter((t) => !isTest(t))]))
  // Tarjan's strongly connected components.
  let index = 0
  const idx = new Map(), low = new Map(), stack = [], on = new Set(), members = new Map()
  const strong = (v) => {
    idx.set(v, index); low.set(v, index); index++; stack.push(v); on.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) { strong(w); low.set(v, Math.min(low.get(v), low.get(w))) }
      else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)))
    }
    if (low.get(v) === idx.get(v)) {
      const comp = []
      let w
      do { w = stack.pop(); on.delete(w); comp.push(w) } while (w !== v)
      if (comp.length > 1) for (const c of comp) members.set(c, comp)
    }
  }
  for (const f of files) if (!idx.has(f)) strong(f)
  return members
}

const noCycle = {
  meta: { type: 'problem', schema: [], messages: { cycle: 'import cycle: {{files}}' } },
  create(context) {
    cycleMembers ??= computeCycles()
    const comp = cycleMembers.get(context.filename)
    return {
      Program(node) {
        if (comp) context.report({ node, messageId: 'cycle', data: { files: comp.map((f) => path.relative(SRC, f)).sort().join(' <-> ') } })
      },
    }
  },
}

export default { rules: { layers, 'no-cycle': noCycle } }
