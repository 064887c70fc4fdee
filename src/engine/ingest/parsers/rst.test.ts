import { describe, expect, it } from 'vitest'
import { ParseError } from '../types'
import { parseFile } from './index'
import { parseRstString } from './rst'
import { stripInline } from './rst-markup'

const blocksOf = (rst: string) => parseRstString(rst).sections.flatMap((s) => s.blocks)

describe('reStructuredText sections', () => {
  it('levels adornment styles in the order they are first met, overline+underline apart from underline alone', () => {
    const d = parseRstString(
      [
        '=======',
        ' Title',
        '=======',
        '',
        'Intro.',
        '',
        'Install',
        '=======',
        '',
        'Body.',
        '',
        'On Linux',
        '--------',
        '',
        'Apt.',
        '',
        'Details',
        '~~~~~~~',
        '',
        'Deep.',
        '',
        'Usage',
        '=====',
        '',
        'Run it.',
      ].join('\n'),
    )
    expect(d.title).toBe('Title')
    expect(d.sections.map((s) => [s.level, s.headings])).toEqual([
      [1, ['Title']],
      [2, ['Title', 'Install']],
      [3, ['Title', 'Install', 'On Linux']],
      [4, ['Title', 'Install', 'On Linux', 'Details']],
      [2, ['Title', 'Usage']],
    ])
  })

  it('needs an underline at least as long as the title and a blank line before it', () => {
    const d = parseRstString('Too long a title\n=====\n\nText right after\n----------------\n\nBody.\n')
    expect(d.sections.flatMap((s) => s.headings)).toEqual(['Text right after'])
    expect(d.sections[0]!.blocks[0]!.text).toBe('Too long a title =====')
    expect(parseRstString('para line\nTitle\n=====\n').sections[0]!.headings).toEqual([])
  })

  it('reads a file of adornments only as nothing: no headings, no text', async () => {
    expect((await parseFile(new Uint8Array(Buffer.from('=====\n\n-----\n\n=====\n=====\n')), 'lines.rst')).sections).toEqual([])
  })

  it('takes a field list at the top as metadata, the version from it, and keeps it as text (docutils shows it)', () => {
    const d = parseRstString('Guide\n=====\n\n:Version: 1.2\n:Authors: Ann *and*\n   Bob\n\nText.\n\n:note: a field later\n')
    expect(d.meta).toEqual({ version: '1.2', authors: 'Ann and Bob', title: 'Guide' })
    expect(d.sections[0]!.blocks.map((b) => b.text)).toEqual([
      'Version: 1.2\nAuthors: Ann and Bob',
      'Text.',
      'note: a field later',
    ])
    // A version-control keyword is not a release version.
    expect(parseRstString(':Version: $Revision: 9923 $\n\nText.\n').meta).toEqual({})
  })
})

