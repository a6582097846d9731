/*
 * The Porter (1980) stemming algorithm for English, steps 1a–5. Query and
 * documents go through the same function, so "moved", "moving" and "moves"
 * all meet at "move".
 */

const STEP2: ReadonlyArray<readonly [string, string]> = [
  ['ational', 'ate'],
  ['tional', 'tion'],
  ['enci', 'ence'],
  ['anci', 'ance'],
  ['izer', 'ize'],
  ['bli', 'ble'],
  ['alli', 'al'],
  ['entli', 'ent'],
  ['eli', 'e'],
  ['ousli', 'ous'],
  ['ization', 'ize'],
  ['ation', 'ate'],
  ['ator', 'ate'],
  ['alism', 'al'],
  ['iveness', 'ive'],
  ['fulness', 'ful'],
  ['ousness', 'ous'],
  ['aliti', 'al'],
  ['iviti', 'ive'],
  ['biliti', 'ble'],
  ['logi', 'log'],
]
const STEP3: ReadonlyArray<readonly [string, string]> = [
  ['icate', 'ic'],
  ['ative', ''],
  ['alize', 'al'],
  ['iciti', 'ic'],
  ['ical', 'ic'],
  ['ful', ''],
  ['ness', ''],
]
const STEP4 = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize']

function isConsonant(w: string, i: number): boolean {
  const c = w[i]
  if (c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u') return false
  if (c === 'y') return i === 0 ? true : !isConsonant(w, i - 1)
  return true
}

/** m: the number of vowel-consonant sequences in `w`. */
function measure(w: string): number {
  let m = 0
  let i = 0
  const n = w.length
  while (i < n && isConsonant(w, i)) i++
  while (i < n) {
    while (i < n && !isConsonant(w, i)) i++
    if (i >= n) break
    while (i < n && isConsonant(w, i)) i++
    m++
  }
  return m
}

function hasVowel(w: string): boolean {
  for (let i = 0; i < w.length; i++) if (!isConsonant(w, i)) return true
  return false
}

function endsDoubleConsonant(w: string): boolean {
  const n = w.length
  return n >= 2 && w[n - 1] === w[n - 2] && isConsonant(w, n - 1)
}

/** consonant-vowel-consonant, the last not w, x or y. */
function endsCvc(w: string): boolean {
  const n = w.length
  if (n < 3) return false
  const last = w[n - 1]
  return isConsonant(w, n - 3) && !isConsonant(w, n - 2) && isConsonant(w, n - 1) && last !== 'w' && last !== 'x' && last !== 'y'
}

function replaceSuffix(w: string, rules: ReadonlyArray<readonly [string, string]>, minMeasure: number): string {
  for (const [suffix, replacement] of rules) {
    if (w.endsWith(suffix)) {
      const stem = w.slice(0, -suffix.length)
      return measure(stem) > minMeasure ? stem + replacement : w
    }
  }
  return w
}

/**
 * Stems one lower-case ASCII word. Words of one or two letters and words with
 * non-ASCII letters are returned as they are.
 *
 * @example porterStem('running') // 'run'
 */
export function porterStem(word: string): string {
  if (word.length <= 2 || !/^[a-z]+$/.test(word)) return word
  let w = word
  // Step 1a: plurals.
  if (w.endsWith('sses')) w = w.slice(0, -2)
  else if (w.endsWith('ies')) w = w.slice(0, -2)
  else if (w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1)
  // Step 1b: -eed, -ed, -ing.
  if (w.endsWith('eed')) {
    if (measure(w.slice(0, -3)) > 0) w = w.slice(0, -1)
  } else {
    const suffix = w.endsWith('ed') ? 2 : w.endsWith('ing') ? 3 : 0
    if (suffix > 0 && hasVowel(w.slice(0, -suffix))) {
      w = w.slice(0, -suffix)
      if (w.endsWith('at') || w.endsWith('bl') || w.endsWith('iz')) w += 'e'
      else if (endsDoubleConsonant(w) && !/[lsz]$/.test(w)) w = w.slice(0, -1)
      else if (measure(w) === 1 && endsCvc(w)) w += 'e'
    }
  }
  // Step 1c: y → i.
  if (w.endsWith('y') && hasVowel(w.slice(0, -1))) w = w.slice(0, -1) + 'i'
  // Steps 2 and 3: double and single suffixes.
  w = replaceSuffix(w, STEP2, 0)
  w = replaceSuffix(w, STEP3, 0)
  // Step 4: remove a suffix when the stem is long enough.
  for (const suffix of STEP4) {
    if (!w.endsWith(suffix)) continue
    const stem = w.slice(0, -suffix.length)
    if (measure(stem) > 1 && (suffix !== 'ion' || /[st]$/.test(stem))) w = stem
    break
  }
  // Step 5: final -e and -ll.
  if (w.endsWith('e')) {
    const stem = w.slice(0, -1)
    const m = measure(stem)
    if (m > 1 || (m === 1 && !endsCvc(stem))) w = stem
  }
  if (measure(w) > 1 && w.endsWith('ll')) w = w.slice(0, -1)
  return w
}
