import { z } from 'zod'

/** What a model is for: embedding passages and questions, reranking passages, or writing answers. */
export const ModelRole = z.enum(['embedding', 'reranker', 'llm'])
export type ModelRole = z.infer<typeof ModelRole>

export const MODEL_ROLES: readonly ModelRole[] = ModelRole.options

export function isModelRole(value: unknown): value is ModelRole {
  return ModelRole.safeParse(value).success
}
