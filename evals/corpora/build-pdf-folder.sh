#!/usr/bin/env bash
# Build the "pdf-text" folder: PDFs rendered by Chromium, for measuring how much of a PDF's text
# Docent keeps (evals/parsers/pdf-recall.ts, evals/parsers/pdf-rendered.test.ts).
#
#   bash evals/corpora/build-pdf-folder.sh [OUT_DIR]     (default /tmp/docent-corpora/pdf-text)
#
#   tern-manual.pdf   a long manual-like document written by make-manual.mjs: a configuration
#                     reference whose code blocks carry more text than its prose, many headings each
#                     followed by a paragraph, lists, tables, quotes, deep headings, FAQ questions
#   *-readme.pdf ...  package documentation, the same pinned sources as the pkg-docs folder, plus
#                     two more rendered as PDF instead of HTML/DOCX
#
# Pipeline and tools as in build-docs-folder.sh (Markdown -> marked -> HTML -> chromium -> PDF).
# Each PDF's Markdown source is kept in OUT_DIR/.sources/ (a dot folder, which Docent's import skips)
# so tests can compare the headings Docent finds with the real ones.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
OUT="${1:-/tmp/docent-corpora/pdf-text}"
CACHE="${PKG_DOCS_CACHE:-$(dirname "$OUT")/.npm-pack}"
# shellcheck source=lib.sh
. "$HERE/lib.sh"
need_tools node npm "$CHROMIUM"

# name  version  path-inside-package  output-file
DOCS=(
  "got       11.8.6  readme.md                     got-readme.pdf"
  "undici    7.30.2  docs/docs/api/Dispatcher.md   undici-dispatcher-api.pdf"
  "semver    7.8.6   README.md                     semver-readme.pdf"
  "commander 10.0.1  Readme.md                     commander-readme.pdf"
  "tar       7.5.23  README.md                     tar-readme.pdf"
)

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT/.sources"

node "$HERE/make-manual.mjs" > "$OUT/.sources/tern-manual.md"
node "$HERE/md-to-html.mjs" "$OUT/.sources/tern-manual.md" "$WORK/tern-manual.html" "Tern Firmware Manual"
print_pdf "$WORK/tern-manual.html" "$OUT/tern-manual.pdf"
echo "built $OUT/tern-manual.pdf  (make-manual.mjs)"

for row in "${DOCS[@]}"; do
  read -r name ver rel outfile <<<"$row"
  src="$OUT/.sources/${outfile%.pdf}.md"; html="$WORK/$name.html"
  fetch_source "$name" "$ver" "$rel" "$src"
  node "$HERE/md-to-html.mjs" "$src" "$html" "$name $ver: $rel"
  print_pdf "$html" "$OUT/$outfile"
  echo "built $OUT/$outfile  ($name@$ver $rel)"
done
