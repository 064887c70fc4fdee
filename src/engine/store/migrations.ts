import { createHash } from 'node:crypto'
import type { Db, Queryable } from './db'

/**
 * Versioned schema migrations. Each runs once, in its own transaction, and is recorded in
 * schema_migrations. Plain PostgreSQL + pgvector only, so the same list runs on a server.
 * Never edit a migration that has shipped: add a new one.
 */
export const MIGRATIONS: {
  version: number
  name: string
  sql: string
  /** Runs on a server only; an embedded library records it as applied without running it (one person's own library). */
  serverOnly?: boolean
}[] = [
  {
    version: 1,
    name: 'collections, documents, chunks, term statistics, embedding cache',
    sql: `
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE collections (
  id            text PRIMARY KEY,
  root          text NOT NULL,
  settings      jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_sync_at  timestamptz,
  -- BM25 corpus statistics, kept in step with the chunks table inside every write transaction.
  chunk_count   integer NOT NULL DEFAULT 0,
  total_len     bigint NOT NULL DEFAULT 0
);

CREATE TABLE documents (
  id            text PRIMARY KEY,
  collection_id text NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  path          text NOT NULL,
  size          bigint NOT NULL,
  mtime_ms      double precision NOT NULL,
  sha256        text,
  status        text NOT NULL CHECK (status IN ('indexed', 'failed')),
  error         text,
  version       text,
  kind          text,
  title         text,
  page_count    integer,
  chunker       text,
  chunk_count   integer NOT NULL DEFAULT 0,
  updated_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (collection_id, path)
);

CREATE TABLE chunks (
  id              text PRIMARY KEY,
  document_id     text NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  collection_id   text NOT NULL,
  path            text NOT NULL,
  ordinal         integer NOT NULL,
  heading         text NOT NULL,
  version         text,
  kind            text,
  page_start      integer,
  page_end        integer,
  text            text NOT NULL,
  -- SHA-256 of the text given to the embedding model (breadcrumb + text): the embedding cache key.
  embed_hash      text NOT NULL,
  token_count     integer NOT NULL,
  -- Words in the chunk, the document length of BM25.
  lex_len         integer NOT NULL,
  -- Exact tokens (tools/call, -32602, E-04, camelCase) kept verbatim so index and query match alike.
  exact_terms     text[] NOT NULL DEFAULT '{}',
  tsv             tsvector GENERATED ALWAYS AS (
                    setweight(to_tsvector('english', heading), 'A')
                    || to_tsvector('english', text)
                    || array_to_tsvector(exact_terms)
                  ) STORED,
  embedding       vector,
  embedding_model text
);
CREATE INDEX chunks_tsv_gin ON chunks USING gin (tsv);
CREATE INDEX chunks_scope ON chunks (collection_id, version);
CREATE INDEX chunks_document ON chunks (document_id);
CREATE INDEX chunks_embedding_model ON chunks (embedding_model);

-- Document frequency of each lexeme per collection (BM25 IDF).
CREATE TABLE term_stats (
  collection_id text NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  lexeme        text NOT NULL,
  df            integer NOT NULL,
  PRIMARY KEY (collection_id, lexeme)
);

-- Identical text (common across releases of the same docs) is embedded once per model.
CREATE TABLE embedding_cache (
  model_id   text NOT NULL,
  embed_hash text NOT NULL,
  embedding  vector NOT NULL,
  PRIMARY KEY (model_id, embed_hash)
);

CREATE TABLE settings (
  key   text PRIMARY KEY,
  value jsonb NOT NULL
);
`,
  },
  {
    version: 2,
    name: 'answers: traces, conversation threads and messages, verified-answer cache',
    sql: `
-- Everything the pipeline did for one question (retrieval ranks, gate, prompt passages, raw model
-- output, verification, timings), so an answer can be explained after the fact.
CREATE TABLE traces (
  id          text PRIMARY KEY,
  thread_id   text,
  question    text NOT NULL,
  -- 'answer', 'search-only', 'smalltalk', an abstention reason, or 'cached'.
  outcome     text NOT NULL,
  ms          double precision NOT NULL,
  data        jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX traces_created ON traces (created_at);
CREATE INDEX traces_thread ON traces (thread_id);

CREATE TABLE threads (
  id          text PRIMARY KEY,
  title       text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- One row per turn. A user turn keeps the standalone question used for retrieval; an assistant
-- turn keeps its result, whose passages were retrieved for that turn only.
CREATE TABLE messages (
  id          text PRIMARY KEY,
  thread_id   text NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
  seq         integer NOT NULL,
  role        text NOT NULL CHECK (role IN ('user', 'assistant')),
  content     text,
  standalone  text,
  result      jsonb,
  trace_id    text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (thread_id, seq)
);

-- Verified answers keyed by (normalised question, resolved scope, models, pipeline options).
-- index_state holds each collection's fingerprint when the answer was made; an entry whose
-- fingerprint no longer matches is deleted on the next ask in that collection.
CREATE TABLE answer_cache (
  key          text PRIMARY KEY,
  question     text NOT NULL,
  collections  text[] NOT NULL,
  index_state  jsonb NOT NULL,
  result       jsonb NOT NULL,
  trace_id     text NOT NULL,
  hits         integer NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX answer_cache_collections ON answer_cache USING gin (collections);
`,
  },
  {
    version: 3,
    name: 'import jobs (resumable imports), chunk position within its document',
    sql: `
-- One row per full import of a collection. A row still 'running' when the engine opens belongs to
-- a process that died (crash, power loss): Engine.unfinishedImports() offers it for resuming.
CREATE TABLE import_jobs (
  id            text PRIMARY KEY,
  collection_id text NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  root          text NOT NULL,
  state         text NOT NULL CHECK (state IN ('running', 'cancelled', 'done', 'failed')),
  started_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz,
  files_total   integer,
  files_done    integer NOT NULL DEFAULT 0,
  error         text
);
CREATE INDEX import_jobs_collection ON import_jobs (collection_id, started_at);

-- Order of the chunk in its document (0-based), for a passage's neighbours. The chunk id's
-- ordinal only counts within one heading. NULL for chunks written before this migration.
ALTER TABLE chunks ADD COLUMN position integer;
`,
  },
  {
    version: 4,
    name: 'keyword postings kept in memory: chunk write order and tombstones (ADR 0009)',
    sql: `
-- The order chunk rows were written in, never reused: the in-memory keyword postings
-- (store/postings.ts) read the chunks written since they last looked as seq > their watermark.
-- Rows written before this migration keep NULL (no table rewrite, which would rebuild the HNSW
-- indexes); they are read by the full build, and deleting one leaves a tombstone all the same.
CREATE SEQUENCE chunk_seq AS bigint;
ALTER TABLE chunks ADD COLUMN seq bigint;
ALTER TABLE chunks ALTER COLUMN seq SET DEFAULT nextval('chunk_seq');
CREATE INDEX chunks_seq ON chunks (seq);

-- One row per chunk row deleted (or rewritten in its keyword fields), in commit order for the one
-- writer: postings in memory drop the chunk whose id and seq match. Pruned after a sync up to what
-- the process's own postings have read; pruned_through says how far, so postings that are older
-- rebuild instead of missing a deletion.
CREATE TABLE chunk_tombstones (
  id        bigserial PRIMARY KEY,
  chunk_id  text NOT NULL,
  seq       bigint
);
CREATE TABLE chunk_tombstones_pruned (
  one            boolean PRIMARY KEY DEFAULT true CHECK (one),
  pruned_through bigint NOT NULL
);
INSERT INTO chunk_tombstones_pruned (pruned_through) VALUES (0);

CREATE FUNCTION chunks_tombstone_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chunk_tombstones (chunk_id, seq) SELECT id, seq FROM gone;
  RETURN NULL;
END $$;
CREATE TRIGGER chunks_tombstone_deleted AFTER DELETE ON chunks
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION chunks_tombstone_deleted();

-- A chunk whose searchable fields change in place is, to the postings, deleted and written anew.
CREATE FUNCTION chunks_tombstone_rewritten() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.id, NEW.collection_id, NEW.version, NEW.heading, NEW.text, NEW.exact_terms, NEW.lex_len)
     IS DISTINCT FROM (OLD.id, OLD.collection_id, OLD.version, OLD.heading, OLD.text, OLD.exact_terms, OLD.lex_len) THEN
    INSERT INTO chunk_tombstones (chunk_id, seq) VALUES (OLD.id, OLD.seq);
    NEW.seq := nextval('chunk_seq');
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER chunks_tombstone_rewritten BEFORE UPDATE ON chunks
  FOR EACH ROW EXECUTE FUNCTION chunks_tombstone_rewritten();
`,
  },
  {
    version: 5,
    name: 'several writers on a server: chunk writes take turns, tombstones carry their time (ADR 0010)',
    sql: `
-- Every transaction that writes chunk rows takes one transaction-scoped advisory lock before its
-- first chunk statement, so chunk transactions commit in the order they drew chunk_seq and
-- tombstone ids: a reader that has seen seq N has seen every chunk below it. Readers never take
-- it. Embedded (one connection) it is always free.
CREATE FUNCTION chunks_write_turn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(7234, 1);
  RETURN NULL;
END $$;
CREATE TRIGGER chunks_write_turn BEFORE INSERT OR UPDATE OR DELETE ON chunks
  FOR EACH STATEMENT EXECUTE FUNCTION chunks_write_turn();

-- On a server other processes' postings read the tombstones too: they are pruned only once old.
ALTER TABLE chunk_tombstones ADD COLUMN at timestamptz NOT NULL DEFAULT now();
`,
  },
  {
    version: 6,
    name: 'import jobs name the engine running them (several processes on a server)',
    sql: `
-- The pool id of the engine running a job ("docent <owner>" is its connections' application_name),
-- so a job another live process is running is not taken for an interrupted one. NULL embedded.
ALTER TABLE import_jobs ADD COLUMN owner text;
`,
  },
  {
    version: 7,
    name: 'answers say which collections they read and threads who made them (permissions, ADR 0011)',
    sql: `
-- The collections a trace or a conversation turn was answered from (its resolved scope): on a
-- server a role reads a trace or turn only when it may read all of them (migration 8). NULL for
-- rows written before this migration: only the library's owner sees those there.
ALTER TABLE traces ADD COLUMN collections text[];
ALTER TABLE messages ADD COLUMN collections text[];
-- The role that started the thread: on a server each role sees its own threads.
ALTER TABLE threads ADD COLUMN made_by text NOT NULL DEFAULT current_user;
ALTER TABLE messages ADD COLUMN made_by text NOT NULL DEFAULT current_user;
-- The next turn's number, kept on the thread: on a server a role may not see every earlier turn
-- (one of a collection it may no longer read), so max(seq) over what it sees could collide.
ALTER TABLE threads ADD COLUMN next_seq integer;

-- The collections the connecting role may read; NULL means every one. Embedded that is always
-- every one; on a server migration 8 replaces it with the role's grants.
CREATE FUNCTION docent_readable_collections() RETURNS text[] LANGUAGE sql STABLE AS $$ SELECT NULL::text[] $$;
`,
  },
  {
    version: 8,
    name: 'team library: row-level security per collection, through per-collection read roles (ADR 0011)',
    serverOnly: true,
    sql: `
-- Which role grants reading which collection: docent access grant <role> <collection> creates the
-- read role (docent_<database>_read_<collection>), records it here and grants it to <role>. Kept without a
-- foreign key: a collection removed and imported again under its name keeps its readers.
CREATE TABLE docent_collection_access (
  collection_id text PRIMARY KEY,
  read_role     text NOT NULL UNIQUE
);

-- Full access: the role that owns the library's tables (the importer that created them) and every
-- role that is a member of it. Imports, watch and migrations need it; superusers have it anyway.
CREATE FUNCTION docent_full_access() RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT pg_has_role(current_user, c.relowner, 'MEMBER') FROM pg_class c WHERE c.oid = 'docent_collection_access'::regclass
$$;

-- The collections the connecting role may read: NULL (every one) with full access, else those
-- whose read role it is a member of, directly or through other roles. A read role dropped by
-- hand grants nothing (the join), instead of making pg_has_role fail.
CREATE OR REPLACE FUNCTION docent_readable_collections() RETURNS text[] LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN docent_full_access() THEN NULL::text[] ELSE coalesce(
    (SELECT array_agg(a.collection_id ORDER BY a.collection_id)
       FROM docent_collection_access a JOIN pg_roles r ON r.rolname = a.read_role
      WHERE pg_has_role(current_user, r.oid, 'MEMBER')), '{}'::text[]) END
$$;

-- Policies call the functions as (SELECT f()): an InitPlan, evaluated once per statement, not per row.
-- FORCE binds the owner too: it passes by docent_full_access(), the same rule as its members.
ALTER TABLE docent_collection_access ENABLE ROW LEVEL SECURITY;
ALTER TABLE docent_collection_access FORCE ROW LEVEL SECURITY;
CREATE POLICY docent_full ON docent_collection_access FOR ALL
  USING ((SELECT docent_full_access())) WITH CHECK ((SELECT docent_full_access()));
CREATE POLICY docent_read ON docent_collection_access FOR SELECT
  USING (EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = read_role AND pg_has_role(current_user, r.oid, 'MEMBER')));

-- Content and what is derived from it, keyed on its collection: full access writes, readers read
-- the collections they were granted.
DO $$
DECLARE t text; col text;
BEGIN
  FOR t, col IN VALUES ('collections', 'id'), ('documents', 'collection_id'), ('chunks', 'collection_id'),
                       ('term_stats', 'collection_id'), ('import_jobs', 'collection_id') LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY docent_full ON %I FOR ALL USING ((SELECT docent_full_access())) WITH CHECK ((SELECT docent_full_access()))', t);
    EXECUTE format('CREATE POLICY docent_read ON %I FOR SELECT USING (%I = ANY ((SELECT docent_readable_collections())::text[]))', t, col);
  END LOOP;
  -- Answers: a role reads, writes and deletes traces and cached answers only of collections it may
  -- all read (an empty list, small talk, is no collection's content).
  FOR t IN VALUES ('traces'), ('answer_cache') LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY docent_full ON %I FOR ALL USING ((SELECT docent_full_access())) WITH CHECK ((SELECT docent_full_access()))', t);
    EXECUTE format('CREATE POLICY docent_read ON %I FOR ALL USING (collections <@ (SELECT docent_readable_collections())) WITH CHECK (collections <@ (SELECT docent_readable_collections()))', t);
  END LOOP;
END $$;

-- Conversations are their maker's; each turn also needs every collection it was answered from.
ALTER TABLE threads ENABLE ROW LEVEL SECURITY;
ALTER TABLE threads FORCE ROW LEVEL SECURITY;
CREATE POLICY docent_full ON threads FOR ALL USING ((SELECT docent_full_access())) WITH CHECK ((SELECT docent_full_access()));
CREATE POLICY docent_own ON threads FOR ALL USING (made_by = current_user) WITH CHECK (made_by = current_user);
ALTER TABLE messages ENABLE ROW LEVEL SECURITY;
ALTER TABLE messages FORCE ROW LEVEL SECURITY;
CREATE POLICY docent_full ON messages FOR ALL USING ((SELECT docent_full_access())) WITH CHECK ((SELECT docent_full_access()));
CREATE POLICY docent_own ON messages FOR ALL
  USING (made_by = current_user AND collections <@ (SELECT docent_readable_collections()))
  WITH CHECK (made_by = current_user AND collections <@ (SELECT docent_readable_collections()));

-- Vectors of chunk text, keyed by text alone: only imports read them.
ALTER TABLE embedding_cache ENABLE ROW LEVEL SECURITY;
ALTER TABLE embedding_cache FORCE ROW LEVEL SECURITY;
CREATE POLICY docent_full ON embedding_cache FOR ALL USING ((SELECT docent_full_access())) WITH CHECK ((SELECT docent_full_access()));
`,
  },
  {
    version: 9,
    name: 'the newest chunk row as one cheap call, past row-level security (store-mark.ts)',
    sql: `
-- How far the chunk rows go: the keyword postings' store mark (store-mark.ts) reads it on every
-- keyword search. Under row-level security a reader's max(seq) walks back over every newer row of
-- a collection it may not read (a neighbour's large import) before it finds one of its own; as
-- the owner (SECURITY DEFINER) it is one step down the seq index. It tells a reader only that
-- chunk rows were written somewhere, never what or where. Embedded there are no policies and the
-- function is the same one step.
CREATE FUNCTION docent_chunk_seq() RETURNS bigint LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
  SELECT max(seq) FROM chunks
$$;
`,
  },
  {
    version: 10,
    name: 'pages read by text recognition: per document, each page with its confidence and word boxes',
    sql: `
-- Pages whose text came from text recognition (scans, images: parsers/ocr.ts). ocr_pages holds
-- one entry per recognised page, {"page": 3, "confidence": 91, "words": [["text", x0, y0, x1, y1], ...]}
-- with boxes as fractions of the page, so the viewer can draw a passage's words on the page at any
-- scale; a page not in it was read from its text layer. The two counts keep the library's list
-- from reading the boxes. Columns of documents, so its row-level security covers them too.
ALTER TABLE documents ADD COLUMN ocr_pages jsonb;
ALTER TABLE documents ADD COLUMN ocr_page_count integer NOT NULL DEFAULT 0;
ALTER TABLE documents ADD COLUMN ocr_low_pages integer NOT NULL DEFAULT 0;
`,
  },
]

