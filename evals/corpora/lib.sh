# Shared by build-docs-folder.sh and build-pdf-folder.sh (source it; needs HERE, REPO, CACHE, WORK).
# Needs: node (>=20), npm, and for PDFs Debian's chromium.

CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-1704067200}"   # 2024-01-01, fixes docx metadata dates

need_tools() { # tool...
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "missing tool: $tool (apt-get install -y chromium pandoc)" >&2; exit 2; }
  done
  [ -f "$REPO/node_modules/marked/package.json" ] || { echo "run npm ci first (needs node_modules/marked)" >&2; exit 2; }
}

# Copy a pinned package's file: from node_modules when the installed version is the pin, otherwise
# from `npm pack name@version` (cached in $CACHE).
fetch_source() { # name version relpath dest
  local name="$1" ver="$2" rel="$3" dest="$4" nm="$REPO/node_modules/$1"
  if [ -f "$nm/package.json" ] && [ "$(node -p "require('$nm/package.json').version")" = "$ver" ] && [ -f "$nm/$rel" ]; then
    cp "$nm/$rel" "$dest"; return
  fi
  mkdir -p "$CACHE"
  local tgz="$CACHE/$name-$ver.tgz"
  if [ ! -f "$tgz" ]; then
    (cd "$CACHE" && npm pack --silent "$name@$ver" >/dev/null)
  fi
  tar -xzf "$tgz" -O "package/$rel" > "$dest"
}

# Render a standalone HTML file to PDF with headless Chromium: no network (every host name maps to
# nothing), a throwaway profile, no header or footer, the default page size.
print_pdf() { # in.html out.pdf
  local html="$1" pdf="$2"
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-extensions --no-first-run --no-pdf-header-footer \
    --host-resolver-rules='MAP * ~NOTFOUND' --user-data-dir="$WORK/chrome-profile" \
    --print-to-pdf="$pdf" "file://$html" >"$WORK/chrome.log" 2>&1 \
    || { cat "$WORK/chrome.log" >&2; exit 1; }
  [ -s "$pdf" ] || { echo "chromium wrote no PDF for $html" >&2; cat "$WORK/chrome.log" >&2; exit 1; }
}
