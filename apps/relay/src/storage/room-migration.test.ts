import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { expect, it } from 'vitest'
import { migratedRoomName } from './persistence.js'
import { openSqliteStore } from './persistence-sqlite.js'

it('names a room stored by an earlier relay (whole path decoded) canonically: each segment encoded again', () => {
  expect(migratedRoomName('u1/my project')).toBe('u1/my%20project')
  expect(migratedRoomName('u1/p/s')).toBe('u1/p/s')
  expect(migratedRoomName('u1/caf\u00e9')).toBe('u1/caf%C3%A9')
})

it('renames such rooms when the SQLite store opens, and keeps their updates and bytes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-room-migration-'))
  const first = openSqliteStore(dir)
  await first.appendMany([{ room: 'u1/my project', update: new Uint8Array([1, 2, 3]) }])
  await first.appendMany([{ room: 'u1/plain', update: new Uint8Array([4]) }])
  await first.close()
  const raw = new Database(join(dir, 'relay.sqlite'), { readonly: true })
  expect(raw.prepare('SELECT DISTINCT room FROM updates ORDER BY room').all()).toEqual([{ room: 'u1/my project' }, { room: 'u1/plain' }])
  raw.close()

  const again = openSqliteStore(dir)
  try {
    expect((await again.load('u1/my%20project')).updates).toEqual([new Uint8Array([1, 2, 3])])
    expect((await again.load('u1/my project')).updates).toEqual([])
    expect(await again.usage('u1')).toEqual(
      new Map([
        ['u1/my%20project', 3],
        ['u1/plain', 1],
      ]),
    )
    await again.drop('u1/plain')
    expect((await again.load('u1/plain')).updates).toEqual([])
  } finally {
    await again.close()
  }
})
