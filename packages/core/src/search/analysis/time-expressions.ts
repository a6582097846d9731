/**
 * Dates and relative time words in a query ("in May 2026", "on 14 March",
 * "last month", "two weeks ago", "last Saturday") read as a time window
 * against the day the query is asked. Times are UTC, like the context's.
 */

const DAY = 24 * 3600 * 1000
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december']
const SHORT_MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday']
const NUMBERS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  couple: 2,
  few: 3,
}
const UNIT_DAYS: Record<string, number> = { day: 1, week: 7, month: 30, year: 365 }

/** A time window a query asks about, and the words that said so. */
export interface TimeWindow {
  /** First instant inside (epoch ms). */
  from: number
  /** First instant after (epoch ms). */
  to: number
  /** The expression as written in the query ("in May 2026"). */
  text: string
}

const MONTH = `(${MONTHS.join('|')}|${SHORT_MONTHS.filter((m) => m !== 'may').join('|')})\\.?`
const ORDINAL = '(\\d{1,2})(?:st|nd|rd|th)?'
const YEAR = '((?:19|20)\\d\\d)'
/** Patterns tried in order; the first that matches wins (the more precise first). */
const PATTERNS: readonly { re: RegExp; window: (m: RegExpExecArray, now: number) => [number, number] | undefined }[] = [
  // 14 March 2026, 14th of March, on 3 May
  { re: new RegExp(`\\b${ORDINAL} (?:of )?${MONTH}(?:,? ${YEAR})?\\b`, 'i'), window: (m, now) => day(now, m[2]!, Number(m[1]), m[3]) },
  // March 14, 2026 / May 3rd ("may 3" in lower case is a verb and a number)
  {
    re: new RegExp(`\\b${MONTH} ${ORDINAL}(?:,? ${YEAR})?\\b(?! ?(?:am|pm|:))`, 'i'),
    window: (m, now) => (m[1] === 'may' ? undefined : day(now, m[1]!, Number(m[2]), m[3])),
  },
  // May 2026, in March of 2025
  { re: new RegExp(`\\b${MONTH},? (?:of )?${YEAR}\\b`, 'i'), window: (m, now) => month(now, m[1]!, m[2]) },
  // in May, during March, early June: the latest such month up to now ("may" alone is a verb, so it needs a preposition)
  {
    re: new RegExp(`\\b(?:in|during|early|mid|late|of|this|last) (?:early |mid |late |-)?${MONTH}\\b`, 'i'),
    window: (m, now) => month(now, m[1]!),
  },
  { re: /\b(?:in|during) ((?:19|20)\d\d)\b/i, window: (m) => [Date.UTC(Number(m[1]), 0, 1), Date.UTC(Number(m[1]) + 1, 0, 1)] },
  { re: /\b(yesterday|last night)\b/i, window: (_, now) => [startOfDay(now) - DAY, startOfDay(now)] },
  { re: /\b(today|tonight|this morning)\b/i, window: (_, now) => [startOfDay(now), startOfDay(now) + DAY] },
  { re: /\blast weekend\b/i, window: (_, now) => weekend(now) },
  {
    re: new RegExp(`\\b(?:last|on|this past) (${WEEKDAYS.join('|')})\\b`, 'i'),
    window: (m, now) => lastWeekday(now, WEEKDAYS.indexOf(m[1]!.toLowerCase())),
  },
  { re: /\b(last|this|past) (week|month|year)\b/i, window: (m, now) => calendar(now, m[1]!.toLowerCase(), m[2]!.toLowerCase()) },
  {
    re: /\b(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|couple|few) (?:of )?(day|week|month|year)s? ago\b/i,
    window: (m, now) => ago(now, m[1]!.toLowerCase(), m[2]!.toLowerCase()),
  },
]

/**
 * The time window a query names, against `now` (the day it is asked), or
 * undefined: a day ("on 14 March", "yesterday", "last Saturday"), a month
 * ("in May", "May 2026", "last month"), a week ("last week", "two weeks
 * ago") or a year ("in 2025"). A month or day without a year is the latest
 * one up to `now`.
 */
export function queryTimeWindow(query: string, now: number): TimeWindow | undefined {
  for (const { re, window } of PATTERNS) {
    const m = re.exec(query)
    if (!m) continue
    const w = window(m, now)
    if (w && w[0] < w[1]) return { from: w[0], to: w[1], text: m[0] }
  }
  return undefined
}

const startOfDay = (t: number) => Math.floor(t / DAY) * DAY

function monthIndex(name: string): number {
  const n = name.toLowerCase()
  const full = MONTHS.indexOf(n)
  return full >= 0 ? full : SHORT_MONTHS.indexOf(n)
}

