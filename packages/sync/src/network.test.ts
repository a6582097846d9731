import { afterEach, describe, expect, it, vi } from 'vitest'
import { defaultNetwork, isOnline, watchNetwork } from './network.js'

afterEach(() => {
  vi.useRealTimers()
  vi.unstubAllGlobals()
})

describe('network watching', () => {
  it('has no default network in plain Node (no global addEventListener)', () => {
    expect(defaultNetwork()).toBeUndefined()
  })

  it('follows online/offline events of an injected target, once per change', () => {
    const target = new EventTarget()
    const seen: boolean[] = []
    const stop = watchNetwork(target, (online) => seen.push(online))
    expect(isOnline(target)).toBe(true)
    target.dispatchEvent(new Event('offline'))
    target.dispatchEvent(new Event('offline'))
    target.dispatchEvent(new Event('online'))
    stop()
    target.dispatchEvent(new Event('offline'))
    expect(seen).toEqual([false, true])
  })

  it('reads navigator.onLine of the global scope every second, for workers that get no events', () => {
    vi.useFakeTimers()
    const events = new EventTarget()
    const nav = { onLine: true }
    vi.stubGlobal('navigator', nav)
    vi.stubGlobal('addEventListener', events.addEventListener.bind(events))
    vi.stubGlobal('removeEventListener', events.removeEventListener.bind(events))
    const network = defaultNetwork()
    expect(network).toBe(globalThis)
    const seen: boolean[] = []
    const stop = watchNetwork(network!, (online) => seen.push(online))
    nav.onLine = false
    expect(isOnline(network!)).toBe(false)
    vi.advanceTimersByTime(1_000)
    expect(seen).toEqual([false])
    events.dispatchEvent(new Event('offline')) // the event after the poll changes nothing
    nav.onLine = true
    events.dispatchEvent(new Event('online'))
    expect(seen).toEqual([false, true])
    vi.advanceTimersByTime(3_000)
    expect(seen).toEqual([false, true])
    stop()
    nav.onLine = false
    vi.advanceTimersByTime(3_000)
    expect(seen).toEqual([false, true])
  })
})