/** The newest migration's version: a library at it needs none. */
export const LATEST_MIGRATION = MIGRATIONS[MIGRATIONS.length - 1]!.version

/**
 * What the migrations make, as a name: the newest version and a hash of every migration's SQL, so
 * a template made by other migrations (store/template.ts) is never taken for this schema's.
 */
export const SCHEMA_MARK = `m${LATEST_MIGRATION}-${createHash('sha256')
  .update(MIGRATIONS.map((m) => `${m.version}\n${m.serverOnly ? 'server' : 'all'}\n${m.sql}`).join('\n'))
  .digest('hex')
  .slice(0, 10)}`

/** The advisory lock key migrations run under, so two processes opening one server never both migrate. */
export const MIGRATION_LOCK = 0x646f63656e74 // 'docent'

/** Thrown when the schema needs migrating and this connection may not (a read-only role, or readOnly). */
export class SchemaBehindError extends Error {
  constructor(
    readonly at: number,
    readonly needed: number,
    cause?: unknown,
  ) {
    super(
      `the library's schema is at version ${at} and this Docent needs version ${needed}; it cannot be migrated ` +
        `with this connection (read-only${cause instanceof Error ? `: ${cause.message}` : ''}). Open it once with ` +
        `a role that has CREATE on the schema (an importer, e.g. docent collections --database <url>), then again with this one`,
    )
  }
}

/** The schema version the store is at (0 for a new one), read without writing anything. */
export async function schemaVersion(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`)
  if (!rows[0]?.t) return 0
  const { rows: v } = await db.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations')
  return Number(v[0]?.v ?? 0)
}

/**
 * Brings the schema up to date. Each migration runs in its own transaction under an advisory lock
 * and checks again, inside it, whether another process applied it meanwhile. A store already up to
 * date is only read (a read-only role opens it); `readOnly` refuses to migrate one that is not.
 */
export async function migrate(db: Db, opts: { readOnly?: boolean } = {}): Promise<number> {
  const latest = MIGRATIONS[MIGRATIONS.length - 1]!.version
  const at = await schemaVersion(db)
  if (at >= latest) return at
  if (opts.readOnly) throw new SchemaBehindError(at, latest)
  try {
    await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
      await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
    })
    let current = 0
    for (const m of MIGRATIONS) {
      await db.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
        const { rows } = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version])
        if (rows.length > 0) return
        if (!m.serverOnly || db.kind === 'server') await tx.exec(m.sql)
        await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name])
      })
      current = m.version
    }
    return current
  } catch (err) {
    if ((err as { code?: unknown }).code === '42501') throw new SchemaBehindError(at, latest, err)
    throw err
  }
}
