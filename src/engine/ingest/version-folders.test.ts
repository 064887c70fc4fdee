import { afterAll, describe, expect, it } from 'vitest'
import { compareVersions, latestVersion } from '../../shared/versions'
import { LayoutTrees, pages, verdicts } from '../../test-support/layout-trees'

/**
 * Version folders that no single tool's marker file announces, in the shapes real documentation
 * trees have them: API docs in `v1/`, `v2/` (Mintlify's and VitePress's own guides put versions
 * there), release lines (`10.x/` as Laravel's docs, `3.0.x/` as the Pallets projects'), Sphinx
 * builds served without a language folder (Python's `3.12/`, `3/`, `dev/`), numbered releases with
 * a `current/` link (PostgreSQL's `16/`, `current/`, `devel/`), downloaded archives
 * (`python-3.12.1-docs-html/`), and the near misses that must stay unversioned.
 */
const trees = new LayoutTrees()
afterAll(() => trees.cleanup())

describe('single-number versions (v1/, v2/, v10/)', () => {
  it('reads v1/, v2/, v10/ as versions when they stand beside each other', async () => {
    const site = {
      'docs/.vitepress/config.mts': 'export default { title: "Widget API" }\n',
      'docs/index.md': '# Widget API\n',
      'docs/guides/auth.md': '# Authentication\n',
      'docs/v1/getting-started.md': '# Getting started\n',
      'docs/v1/endpoints/users.md': '# Users\n',
      'docs/v2/getting-started.md': '# Getting started\n',
      'docs/v2/endpoints/users.md': '# Users\n',
      'docs/v10/getting-started.md': '# Getting started\n',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      'docs/index.md': [null, 'Docs'],
      'docs/guides/auth.md': [null, 'Docs'],
      'docs/v1/getting-started.md': ['v1', null],
      // The source kind is read inside the version's folder, the same in every version.
      'docs/v1/endpoints/users.md': ['v1', 'Endpoints'],
      'docs/v2/getting-started.md': ['v2', null],
      'docs/v2/endpoints/users.md': ['v2', 'Endpoints'],
      'docs/v10/getting-started.md': ['v10', null],
    })
  })

  it('leaves a lone v1/, numbered chapters, years and lessons unversioned', async () => {
    const site = {
      // An API's only version is no choice of versions: the folder is part of the address.
      'service/api/v1/users.md': '# Users\n',
      'service/api/errors.md': '# Errors\n',
      'book/1/intro.md': '# Intro\n',
      'book/2/setup.md': '# Setup\n',
      'book/3/deploy.md': '# Deploy\n',
      'blog/2023/launch.md': '# Launch\n',
      'blog/2024/pricing.md': '# Pricing\n',
      'lessons/01/basics.md': '# Basics\n',
      'lessons/02/loops.md': '# Loops\n',
      'course/chapter-1/a.md': '# A\n',
      'course/chapter-2/a.md': '# A\n',
      'course/chapter-1.1/a.md': '# A\n',
      'course/chapter-1.2/a.md': '# A\n',
      'setup/python-3.12/install.md': '# Install\n',
      'notes/version-2/x.md': '# X\n',
      // npm scopes in a monorepo are @ folders too, but not Redocly's.
      'packages/@acme/widget/README.md': '# Widget\n',
      'packages/@babel/core/README.md': '# Core\n',
    }
    const rows = await verdicts(await trees.tree(site), pages(site))
    expect(Object.values(rows).map((r) => r[0])).toEqual(Object.keys(site).map(() => null))
  })

  it('reads API versions that stand side by side as versions, pre-releases included', async () => {
    // Decided: two versions of one API side by side are versions of its docs (a question about
    // v2 wants v2's pages); Kubernetes' v2beta2 is a pre-release of v2.
    const site = {
      'apis/autoscaling/v1/horizontalpodautoscaler.md': '# HorizontalPodAutoscaler\n',
      'apis/autoscaling/v2/horizontalpodautoscaler.md': '# HorizontalPodAutoscaler\n',
      'apis/autoscaling/v2beta2/horizontalpodautoscaler.md': '# HorizontalPodAutoscaler\n',
      'apis/apps/v1/deployment.md': '# Deployment\n',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      'apis/autoscaling/v1/horizontalpodautoscaler.md': ['v1', null],
      'apis/autoscaling/v2/horizontalpodautoscaler.md': ['v2', null],
      'apis/autoscaling/v2beta2/horizontalpodautoscaler.md': ['v2beta2', null],
      'apis/apps/v1/deployment.md': [null, 'Apis'],
    })
  })
})

describe('release lines (10.x/, v3.x/, 3.0.x/)', () => {
  it('reads X.x and X.Y.x folders as versions under their own names, even alone', async () => {
    const site = {
      'laravel/10.x/installation.md': '# Installation\n',
      'laravel/11.x/installation.md': '# Installation\n',
      'laravel/9.x/routing.md': '# Routing\n',
      'flask/3.0.x/quickstart.html': '<h1>Quickstart</h1>',
      'mongoose/v3.x/guide.md': '# Guide\n',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      'laravel/10.x/installation.md': ['10.x', 'Laravel'],
      'laravel/11.x/installation.md': ['11.x', 'Laravel'],
      'laravel/9.x/routing.md': ['9.x', 'Laravel'],
      'flask/3.0.x/quickstart.html': ['3.0.x', 'Flask'],
      'mongoose/v3.x/guide.md': ['v3.x', 'Mongoose'],
    })
  })
})

