import { Parser } from 'htmlparser2'

/**
 * The XML parts of zip-based formats (EPUB, PPTX, ODF, XLSX) read with htmlparser2 in XML mode:
 * as a stream of elements (large spreadsheets are never held as a tree), or, for parts of
 * ordinary size, as a small tree. Entities are decoded; element and attribute names keep their
 * prefixes (`a:t`, `text:outline-level`) and their case.
 */

export interface XmlHandlers {
  open?(name: string, attrs: Record<string, string>): void
  text?(text: string): void
  close?(name: string): void
}

/**
 * Stream the elements of an XML document. With localNames, element names lose their prefix: for
 * formats whose writers differ in prefixing one default namespace (`row` or `x:row` in XLSX).
 */
export function xmlWalk(xml: string, h: XmlHandlers, opts: { localNames?: boolean } = {}): void {
  const nameOf = opts.localNames ? (n: string) => n.slice(n.indexOf(':') + 1) : (n: string) => n
  const parser = new Parser(
    {
      onopentag: (name, attrs) => h.open?.(nameOf(name), attrs),
      ontext: (t) => h.text?.(t),
      onclosetag: (name) => h.close?.(nameOf(name)),
    },
    { xmlMode: true, decodeEntities: true },
  )
  parser.write(xml)
  parser.end()
}

/** Elements of an XML part, in order of their ends, with their attributes (element names lower-cased, prefixes kept). */
export function xmlElements(
  xml: string,
  onElement: (name: string, attrs: Record<string, string>, text: () => string) => void,
): void {
  const stack: { name: string; attrs: Record<string, string>; text: string }[] = []
  xmlWalk(xml, {
    open(name, attrs) {
      stack.push({ name: name.toLowerCase(), attrs, text: '' })
    },
    text(t) {
      for (const s of stack) s.text += t
    },
    close() {
      const el = stack.pop()
      if (el) onElement(el.name, el.attrs, () => el.text.replace(/\s+/g, ' ').trim())
    },
  })
}

export interface XmlNode {
  name: string
  attrs: Record<string, string>
  children: (XmlNode | string)[]
}

/** The document as a tree under a nameless root. */
export function xmlTree(xml: string): XmlNode {
  const root: XmlNode = { name: '', attrs: {}, children: [] }
  const stack = [root]
  xmlWalk(xml, {
    open(name, attrs) {
      const node: XmlNode = { name, attrs, children: [] }
      stack[stack.length - 1]!.children.push(node)
      stack.push(node)
    },
    text(t) {
      stack[stack.length - 1]!.children.push(t)
    },
    close() {
      if (stack.length > 1) stack.pop()
    },
  })
  return root
}

/** Child elements of a node, optionally only those named `name`. */
export function elements(node: XmlNode, name?: string): XmlNode[] {
  return node.children.filter((c): c is XmlNode => typeof c !== 'string' && (name === undefined || c.name === name))
}

/** The first element named `name` at any depth below `node` (document order), or null. */
export function findFirst(node: XmlNode, name: string): XmlNode | null {
  for (const c of node.children) {
    if (typeof c === 'string') continue
    if (c.name === name) return c
    const f = findFirst(c, name)
    if (f) return f
  }
  return null
}

/** Every element named `name` below `node`, in document order (not looking inside a match). */
export function findAll(node: XmlNode, name: string, out: XmlNode[] = []): XmlNode[] {
  for (const c of node.children) {
    if (typeof c === 'string') continue
    if (c.name === name) out.push(c)
    else findAll(c, name, out)
  }
  return out
}

/**
 * A prefixed attribute by its local name, whatever prefix the file bound its namespace to (`r:id`
 * is usually, not necessarily, spelled so); the unprefixed attribute of that name is another one.
 */
export function prefixedAttr(attrs: Record<string, string>, local: string): string | undefined {
  for (const k of Object.keys(attrs)) if (k.endsWith(':' + local)) return attrs[k]
  return undefined
}
