#!/usr/bin/env tsx
/**
 * The hostile-folder corpus (issue 26): the test files of the parsers behind the formats Docent
 * reads, fetched from the package registries by exact version and SHA-256, never hand-made and
 * never committed. Each source is one pinned package; its files are copied as they are, under a
 * folder named after it.
 *
 *   npx tsx evals/hostile/fetch.ts [DIR]      # default .hostile: DIR/corpus, DIR/manifest.json, archives in DIR/archives
 *
 * Uses `npm pack` and `python3 -m pip download` (the registries' own clients; pip prepares each
 * sdist's metadata, which fetches its build backend from PyPI too). Run again, it only checks what
 * is there: the corpus is rebuilt when the pins in this file change.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { promisify } from 'node:util'

const exec = promisify(execFile)

export interface Source {
  /** The folder of the corpus its files go into. */
  id: string
  registry: 'npm' | 'pypi'
  name: string
  version: string
  /** The archive's file name, as the client saves it. */
  archive: string
  sha256: string
  /** What is taken, in words (docs/benchmarks.md lists it). */
  what: string
  /** Copies the files taken from the unpacked archive (its top folder) into `out`; returns how many. */
  take: (unpacked: string, out: string) => Promise<number>
}

/** Every file under `dir`, relative, sorted. */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.relative(dir, path.join(e.parentPath, e.name)))
  }
  return out.sort()
}

/** Copies the folders `from` (relative to `root`) whole into `out/<as>`. */
async function copyFolders(root: string, out: string, folders: { from: string; as: string }[]): Promise<number> {
  let n = 0
  for (const f of folders) {
    await cp(path.join(root, f.from), path.join(out, f.as), { recursive: true })
    n += (await filesUnder(path.join(out, f.as))).length
  }
  return n
}

/** Copies the files under `from` whose relative path matches `pattern` into `out`, keeping their folders. */
async function copyMatching(from: string, out: string, pattern: RegExp): Promise<number> {
  let n = 0
  for (const f of await filesUnder(from)) {
    if (!pattern.test(f)) continue
    await mkdir(path.dirname(path.join(out, f)), { recursive: true })
    await cp(path.join(from, f), path.join(out, f))
    n++
  }
  return n
}

/**
 * OCRmyPDF's test PDFs that are hostile to a reader (sizes, colour spaces, fonts, structure). Its
 * ordinary scans (skewed, rotated, multi-column) are left out: recognising them costs minutes on
 * two cores and tests recognition, which evals/parsers/ocr-scans measures, not survival.
 */
const OCRMYPDF_HOSTILE =
  /^(hugemono|enormous|multipage|2400dpi|jbig2_baddevicen|type3_font_nomapping|truetype_font_nomapping|docinfo_latin1_key|missing_docinfo|no_contents|negzero|livecycle|invalid|trivial|blank|aspect|kcs|formxobject|overlay|vector|toc|link|tagged)\.pdf$/

interface SpecExample {
  markdown: string
  html: string
  section: string
  number: number
}

/** The spec's examples as the package itself extracts them; "→" marks a tab, as in the spec's own test runner. */
function specExamples(unpacked: string): SpecExample[] {
  const spec = createRequire(path.join(unpacked, 'index.js'))('./index.js') as { tests: SpecExample[] }
  return spec.tests.map((t) => ({ ...t, markdown: t.markdown.replace(/→/g, '\t'), html: t.html.replace(/→/g, '\t') }))
}

