/**
 * English stop words: function words that carry no topic (articles, pronouns,
 * auxiliaries, question words). Dropping them keeps postings small and stops
 * questions ("what did I say about…") from matching every turn of a chat.
 */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are aren as at be because been before being below between both but by ' +
    'can cannot could couldn did didn do does doesn doing don down during each few for from further had hadn has hasn have haven having he ' +
    'her here hers herself him himself his how i if in into is isn it its itself just let ll me more most mustn my myself no nor not now of off on once only or ' +
    'other ought our ours ourselves out over own re same shan she should shouldn so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up ve very was wasn we were weren what when where which while who whom why will with won would wouldn ' +
    'you your yours yourself yourselves s t d m o y also yes ok okay oh'
  ).split(' '),
)