describe('reStructuredText blocks', () => {
  it('makes literal blocks and code directives code, and `::` punctuation right', () => {
    expect(
      blocksOf(
        'Example::\n\n    x = 1\n      y\n\nExpanded ::\n\n  z\n\n::\n\n  w\n\n.. code-block:: python\n   :linenos:\n\n   print(1)\n\n.. sourcecode:: sh\n\n   ls\n\n>>> 1 + 1\n2\n',
      ),
    ).toEqual([
      { kind: 'paragraph', text: 'Example:' },
      { kind: 'code', text: 'x = 1\n  y' },
      { kind: 'paragraph', text: 'Expanded' },
      { kind: 'code', text: 'z' },
      { kind: 'code', text: 'w' },
      { kind: 'code', text: 'print(1)' },
      { kind: 'code', text: 'ls' },
      { kind: 'code', text: '>>> 1 + 1\n2' },
    ])
  })

  it('makes bullet and enumerated lists list blocks, nested lists indented', () => {
    expect(blocksOf('- one\n  more\n- two\n\n  * nested\n  * also\n\n3. three\n4. four\n\n#. auto\n#. auto too\n')).toEqual([
      { kind: 'list', text: '- one more\n- two\n  - nested\n  - also' },
      { kind: 'list', text: '3. three\n4. four' },
      { kind: 'list', text: '1. auto\n2. auto too' },
    ])
  })

  it('keeps admonitions (with their label) and block quotes as quotes, drops comments, targets and substitution definitions', () => {
    expect(
      blocksOf(
        '.. note:: Mind\n   the gap.\n\n.. warning::\n\n   Hot.\n\n.. admonition:: Custom\n\n   Body.\n\n.. a comment\n   on two lines\n\n.. _label:\n\n.. |sub| replace:: text\n\n..\n\n    Quoted text.\n\n.. [1] A footnote.\n\n.. toctree::\n\n   intro\n',
      ),
    ).toEqual([
      { kind: 'quote', text: 'Note: Mind the gap.' },
      { kind: 'quote', text: 'Warning:' },
      { kind: 'quote', text: 'Hot.' },
      { kind: 'quote', text: 'Custom' },
      { kind: 'quote', text: 'Body.' },
      { kind: 'quote', text: 'Quoted text.' },
      { kind: 'paragraph', text: '[1] A footnote.' },
    ])
  })

  it('strips inline markup to its text', () => {
    expect(
      stripInline(
        '``a *b*`` *em* **st** `Site <https://x>`_ `ref`_ :ref:`Label <lbl>` :func:`~m.f` word_ |sub| x [1]_ a\\ b \\*',
      ),
    ).toBe('a *b* em st Site ref Label m.f word sub x [1] ab *')
    expect(stripInline('__init__ and snake_case stay')).toBe('__init__ and snake_case stay')
    expect(stripInline(':PEP:`287`, :rfc:`2822` and [CIT2002]_ [#]_')).toBe('PEP 287, RFC 2822 and [CIT2002]')
  })

  it('puts the text of replace:: substitutions where they are referenced', () => {
    expect(blocksOf('Use |Py|_ daily.\n\n.. |Py| replace:: Python, *the* best\n   language\n')).toEqual([
      { kind: 'paragraph', text: 'Use Python, the best language daily.' },
    ])
  })

  it('makes simple, grid, list and CSV tables Markdown tables', () => {
    expect(
      blocksOf(
        [
          '=====  ========',
          'Name   Value',
          '=====  ========',
          'a      one | two',
          '       continued',
          'b      2',
          '=====  ========',
          '',
          '+-----+-----+',
          '| H1  | H2  |',
          '+=====+=====+',
          '| c1  | c2  |',
          '| c1b |     |',
          '+-----+-----+',
          '',
          '=====  =====  ======',
          '   Inputs     Output',
          '------------  ------',
          '  A      B    A or B',
          '=====  =====  ======',
          'False  True   True',
          '=====  =====  ======',
          '',
          '+----+----+----+',
          '| a  | b  | c  |',
          '+====+====+====+',
          '| spans all    |',
          '+----+---------+',
          '| x  | y z     |',
          '+----+----+----+',
          '',
          '.. list-table:: Things',
          '   :header-rows: 1',
          '',
          '   * - A',
          '     - B',
          '   * - 1',
          '     - 2',
          '',
          '.. csv-table::',
          '   :header: "X", "Y"',
          '',
          '   "1, 5", 2',
        ].join('\n'),
      ),
    ).toEqual([
      { kind: 'table', text: '| Name | Value |\n| --- | --- |\n| a | one \\| two continued |\n| b | 2 |' },
      { kind: 'table', text: '| H1 | H2 |\n| --- | --- |\n| c1 c1b | c2 |' },
      { kind: 'table', text: '| Inputs |  | Output |\n| --- | --- | --- |\n| A | B | A or B |\n| False | True | True |' },
      { kind: 'table', text: '| a | b | c |\n| --- | --- | --- |\n| spans all |  |  |\n| x | y z |  |' },
      { kind: 'paragraph', text: 'Things' },
      { kind: 'table', text: '| A | B |\n| --- | --- |\n| 1 | 2 |' },
      { kind: 'table', text: '| X | Y |\n| --- | --- |\n| 1, 5 | 2 |' },
    ])
  })

  it('reads hostile shapes in linear time: a staircase of indentation, openers without closers, a very wide table', () => {
    const started = Date.now()
    // 4,000 lines, each indented one more than the last: 8 MB.
    const stairs = Array.from({ length: 4_000 }, (_, i) => `${' '.repeat(i)}step${i}`).join('\n\n')
    const deep = parseRstString(stairs)
      .sections.flatMap((s) => s.blocks.map((b) => b.text))
      .join(' ')
    expect(deep.split(' ').filter((w) => /^step\d+$/.test(w))).toHaveLength(4_000)
    const openers = parseRstString('**a *b ``c `d '.repeat(50_000)).sections[0]!.blocks[0]!.text
    expect(openers.length).toBeGreaterThan(500_000)
    const wide = Array.from({ length: 3000 }, () => '==').join(' ')
    const table = parseRstString(`${wide}\n${Array.from({ length: 3000 }, (_, i) => `c${i}`.padEnd(2)).join(' ')}\n${wide}\n`)
    expect(table.sections[0]!.blocks[0]!.kind).toBe('table')
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('refuses invalid UTF-8 with the byte named', async () => {
    const e = await parseFile(new Uint8Array(Buffer.from('Title\n=====\n\ncaf\xe9\n', 'latin1')), 'a.rst').catch(
      (x: unknown) => x,
    )
    expect(e).toBeInstanceOf(ParseError)
    expect((e as Error).message).toBe('not valid UTF-8 text (byte 16); save the file as UTF-8 and try again')
  })
})
