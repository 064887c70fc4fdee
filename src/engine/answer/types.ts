/** Fixture models have random weights: they prove the plumbing, never quality. */
export function isFixtureModel(id: string | null | undefined): boolean {
  return !!id && /tiny-random/i.test(id)
}
