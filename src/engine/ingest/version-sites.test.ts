import { afterAll, describe, expect, it } from 'vitest'
import { LayoutTrees, pages, verdicts } from '../../test-support/layout-trees'

/**
 * Documentation tools whose configuration says which pages belong to which version, each as a
 * tree in the shape the tool writes it: Mintlify (docs.json, and the older mint.json), Redocly
 * (`@v1/` folders with their versions.yaml), vitepress-versioning-plugin (`versions/<v>/` beside
 * `.vitepress/`) and starlight-versions (`src/content/versions/<slug>.json`).
 */
const trees = new LayoutTrees()
afterAll(() => trees.cleanup())

describe('Mintlify', () => {
  it('gives each page of docs.json its navigation version by name; a page listed in every version is unversioned', async () => {
    const docsJson = {
      $schema: 'https://mintlify.com/docs.json',
      theme: 'mint',
      name: 'Widget',
      colors: { primary: '#0D9373' },
      navigation: {
        versions: [
          {
            version: '2.0.0',
            default: true,
            groups: [
              {
                group: 'Getting Started',
                pages: ['v2/overview', 'v2/quickstart', { group: 'Guides', pages: ['v2/guides/pairing'] }, 'support'],
              },
            ],
          },
          { version: '1.0.0', groups: [{ group: 'Getting Started', pages: ['v1/overview', 'v1/quickstart', 'support'] }] },
        ],
      },
    }
    const site = {
      'docs.json': JSON.stringify(docsJson, null, 2),
      'v2/overview.mdx': '---\ntitle: Overview\n---\n',
      'v2/quickstart.mdx': '---\ntitle: Quickstart\n---\n',
      'v2/guides/pairing.mdx': '---\ntitle: Pairing\n---\n',
      'v1/overview.mdx': '---\ntitle: Overview\n---\n',
      'v1/quickstart.mdx': '---\ntitle: Quickstart\n---\n',
      // Not in the navigation, but in a folder whose every listed page is 1.0.0.
      'v1/migrating.mdx': '---\ntitle: Migrating\n---\n',
      'support.mdx': '---\ntitle: Support\n---\n',
      'snippets/contact.mdx': 'Write to us.\n',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      // Under Mintlify's names ("2.0.0"), not the folder's ("v2").
      'v2/overview.mdx': ['2.0.0', null],
      'v2/quickstart.mdx': ['2.0.0', null],
      'v2/guides/pairing.mdx': ['2.0.0', 'Guides'],
      'v1/overview.mdx': ['1.0.0', null],
      'v1/quickstart.mdx': ['1.0.0', null],
      'v1/migrating.mdx': ['1.0.0', null],
      'support.mdx': [null, null],
      'snippets/contact.mdx': [null, 'Snippets'],
    })
  })

  it("reads mint.json's versions, where the current version's pages sit at the top", async () => {
    const mintJson = {
      name: 'Widget',
      versions: ['v2', 'v1'],
      navigation: [
        { group: 'Get Started', version: 'v2', pages: ['introduction', 'quickstart'] },
        { group: 'Get Started', version: 'v1', pages: ['v1/introduction', 'v1/quickstart'] },
        { group: 'Support', pages: ['support'] },
      ],
    }
    const site = {
      'mint.json': JSON.stringify(mintJson, null, 2),
      'introduction.mdx': '---\ntitle: Introduction\n---\n',
      'quickstart.mdx': '---\ntitle: Quickstart\n---\n',
      'v1/introduction.mdx': '---\ntitle: Introduction\n---\n',
      'v1/quickstart.mdx': '---\ntitle: Quickstart\n---\n',
      'support.mdx': '---\ntitle: Support\n---\n',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      'introduction.mdx': ['v2', null],
      'quickstart.mdx': ['v2', null],
      'v1/introduction.mdx': ['v1', null],
      'v1/quickstart.mdx': ['v1', null],
      'support.mdx': [null, null],
    })
  })

  it('reads the version out of a label ("Version 2025-06-18 (latest)", "Draft"), spelt as its folder', async () => {
    // The shape of the MCP docs' docs.json: versions inside tabs, labelled for the dropdown.
    const tab = (name: string, root: string) => ({
      tab: name,
      versions: [
        { version: 'Version 2025-06-18 (latest)', groups: [{ group: 'Basics', pages: [`${root}/2025-06-18/index`] }] },
        { version: 'Version 2025-03-26', groups: [{ group: 'Basics', pages: [`${root}/2025-03-26/index`] }] },
        { version: 'Draft', groups: [{ group: 'Basics', pages: [`${root}/draft/index`] }] },
      ],
    })
    const site = {
      'docs.json': JSON.stringify({
        theme: 'mint',
        navigation: { tabs: [tab('Documentation', 'docs'), tab('Specification', 'specification')] },
      }),
      'docs/2025-06-18/index.mdx': '# MCP\n',
      'docs/2025-03-26/index.mdx': '# MCP\n',
      'specification/2025-06-18/index.mdx': '# Specification\n',
      'specification/draft/index.mdx': '# Specification\n',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      'docs/2025-06-18/index.mdx': ['2025-06-18', 'Docs'],
      'docs/2025-03-26/index.mdx': ['2025-03-26', 'Docs'],
      'specification/2025-06-18/index.mdx': ['2025-06-18', 'Specification'],
      'specification/draft/index.mdx': ['draft', 'Specification'],
    })
  })

  it('takes a docs.json of some other program, or one without versions, as no layout', async () => {
    const site = {
      'docs.json': '{"title": "not Mintlify", "pages": ["a"]}',
      'plain/docs.json': '{"navigation": {"groups": [{"group": "A", "pages": ["v1/a"]}]}}',
      'plain/v1/a.mdx': '# A\n',
      'a.md': '# A\n',
    }
    expect(await verdicts(await trees.tree(site), ['a.md', 'plain/v1/a.mdx'])).toEqual({
      'a.md': [null, null],
      'plain/v1/a.mdx': [null, 'Plain'],
    })
  })
})

