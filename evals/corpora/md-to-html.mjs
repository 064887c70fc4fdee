// Render one Markdown file to a standalone, offline HTML page with `marked` (repo node_modules).
// Usage: node md-to-html.mjs in.md out.html "title"
// Images (badges, logos) are replaced by their alt text so that nothing is fetched over the network.
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import process from 'node:process'

const require = createRequire(path.join(path.dirname(fileURLToPath(import.meta.url)), '../../package.json'))
const { Marked } = require('marked')

const [, , inFile, outFile, title = ''] = process.argv
const md = readFileSync(inFile, 'utf8')
const marked = new Marked({ gfm: true })
marked.use({
  renderer: {
    image({ text }) {
      return text ? `<span>${escapeHtml(text)}</span>` : ''
    },
  },
})
let body = marked.parse(md)
// raw HTML <img> / <picture> / <source> / <script> tags from the README itself
body = body
  .replace(/<script\b[\s\S]*?<\/script>/gi, '')
  .replace(/<(picture|source)\b[^>]*>|<\/picture>/gi, '')
  .replace(/<img\b[^>]*?alt="([^"]*)"[^>]*>/gi, '$1')
  .replace(/<img\b[^>]*>/gi, '')

const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: "DejaVu Sans", sans-serif; font-size: 11pt; line-height: 1.4; max-width: 52em; margin: 1.5em auto; }
pre { background: #f4f4f4; padding: 0.6em; white-space: pre-wrap; word-wrap: break-word; font-size: 9pt; }
code { font-family: "DejaVu Sans Mono", monospace; }
table { border-collapse: collapse; } td, th { border: 1px solid #bbb; padding: 0.2em 0.4em; }
</style>
</head>
<body>
${body}
</body>
</html>
`
writeFileSync(outFile, html)

function escapeHtml(s) {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c])
}