describe('Sphinx builds without a language folder', () => {
  const options = (v: string) => `const DOCUMENTATION_OPTIONS = {\n    VERSION: '${v}',\n    LANGUAGE: 'en',\n};\n`

  it("reads Python's 3.12/, 3.11/ and dev/, and skips 3/ as the copy of 3.12 its build says it is", async () => {
    const site = {
      '3.12/library/json.html': '<h1>json</h1>',
      '3.12/_static/documentation_options.js': options('3.12.1'),
      '3.11/library/json.html': '<h1>json</h1>',
      '3.11/_static/documentation_options.js': options('3.11.7'),
      '3/library/json.html': '<h1>json</h1>',
      '3/_static/documentation_options.js': options('3.12.1'),
      'dev/library/json.html': '<h1>json</h1>',
      'dev/_static/documentation_options.js': options('3.13.0a2'),
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      // A folder named as a release is read by the path rule, which takes no source kind from it.
      '3.12/library/json.html': ['3.12', null],
      '3.11/library/json.html': ['3.11', null],
      '3/library/json.html': ['3.12', 'Library', 'a copy of version 3.12 (its Sphinx build is 3.12.1)'],
      // The development build, a pre-release: never "latest".
      'dev/library/json.html': ['dev', 'Library'],
    })
  })

  it('reads stable/ and latest/ beside version folders at the top of a build, as Read the Docs does under en/', async () => {
    const site = {
      'html/v2.0/index.html': '<h1>A</h1>',
      'html/v2.1/index.html': '<h1>A</h1>',
      'html/stable/index.html': '<h1>A</h1>',
      'html/stable/_static/documentation_options.js': options('v2.1'),
      'html/main/index.html': '<h1>A</h1>',
      'html/latest/index.html': '<h1>A</h1>',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      'html/v2.0/index.html': ['v2.0', null],
      'html/v2.1/index.html': ['v2.1', null],
      'html/stable/index.html': ['v2.1', null, 'a copy of version v2.1 (its Sphinx build is v2.1)'],
      'html/main/index.html': ['main', null],
      'html/latest/index.html': ['latest', null],
    })
  })
})

describe('numbered releases with alias links (PostgreSQL, typedoc-plugin-versions)', () => {
  it('reads 16/ and 15/ beside 9.6/, skips current/ (a link to 16/) as a copy, and names devel/ a pre-release', async () => {
    const site = {
      '16/tutorial-start.html': '<h1>Getting Started</h1>',
      '15/tutorial-start.html': '<h1>Getting Started</h1>',
      '9.6/tutorial-start.html': '<h1>Getting Started</h1>',
      'devel/tutorial-start.html': '<h1>Getting Started</h1>',
    }
    const root = await trees.tree(site, { current: '16' })
    expect(await verdicts(root, [...pages(site), 'current/tutorial-start.html'])).toEqual({
      '16/tutorial-start.html': ['16', null],
      '15/tutorial-start.html': ['15', null],
      '9.6/tutorial-start.html': ['9.6', null],
      'devel/tutorial-start.html': ['devel', null],
      'current/tutorial-start.html': ['16', null, 'a copy of version 16 (a link to its folder)'],
    })
  })

  it('skips the stable, dev and minor-version links typedoc-plugin-versions makes beside its builds', async () => {
    const site = {
      'docs/.typedoc-plugin-versions': '{"versions":["v0.2.0","v0.1.1"],"stable":"v0.2.0"}',
      'docs/versions.js': `"use strict"\nexport const DOC_VERSIONS = [\n\t'stable',\n\t'v0.2',\n\t'v0.1',\n];\n`,
      'docs/index.html': '<meta http-equiv="refresh" content="0; url=stable/"/>',
      'docs/v0.2.0/index.html': '<h1>widget</h1>',
      'docs/v0.1.1/index.html': '<h1>widget</h1>',
    }
    const root = await trees.tree(site, { 'docs/v0.2': 'v0.2.0', 'docs/v0.1': 'v0.1.1', 'docs/stable': 'v0.2' })
    expect(
      await verdicts(root, [
        'docs/v0.2.0/index.html',
        'docs/v0.1.1/index.html',
        'docs/v0.2/index.html',
        'docs/stable/index.html',
      ]),
    ).toEqual({
      'docs/v0.2.0/index.html': ['v0.2.0', 'Docs'],
      'docs/v0.1.1/index.html': ['v0.1.1', 'Docs'],
      'docs/v0.2/index.html': ['v0.2.0', null, 'a copy of version v0.2.0 (a link to its folder)'],
      'docs/stable/index.html': ['v0.2.0', null, 'a copy of version v0.2.0 (a link to its folder)'],
    })
  })
})