export const SOURCES: Source[] = [
  {
    id: 'commonmark-spec',
    registry: 'npm',
    name: 'commonmark-spec',
    version: '0.31.2',
    archive: 'commonmark-spec-0.31.2.tgz',
    sha256: '588280df96c211f7ce9db0b7943ded34ac4b8ba321e2fdf9c03d188ec0f01fea',
    what: 'the spec source (spec.txt, as .md and .txt) and each of its examples: the Markdown (.md) and the expected HTML (.html)',
    async take(unpacked, out) {
      await mkdir(path.join(out, 'examples'), { recursive: true })
      await cp(path.join(unpacked, 'spec.txt'), path.join(out, 'spec.md'))
      await cp(path.join(unpacked, 'spec.txt'), path.join(out, 'spec.txt'))
      const examples = specExamples(unpacked)
      for (const e of examples) {
        const base = path.join(out, 'examples', `example-${String(e.number).padStart(3, '0')}`)
        await writeFile(`${base}.md`, e.markdown)
        await writeFile(`${base}.html`, e.html)
      }
      return 2 + examples.length * 2
    },
  },
  {
    id: 'mammoth',
    registry: 'npm',
    name: 'mammoth',
    version: '1.13.0',
    archive: 'mammoth-1.13.0.tgz',
    sha256: 'fe778792e43b06dbbff93d20e22951fe1bc55a05eb04ec823961e8639c62260b',
    what: 'its test documents (test/test-data: DOCX files, and the zips, XML and images beside them)',
    take: (unpacked, out) => copyFolders(unpacked, out, [{ from: 'test/test-data', as: 'test-data' }]),
  },
  {
    id: 'pypdf',
    registry: 'pypi',
    name: 'pypdf',
    version: '7.1.0',
    archive: 'pypdf-7.1.0.tar.gz',
    sha256: 'ca3fa902369e98a6d2cb7b56396de902b72ef9bb3c1e8706c1bfc7d8bd0cf0d7',
    what: 'its test resources (resources/: PDFs, encrypted, damaged, forms, scans, font samplers, and the text files beside them)',
    take: (unpacked, out) => copyFolders(unpacked, out, [{ from: 'resources', as: 'resources' }]),
  },
  {
    id: 'ocrmypdf',
    registry: 'pypi',
    name: 'ocrmypdf',
    version: '17.13.0',
    archive: 'ocrmypdf-17.13.0.tar.gz',
    sha256: '151c35d810eb628fbc5cb9bbe80b834ecf094737efa0e7a2e9e1fac3c730ed49',
    what: 'the hostile ones of its test PDFs (tests/resources: a 35,000 x 35,000 pixel page, 9,000 x 9,000 RGB images, a 2,400 dpi page, JBIG2 in a broken DeviceN colour space, Type 3 and TrueType fonts without a character map, a Latin-1 Info key, no /Contents, negative zeros, a LiveCycle form, an invalid file; its ordinary scans are measured by evals/parsers/ocr-scans instead)',
    take: (unpacked, out) => copyMatching(path.join(unpacked, 'tests/resources'), out, OCRMYPDF_HOSTILE),
  },
  {
    id: 'pikepdf',
    registry: 'pypi',
    name: 'pikepdf',
    version: '10.18.0',
    archive: 'pikepdf-10.18.0.tar.gz',
    sha256: 'cb555ebff93482e8a6eb55881488b469bbb2b5675161c1b93a0510a8642d98d0',
    what: 'its test PDFs (tests/resources and tests/resources/fuzz, and its fuzzer corpus: JPEG 2000, JBIG2 with globals, CCITT, RLE, inline and palette images, cyclic outlines, content-stream errors, a fuzzer-found file, encrypted files, forms; not its pdfa/ copies of OCRmyPDF files)',
    async take(unpacked, out) {
      const n = await copyMatching(path.join(unpacked, 'tests/resources'), path.join(out, 'resources'), /^(fuzz\/)?[^/]+\.pdf$/i)
      return n + (await copyMatching(path.join(unpacked, 'fuzzing/corpus'), path.join(out, 'fuzzing'), /\.pdf$/i))
    },
  },
  {
    id: 'python-docx',
    registry: 'pypi',
    name: 'python-docx',
    version: '1.2.0',
    archive: 'python_docx-1.2.0.tar.gz',
    sha256: '7bc9d7b7d8a69c9c02ca09216118c86552704edc23bac179283f2e38f86220ce',
    what: 'its test documents (tests/test_files and features/steps/test_files)',
    take: (unpacked, out) =>
      copyFolders(unpacked, out, [
        { from: 'tests/test_files', as: 'tests' },
        { from: 'features/steps/test_files', as: 'features' },
      ]),
  },
  {
    id: 'beautifulsoup4',
    registry: 'pypi',
    name: 'beautifulsoup4',
    version: '4.15.0',
    archive: 'beautifulsoup4-4.15.0.tar.gz',
    sha256: '288e3ca7d54b06f2ac191970bc275c1939cb46d450b255bf6718b04aa37ab4f7',
    what: 'the HTML inputs its fuzzer found crashes with (bs4/tests/fuzz, named .html), and its documentation in seven languages (HTML, reStructuredText)',
    async take(unpacked, out) {
      await mkdir(path.join(out, 'fuzz'), { recursive: true })
      let n = 0
      for (const f of await filesUnder(path.join(unpacked, 'bs4/tests/fuzz'))) {
        await cp(path.join(unpacked, 'bs4/tests/fuzz', f), path.join(out, 'fuzz', f.replace(/\.testcase$/, '.html')))
        n++
      }
      for (const f of await filesUnder(unpacked)) {
        if (!/^doc[^/]*\/.*\.(html|rst)$/.test(f) && f !== 'README.md' && f !== 'NEWS.txt') continue
        await mkdir(path.dirname(path.join(out, 'doc', f)), { recursive: true })
        await cp(path.join(unpacked, f), path.join(out, 'doc', f))
        n++
      }
      return n
    },
  },
]

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

