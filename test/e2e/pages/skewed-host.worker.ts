// The worker host with a wall clock off by the skew in its name (`skew:<ms>`): a device whose clock is wrong.
import { exposeMemory } from '@engram/worker'

const skewMs = Number(/^skew:(-?\d+)$/.exec(self.name)?.[1] ?? 0)
exposeMemory({ memory: { now: () => Date.now() + skewMs } })
