/**
 * HealthBench-format evaluation sets (docs/rubric-grading.md, "Evaluation sets"): one JSON object per line with
 * `prompt` (the conversation as `{role, content}` messages), `prompt_id`, `rubrics` (`{criterion, points, tags}`,
 * negative points allowed) and `example_tags`. Parsing is pure: the caller reads the file and decides what to write.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { importIdProblem } from "../../formats/import-contract";
import { readJsonlLine, splitJsonlLines } from "../../formats/jsonl";
import { formulaWarning } from "../../formats/spreadsheet-safe";
import { textWarning } from "../../formats/strict-text";

export const MessageSchema = z.object({
  role: z.enum(["system", "user", "assistant"], { error: "a message's role must be system, user or assistant" }),
  content: z.string({ error: "a message's content must be text" }),
});

export const RubricItemSchema = z.object({
  criterion: z.string().min(1, "a rubric item needs a criterion"),
  points: z.number({ error: "a rubric item's points must be a number" }),
  tags: z.array(z.string()).default([]),
});

export const EvalRecordSchema = z
  .object({
    prompt_id: z.string().min(1, "prompt_id is required"),
    prompt: z.array(MessageSchema).min(1, "prompt needs at least one message"),
    rubrics: z.array(RubricItemSchema).min(1, "rubrics needs at least one item"),
    example_tags: z.array(z.string()).default([]),
  })
  .passthrough()
  .superRefine((r, ctx) => {
    if (!r.rubrics.some((i) => i.points > 0)) {
      // The reference asserts an overall score exists; with no positive points there is none to compute.
      ctx.addIssue({ code: "custom", message: "rubrics need at least one item with positive points" });
    }
    if (new Set(r.example_tags).size !== r.example_tags.length) {
      ctx.addIssue({ code: "custom", message: "example_tags has a duplicate tag" });
    }
    r.rubrics.forEach((item, i) => {
      if (new Set(item.tags).size !== item.tags.length) {
        ctx.addIssue({ code: "custom", message: `rubrics[${i}].tags has a duplicate tag` });
      }
    });
  });

export type Message = z.infer<typeof MessageSchema>;
export type RubricItem = z.infer<typeof RubricItemSchema>;
export type EvalRecord = z.infer<typeof EvalRecordSchema>;

export interface LineError {
  line: number;
  message: string;
}

export interface ParsedEvalSet {
  records: EvalRecord[];
  /** The line each record came from (1-based). */
  lines: number[];
  errors: LineError[];
  /** Values kept as given that deserve a look: formula-like tags, control characters in text. */
  warnings: LineError[];
}

export const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

function issueText(error: z.ZodError): string {
  const first = error.issues[0];
  const path = first.path.length ? `${first.path.join(".")}: ` : "";
  return `${path}${first.message}`;
}

/** One line checked: null for a blank line, else its record (and a warning about it) or what is wrong with it. */
function checkLine(
  line: number,
  raw: string,
): { record: EvalRecord; warning: string | null } | { error: string } | null {
  // The JSONL reader every import shares: a duplicate key, a lone surrogate or a number beyond a double is refused.
  const entry = readJsonlLine(line, raw);
  if (!entry) return null;
  if ("invalid" in entry) return { error: `not valid JSON (${entry.invalid})` };
  const parsed = EvalRecordSchema.safeParse(entry.value);
  if (!parsed.success) return { error: issueText(parsed.error) };
  const idIssue = importIdProblem(parsed.data.prompt_id, "prompt_id");
  if (idIssue) return { error: idIssue };
  const r = parsed.data;
  const odd =
    formulaWarning({
      ...Object.fromEntries(r.example_tags.map((t, k) => [`example_tags[${k}]`, t])),
      ...Object.fromEntries(r.rubrics.flatMap((item, k) => item.tags.map((t, j) => [`rubrics[${k}].tags[${j}]`, t]))),
      ...Object.fromEntries(r.rubrics.map((item, k) => [`rubrics[${k}].criterion`, item.criterion])),
    }) ?? r.prompt.map((m, k) => textWarning(`prompt[${k}].content`, m.content)).find((w) => w !== null);
  return { record: r, warning: odd ?? null };
}

/**
 * The first pass over an evaluation set's lines (docs/reliability.md, "Bulk imports"): every line checked, a bad
 * line reported (the set is then unusable: the caller writes nothing). It keeps no record, only what the checks
 * across lines and the set's hash need: each record's prompt_id, line and content hash.
 */