describe('Redocly', () => {
  it('reads @-prefixed version folders by their names, with or without versions.yaml', async () => {
    const site = {
      'redocly.yaml': 'apis:\n  museum@v1:\n    root: ./apis/@v1/museum.yaml\n',
      'guides/index.md': '# Guides\n',
      'guides/versions.yaml':
        'default: v2\nversions:\n  - version: v1\n    name: Version 1.0\n  - version: v2\n    name: Version 2.0\n',
      'guides/@v1/getting-started.md': '# Getting started\n',
      'guides/@v2/getting-started.md': '# Getting started\n',
      'guides/@v2/tickets/buy.md': '# Buy tickets\n',
      'changelog/@v1.0/index.md': '# Changelog\n',
      '@theme/components/Banner/README.md': '# Banner\n',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      'guides/index.md': [null, 'Guides'],
      'guides/@v1/getting-started.md': ['v1', null],
      'guides/@v2/getting-started.md': ['v2', null],
      'guides/@v2/tickets/buy.md': ['v2', 'Tickets'],
      'changelog/@v1.0/index.md': ['v1.0', null],
      // Redocly's own folders (@theme, @l10n) are not versions.
      '@theme/components/Banner/README.md': [null, '@Theme'],
    })
  })
})

describe('vitepress-versioning-plugin', () => {
  const config = (latest: string) =>
    `import { defineVersionedConfig } from 'vitepress-versioning-plugin'\n\nexport default defineVersionedConfig(\n  {\n    title: 'Widget',\n    versioning: {\n      ${latest}\n    },\n  },\n  __dirname,\n)\n`

  it('reads docs/versions/<v>/ as v and the pages around it as the latest version its config names', async () => {
    const site = {
      'docs/.vitepress/config.mts': config("latestVersion: '2.0.0',"),
      'docs/.vitepress/sidebars/versioned/1.0.0.json': '[]',
      'docs/versions/1.0.0/guide/intro.md': '# Intro\n',
      'docs/versions/1.1.0/guide/intro.md': '# Intro\n',
      'docs/guide/intro.md': '# Intro\n',
      'docs/index.md': '# Widget\n',
      'README.md': '# Repo\n',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      'docs/versions/1.0.0/guide/intro.md': ['1.0.0', 'Guide'],
      'docs/versions/1.1.0/guide/intro.md': ['1.1.0', 'Guide'],
      'docs/guide/intro.md': ['2.0.0', 'Guide'],
      'docs/index.md': ['2.0.0', null],
      'README.md': [null, null],
    })
  })

  it('calls the pages around versions/ "current" when the config does not name the latest version', async () => {
    const site = {
      'docs/.vitepress/config.mts': config(''),
      'docs/versions/1.0.0/guide/intro.md': '# Intro\n',
      'docs/guide/intro.md': '# Intro\n',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      'docs/versions/1.0.0/guide/intro.md': ['1.0.0', 'Guide'],
      'docs/guide/intro.md': ['current', 'Guide'],
    })
  })
})

describe('starlight-versions', () => {
  it('reads src/content/docs/<slug>/ for each archived version and the rest of the docs as "current"', async () => {
    const sidebar = JSON.stringify({ sidebar: [{ label: 'Guides', items: [{ label: 'Example', slug: 'guides/example' }] }] })
    const site = {
      'astro.config.mjs':
        "import starlight from '@astrojs/starlight'\nimport starlightVersions from 'starlight-versions'\n\nexport default {\n  integrations: [starlight({ title: 'Widget', plugins: [starlightVersions({ versions: [{ slug: '1.0' }, { slug: '3-1-2', label: 'v3.1.2' }] })] })],\n}\n",
      'src/content/versions/1.0.json': sidebar,
      'src/content/versions/3-1-2.json': sidebar,
      'src/content/docs/index.mdx': '---\ntitle: Widget\n---\n',
      'src/content/docs/guides/example.md': '---\ntitle: Example\n---\n',
      'src/content/docs/1.0/guides/example.md': '---\ntitle: Example\n---\n',
      'src/content/docs/3-1-2/guides/example.md': '---\ntitle: Example\n---\n',
      'src/content/docs/fr/guides/example.md': '---\ntitle: Exemple\n---\n',
      'src/content/docs/fr/1.0/guides/example.md': '---\ntitle: Exemple\n---\n',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      'src/content/docs/index.mdx': ['current', null],
      'src/content/docs/guides/example.md': ['current', 'Guides'],
      'src/content/docs/1.0/guides/example.md': ['1.0', 'Guides'],
      // A slug is the version's own name, whatever its shape.
      'src/content/docs/3-1-2/guides/example.md': ['3-1-2', 'Guides'],
      'src/content/docs/fr/guides/example.md': ['current', 'Guides'],
      'src/content/docs/fr/1.0/guides/example.md': ['1.0', 'Guides'],
    })
  })
})
