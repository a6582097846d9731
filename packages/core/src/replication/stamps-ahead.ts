import { MAX_LISTED_STAMPS_AHEAD, type StampAheadRecord, type WarningBody } from '../store/status.js'
import { readHlc } from '../store/hlc.js'
import type { SyncRecordProblem } from './sync-api.js'

/**
 * The `stamps_ahead` warning of a device: every record its synced projects hold at a stamp far
 * ahead of its clock (sync lists each as a `clock_ahead` problem of its project), the furthest
 * ahead first. Undefined when there is none.
 */
export function stampsAheadWarningOf(problemsByProject: ReadonlyMap<string, readonly SyncRecordProblem[]>): WarningBody<'stamps_ahead'> | undefined {
  const all: StampAheadRecord[] = []
  for (const [projectId, problems] of problemsByProject)
    for (const p of problems) {
      if (p.type !== 'clock_ahead') continue
      const record: StampAheadRecord = { projectId, kind: p.kind, id: p.id, hlc: p.hlc, deviceId: p.deviceId ?? readHlc(p.hlc)?.deviceId ?? '' }
      if (p.name !== undefined) record.name = p.name
      all.push(record)
    }
  if (all.length === 0) return undefined
  all.sort((a, b) => (a.hlc < b.hlc ? 1 : a.hlc > b.hlc ? -1 : 0))
  const first = all[0]!
  const devices = [...new Set(all.map((r) => r.deviceId))]
  const when = new Date(readHlc(first.hlc)?.physical ?? 0).toISOString()
  const what = `${first.kind} ${JSON.stringify(first.name ?? first.id)} of project ${JSON.stringify(first.projectId)}, stamped ${when}`
  const message =
    `${all.length === 1 ? 'A synced record carries a stamp' : `${all.length} synced records carry stamps`} far ahead of this device's clock (${all.length === 1 ? '' : 'furthest: '}${what}), ` +
    `written by ${devices.length === 1 ? 'device' : 'devices'} ${devices.join(', ')} whose clock is wrong. Every device applies them alike and the next edit of each wins; set that device's clock right.`
  return { message, count: all.length, records: all.slice(0, MAX_LISTED_STAMPS_AHEAD) }
}
