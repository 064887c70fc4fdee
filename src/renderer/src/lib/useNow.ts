import { useEffect, useState } from 'react'

/**
 * Date.now(), refreshed every `everyMs` while `active`: a wait shown on screen keeps ticking when
 * no event arrives (a model reading its prompt, an embedding batch) instead of looking frozen.
 */
export function useNow(active: boolean, everyMs = 1000): number {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    if (!active) return
    setNow(Date.now())
    const id = setInterval(() => setNow(Date.now()), everyMs)
    return () => clearInterval(id)
  }, [active, everyMs])
  return now
}
