/** Rounds to `digits` decimals: traces, reports and timings keep numbers short enough to read. */
export function round(x: number, digits: number): number {
  const f = 10 ** digits
  return Math.round(x * f) / f
}
