/**
 * MENTAT question banks (docs/mentat.md): five-option questions in five domains with the creator's intended
 * answer and demographic placeholders, their expansion into demographic variant sets, the per-rater option order,
 * and the evaluation records Concord exports. Pure: deterministic functions of their inputs (seeds are passed in).
 *
 * Templates follow MENTAT's release (create_dataset.py): the question is written once per gender (columns he, she,
 * they) or once with inline alternatives `{he/she/they}`, `{his/her/their}`, `{man/woman/person}` (male / female /
 * non-binary), and `<AGE>` and `<NAT>` mark where the age ("34-year-old") and the race or nationality go. Write the
 * placeholders where an adjective goes ("a <AGE> <NAT> patient"): the base set leaves them out ("a patient"), and
 * "a"/"an" before a placeholder is corrected to the word that follows.
 */
import type { ImportSource } from "../../formats/import-source";
import { createHash } from "node:crypto";
import {
  cell,
  cellWarnings,
  columnIndex,
  externalIdProblem,
  missingColumnsIssue,
  csvRows,
  unusedColumnsIssue,
  type CsvIssue,
  type CsvReport,
} from "../../expert-panel/domain/expert-csv";
import {
  DEFAULT_AGES,
  DEFAULT_RACES,
  GENDERS,
  MENTAT_DOMAINS,
  OPTION_COUNT,
  OPTION_LETTERS,
  type Gender,
  type MentatDomain,
  type VariantDimension,
} from "../../expert-panel/domain/expert-scales";
import type { AnnotationRow } from "./bradley-terry";
import { PyRandom } from "../../python-compat/random";
import { buildRatingTable, krippendorffAlpha } from "../../stats/index";
import type { QuestionTexts } from "../../../db/vocabulary";
import { pushAll } from "../../stats/extremes";

/** A question's text per gender, or one `neutral` text for a question that names no gender. */
export type { QuestionTexts };

export interface MentatQuestionInput {
  line: number;
  externalId: string;
  domain: MentatDomain;
  texts: QuestionTexts;
  /** The five answer options a–e. */
  options: string[];
  /** Index 0–4 of the creator's intended answer. */
  answer: number;
  notes: string;
}

export interface BankParseResult {
  questions: MentatQuestionInput[];
  errors: CsvIssue[];
  warnings: CsvIssue[];
}

const COLUMNS = {
  id: ["id", "q_id", "question_id"],
  domain: ["domain", "category"],
  question: ["question", "text", "template"],
  he: ["he", "text_male"],
  she: ["she", "text_female"],
  they: ["they", "text_nonbinary"],
  a: ["a", "option_a", "answer_a"],
  b: ["b", "option_b", "answer_b"],
  c: ["c", "option_c", "answer_c"],
  d: ["d", "option_d", "answer_d"],
  e: ["e", "option_e", "answer_e"],
  answer: ["answer", "correct_answer", "correct answer", "intended_answer"],
  notes: ["notes", "comment"],
} as const;
type Column = keyof typeof COLUMNS;

/** MENTAT's own spellings of two domains (create_dataset.py fixes them the same way). */
const DOMAIN_ALIASES: Record<string, MentatDomain> = { monitor: "monitoring", "treatment/practice": "treatment" };

const PLACEHOLDER = /<([A-Za-z_]+)>/g;
const HAS_PLACEHOLDER = /<[A-Za-z_]+>/;
const KNOWN_PLACEHOLDERS = new Set(["AGE", "NAT"]);
const GENDER_GROUP = /\{([^{}]*)\}/g;
export const MAX_QUESTION_CHARS = 20_000;
export const MAX_OPTION_CHARS = 5_000;

/** Splits a `question` template with `{he/she/they}` groups into the three gendered texts (or one neutral text). */
export function splitGenderTemplate(template: string): { texts: QuestionTexts } | { error: string } {
  const groups = [...template.matchAll(GENDER_GROUP)];
  if (/[{}]/.test(template.replace(GENDER_GROUP, "")))
    return { error: "unbalanced { or } in the question: write gender alternatives as {he/she/they}." };
  if (groups.length === 0) return { texts: { neutral: template } };
  const texts: QuestionTexts = {};
  for (const [g, gender] of GENDERS.entries()) {
    let failed: string | null = null;
    texts[gender] = template.replace(GENDER_GROUP, (_, inner: string) => {
      const parts = inner.split("/");
      if (parts.length !== 3)
        failed = `"{${inner}}" must list three forms, male/female/non-binary, e.g. {he/she/they}.`;
      return parts[g] ?? "";
    });
    if (failed) return { error: failed };
  }
  return { texts };
}