/** The archive of a source in `archives`, fetched with the registry's client unless there with the right hash. */
async function fetchArchive(s: Source, archives: string): Promise<string> {
  const file = path.join(archives, s.archive)
  if (existsSync(file) && sha256(await readFile(file)) === s.sha256) return file
  await mkdir(archives, { recursive: true })
  await rm(file, { force: true })
  if (s.registry === 'npm') {
    await exec('npm', ['pack', `${s.name}@${s.version}`, '--silent', '--pack-destination', archives], { maxBuffer: 1 << 24 })
  } else {
    // --no-binary: the sdist, which carries the tests (a wheel has only the package).
    await exec(
      'python3',
      ['-m', 'pip', 'download', '--no-deps', '--no-binary', ':all:', '--quiet', '--dest', archives, `${s.name}==${s.version}`],
      { maxBuffer: 1 << 24 },
    )
  }
  if (!existsSync(file)) throw new Error(`${s.registry} ${s.name}@${s.version}: no ${s.archive} in ${archives}`)
  const got = sha256(await readFile(file))
  if (got !== s.sha256) throw new Error(`${s.archive}: SHA-256 ${got}, pinned ${s.sha256}: not the pinned file`)
  return file
}

/** Unpacks an archive into a fresh folder; returns its one top folder. */
async function unpack(file: string, work: string): Promise<string> {
  const dir = await mkdtemp(path.join(work, 'unpack-'))
  await exec('tar', ['-xzf', file, '-C', dir])
  const [top, ...more] = await readdir(dir)
  if (!top || more.length > 0) throw new Error(`${file}: expected one top folder`)
  return path.join(dir, top)
}

export interface Manifest {
  sources: { id: string; registry: string; name: string; version: string; sha256: string; files: number; what: string }[]
}

/** Beside the corpus folder (DIR/manifest.json), so that the corpus holds the packages' files only. */
export const manifestOf = (corpus: string): string => path.join(path.dirname(corpus), 'manifest.json')

// What is taken is part of the pin: a changed selection rebuilds the corpus too.
const pins = () => SOURCES.map((s) => `${s.registry}:${s.name}@${s.version}:${s.sha256}:${s.what}`).join('\n')

/** Fetches every source into `dir/corpus` (archives kept in `dir/archives`); returns the corpus folder. */
export async function fetchHostileCorpus(dir: string, log: (m: string) => void = () => {}): Promise<string> {
  const corpus = path.join(dir, 'corpus')
  const stamp = path.join(dir, 'pins.txt')
  if (existsSync(stamp) && (await readFile(stamp, 'utf8')) === pins() && existsSync(manifestOf(corpus))) {
    log(`${corpus} is up to date`)
    return corpus
  }
  await rm(corpus, { recursive: true, force: true })
  await rm(stamp, { force: true })
  await rm(manifestOf(corpus), { force: true })
  // A clean checkout has no such folder yet (CI's first run failed here on mkdtemp).
  await mkdir(dir, { recursive: true })
  const work = await mkdtemp(path.join(dir, 'work-'))
  const manifest: Manifest = { sources: [] }
  try {
    for (const s of SOURCES) {
      log(`${s.registry} ${s.name}@${s.version}`)
      const unpacked = await unpack(await fetchArchive(s, path.join(dir, 'archives')), work)
      const out = path.join(corpus, s.id)
      await mkdir(out, { recursive: true })
      const files = await s.take(unpacked, out)
      manifest.sources.push({
        id: s.id,
        registry: s.registry,
        name: s.name,
        version: s.version,
        sha256: s.sha256,
        files,
        what: s.what,
      })
    }
  } finally {
    await rm(work, { recursive: true, force: true })
  }
  await writeFile(manifestOf(corpus), JSON.stringify(manifest, null, 2) + '\n')
  await writeFile(stamp, pins())
  return corpus
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)
if (isMain) {
  const dir = path.resolve(process.argv[2] ?? '.hostile')
  fetchHostileCorpus(dir, (m) => process.stderr.write(`hostile corpus: ${m}\n`)).then(
    (corpus) => process.stdout.write(corpus + '\n'),
    (err: unknown) => {
      process.stderr.write(`hostile corpus: ${err instanceof Error ? err.message : String(err)}\n`)
      process.exitCode = 1
    },
  )
}