describe('version words and downloaded archives', () => {
  it('reads release-1.2/ alone, version-2/ beside version-3/, and archives named after their release', async () => {
    const site = {
      'releases/release-1.2/notes.md': '# Notes\n',
      'archive/version-2/guide.md': '# Guide\n',
      'archive/version-3/guide.md': '# Guide\n',
      'python-3.11.7-docs-html/library/json.html': '<h1>json</h1>',
      'python-3.12.1-docs-html/library/json.html': '<h1>json</h1>',
      'flink/flink-docs-release-1.17/index.html': '<h1>Flink</h1>',
      'flink/flink-docs-release-1.18/index.html': '<h1>Flink</h1>',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      'releases/release-1.2/notes.md': ['1.2', null],
      'archive/version-2/guide.md': ['2', null],
      'archive/version-3/guide.md': ['3', null],
      'python-3.11.7-docs-html/library/json.html': ['3.11.7', 'Library'],
      'python-3.12.1-docs-html/library/json.html': ['3.12.1', 'Library'],
      'flink/flink-docs-release-1.17/index.html': ['1.17', null],
      'flink/flink-docs-release-1.18/index.html': ['1.18', null],
    })
  })
})

// Three shapes that came out unversioned before: Boost's releases are written with underscores
// (`boost_1_84_0/` as its archives unpack, `doc/libs/1_84_0/` on its site), Azure's REST API
// versions are dates with a pre-release word, and pre-release builds sit in folders of their own.
describe('releases written with underscores, dated and numbered pre-releases', () => {
  it('reads boost_1_83_0/ beside boost_1_84_0/ and 1_83_0/ beside 1_84_0/ as 1.83.0 and 1.84.0', async () => {
    const site = {
      'boost_1_83_0/libs/asio/doc/overview.html': '<h1>Overview</h1>',
      'boost_1_84_0/libs/asio/doc/overview.html': '<h1>Overview</h1>',
      'site/doc/libs/1_83_0/index.html': '<h1>Boost</h1>',
      'site/doc/libs/1_84_0/index.html': '<h1>Boost</h1>',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      'boost_1_83_0/libs/asio/doc/overview.html': ['1.83.0', 'Libs'],
      'boost_1_84_0/libs/asio/doc/overview.html': ['1.84.0', 'Libs'],
      'site/doc/libs/1_83_0/index.html': ['1.83.0', null],
      'site/doc/libs/1_84_0/index.html': ['1.84.0', null],
    })
  })

  it('leaves a lone underscored name, dates written with underscores and numbered sections unversioned', async () => {
    const site = {
      'boost_1_84_0/index.html': '<h1>Boost</h1>',
      'boost_1_84_0/more/getting_started.html': '<h1>Getting started</h1>',
      'photos/2024_01_15/notes.md': '# Notes\n',
      'photos/2024_01_16/notes.md': '# Notes\n',
      'course/part_1_1/a.md': '# A\n',
      'course/part_1_2/a.md': '# A\n',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      'boost_1_84_0/index.html': [null, 'Boost 1 84 0'],
      'boost_1_84_0/more/getting_started.html': [null, 'Boost 1 84 0'],
      'photos/2024_01_15/notes.md': [null, 'Photos'],
      'photos/2024_01_16/notes.md': [null, 'Photos'],
      'course/part_1_1/a.md': [null, 'Course'],
      'course/part_1_2/a.md': [null, 'Course'],
    })
  })

  it('reads dated pre-releases (2023-01-01-preview/) and numbered pre-release folders (2.0.0-beta.1/) as pre-releases', async () => {
    const site = {
      'Microsoft.Widget/stable/2023-01-01/widget.md': '# Widget\n',
      'Microsoft.Widget/preview/2023-05-01-preview/widget.md': '# Widget\n',
      'docs/1.9/intro.md': '# Intro\n',
      'docs/2.0.0-beta.1/intro.md': '# Intro\n',
      'docs/v3.0.0-rc.2/intro.md': '# Intro\n',
    }
    expect(await verdicts(await trees.tree(site), pages(site))).toEqual({
      'Microsoft.Widget/stable/2023-01-01/widget.md': ['2023-01-01', 'Microsoft.Widget'],
      'Microsoft.Widget/preview/2023-05-01-preview/widget.md': ['2023-05-01-preview', 'Microsoft.Widget'],
      'docs/1.9/intro.md': ['1.9', 'Docs'],
      'docs/2.0.0-beta.1/intro.md': ['2.0.0-beta.1', 'Docs'],
      'docs/v3.0.0-rc.2/intro.md': ['v3.0.0-rc.2', 'Docs'],
    })
    expect(latestVersion(['2023-01-01', '2023-05-01-preview', '1.9', '2.0.0-beta.1', 'v3.0.0-rc.2'])).toBe('2023-01-01')
    expect(latestVersion(['1.9', '2.0.0-beta.1', 'v3.0.0-rc.2'])).toBe('1.9')
    expect(['2023-05-01-preview', '2023-01-01', '2022-11-01-preview'].sort(compareVersions)).toEqual([
      '2023-01-01',
      '2022-11-01-preview',
      '2023-05-01-preview',
    ])
  })
})