function checkTemplateText(text: string, where: string): string[] {
  const problems: string[] = [];
  for (const m of text.matchAll(PLACEHOLDER))
    if (!KNOWN_PLACEHOLDERS.has(m[1]!.toUpperCase()) || m[1] !== m[1]!.toUpperCase())
      problems.push(`${where} has an unknown placeholder <${m[1]}>; the placeholders are <AGE> and <NAT>.`);
  if (text.length > MAX_QUESTION_CHARS) problems.push(`${where} is longer than ${MAX_QUESTION_CHARS} characters.`);
  return problems;
}

/**
 * Reads a question-bank CSV. The whole file is validated: every problem is reported with its line, and a caller
 * writes nothing while `errors` is non-empty.
 *
 * Columns (names case-insensitive): id, domain (or category), the question as `question` or as he / she / they,
 * the options a–e, answer (the intended option's letter), notes (optional).
 */
export function parseQuestionBankCsv(text: string | ImportSource): BankParseResult {
  const report: CsvReport = { errors: [], warnings: [] };
  const questions = [...questionBankItems(text, report)];
  return { questions: report.errors.length ? [] : questions, errors: report.errors, warnings: report.warnings };
}

/**
 * The valid questions of a question-bank CSV as they are read, one row at a time (docs/reliability.md, "Memory
 * bounded by the longest line"), its errors and warnings reported into `report` as `parseQuestionBankCsv` lists
 * them; the file is valid when `report.errors` is empty once the last question is read. What it keeps between rows:
 * the ids seen (for duplicates).
 */
export function* questionBankItems(text: string | ImportSource, report: CsvReport): Generator<MentatQuestionInput> {
  const { errors, warnings } = report;
  let header: string[] = [];
  let index = new Map<Column, number>();
  const rows = csvRows(
    text,
    report,
    (cells) => {
      header = cells;
      index = columnIndex(header, COLUMNS);
      const missing = (["id", "domain", ...OPTION_LETTERS, "answer"] as Column[]).filter((c) => !index.has(c));
      if (!index.has("question") && !index.has("he") && !index.has("she") && !index.has("they"))
        missing.push("question");
      if (missing.length) {
        errors.push(
          missingColumnsIssue(
            missing,
            'A question bank needs id, domain, the question (a "question" column, or "he", "she", "they"), options a, b, c, d, e and answer.',
          ),
        );
        return false;
      }
      const unused = unusedColumnsIssue(header, index);
      if (unused) warnings.push(unused);
      return true;
    },
    "the file has a header but no questions.",
  );

  const seen = new Map<string, number>();
  for (const { line, cells } of rows) {
    const problems: string[] = [];
    const get = (c: Column) => cell(cells, index.get(c));
    const externalId = get("id");
    const idProblem = externalIdProblem(externalId, seen, line);
    if (idProblem) problems.push(idProblem);

    const rawDomain = get("domain").toLowerCase();
    const domain = (DOMAIN_ALIASES[rawDomain] ?? rawDomain) as MentatDomain;
    if (!MENTAT_DOMAINS.includes(domain))
      problems.push(`the domain "${get("domain")}" is not one of ${MENTAT_DOMAINS.join(", ")}.`);

    let texts: QuestionTexts = {};
    const template = get("question");
    const gendered = { male: get("he"), female: get("she"), nonbinary: get("they") };
    const anyGendered = Object.values(gendered).some(Boolean);
    if (template && anyGendered)
      problems.push('give the question either in "question" or in he / she / they, not both.');
    else if (template) {
      const split = splitGenderTemplate(template);
      if ("error" in split) problems.push(split.error);
      else texts = split.texts;
    } else if (anyGendered) {
      for (const g of GENDERS) if (gendered[g]) texts[g] = gendered[g];
      for (const [g, t] of Object.entries(texts))
        if (/[{}]/.test(t))
          problems.push(`the ${g} text contains { or }: inline alternatives belong in the "question" column.`);
    } else problems.push("the question is empty.");
    for (const [g, t] of Object.entries(texts))
      pushAll(problems, checkTemplateText(t, g === "neutral" ? "the question" : `the ${g} text`));
    const placeholdersPerText = Object.values(texts).map((t) =>
      [...t.matchAll(PLACEHOLDER)]
        .map((m) => m[1])
        .sort()
        .join(","),
    );
    if (new Set(placeholdersPerText).size > 1)
      problems.push("the gendered texts must use the same placeholders (<AGE>, <NAT>).");

    const options = OPTION_LETTERS.map((l) => get(l));
    options.forEach((o, i) => {
      if (!o) problems.push(`option ${OPTION_LETTERS[i]} is empty.`);
      else if (o.length > MAX_OPTION_CHARS)
        problems.push(`option ${OPTION_LETTERS[i]} is longer than ${MAX_OPTION_CHARS} characters.`);
      else if (HAS_PLACEHOLDER.test(o))
        problems.push(`option ${OPTION_LETTERS[i]} contains a placeholder; only the question may.`);
    });
    const duplicate = options.findIndex((o, i) => o && options.indexOf(o) !== i);
    if (duplicate >= 0)
      problems.push(
        `options ${OPTION_LETTERS[options.indexOf(options[duplicate]!)]} and ${
          OPTION_LETTERS[duplicate]
        } are the same.`,
      );

    const answerText = get("answer").toLowerCase().replace(/[).]$/, "");
    const answer = OPTION_LETTERS.indexOf(answerText as (typeof OPTION_LETTERS)[number]);
    if (answer < 0) problems.push(`the answer "${get("answer")}" must be one of the letters a–e.`);

    if (cells.length > header.length)
      warnings.push({ line, message: `${cells.length - header.length} cell(s) beyond the header ignored.` });
    pushAll(warnings, cellWarnings(header, cells, line));
    if (problems.length) for (const message of problems) errors.push({ line, message });
    else yield { line, externalId, domain, texts, options, answer, notes: get("notes") };
  }
}

