import { ScriptedChat } from '../../src/engine/answer/scripted.testutil'
import type { GenerateJsonArgs, GenerateResult } from '../../src/engine/core/model-ports'

/**
 * The chat model of the answer e2e: the engine's ScriptedChat (a test double that replies with
 * scripted text, streamed like a real model), which can also hold its reply, as a slow model
 * reading its prompt would, until the test lets it go or the question is stopped. The real 1.5B
 * model is too slow on two cores and not deterministic enough for a UI test.
 */
export class HeldScriptedChat extends ScriptedChat {
  private holding = false
  private waiting: (() => void)[] = []

  /** From now on every call waits for release() (or for its question to be stopped). */
  hold(): void {
    this.holding = true
  }

  release(): void {
    this.holding = false
    for (const go of this.waiting.splice(0)) go()
  }

  override async generateJson(args: GenerateJsonArgs): Promise<GenerateResult> {
    if (this.holding) {
      await new Promise<void>((resolve, reject) => {
        const stop = () => reject(Object.assign(new Error('the question was stopped'), { name: 'AbortError' }))
        if (args.signal?.aborted) return stop()
        args.signal?.addEventListener('abort', stop, { once: true })
        this.waiting.push(resolve)
      })
    }
    return super.generateJson(args)
  }
}

/** The passages of an answer prompt (answer/prompt.ts renderPassage), by number. */
export function promptPassages(user: string): Map<number, string> {
  const out = new Map<number, string>()
  for (const m of user.matchAll(/<passage n="(\d+)"[^>]*>\n([\s\S]*?)\n<\/passage>/g)) out.set(Number(m[1]), m[2]!)
  return out
}

/** A sentence of prose from a passage, as a model would copy it: emphasis and link targets dropped, at least six words. */
export function proseSentence(text: string): string | null {
  const sentences = text
    .split('\n')
    .filter((l) => !/^\s*([#|>`*-]|\d+\.)/.test(l))
    .join(' ')
    .replace(/\*\*|__/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .split(/(?<=\.)\s+/)
  return sentences.map((s) => s.trim()).find((s) => /^[A-Z][^`*_[\]|<>{}]+\.$/.test(s) && s.split(/\s+/).length >= 6) ?? null
}

/**
 * A reply with one sentence its passage says, word for word, and one that no passage says (a
 * made-up number and words), both citing passage 1; in whichever shape the answer schema asks
 * for (one answer text with [n] markers, or a list of sentences with their citations).
 */
export function oneSupportedOneNot(unsupported: string) {
  return (args: GenerateJsonArgs): object => {
    const passage = promptPassages(args.user).get(1) ?? ''
    const said = proseSentence(passage)
    if (!said) throw new Error(`the first passage has no plain sentence to copy:\n${passage.slice(0, 400)}`)
    const props = (args.schema as { properties?: Record<string, { items?: { properties?: object } }> }).properties ?? {}
    if ('sentences' in props) {
      // The key a sentence's passage numbers go under, as the schema names it ("cites").
      const keys = Object.keys(props['sentences']?.items?.properties ?? {})
      const cites = keys.find((k) => k !== 'text') ?? 'cites'
      return {
        answerable: true,
        sentences: [
          { text: said, [cites]: [1] },
          { text: unsupported, [cites]: [1] },
        ],
        unanswered_parts: [],
      }
    }
    return {
      answerable: true,
      answer: `${said.replace(/\.$/, '')} [1]. ${unsupported.replace(/\.$/, '')} [1].`,
      citations: [1],
      unanswered_parts: [],
    }
  }
}
