import { describe, expect, it } from 'vitest'
import { isUnreadableText, stripControls, unreadableShare, withoutControls } from './textcheck'

describe('unreadable text and control characters', () => {
  it('measures the share of characters that carry no text, blanks not counted', () => {
    expect(unreadableShare('')).toBe(0)
    expect(unreadableShare('plain words')).toBe(0)
    expect(unreadableShare('\u0001\u0002 \u0003\u0004')).toBe(1)
    // A text layer of glyph codes holds form feeds and vertical tabs too: they count as codes, not as blanks.
    expect(unreadableShare('\u000c\u000b\u0001\u0002')).toBe(1)
    expect(unreadableShare('ab\ue001\ue002')).toBe(0.5)
    expect(unreadableShare('a\u{f0001}')).toBe(0.5)
  })

  it('calls a text unreadable when more than half of it carries no text', () => {
    expect(isUnreadableText('\u0007\u0001\u0012\u0002 \u0005\u0004')).toBe(true)
    expect(isUnreadableText('\ue000\ue001\ue002 ok')).toBe(true)
    expect(isUnreadableText('Readable text with one stray \u0001 control')).toBe(false)
    expect(isUnreadableText('ab\ue001\ue002')).toBe(false)
    expect(isUnreadableText('   ')).toBe(false)
  })

  it('strips controls (NUL included) but keeps tabs and line ends; page and line breaks become line feeds', () => {
    expect(stripControls('a\u0000b\u0001c\u007fd\u0085e')).toBe('abcde')
    expect(stripControls('one\ttwo\nthree\r\nfour')).toBe('one\ttwo\nthree\r\nfour')
    expect(stripControls('page\u000cnext\u000bline')).toBe('page\nnext\nline')
    expect(stripControls('icons \ue001 stay')).toBe('icons \ue001 stay')
  })

  it('cleans a whole parsed document, and returns a clean one as it is', () => {
    const clean = {
      title: 'T',
      meta: {},
      sections: [{ headings: ['H'], level: 1, blocks: [{ kind: 'paragraph' as const, text: 'x' }] }],
    }
    expect(withoutControls(clean)).toBe(clean)
    const dirty = {
      title: '\u0000Nul title',
      meta: {},
      sections: [
        {
          headings: ['Head\u0001ing', '\u0002'],
          level: 2,
          blocks: [
            { kind: 'paragraph' as const, text: 'bo\u0000dy' },
            { kind: 'paragraph' as const, text: '\u0003\u0004' },
          ],
        },
      ],
    }
    expect(withoutControls(dirty)).toEqual({
      title: 'Nul title',
      meta: {},
      sections: [{ headings: ['Heading'], level: 2, blocks: [{ kind: 'paragraph', text: 'body' }] }],
    })
  })
})