/** Stable hash of what makes a question: domain, texts, options, intended answer (not its notes or position). */
export function questionContentHash(q: Pick<MentatQuestionInput, "domain" | "texts" | "options" | "answer">): string {
  const texts = Object.fromEntries(Object.entries(q.texts).sort(([a], [b]) => (a < b ? -1 : 1)));
  return createHash("sha256")
    .update(JSON.stringify([q.domain, texts, q.options, q.answer]))
    .digest("hex");
}

/** The genders a question has texts for (none for a neutral question), in he / she / they order. */
export function gendersOf(texts: QuestionTexts): Gender[] {
  return GENDERS.filter((g) => texts[g] !== undefined);
}

/** The text used when no gender is asked for: the they-version, else the neutral text, else the he- or she-version. */
export function baseText(texts: QuestionTexts): string {
  return texts.nonbinary ?? texts.neutral ?? texts.male ?? texts.female ?? "";
}

export function hasPlaceholder(texts: QuestionTexts, name: "AGE" | "NAT"): boolean {
  return baseText(texts).includes(`<${name}>`);
}

const AN_EXCEPTIONS = /^(uni|use|usu|uti|eu|one|once|ur)/i;
const AN_SILENT_H = /^(hour|honest|honou?r|heir)/i;

/** "an" before a vowel sound (including 8, 11, 18, 80…), else "a". */
function articleFor(word: string): "a" | "an" {
  if (/^(8|11|18)(\D|$)/.test(word) || /^8\d(\D|$)/.test(word) || /^8\d\d(\D|$)/.test(word)) return "an";
  if (/^\d/.test(word)) return "a";
  if (AN_SILENT_H.test(word)) return "an";
  if (/^[aeiou]/i.test(word) && !AN_EXCEPTIONS.test(word)) return "an";
  return "a";
}

export interface Demographics {
  gender: Gender | null;
  age: number | null;
  race: string | null;
}

/**
 * The question text for given demographics: the gender's text (the base text for null), `<AGE>` → "N-year-old" and
 * `<NAT>` → the race, or left out when null; "a"/"an" directly before a placeholder agrees with the word that
 * follows once it is filled, and spaces left by removals are tidied.
 *
 * @example renderQuestion({ neutral: "An <AGE> <NAT> patient asks…" }, { gender: null, age: 18, race: null })
 *   // "An 18-year-old patient asks…"
 */
export function renderQuestion(texts: QuestionTexts, demo: Demographics): string {
  const template = (demo.gender ? texts[demo.gender] : undefined) ?? baseText(texts);
  const articles: number[] = [];
  let out = "";
  let last = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    out += template.slice(last, m.index);
    last = m.index! + m[0].length;
    const article = /(^|[^A-Za-z])(an?)\s+$/i.exec(out);
    if (article) articles.push(article.index + article[1]!.length);
    if (m[1] === "AGE" && demo.age !== null) out += `${demo.age}-year-old`;
    else if (m[1] === "NAT" && demo.race !== null) out += demo.race;
  }
  out += template.slice(last);
  // Right to left, so earlier positions stay valid.
  for (const at of [...new Set(articles)].sort((a, b) => b - a)) {
    const rest = /^(an?)(\s+)(\S+)/i.exec(out.slice(at));
    if (!rest) continue;
    const wanted = articleFor(rest[3]!);
    const capital = rest[1]![0] === "A";
    const replacement = capital ? wanted[0]!.toUpperCase() + wanted.slice(1) : wanted;
    out = out.slice(0, at) + replacement + out.slice(at + rest[1]!.length);
  }
  return out
    .replace(/[ \t]{2,}/g, " ")
    .replace(/ +([,.;:!?])/g, "$1")
    .replace(/^ +| +$/gm, "");
}