/** The year a month (and day) without a year means: this year's, unless that is still ahead of `now`. */
function yearFor(now: number, monthI: number, dayOfMonth = 1, year?: string): number {
  if (year !== undefined) return Number(year)
  const d = new Date(now)
  const y = d.getUTCFullYear()
  return Date.UTC(y, monthI, dayOfMonth) > now ? y - 1 : y
}

function day(now: number, name: string, dayOfMonth: number, year?: string): [number, number] | undefined {
  const m = monthIndex(name)
  if (m < 0 || dayOfMonth < 1 || dayOfMonth > 31) return undefined
  const from = Date.UTC(yearFor(now, m, dayOfMonth, year), m, dayOfMonth)
  return [from, from + DAY]
}

function month(now: number, name: string, year?: string): [number, number] | undefined {
  const m = monthIndex(name)
  if (m < 0) return undefined
  const y = yearFor(now, m, 1, year)
  return [Date.UTC(y, m, 1), Date.UTC(y, m + 1, 1)]
}

/** Monday 00:00 of the week holding `t` (ISO weeks). */
const weekStart = (t: number) => startOfDay(t) - ((new Date(t).getUTCDay() + 6) % 7) * DAY

function weekend(now: number): [number, number] {
  const saturday = weekStart(now) - 2 * DAY
  return [saturday, saturday + 2 * DAY]
}

/** The latest such weekday before today. */
function lastWeekday(now: number, weekday: number): [number, number] {
  const today = startOfDay(now)
  const back = (new Date(now).getUTCDay() - weekday + 7) % 7 || 7
  return [today - back * DAY, today - back * DAY + DAY]
}

function calendar(now: number, which: string, unit: string): [number, number] {
  const d = new Date(now)
  const y = d.getUTCFullYear()
  const m = d.getUTCMonth()
  if (which === 'past') return [startOfDay(now) - (UNIT_DAYS[unit] ?? 7) * DAY, startOfDay(now) + DAY]
  const back = which === 'last' ? 1 : 0
  if (unit === 'week') return [weekStart(now) - back * 7 * DAY, weekStart(now) - (back - 1) * 7 * DAY]
  if (unit === 'month') return [Date.UTC(y, m - back, 1), Date.UTC(y, m - back + 1, 1)]
  return [Date.UTC(y - back, 0, 1), Date.UTC(y - back + 1, 0, 1)]
}

/** "two weeks ago": around that day, give or take half the unit (at least a day). */
function ago(now: number, count: string, unit: string): [number, number] | undefined {
  const n = NUMBERS[count] ?? Number(count)
  const days = UNIT_DAYS[unit]
  if (!Number.isFinite(n) || n <= 0 || days === undefined) return undefined
  const center = startOfDay(now) - n * days * DAY
  const half = Math.max(1, Math.floor(days / 2)) * DAY
  return [center - half, center + half + DAY]
}

/** A time told relative to an event the query names ("two weeks before the concert"). */
export interface AnchoredTime {
  /** The words naming the event ("the concert"): searched to find when it was. */
  anchor: string
  /** Days from the event: negative before it, positive after it. */
  offsetDays: number
  /** Half the width of the window around that day (days). */
  slackDays: number
  /** The whole expression as written ("two weeks before the concert"). */
  text: string
}

const ANCHORED =
  /\b(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|couple|few) (?:of )?(day|week|month|year)s? (before|after|prior to|following) ((?:(?:the|my|our|his|her|their|that) )?[^?.!,;]{2,80}?)(?=[?.!,;]|$)/i

/**
 * A time the query gives relative to an event it names ("two weeks before
 * the concert", "a month after my surgery"), or undefined. The event's own
 * time is not known from the words: the search finds the event first.
 */
export function anchoredTime(query: string): AnchoredTime | undefined {
  const m = ANCHORED.exec(query)
  if (!m) return undefined
  const n = NUMBERS[m[1]!.toLowerCase()] ?? Number(m[1])
  const days = UNIT_DAYS[m[2]!.toLowerCase()]
  if (!Number.isFinite(n) || n <= 0 || days === undefined) return undefined
  const before = /^(before|prior to)$/i.test(m[3]!)
  return { anchor: m[4]!.trim(), offsetDays: (before ? -1 : 1) * n * days, slackDays: Math.max(1, Math.floor(days / 2)), text: m[0] }
}

/** The window of an anchored time once its event's time (`at`) is known. */
export function anchoredWindow(anchored: AnchoredTime, at: number): TimeWindow {
  const center = startOfDay(at) + anchored.offsetDays * DAY
  return { from: center - anchored.slackDays * DAY, to: center + (anchored.slackDays + 1) * DAY, text: anchored.text }
}
