import type { Context, Fact } from '@engram/core'
import type { wrapLanguageModel } from 'ai'
import { scriptedReply } from './scripted-agent.js'

/** A language model as `wrapLanguageModel` takes it. */
type LanguageModel = Parameters<typeof wrapLanguageModel>[0]['model']
type CallOptions = Parameters<Extract<LanguageModel, { specificationVersion: 'v3' }>['doGenerate']>[0]

/** What the scripted model reads besides its prompt. */
export interface ScriptedModelSources {
  /** The context of the current turn (from the middleware's `onBegin`). */
  context(): Context | undefined
  /** The project's facts, for answers a real model would find in its context. */
  facts(): Promise<Fact[]>
}

const emptyContext: Context = { sections: [], text: '', tokens: 0, omitted: [] }

/**
 * A stand-in for a provider's model, in the AI SDK's language model spec: it
 * answers with {@link scriptedReply}, so the demo runs the same path an app
 * with a real model runs — `generateText` on a model wrapped with
 * `engramMiddleware` — without a network or an API key.
 */
export function scriptedModel(sources: ScriptedModelSources): LanguageModel {
  return {
    specificationVersion: 'v3',
    provider: 'engram-demo',
    modelId: 'scripted-agent',
    supportedUrls: {},
    async doGenerate(options) {
      const prompt = userText(options)
      const reply = scriptedReply({ prompt, context: sources.context() ?? emptyContext, facts: await sources.facts() })
      const words = (text: string) => text.split(/\s+/).filter(Boolean).length
      return {
        content: [{ type: 'text', text: reply }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: {
          inputTokens: { total: words(JSON.stringify(options.prompt)), noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: words(reply), text: undefined, reasoning: undefined },
        },
        warnings: [],
      }
    },
    async doStream() {
      throw new Error('The scripted agent answers with generateText only')
    },
  }
}

/** The user's own words: the last user message without the memory context the middleware put in front. */
function userText(options: CallOptions): string {
  const user = [...options.prompt].reverse().find((m) => m.role === 'user')
  if (user?.role !== 'user') return ''
  return user.content.flatMap((p) => (p.type === 'text' && !p.text.startsWith('<memory') ? [p.text] : [])).join('\n')
}
