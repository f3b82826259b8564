/**
 * The translation prompt (docs/preparation.md, "Translation"): the paper's text for Romanian into English, the
 * languages named where the prompt names them, the section's text put in literally, and the languages' names.
 */
import { describe, expect, it } from "vitest";
import {
  backTranslationPrompt,
  languageName,
  PAPER_TRANSLATION_PROMPT,
  promptTemplate,
  translationPrompt,
} from "../../app/preparation/domain/translation-prompt";

describe("the translation prompt", () => {
  it("is the paper's text for Romanian into English, its line break after 'PANSS, ' kept", () => {
    expect(promptTemplate("Romanian", "English")).toBe(PAPER_TRANSLATION_PROMPT);
    expect(PAPER_TRANSLATION_PROMPT).toContain("(MMSE, MADRS, PANSS, \nGAFS, IQ, scl 90,");
    expect(PAPER_TRANSLATION_PROMPT.startsWith("You are a professional medical translator.\n")).toBe(true);
    expect(PAPER_TRANSLATION_PROMPT.endsWith("\n\nText:\n{text}")).toBe(true);
  });

  it("names the languages where the paper names Romanian and English, and nowhere else", () => {
    const hu = translationPrompt("Hungarian", "x");
    expect(hu).toContain("Translate the following text into English.\n");
    expect(hu).toContain("- Translate ALL Hungarian text into English.\n- Do NOT leave Hungarian words.\n");
    expect(hu).not.toContain("Romanian");
    const back = backTranslationPrompt("Romanian", "y");
    expect(back).toBe(
      PAPER_TRANSLATION_PROMPT.replace("text into English.\n\n", "text into Romanian.\n\n")
        .replace("ALL Romanian text into English.", "ALL English text into Romanian.")
        .replace("leave Romanian words", "leave English words")
        .replace("{text}", "y"),
    );
  });

  it("puts the section's text in literally, replacement patterns and braces included", () => {
    const text = "Scor $& $1 $$ {text} MMSE 22/30\n";
    expect(translationPrompt("Romanian", text)).toBe(PAPER_TRANSLATION_PROMPT.slice(0, -"{text}".length) + text);
  });

  it("names a language by its tag, without a region in brackets; none for English or an unknown tag", () => {
    expect(languageName("ro")).toBe("Romanian");
    expect(languageName("ro-RO")).toBe("Romanian");
    expect(languageName("hu")).toBe("Hungarian");
    expect(languageName("pt-BR")).toBe("Brazilian Portuguese");
    expect(languageName("en")).toBeNull();
    expect(languageName("en-GB")).toBeNull();
    expect(languageName("xx")).toBeNull();
    expect(languageName("not a tag")).toBeNull();
  });
});
