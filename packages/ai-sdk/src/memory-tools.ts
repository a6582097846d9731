import { type Json, type Memory, MemoryError } from '@engram/core'
import { tool } from 'ai'
import { z } from 'zod'
import { asToolResult } from './tool-result.js'

/** What {@link memoryTools} needs of a memory: facts and blocks, archive and search. */
export type ToolsMemory = Pick<Memory, 'facts' | 'blocks' | 'archive' | 'search'>

/** Options of {@link memoryTools}. */
export interface MemoryToolsOptions {
  /** The project the tools read and write. */
  projectId: string
}

const json: z.ZodType<Json> = z.lazy(() => z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(json), z.record(z.string(), json)]))
const limit = z.number().int().min(1).max(50).optional().describe('How many results at most (default 5).')

/**
 * AI SDK tools for a model that manages its own memory in one Engram project:
 * facts (`remember`, `recall`, `forget`), core memory blocks in Letta's
 * conventions (`core_memory_append`, `core_memory_replace`) and the archive
 * (`archival_memory_insert`, `archival_memory_search`). A failing call returns
 * `{ ok: false, error: { code, message } }` for the model to read; it never
 * throws and ends the loop.
 *
 * @throws MemoryError `invalid_input` for a missing `projectId` or a memory without these namespaces.
 * @example
 * const { text } = await generateText({
 *   model, tools: memoryTools(memory, { projectId }), stopWhen: stepCountIs(5),
 *   prompt: 'Remember that I prefer dark mode.',
 * })
 */
export function memoryTools(memory: ToolsMemory, options: MemoryToolsOptions) {
  const projectId = checkToolsOptions(memory, options)
  return {
    remember: tool({
      description:
        'Store a fact about the user or the task under a short key (snake_case). Writing a key again replaces its value and keeps the old one in history.',
      inputSchema: z.object({
        key: z.string().min(1).max(200).describe('A stable key, e.g. "favourite_colour".'),
        value: json.describe('The value: text, number, boolean, list or object.'),
        confidence: z.number().min(0).max(1).optional().describe('How sure you are, 0–1 (default 1).'),
        tags: z.array(z.string().min(1).max(100)).max(20).optional(),
      }),
      execute: ({ key, value, confidence, tags }) =>
        asToolResult(async () => {
          const fact = await memory.facts.set(projectId, key, value, { confidence, tags, source: { tool: 'remember' } })
          return { key: fact.key, value: fact.value, version: fact.version }
        }),
    }),
    recall: tool({
      description: 'Look up stored facts: by exact key, or by a search query over keys and values. With neither, lists facts by key.',
      inputSchema: z.object({ key: z.string().min(1).max(200).optional(), query: z.string().min(1).max(1000).optional(), limit }),
      execute: ({ key, query, limit: n = 5 }) =>
        asToolResult(async () => {
          if (key !== undefined) {
            const fact = await memory.facts.get(projectId, key)
            return { facts: fact === undefined ? [] : [{ key: fact.key, value: fact.value }] }
          }
          if (query !== undefined) {
            const hits = await memory.search(projectId, query, { kinds: ['fact'], limit: n })
            return { facts: hits.map((h) => ({ text: h.text, score: h.score })) }
          }
          const page = await memory.facts.list(projectId, { limit: n })
          return { facts: page.items.map((f) => ({ key: f.key, value: f.value })), more: page.next !== undefined }
        }),
    }),
    forget: tool({
      description: 'Forget a stored fact by key (it can be restored by the app).',
      inputSchema: z.object({ key: z.string().min(1).max(200) }),
      execute: ({ key }) => asToolResult(async () => ({ forgotten: await memory.facts.delete(projectId, key) })),
    }),
    core_memory_append: tool({
      description: 'Append text to a core memory block (e.g. "human" or "persona"), always in your context. Creates the block if missing.',
      inputSchema: z.object({ label: z.string().min(1).max(100), content: z.string().min(1).max(10_000) }),
      execute: ({ label, content }) =>
        asToolResult(async () => {
          const block = await memory.blocks.append(projectId, label, content)
          return { label: block.label, length: block.value.length, limit: block.limit }
        }),
    }),
    core_memory_replace: tool({
      description: 'Replace the exact text old_content with new_content in a core memory block. Use an empty new_content to delete.',
      inputSchema: z.object({ label: z.string().min(1).max(100), old_content: z.string().min(1), new_content: z.string() }),
      execute: ({ label, old_content, new_content }) =>
        asToolResult(async () => {
          if (!(await memory.blocks.replace(projectId, label, old_content, new_content))) {
            throw new MemoryError('not_found', `Block "${label}" does not contain that exact old_content; read the block and copy the text exactly`)
          }
          return { label }
        }),
    }),
    archival_memory_insert: tool({
      description: 'Save a passage to long-term archival memory (not in context; find it later with archival_memory_search).',
      inputSchema: z.object({ content: z.string().min(1).max(200_000), tags: z.array(z.string().min(1).max(100)).max(20).optional() }),
      execute: ({ content, tags }) =>
        asToolResult(async () => ({ id: (await memory.archive.create(projectId, content, { tags, source: { tool: 'archival_memory_insert' } })).id })),
    }),
    archival_memory_search: tool({
      description: 'Search archival memory by meaning and keywords; best matches first.',
      inputSchema: z.object({ query: z.string().min(1).max(10_000), limit }),
      execute: ({ query, limit: n = 5 }) =>
        asToolResult(async () => {
          const hits = await memory.search(projectId, query, { kinds: ['passage'], limit: n })
          return { passages: hits.map((h) => ({ id: h.id, text: h.text, score: h.score })) }
        }),
    }),
  }
}

function checkToolsOptions(memory: ToolsMemory, options: MemoryToolsOptions): string {
  for (const ns of ['facts', 'blocks', 'archive'] as const) {
    if (typeof memory?.[ns] !== 'object' || memory[ns] === null)
      throw new MemoryError('invalid_input', `memoryTools needs a memory with ${ns} (openMemory, or createMemory with its module)`)
  }
  if (typeof memory.search !== 'function') throw new MemoryError('invalid_input', 'memoryTools needs a memory with search (searchModule)')
  if (typeof options !== 'object' || options === null) throw new MemoryError('invalid_input', 'memoryTools options must be { projectId }')
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && key !== 'projectId') throw new MemoryError('invalid_input', `memoryTools does not know the option "${key}"`)
  }
  const { projectId } = options
  if (typeof projectId !== 'string' || projectId === '' || projectId.trim() !== projectId)
    throw new MemoryError('invalid_input', 'memoryTools projectId must be a non-empty string')
  return projectId
}
