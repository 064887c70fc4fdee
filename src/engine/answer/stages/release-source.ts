import type { SearchHit } from '../../../shared/search'
import type { ResolvedScope } from '../../retrieve/scope'
import type { ReleaseCheck } from '../release'
import { authoritativeFor } from './authoritative'
import { toPromptPassage } from './passages'
import type { StageEnv } from './run'

/** How deep the search for the release's own source goes. */
export const RELEASE_SOURCE_DEPTH = 50

/**
 * A question scoped to a release whose specification speaks of what is asked must be answered from
 * that specification (the must-cite rule, ADR 0013): an answer citing only guides is refused. When
 * none of the passages the model would read is such a source, the best-ranked one of the search's
 * other candidates, or else of a deeper search in the same scope, is put first among them, so the model reads what the release itself
 * says. Seen on a held-out question: "How does authorization work in this version of MCP?"
 * (2024-11-05) read six passages of a tutorial on OAuth flows that the 2024-11-05 docs folder
 * carries, and none of the specification's "Auth" section, which says authorization is not part
 * of that release's core; the answer described OAuth 2.1.
 *
 * Returns the hits to read; the chunk put first is named in the release trace (`authoritative_added`).
 */
export async function withReleaseSource(
  env: StageEnv,
  release: ReleaseCheck,
  scope: ResolvedScope,
  standalone: string,
  hits: SearchHit[],
): Promise<SearchHit[]> {
  const qualifies = authoritativeFor(release)
  if (!qualifies) return hits
  const read = hits.slice(0, env.opts.passages)
  if (read.some((h, i) => qualifies(toPromptPassage(h, i)))) return hits
  // The first search's candidates past those read come first: they are its ranking already.
  const found = (list: SearchHit[]) => list.find((h, i) => qualifies(toPromptPassage(h, i)))
  const { mode, signal } = env.opts
  const source =
    found(hits.slice(read.length)) ??
    found((await env.ctx.retrieve(standalone, scope, { k: RELEASE_SOURCE_DEPTH, mode, rerank: false, signal })).results)
  if (!source) return hits
  release.trace.authoritative_added = source.chunk_id
  return [source, ...hits.filter((h) => h.chunk_id !== source.chunk_id)]
}
