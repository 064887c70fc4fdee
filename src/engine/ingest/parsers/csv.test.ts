import { describe, expect, it } from 'vitest'
import { ParseError } from '../types'
import { MAX_CELLS, parseCsvString, ROWS_PER_BLOCK, sniffDelimiter } from './csv'
import { parseFile } from './index'

const enc = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'))

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (e) {
    expect(e).toBeInstanceOf(ParseError)
    return (e as Error).message
  }
  throw new Error('expected a ParseError')
}

describe('CSV', () => {
  it('makes one section of Markdown table blocks, the header repeated in every block', () => {
    const rows = Array.from({ length: 120 }, (_, i) => `${i + 1},item ${i + 1}`)
    const d = parseCsvString(['id,name', ...rows].join('\n'), 'items.csv')
    expect(d.title).toBeNull()
    expect(d.sections).toHaveLength(1)
    expect(d.sections[0]!.headings).toEqual([])
    const blocks = d.sections[0]!.blocks
    expect(blocks.map((b) => b.kind)).toEqual(['table', 'table', 'table'])
    for (const b of blocks) expect(b.text.split('\n').slice(0, 2)).toEqual(['| id | name |', '| --- | --- |'])
    expect(blocks.map((b) => b.text.split('\n').length - 2)).toEqual([ROWS_PER_BLOCK, ROWS_PER_BLOCK, 20])
    expect(blocks[2]!.text.split('\n').pop()).toBe('| 120 | item 120 |')
  })

  it('keeps quoted delimiters, escapes pipes, and puts a quoted line break on the row', () => {
    const d = parseCsvString('name,note\n"Smith, J.","line one\nline two | three"\n"say ""hi""",x\n', 'a.csv')
    expect(d.sections[0]!.blocks[0]!.text).toBe(
      '| name | note |\n| --- | --- |\n| Smith, J. | line one line two \\| three |\n| say "hi" | x |',
    )
  })

  it('sniffs the delimiter: semicolon, tab, bar, and comma by default', () => {
    expect(sniffDelimiter('a;b;c\n1;2,5;3\n4;5;6\n')).toBe(';')
    expect(sniffDelimiter('a\tb\n1\t2\n')).toBe('\t')
    expect(sniffDelimiter('a|b|c\n1|2|3\n')).toBe('|')
    expect(sniffDelimiter('a,b\n"x;y;z",2\n')).toBe(',')
    expect(sniffDelimiter('just one column\n')).toBe(',')
    const d = parseCsvString('Stadt;Größe\nZürich;"1,5"\n', 'städte.csv')
    expect(d.sections[0]!.blocks[0]!.text).toBe('| Stadt | Größe |\n| --- | --- |\n| Zürich | 1,5 |')
  })

  it('reads .tsv with tabs whatever the content looks like', async () => {
    const d = await parseFile(enc('a,b\tc\n1,2\t3\n'), 'data.tsv')
    expect(d.sections[0]!.blocks[0]!.text).toBe('| a,b | c |\n| --- | --- |\n| 1,2 | 3 |')
  })

  it('reads ragged rows and a header-only file', () => {
    expect(parseCsvString('a,b\n1\n1,2,3\n', 'r.csv').sections[0]!.blocks[0]!.text).toBe(
      '| a | b |  |\n| --- | --- | --- |\n| 1 |  |  |\n| 1 | 2 | 3 |',
    )
    expect(parseCsvString('only,a,header\n', 'h.csv').sections[0]!.blocks[0]!.text).toBe(
      '| only | a | header |\n| --- | --- | --- |',
    )
    expect(parseCsvString('\n\n', 'empty.csv').sections).toEqual([])
  })

  it('caps the cells read and says what was left out', () => {
    const width = 100
    const rowCount = MAX_CELLS / width + 10
    const row = Array.from({ length: width }, (_, i) => `c${i}`).join(',')
    const d = parseCsvString(Array.from({ length: rowCount }, () => row).join('\n'), 'big.csv')
    const bodyRows = d.sections[0]!.blocks.reduce((n, b) => n + b.text.split('\n').length - 2, 0)
    expect(bodyRows).toBe(MAX_CELLS / width - 1)
    expect(d.notices).toEqual([
      `only the first ${(MAX_CELLS / width).toLocaleString('en-US')} rows were read (200,000 cells at most); the rows after are left out`,
    ])
  })

  it('refuses malformed CSV, an unterminated quote and invalid UTF-8 with reasons', async () => {
    expect(await failure(parseFile(enc('a,b\n1,"open\n2,3\n'), 'bad.csv'))).toBe(
      'not a valid CSV file: a quoted cell is never closed: the quote opening it on line 2 runs to the end of the file (line 3)',
    )
    // A quote inside an unquoted cell is text (relax_quotes); the one that opens a cell counts.
    expect(await failure(parseFile(enc('a;b\n5" disk;"say ""hi"";"\nok;"never\nclosed;\n'), 'q.csv'))).toBe(
      'not a valid CSV file: a quoted cell is never closed: the quote opening it on line 3 runs to the end of the file (line 4)',
    )
    expect(await failure(parseFile(new Uint8Array(Buffer.from('a,b\ncaf\xe9,1\n', 'latin1')), 'l.csv'))).toMatch(
      /^not valid UTF-8 text \(byte 7\)/,
    )
    expect(await failure(parseFile(enc('a,b\n\u0000\n'), 'n.csv'))).toMatch(/^binary content/)
  })
})
