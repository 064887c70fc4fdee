import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../../src/test-support/paths'
import { docFiles, figuresWithoutCommand, missingReferences, parseSections, repoFacts } from './figures'

describe('figures in the docs', () => {
  const files = docFiles(repoRoot)
  const sections = files.flatMap((f) => parseSections(f, readFileSync(path.join(repoRoot, f), 'utf8')))

  it('reads README.md and the docs, ADRs included', () => {
    expect(files).toContain('README.md')
    expect(files).toContain(path.join('docs', 'benchmarks.md'))
    expect(files.filter((f) => f.startsWith(path.join('docs', 'adr')))).not.toHaveLength(0)
  })

  it('every section that states a measured figure holds a command that prints it', () => {
    const missing = figuresWithoutCommand(sections).map((f) => `${f.file}:${f.line} (${f.heading}): ${f.text}`)
    expect(missing).toEqual([])
  })

  it('every command in the docs names scripts, CLI commands and files that exist', () => {
    const repo = repoFacts(repoRoot)
    const broken = sections.flatMap((s) =>
      s.commands.flatMap((c) => missingReferences(c, repo).map((m) => `${s.file} (${s.heading}): ${m} in "${c}"`)),
    )
    expect(broken).toEqual([])
  })
})

describe('the check itself', () => {
  const repo = repoFacts(repoRoot)

  it('flags a figure whose section has no command, and not one whose section has', () => {
    const md = [
      '# Results',
      'Exact-token questions are answered at rank 1 in 9 of 10 cases; p50 25 ms.',
      '## Measured',
      '| retriever | recall@10 |',
      '| --- | ---: |',
      '| keyword | 0.857 |',
      '```sh',
      'npm run --silent cli -- eval retrieval --corpus c --questions q.jsonl',
      '```',
      '## Design',
      'BM25 with k1 = 1.2 over chunks of 256 tokens, scored on 2026-11-29 (`chunker-v1;max=256`).',
    ].join('\n')
    const found = figuresWithoutCommand(parseSections('x.md', md))
    expect(found.map((f) => [f.heading, f.line])).toEqual([['Results', 2]])
  })

  it('takes a command in the heading, and skips a section that says its numbers are not measured', () => {
    const md = [
      '## Import throughput (`bench -- import`)',
      '| corpus | seconds |',
      '| MCP docs | 13.8 s |',
      '## Context',
      '<!-- not measured: the machine Docent is built for -->',
      'A typical laptop: 8-16 GB RAM.',
      '## Context without the comment',
      'A typical laptop: 8-16 GB RAM.',
    ].join('\n')
    expect(figuresWithoutCommand(parseSections('x.md', md)).map((f) => f.heading)).toEqual(['Context without the comment'])
  })

  it('names what a command refers to that does not exist', () => {
    expect(missingReferences('bench -- throughput', repo)).toEqual(['bench suite "throughput"'])
    expect(missingReferences('npm run bnech -- compare', repo)).toEqual(['npm script "bnech"'])
    expect(missingReferences('npm run --silent cli -- evaluate retrieval', repo)).toEqual(['CLI command "evaluate"'])
    expect(missingReferences('npx tsx evals/retrieval/nowhere.ts report.json', repo)).toEqual(['file evals/retrieval/nowhere.ts'])
    expect(missingReferences('npx tsx evals/retrieval/by-kind.ts report.json', repo)).toEqual([])
  })
})
