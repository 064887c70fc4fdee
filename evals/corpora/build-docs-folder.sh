#!/usr/bin/env bash
# Build the "pkg-docs" evaluation corpus: a folder of PDF, DOCX and HTML files rendered from
# Markdown documentation that ships inside pinned npm packages.
#
#   bash evals/corpora/build-docs-folder.sh [OUT_DIR]     (default /tmp/docent-corpora/pkg-docs)
#
# Each source document ends up in exactly ONE format. Pipeline:
#   Markdown --(marked, from the repo's node_modules)--> HTML
#   HTML --(Debian chromium --headless --print-to-pdf)--> PDF
#   HTML --(Debian pandoc -f html -t docx)--> DOCX
# Sources come from /work/main/node_modules when the installed version equals the pin, otherwise
# from `npm pack <name>@<pinned version>` (cached in $OUT_DIR/../.npm-pack).
# Needs: node (>=20), npm, chromium, pandoc  (apt-get update && apt-get install -y chromium pandoc
# poppler-utils; poppler-utils is only needed by the question checker).
# The generated files are NOT committed; see evals/corpora/README.md.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
OUT="${1:-/tmp/docent-corpora/pkg-docs}"
CACHE="${PKG_DOCS_CACHE:-$(dirname "$OUT")/.npm-pack}"
# shellcheck source=lib.sh
. "$HERE/lib.sh"
need_tools node npm pandoc "$CHROMIUM"

# name  version  path-inside-package  output-file (extension picks the format)
DOCS=(
  "got       11.8.6  readme.md                     got-readme.pdf"
  "undici    7.30.2  docs/docs/api/Dispatcher.md   undici-dispatcher-api.pdf"
  "semver    7.8.6   README.md                     semver-readme.pdf"
  "commander 10.0.1  Readme.md                     commander-readme.html"
  "qs        6.17.1  README.md                     qs-readme.html"
  "picomatch 4.0.7   README.md                     picomatch-readme.html"
  "dompurify 3.5.0   README.md                     dompurify-readme.docx"
  "tar       7.5.23  README.md                     tar-readme.docx"
  "mammoth   1.13.0  README.md                     mammoth-readme.docx"
)

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT" "$CACHE"

for row in "${DOCS[@]}"; do
  read -r name ver rel outfile <<<"$row"
  src="$WORK/$name.md"; html="$WORK/$name.html"
  fetch_source "$name" "$ver" "$rel" "$src"
  node "$HERE/md-to-html.mjs" "$src" "$html" "$name $ver: $rel"
  case "$outfile" in
    *.html) cp "$html" "$OUT/$outfile" ;;
    *.docx) pandoc -f html -t docx -o "$OUT/$outfile" "$html" ;;
    *.pdf) print_pdf "$html" "$OUT/$outfile" ;;
    *) echo "unknown format: $outfile" >&2; exit 1 ;;
  esac
  echo "built $OUT/$outfile  ($name@$ver $rel)"
done
