/**
 * Characters a reviewer cannot see and a model still reads: zero-width characters, bidi
 * controls (which reorder what a screen shows), the soft hyphen, Unicode tag characters (which
 * spell ASCII invisibly) and C0/C1 controls. Text from outside that stands where the prompt
 * names someone (a display name, a daimon's source) or sums something up goes through
 * `stripInvisible` first, so what a person reads in a log is what the model reads.
 */

/** Zero-width, bidi controls, the soft hyphen, the word joiner family, the BOM and tag characters. */
const INVISIBLE = /[\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u{E0000}-\u{E007F}]/gu;
/** Controls other than tab, line feed and carriage return (layout is for the caller to flatten). */
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;

/** The text without invisible characters; a control character becomes a space, so words stay apart. */
export function stripInvisible(text: string): string {
  return text.replace(INVISIBLE, "").replace(CONTROL, " ");
}
