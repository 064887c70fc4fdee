#!/usr/bin/env bash
# Build the "fastify-docs" evaluation corpus: the Markdown documentation of four Fastify releases,
# as each npm package ships it (docs/), laid out the way a Docusaurus site keeps versioned docs:
#
#   versions.json                      ["5.6.2", "4.29.1", "3.29.5"]  (newest first, as Docusaurus writes it)
#   versioned_docs/version-5.6.2/      fastify@5.6.2  docs/
#   versioned_docs/version-4.29.1/     fastify@4.29.1 docs/
#   versioned_docs/version-3.29.5/     fastify@3.29.5 docs/
#   docs/                              fastify@5.12.8 docs/  (the current docs: Docusaurus's "next")
#   src/pages/index.md                 fastify@5.12.8 README.md  (a page outside the docs: unversioned)
#
#   bash evals/corpora/build-fastify-docusaurus.sh [OUT_DIR]   (default /tmp/docent-corpora/fastify-docs)
#
# Only the package registry is used (npm pack). Each tarball is checked against the sha512 pinned
# below before anything is unpacked; a mismatch stops the build. Tarballs are cached beside OUT_DIR
# (or in $FASTIFY_DOCS_CACHE). Output files are byte copies, so two builds are identical.
# The generated files are NOT committed; see evals/corpora/README.md.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-/tmp/docent-corpora/fastify-docs}"
CACHE="${FASTIFY_DOCS_CACHE:-$(dirname "$OUT")/.npm-pack}"

# version  role  sha512 (the registry's dist.integrity)
PACKAGES=(
  "5.12.8 current sha512-moP8exb2sCHLUbJkwp+I6C0padhy4D8lp0SdmzY7HhSdZuqm7O/u3o2aq7u8okaQ//33QDzj3G/u+FsSdB8Qzw=="
  "5.6.2  version sha512-dPugdGnsvYkBlENLhCgX8yhyGCsCPrpA8lFWbTNU428l+YOnLgYHR69hzV8HWPC79n536EqzqQtvhtdaCE0dKg=="
  "4.29.1 version sha512-m2kMNHIG92tSNWv+Z3UeTR9AWLLuo7KctC7mlFPtMEVrfjIhmQhkQnT9v15qA/BfVq3vvj134Y0jl9SBje3jXQ=="
  "3.29.5 version sha512-FBDgb1gkenZxxh4sTD6AdI6mFnZnsgckpjIXzIvfLSYCa4isfQeD8QWGPib63dxq6btnY0l1j8I0xYhMvUb+sw=="
)

command -v npm >/dev/null 2>&1 || { echo "missing tool: npm" >&2; exit 2; }
command -v node >/dev/null 2>&1 || { echo "missing tool: node" >&2; exit 2; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$CACHE"
rm -rf "$OUT"
mkdir -p "$OUT/versioned_docs" "$OUT/src/pages"

integrity() { # file -> sha512-<base64>
  node -e 'const c=require("crypto"),f=require("fs");process.stdout.write("sha512-"+c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$1"
}

released=()
for row in "${PACKAGES[@]}"; do
  read -r ver role sum <<<"$row"
  tgz="$CACHE/fastify-$ver.tgz"
  [ -f "$tgz" ] || (cd "$CACHE" && npm pack --silent "fastify@$ver" >/dev/null)
  got="$(integrity "$tgz")"
  if [ "$got" != "$sum" ]; then
    echo "fastify-$ver.tgz: checksum $got, expected $sum; remove it from $CACHE and build again" >&2
    exit 1
  fi
  dir="$WORK/$ver"
  mkdir -p "$dir"
  tar -xzf "$tgz" -C "$dir" package/docs package/README.md
  if [ "$role" = current ]; then
    cp -R "$dir/package/docs" "$OUT/docs"
    cp "$dir/package/README.md" "$OUT/src/pages/index.md"
  else
    cp -R "$dir/package/docs" "$OUT/versioned_docs/version-$ver"
    released+=("$ver")
  fi
  echo "fastify@$ver ($role) checked and unpacked"
done

# versions.json lists the released versions, newest first, as `docusaurus docs:version` keeps it.
node -e 'console.log(JSON.stringify(process.argv.slice(1), null, 2))' "${released[@]}" >"$OUT/versions.json"
echo "built $OUT: $(find "$OUT" -name '*.md' | wc -l) Markdown files"
