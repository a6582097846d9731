export { engramMiddleware, type EngramMiddlewareOptions, type TurnsMemory } from './engram-middleware.js'
export { memoryTools, type MemoryToolsOptions, type ToolsMemory } from './memory-tools.js'
export type { ToolFailure } from './tool-result.js'
export { aiExtractor, toOperations, type AiExtractorOptions } from './ai-extractor.js'
export { PROMPT_LIMITS, type PromptLimits } from './extraction-prompt.js'
export type { ModelOperation } from './extraction-schema.js'
export { aiEmbedder, type AiEmbedder, type AiEmbedderOptions } from './ai-embedder.js'
export {
  knowledgeTools,
  type KnowledgeToolsOptions,
  type KnowledgeMemory,
  type GraphEntity,
  type GraphRelation,
  type KnowledgeGraph,
} from './knowledge-tools.js'
