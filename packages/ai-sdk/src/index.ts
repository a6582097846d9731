export { engramMiddleware, type EngramMiddlewareOptions, type TurnsMemory } from './engram-middleware.js'
export { memoryTools, type MemoryToolsOptions, type ToolsMemory } from './memory-tools.js'
export type { ToolFailure } from './tool-result.js'