/** One entry of a demographic variant set. */
export interface Variant {
  /** Stable id: `<question id>.<dimension>[.<value>]`, e.g. "q017.gender.female", "q017.race.african-american". */
  variantId: string;
  questionId: string;
  dimension: VariantDimension;
  gender: Gender | null;
  age: number | null;
  race: string | null;
  text: string;
}

export interface ExpansionParams {
  ages?: readonly number[];
  races?: readonly string[];
}

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");

/** Checks expansion parameters; returns the problem or null. */
export function checkExpansionParams(params: ExpansionParams): string | null {
  const ages = params.ages ?? DEFAULT_AGES;
  const races = params.races ?? DEFAULT_RACES;
  if (ages.length === 0 || ages.some((a) => !Number.isInteger(a) || a < 0 || a > 120))
    return "ages must be whole numbers from 0 to 120.";
  if (new Set(ages).size !== ages.length) return "an age is listed twice.";
  if (races.length === 0 || races.some((r) => !r.trim() || r.length > 60 || /[<>{}]/.test(r)))
    return "each race must be 1–60 characters without < > { }.";
  if (new Set(races.map(slug)).size !== races.length) return "two races have the same id once lower-cased.";
  return null;
}

/**
 * Expands questions (in bank order) into one demographic variant set. base: one variant per question with the
 * demographics left out. gender: one per gender the question has a text for (one variant with gender null for a
 * neutral question). age / race: one per value for a question with the placeholder, else one with the value null.
 * Other demographics are held at their base (left out). Deterministic: the same questions and parameters always
 * give the same variants in the same order.
 */
export function expandVariants(
  questions: readonly { externalId: string; texts: QuestionTexts }[],
  dimension: VariantDimension,
  params: ExpansionParams = {},
): Variant[] {
  const ages = params.ages ?? DEFAULT_AGES;
  const races = params.races ?? DEFAULT_RACES;
  const none: Demographics = { gender: null, age: null, race: null };
  const out: Variant[] = [];
  const push = (q: { externalId: string; texts: QuestionTexts }, suffix: string, demo: Demographics) =>
    out.push({
      variantId: `${q.externalId}.${dimension}${suffix}`,
      questionId: q.externalId,
      dimension,
      ...demo,
      text: renderQuestion(q.texts, demo),
    });
  for (const q of questions) {
    if (dimension === "base") push(q, "", none);
    else if (dimension === "gender") {
      const genders = gendersOf(q.texts);
      if (genders.length === 0) push(q, ".none", none);
      for (const gender of genders) push(q, `.${gender}`, { ...none, gender });
    } else if (dimension === "age") {
      if (!hasPlaceholder(q.texts, "AGE")) push(q, ".none", none);
      else for (const age of ages) push(q, `.${age}`, { ...none, age });
    } else {
      if (!hasPlaceholder(q.texts, "NAT")) push(q, ".none", none);
      else for (const race of races) push(q, `.${slug(race)}`, { ...none, race });
    }
  }
  return out;
}

/**
 * An integer seed for PyRandom from text: the first 12 hex digits of its SHA-256 (48 bits).
 * Python: `int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)`.
 */
export function seedFromText(text: string): number {
  return parseInt(createHash("sha256").update(text, "utf8").digest("hex").slice(0, 12), 16);
}

/** A permutation of 0..n−1: `random.Random(seed).shuffle(list(range(n)))`. */
export function shuffledOrder(seed: number, n = OPTION_COUNT): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  new PyRandom(seed).shuffle(order);
  return order;
}

/**
 * What one rater sees of a question: the option order (a permutation of the options, shuffled per rater so that
 * position effects average out) and, for a gendered question, which gender's text. Both come from one
 * `random.Random(seedFromText(f"{bankSeed}:{questionId}:{raterId}"))`: first `shuffle(range(5))`, then
 * `randrange(len(genders))`. Recorded with the rating.
 */
export function raterPresentation(
  bankSeed: number,
  questionId: string,
  raterId: string,
  genders: readonly Gender[],
): { optionOrder: number[]; gender: Gender | null } {
  const rng = new PyRandom(seedFromText(`${bankSeed}:${questionId}:${raterId}`));
  const optionOrder = Array.from({ length: OPTION_COUNT }, (_, i) => i);
  rng.shuffle(optionOrder);
  const gender = genders.length ? genders[rng.randbelow(genders.length)]! : null;
  return { optionOrder, gender };
}

