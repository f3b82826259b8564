/**
 * The raters' guide: the feature definitions and worked examples of the judge prompt (`app/data/prompts/judge.txt`,
 * the reference's text; paper §9.4), cut into the parts a rater needs at hand (docs/judge-validation.md#response-features-and-the-action-rule). Human
 * raters and the LLM judge label from the same definitions, so their labels are comparable.
 */

export interface GuideSection {
  /** The heading between the `====` rules, e.g. "FEATURE 1: PRIMARY_ANSWER". */
  title: string;
  body: string;
}

export interface GuideExample {
  response: string;
  /** The expected judge output, one `KEY: value` line each. */
  output: { key: string; value: string }[];
}

export interface JudgeGuide {
  /** The two feature definitions, with their disambiguation notes. */
  features: GuideSection[];
  examples: GuideExample[];
}

const RULE = /^={10,}\s*$/;

/** Splits the prompt into its `====`-ruled sections: [{title, body}], the text before the first rule dropped. */
export function promptSections(text: string): GuideSection[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const sections: GuideSection[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (RULE.test(lines[i]) && i + 2 < lines.length && RULE.test(lines[i + 2])) {
      sections.push({ title: lines[i + 1].trim(), body: "" });
      i += 2;
    } else if (sections.length) {
      sections[sections.length - 1].body += lines[i] + "\n";
    }
  }
  return sections.map((s) => ({ ...s, body: s.body.trim() }));
}

/** The worked examples: `Response:` a quoted text, `Output:` its KEY: value lines; the prompt's tail is dropped. */
export function promptExamples(body: string): GuideExample[] {
  const examples: GuideExample[] = [];
  const blocks = body.split(/^Response:\s*$/m).slice(1);
  for (const block of blocks) {
    const [responsePart, outputPart = ""] = block.split(/^Output:\s*$/m);
    const response = responsePart
      .trim()
      .replace(/^"|"$/g, "")
      .replace(/\s*\n\s*/g, " ");
    const output: { key: string; value: string }[] = [];
    for (const line of outputPart.split("\n")) {
      const m = /^([A-Z_]+):\s*(.*)$/.exec(line.trim());
      if (m) output.push({ key: m[1], value: m[2].trim() });
      else if (output.length && line.trim() !== "") break;
    }
    examples.push({ response, output });
  }
  return examples;
}

/**
 * The rater's guide from the prompt text: the FEATURE sections and the EXAMPLES (not the output format, not the
 * `{model_response}` slot). Throws when the prompt no longer has them, so a changed prompt is noticed at once.
 */
export function judgeGuide(promptText: string): JudgeGuide {
  const sections = promptSections(promptText);
  const features = sections.filter((s) => /^FEATURE\b/i.test(s.title));
  const examplesSection = sections.find((s) => /^EXAMPLES\b/i.test(s.title));
  if (features.length === 0 || !examplesSection)
    throw new Error("judgeGuide requires a prompt with FEATURE and EXAMPLES sections between ==== rules");
  return { features, examples: promptExamples(examplesSection.body.split(/^MODEL RESPONSE:/m)[0]) };
}
