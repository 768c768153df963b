// What a speech engine is given: plain text only. Chat must never reach an engine's own syntax —
// espeak-ng's `[[…]]` phoneme input and its U+0001 embedded commands (loudness, pitch, speed), the
// `[[rate 500]]` / `[[volm 2]]` commands of macOS `say`, SSML or XML tags (`<prosody …>`, which
// espeak-ng reads with -m and SAPI with its XML flags) — and the blocked-word check runs on the text
// the engine will really read, so a word cannot be hidden from it by splitting it with markup or an
// invisible character.

/** Breaks and tabs: a space each. */
const BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]/g;
/**
 * Removed outright: every other control character (C0, DEL, C1: U+0001 starts espeak-ng's embedded
 * commands), format characters (zero-width spaces and joiners, bidi marks, soft hyphens), lone
 * surrogates and private-use characters, none of which has a sound.
 */
const UNSPOKEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}]/gu;
/**
 * Removed outright: the brackets of every engine's markup. Without `[` and `]` there is no `[[…]]`
 * (espeak-ng's phonemes, `say`'s commands); without `<` and `>` there is no tag. Removing them (rather
 * than putting a space) keeps "bad[[]]word" the one word it is spoken as.
 */
const MARKUP = /[[\]<>]/g;

/**
 * The text as plain words for any engine: compatibility forms folded (a full-width `［` is a `[`),
 * control, format and markup characters removed, white space collapsed.
 */
export function speechText(text: string): string {
  return text
    .normalize('NFKC')
    .replace(BREAKS, ' ')
    .replace(UNSPOKEN, '')
    .replace(MARKUP, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The first blocked word the text holds as a whole word, case-insensitive. */
export function blockedWord(text: string, words: readonly string[]): string | undefined {
  const lower = text.toLowerCase();
  for (const word of words) {
    const w = word.normalize('NFKC').toLowerCase();
    if (!w) continue;
    let at = lower.indexOf(w);
    while (at !== -1) {
      if (!isWordChar(lower[at - 1]) && !isWordChar(lower[at + w.length])) return word;
      at = lower.indexOf(w, at + 1);
    }
  }
  return undefined;
}

function isWordChar(ch: string | undefined): boolean {
  return ch !== undefined && /[\p{L}\p{N}_]/u.test(ch);
}
