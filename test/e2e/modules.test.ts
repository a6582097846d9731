import { describe, expect, it } from 'vitest'
import { workerTabs } from './support/worker-tabs.js'
import type {} from './pages/harness.js'

const { profile, tab } = workerTabs()
let users = 0

const user = (): string => `m${++users}-${Date.now().toString(36)}`

describe('limitations, patterns, spaces, artifacts, people and task handles in Chromium, through a worker', () => {
  it('stores artifacts as Blobs in real IndexedDB and uses every new namespace', async () => {
    const page = await tab(await profile())
    await page.evaluate((u) => window.harness.open('dedicated', u), user())
    const result = await page.evaluate(async () => {
      const m = window.harness.memory()
      const space = await m.spaces.create({ name: 'Work', sync: { enabled: false } })
      const project = await m.projects.create({ name: 'Report', spaceId: space.id })
      const bytes = new Uint8Array(256 * 1024).map((_, i) => i % 251)
      const artifact = await m.artifacts.put(project.id, { name: 'data.bin', mimeType: 'application/octet-stream', data: new Blob([bytes]) })
      const got = await m.artifacts.get(artifact.id)
      const back = new Uint8Array(await got!.data!.arrayBuffer())
      const dump = await m.export(project.id)
      const task = await m.tasks.create(project.id, { description: 'send the report', dueAt: Date.now() + 60_000 })
      await m.limitations.store({ title: 'Cannot print', plan: 'Add a printer tool' })
      await m.patterns.observe(project.id, 'Asks for charts', { confidence: 0.8 })
      await m.people.link('chat:1', 'user:1')
      const context = await m.context.build(project.id, { budget: 500 })
      return {
        sameBytes: back.length === bytes.length && back.every((b, i) => b === bytes[i]),
        type: got!.data!.type,
        inSpace: (await m.projects.list({ spaceId: space.id })).map((x) => x.id).includes(project.id),
        base64Length: String((dump.tables.artifacts![0] as { dataBase64?: string }).dataBase64).length,
        cancelled: await m.tasks.cancel(task.handle.toUpperCase()),
        sections: context.sections.map((s) => s.name),
        person: await m.people.resolve('chat:1'),
        badRunId: await m.artifacts.put(project.id, { name: 'x', mimeType: 'text/plain', data: 'x', runId: '' }).then(
          () => 'ok',
          (e: { code?: string }) => e.code,
        ),
      }
    })
    expect(result).toEqual({
      sameBytes: true,
      type: 'application/octet-stream',
      inSpace: true,
      base64Length: Math.ceil((256 * 1024) / 3) * 4,
      cancelled: true,
      sections: ['patterns', 'limitations'],
      person: 'user:1',
      badRunId: 'invalid_input',
    })
  })

  it("adopts another user's database of the same profile", async () => {
    const page = await tab(await profile())
    const anon = user()
    await page.evaluate((u) => window.harness.open('dedicated', u), anon)
    await page.evaluate(async () => {
      const m = window.harness.memory()
      await m.facts.set('user', 'diet', 'vegan')
      await m.artifacts.put('user', { name: 'note.txt', mimeType: 'text/plain', data: 'kept' })
      await m.close()
    })
    await page.evaluate((u) => window.harness.open('dedicated', u), user())
    const result = await page.evaluate(async (other) => {
      const m = window.harness.memory()
      const adopted = await m.adopt(other)
      const [artifact] = (await m.artifacts.list('user')).items
      return {
        merged: adopted.merged,
        diet: (await m.facts.get('user', 'diet'))?.value,
        text: await (await m.artifacts.get(artifact!.id))!.data!.text(),
        alias: await m.people.resolve(other),
      }
    }, anon)
    expect(result).toMatchObject({ diet: 'vegan', text: 'kept' })
    expect(result.merged).toBeGreaterThanOrEqual(2)
    expect(result.alias).not.toBe(anon)
  })
})