/** The multiple-choice prompt of an evaluation record (MENTAT's layout: question, lettered options, answer cue). */
export function multipleChoicePrompt(question: string, options: readonly string[]): string {
  const lines = options.map((o, i) => `${OPTION_LETTERS[i]!.toUpperCase()}: ${o}`);
  return `Question: ${question}\n\n${lines.join("\n")}\n\nAnswer (single letter): `;
}

export interface QuestionLabels {
  /** "preference": softmax of the fitted strengths; "intended": one-hot on the creator's answer. */
  source: "preference" | "intended";
  labels: number[];
  lower: number[];
  upper: number[];
}

export function intendedLabels(answer: number): QuestionLabels {
  const labels = Array.from({ length: OPTION_COUNT }, (_, i) => (i === answer ? 1 : 0));
  return { source: "intended", labels, lower: labels, upper: labels };
}

export interface EvaluationRecord {
  id: string;
  question_id: string;
  dataset: VariantDimension;
  domain: MentatDomain;
  demographics: { gender: Gender | null; age: number | null; race: string | null };
  prompt: string;
  question: string;
  options: string[];
  /** The original letter (a–e) of each option as listed here. */
  option_ids: string[];
  labels: number[];
  labels_lower: number[];
  labels_upper: number[];
  label_source: "preference" | "intended";
  /** Position (0–4) of the creator's intended answer among `options`. */
  intended_answer: number;
}

/**
 * One evaluation record: the variant's question with the options in a seeded order (MENTAT shuffles options per
 * record; here the order is `shuffledOrder(seedFromText(f"{bankSeed}:{variantId}"))`), labels and bounds permuted
 * alike. Keys in a fixed order; no timestamps, so exports are byte-reproducible.
 */
export function evaluationRecord(
  variant: Variant,
  question: { domain: MentatDomain; options: readonly string[]; answer: number },
  labels: QuestionLabels,
  bankSeed: number,
): EvaluationRecord {
  const order = shuffledOrder(seedFromText(`${bankSeed}:${variant.variantId}`));
  const options = order.map((i) => question.options[i]!);
  return {
    id: variant.variantId,
    question_id: variant.questionId,
    dataset: variant.dimension,
    domain: question.domain,
    demographics: { gender: variant.gender, age: variant.age, race: variant.race },
    prompt: multipleChoicePrompt(variant.text, options),
    question: variant.text,
    options,
    option_ids: order.map((i) => OPTION_LETTERS[i]!),
    labels: order.map((i) => labels.labels[i]!),
    labels_lower: order.map((i) => labels.lower[i]!),
    labels_upper: order.map((i) => labels.upper[i]!),
    label_source: labels.source,
    intended_answer: order.indexOf(question.answer),
  };
}

export interface QuestionAgreement {
  question: string;
  /** Krippendorff's α (interval) over the five options as units and the raters' 0–100 scores as values. */
  alpha: number | null;
  reason?: string;
  nRaters: number;
}

/**
 * Disagreement per question (MENTAT reports Krippendorff's α; docs/mentat.md): the options are the units, each rating row
 * a coder, the scores interval values. A rater who rated a question twice counts as two coders.
 */
export function optionAgreement(rows: readonly AnnotationRow[]): QuestionAgreement[] {
  const questions = [...new Set(rows.map((r) => r.question))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return questions.map((question) => {
    const mine = rows.filter((r) => r.question === question);
    const seen = new Map<string, number>();
    const ratings = mine.flatMap((r) => {
      const n = (seen.get(r.rater) ?? 0) + 1;
      seen.set(r.rater, n);
      const coder = n === 1 ? r.rater : `${r.rater}#${n}`;
      return r.scores.map((score, i) => ({ item: OPTION_LETTERS[i] ?? String(i), rater: coder, label: String(score) }));
    });
    const alpha = krippendorffAlpha(buildRatingTable(ratings), "interval");
    return { question, alpha: alpha.value, ...(alpha.reason ? { reason: alpha.reason } : {}), nRaters: mine.length };
  });
}

/** sha256 of annotation rows in canonical order: equal hashes mean a fit saw the same ratings. */
export function annotationRowsHash(rows: readonly AnnotationRow[]): string {
  const canonical = [...rows].map((r) => JSON.stringify([r.question, r.rater, r.scores])).sort();
  return createHash("sha256").update(canonical.join("\n")).digest("hex");
}
