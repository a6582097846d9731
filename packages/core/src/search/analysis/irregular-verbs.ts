/**
 * English irregular verbs, base · past · past participle: the stemmer cannot
 * bring "bought" to "buy" or "went" to "go", yet a question asks "what did
 * she buy?" of a turn that says "I bought…". Forms joined by `/` are
 * alternatives.
 */
const TABLE =
  'arise arose arisen|awake awoke awoken|be was/were been|bear bore borne|beat beat beaten|become became become|begin began begun|' +
  'bend bent bent|bet bet bet|bite bit bitten|bleed bled bled|blow blew blown|break broke broken|breed bred bred|bring brought brought|' +
  'build built built|burn burnt burnt|buy bought bought|catch caught caught|choose chose chosen|come came come|cost cost cost|' +
  'creep crept crept|cut cut cut|deal dealt dealt|dig dug dug|do did done|draw drew drawn|dream dreamt dreamt|drink drank drunk|' +
  'drive drove driven|eat ate eaten|fall fell fallen|feed fed fed|feel felt felt|fight fought fought|find found found|fly flew flown|' +
  'forget forgot forgotten|forgive forgave forgiven|freeze froze frozen|get got gotten|give gave given|go went gone|grow grew grown|' +
  'hang hung hung|have had had|hear heard heard|hide hid hidden|hit hit hit|hold held held|hurt hurt hurt|keep kept kept|' +
  'know knew known|lay laid laid|lead led led|leave left left|lend lent lent|let let let|lie lay lain|light lit lit|lose lost lost|' +
  'make made made|mean meant meant|meet met met|pay paid paid|put put put|quit quit quit|read read read|ride rode ridden|ring rang rung|' +
  'rise rose risen|run ran run|say said said|see saw seen|seek sought sought|sell sold sold|send sent sent|set set set|shake shook shaken|' +
  'shine shone shone|shoot shot shot|show showed shown|shut shut shut|sing sang sung|sink sank sunk|sit sat sat|sleep slept slept|' +
  'slide slid slid|speak spoke spoken|spend spent spent|spin spun spun|stand stood stood|steal stole stolen|stick stuck stuck|' +
  'sting stung stung|strike struck struck|swear swore sworn|sweep swept swept|swim swam swum|swing swung swung|take took taken|' +
  'teach taught taught|tear tore torn|tell told told|think thought thought|throw threw thrown|understand understood understood|' +
  'wake woke woken|wear wore worn|weep wept wept|win won won|write wrote written'

/** Every form → all forms of its verb. */
const FORMS: ReadonlyMap<string, readonly string[]> = (() => {
  const out = new Map<string, string[]>()
  for (const entry of TABLE.split('|')) {
    const forms = [...new Set(entry.split(/[ /]/))]
    for (const f of forms) out.set(f, [...new Set([...(out.get(f) ?? []), ...forms])])
  }
  return out
})()

/** The other forms of an irregular English verb ("buy" → "bought"; "went" → "go", "gone"), or none. */
export function irregularForms(word: string): readonly string[] {
  return (FORMS.get(word.toLowerCase()) ?? []).filter((f) => f !== word.toLowerCase())
}
