import { Command } from 'commander'
import { z } from 'zod'
import { Engine } from '../../engine/engine'
import { AccessError, CollectionName, grantRead, listAccess, NOT_A_SERVER, revokeRead, RoleName } from '../../engine/store/access'
import { isDatabaseUrl } from '../../engine/store/pg'
import { formatTable } from './table'

/**
 * `docent access grant|revoke|list`: who reads which collection of a team library (ADR 0011,
 * docs/postgres.md "Permissions"). Run by the role owning the library's tables (or a member of
 * it, or a superuser); a grant creates the collection's read role, which takes CREATEROLE.
 */

const Args = z.discriminatedUnion('sub', [
  z.object({ sub: z.literal('grant'), role: RoleName, collection: CollectionName }),
  z.object({ sub: z.literal('revoke'), role: RoleName, collection: CollectionName }),
  z.object({ sub: z.literal('list') }),
])

const ACCESS_USAGE =
  'usage: docent access grant <role> <collection> | revoke <role> <collection> | list  --database <url> [--json]'

export interface AccessFlags {
  database?: string
  data?: string
  json?: boolean
}

/** `docent access`: its arguments, options and help (main.ts adds it to the program). */
export function accessCommand(): Command {
  return new Command('access')
    .description('who reads which collection of a team library')
    .usage('grant <role> <collection> | revoke <role> <collection> | list  --database <url> [--json]')
    .argument('[words...]')
    .option('--database <url>', 'the team library (or DOCENT_DATABASE_URL)')
    .option('--data <dir>', 'refused: a data folder has no roles')
    .option('--json', 'one JSON document on stdout')
    .action((words: string[], o: AccessFlags) => runAccess(words, o))
}

/** Runs `docent access <argv>` (the words after `access`). */
export async function cmdAccess(argv: string[]): Promise<void> {
  await accessCommand()
    .exitOverride()
    .configureOutput({ writeErr: () => {}, outputError: () => {} })
    .parseAsync(argv, { from: 'user' })
}

async function runAccess(words: string[], values: AccessFlags): Promise<void> {
  const [sub, role, collection, ...extra] = words
  if (extra.length > 0) throw new AccessError(`too many words: ${ACCESS_USAGE}`)
  const parsed = Args.safeParse({ sub, role, collection })
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const what =
      sub !== 'grant' && sub !== 'revoke' && sub !== 'list'
        ? `unknown access command "${sub ?? ''}"`
        : role === undefined
          ? `${sub} needs a role`
          : collection === undefined
            ? `${sub} needs a collection`
            : (issue?.message ?? 'bad arguments')
    throw new AccessError(`${what}; ${ACCESS_USAGE}`)
  }
  const database = values.database ?? (process.env['DOCENT_DATABASE_URL'] || undefined)
  if (!database || values.data) throw new AccessError(NOT_A_SERVER)
  if (!isDatabaseUrl(database))
    throw new AccessError(`--database must be a postgres:// URL (got "${String(database).slice(0, 40)}")`)
  const engine = await Engine.open({ database, modelsDir: '/nonexistent/docent-access-needs-no-models' })
  try {
    const a = parsed.data
    if (a.sub === 'grant') {
      const r = await grantRead(engine.db, a.role, a.collection)
      if (values.json) return out({ granted: { role: a.role, collection: a.collection }, ...r })
      const lines = [
        r.already
          ? `${a.role} could already read "${a.collection}" (member of ${r.read_role}).`
          : `${a.role} may now read "${a.collection}" (granted ${r.read_role}${r.created ? ', created now' : ''}).`,
        ...r.notes.map((n) => `note: ${n}`),
      ]
      return void process.stdout.write(lines.join('\n') + '\n')
    }
    if (a.sub === 'revoke') {
      const r = await revokeRead(engine.db, a.role, a.collection)
      if (values.json) return out({ revoked: { role: a.role, collection: a.collection }, ...r })
      const lines = [
        `${a.role} may no longer read "${a.collection}" (revoked ${r.read_role}); its next request reads without it.`,
      ]
      if (r.still_through.length)
        lines.push(`note: ${a.role} still reads it through ${r.still_through.join(', ')}, which hold ${r.read_role}.`)
      return void process.stdout.write(lines.join('\n') + '\n')
    }
    const list = await listAccess(engine.db)
    if (values.json) return out(list)
    process.stdout.write(`Full access (imports, grants): ${list.full_access.join(', ')}\n`)
    if (list.collections.length === 0) return void process.stdout.write('No collections yet.\n')
    process.stdout.write(
      formatTable(
        ['collection', 'read role', 'readers'],
        list.collections.map((c) => [c.collection, c.read_role ?? '-', c.readers.join(' ') || '-']),
      ) + '\n',
    )
  } finally {
    await engine.close()
  }
}

function out(json: unknown): void {
  process.stdout.write(JSON.stringify(json, null, 2) + '\n')
}
