/**
 * The translation prompt (docs/preparation.md, "Translation"): the text the *Safe-Psych* authors printed in their
 * appendix 8.1 ("English translation"), copied here byte for byte, with the notes' languages as parameters where the
 * prompt names them. For Romanian notes into English the prompt is the paper's text exactly, its line break after
 * "PANSS, " (and the space before it) included; the section's text replaces `{text}`, and nothing follows it. The
 * prompt is sent as the one user message of a chat completion, with no system message.
 *
 * The paper prints no back-translation prompt: the back-translation (English into the source language) uses the same
 * text with the two languages swapped (`backTranslationPrompt`).
 */

/** The model, decoding and output limit of the paper's translation (appendix 8.1). */
export const PAPER_TRANSLATION_MODEL = "google/gemma-4-26B-A4B-it";
/** "Translations were generated deterministically": temperature 0 on an OpenAI-compatible server. */
export const TRANSLATION_TEMPERATURE = 0;
/** "with a maximum output length of 384 tokens". */
export const PAPER_MAX_TOKENS = 384;

/** The paper's prompt, lines as printed (the fourth rule runs over two lines). */
export const PAPER_TRANSLATION_PROMPT = [
  "You are a professional medical translator.",
  "Translate the following text into English.",
  "",
  "Rules:",
  "- Translate ALL Romanian text into English.",
  "- Do NOT leave Romanian words.",
  "- Do NOT add/remove information.",
  "- Preserve all numbers and psychological test names (MMSE, MADRS, PANSS, ",
  "GAFS, IQ, scl 90, BDI, HAM-D, HAM-A, HDRS, HRSA, SPMSQ, GDS, YMRS).",
  "",
  "Text:",
  "{text}",
].join("\n");

/** The prompt with its languages named: for `from` "Romanian" and `to` "English", the paper's text. */
export function promptTemplate(from: string, to: string): string {
  return PAPER_TRANSLATION_PROMPT.replace("into English.\n", `into ${to}.\n`)
    .replace("- Translate ALL Romanian text into English.", `- Translate ALL ${from} text into ${to}.`)
    .replace("- Do NOT leave Romanian words.", `- Do NOT leave ${from} words.`);
}

/** The prompt for one section: the template with the section's text in place of `{text}` (taken literally). */
export function fillPrompt(template: string, text: string): string {
  const at = template.lastIndexOf("{text}");
  return template.slice(0, at) + text + template.slice(at + "{text}".length);
}

/** The prompt that translates a section from the source language into English. */
export function translationPrompt(sourceLanguage: string, text: string): string {
  return fillPrompt(promptTemplate(sourceLanguage, "English"), text);
}

/** The prompt that translates an English translation back into the source language: the languages swapped. */
export function backTranslationPrompt(sourceLanguage: string, text: string): string {
  return fillPrompt(promptTemplate("English", sourceLanguage), text);
}

/**
 * The English name of a language tag as the prompt names it ("ro" → "Romanian", "hu" → "Hungarian"), from the
 * runtime's language names ("pt-BR" → "Brazilian Portuguese"; a region in brackets is left out: "ro-RO" →
 * "Romanian"); null for a tag it does not know or an English one (there is nothing to translate).
 */
export function languageName(tag: string): string | null {
  if (/^en\b/i.test(tag)) return null;
  const names = new Intl.DisplayNames(["en"], { type: "language", fallback: "none" });
  let name: string | undefined;
  try {
    name = names.of(tag);
    // "ro-RO" is "Romanian (Romania)": the prompt names the language alone.
    if (name?.includes("(")) name = names.of(tag.split("-")[0]!);
  } catch {
    return null;
  }
  if (!name || name.toLowerCase() === tag.toLowerCase()) return null;
  return name;
}
