/**
 * `npm run bench`: every package's benchmarks, each printing markdown tables
 * with a baseline measured in the same run. Pass names to run a subset:
 * `npm run bench -- core search`.
 */
import { cpus } from 'node:os'

const suites: Record<string, () => Promise<void>> = {
  core: async () => (await import('./core.js')).runCoreBench(),
  search: async () => (await import('./search.js')).runSearchBench(),
  encryption: async () => (await import('./encryption.js')).runEncryptionBench(),
  recall: async () => (await import('./recall.js')).runRecallBench(),
  runtime: async () => (await import('./runtime.js')).runRuntimeBench(),
  sync: async () => (await import('./sync.js')).runSyncBench(),
  messages: async () => (await import('./messages-sync.js')).runMessagesSyncBench(),
  worker: async () => (await import('./worker.js')).runWorkerBench(),
  browser: async () => (await import('./browser.js')).runBrowserBench(),
  embed: async () => (await import('./embed.js')).runEmbedBench(),
  'agent-path': async () => (await import('./agent-path.js')).runAgentPathBench(),
  relay: async () => (await import('./relay-load.js')).runRelayBench(),
  extraction: async () => (await import('./extraction.js')).runExtractionBench(),
  knowledge: async () => (await import('./knowledge.js')).runKnowledgeBench(),
}

const wanted = process.argv.slice(2)
for (const name of wanted) if (!(name in suites)) throw new Error(`Unknown bench suite ${name}; known: ${Object.keys(suites).join(', ')}`)
// The browser suites take minutes (and the embedder's, in Node too); they run when asked for by name.
const BY_NAME_ONLY = new Set(['browser', 'knowledge', 'embed', 'agent-path'])
const selected = wanted.length > 0 ? wanted : Object.keys(suites).filter((name) => !BY_NAME_ONLY.has(name))

console.log(`# Engram benchmarks — ${new Date().toISOString()} — node ${process.version}, ${cpus().length} cores`)
for (const name of selected) {
  console.log(`\n## ${name}`)
  await suites[name]!()
}
process.exit(0)