export interface EvalSetCheck {
  records: number;
  /** Each record's id and content hash, in file order (for setHash). */
  members: { promptId: string; contentHash: string }[];
  errors: LineError[];
  /** Values kept as given that deserve a look: formula-like tags, control characters in text. */
  warnings: LineError[];
}

export function checkEvalSet(lines: Iterable<{ line: number; text: string }>): EvalSetCheck {
  const members: EvalSetCheck["members"] = [];
  const errors: LineError[] = [];
  const warnings: LineError[] = [];
  const seen = new Map<string, number>();
  for (const { line, text } of lines) {
    const checked = checkLine(line, text);
    if (!checked) continue;
    if ("error" in checked) {
      errors.push({ line, message: checked.error });
      continue;
    }
    if (checked.warning) warnings.push({ line, message: checked.warning });
    const id = checked.record.prompt_id;
    const earlier = seen.get(id);
    if (earlier !== undefined) {
      errors.push({ line, message: `duplicate prompt_id (first on line ${earlier})` });
      continue;
    }
    seen.set(id, line);
    if (errors.length === 0) members.push({ promptId: id, contentHash: recordHash(checked.record) });
  }
  if (seen.size === 0 && errors.length === 0) errors.push({ line: 0, message: "the file has no records" });
  return { records: seen.size, members: errors.length ? [] : members, errors, warnings };
}

/**
 * The second pass: the records of lines the first pass accepted, one at a time. A line that no longer checks (the
 * file changed between the passes) throws; the caller's import then leaves nothing.
 */
export function* evalSetRecords(lines: Iterable<{ line: number; text: string }>): Generator<EvalRecord> {
  for (const { line, text } of lines) {
    const checked = checkLine(line, text);
    if (!checked) continue;
    if ("error" in checked) throw new Error(`line ${line} changed since it was checked: ${checked.error}`);
    yield checked.record;
  }
}

/** Every line checked and every record kept (a text already in memory); a bad line makes the set unusable. */
export function parseEvalSet(text: string): ParsedEvalSet {
  const records: EvalRecord[] = [];
  const lines: number[] = [];
  const { errors, warnings } = checkEvalSet(splitJsonlLines(text.replace(/^\uFEFF/, "")));
  if (errors.length === 0)
    for (const { line, text: raw } of splitJsonlLines(text.replace(/^\uFEFF/, ""))) {
      const checked = checkLine(line, raw);
      if (checked && "record" in checked) {
        records.push(checked.record);
        lines.push(line);
      }
    }
  return { records, lines, errors, warnings };
}

/**
 * The hash of what is graded: the conversation and the rubric (criteria, points, tags in order) and the example
 * tags. Key order is fixed here so that the same record always hashes the same.
 */
export function recordHash(r: EvalRecord): string {
  return sha256(
    JSON.stringify({
      prompt_id: r.prompt_id,
      prompt: r.prompt.map((m) => ({ role: m.role, content: m.content })),
      rubrics: r.rubrics.map((i) => ({ criterion: i.criterion, points: i.points, tags: i.tags })),
      example_tags: r.example_tags,
    }),
  );
}

/** A set's (or subset's) content hash: its members' ids and record hashes, sorted by id. */
export function setHash(members: { promptId: string; contentHash: string }[]): string {
  const sorted = [...members].sort((a, b) => (a.promptId < b.promptId ? -1 : a.promptId > b.promptId ? 1 : 0));
  return sha256(sorted.map((m) => `${m.promptId}\t${m.contentHash}\n`).join(""));
}

/**
 * An id list for a subset: one id a line, or JSONL objects with `prompt_id` (HealthBench-Hard's released file is
 * such a JSONL). Blank lines are skipped; a duplicate id is harmless.
 */
export function parseIdList(lines: Iterable<{ line: number; text: string }>): { ids: string[]; errors: LineError[] } {
  const ids: string[] = [];
  const errors: LineError[] = [];
  for (const { line, text: raw } of lines) {
    const s = raw.trim();
    if (s === "") continue;
    if (s.startsWith("{")) {
      try {
        const id = (JSON.parse(s) as { prompt_id?: unknown }).prompt_id;
        if (typeof id === "string" && id !== "") ids.push(id);
        else errors.push({ line, message: "the object has no prompt_id" });
      } catch {
        errors.push({ line, message: "not valid JSON" });
      }
      continue;
    }
    ids.push(s);
  }
  return { ids: [...new Set(ids)], errors };
}
