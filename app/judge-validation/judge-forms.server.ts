/**
 * The judge-validation upload forms (admin pages): form fields checked with zod and turned into one service call, so
 * that the routes stay thin and the two pages that upload responses share one reading of the form.
 */
import { z } from "zod";
import { RESPONSE_FORMATS, type ImportIssue } from "./domain/judge-import";
import type { Db } from "../platform/db.server";
import { importJudgeOutputs, JudgeNameSchema } from "./judge-candidates.server";
import { importResponses } from "./judge-responses.server";
import { JudgeSetNameSchema, MAX_RESPONSES_BYTES } from "./judge-sets.server";
import { importBytesProblem, importLimits, refusalLine } from "../formats/import-contract";
import { ServiceError } from "../platform/service-error";

export interface FileIssue extends ImportIssue {
  file: string;
}

export type UploadResult =
  | { ok: true; setId: number; written: number; discardsDraw: boolean; warnings: FileIssue[] }
  | { ok: false; message: string; errors: FileIssue[]; warnings: FileIssue[] };

const ResponsesFormSchema = z.object({
  set: JudgeSetNameSchema,
  format: z.enum(["auto", ...RESPONSE_FORMATS]).default("auto"),
  run: z
    .string()
    .trim()
    .max(300)
    .regex(/^[^/\\]*$/, "The run folder name may not contain slashes.")
    .default(""),
});

async function fileOf(form: FormData, field = "file"): Promise<{ name: string; bytes: Uint8Array } | string> {
  const file = form.get(field);
  if (!(file instanceof File) || file.size === 0) return "Choose a JSONL file to import.";
  if (file.size > MAX_RESPONSES_BYTES) return `The file is larger than ${MAX_RESPONSES_BYTES / 1024 / 1024} MB.`;
  const name = file.name || "upload.jsonl";
  const bytes = new Uint8Array(await file.arrayBuffer());
  // The import contract (docs/reliability.md, "The import contract"): line length, NUL, an empty file.
  const problem = importBytesProblem(bytes, importLimits("judge"), { json: !/\.csv$/i.test(name) });
  return problem ? `${refusalLine(name, problem)} Nothing was imported.` : { name, bytes };
}

const failure = (message: string): UploadResult => ({ ok: false, message, errors: [], warnings: [] });

/** Imports the uploaded responses file (fields set, format, run, file). `set` may be fixed by the page. */
export async function importResponsesFromForm(
  db: Db,
  form: FormData,
  options: { actorId: string; setName?: string },
): Promise<UploadResult> {
  const parsed = ResponsesFormSchema.safeParse({
    set: options.setName ?? form.get("set") ?? "",
    format: form.get("format") || "auto",
    run: form.get("run") ?? "",
  });
  if (!parsed.success) return failure(parsed.error.issues[0]!.message);
  const file = await fileOf(form);
  if (typeof file === "string") return failure(file);
  const run = parsed.data.run;
  const result = importResponses(db, {
    setName: parsed.data.set,
    files: [
      {
        bytes: file.bytes,
        filename: file.name,
        source: { name: run, dir: run ? `runs/${run}` : "", file: run ? "trajectories.jsonl" : "" },
      },
    ],
    format: parsed.data.format === "auto" ? undefined : parsed.data.format,
    actorId: options.actorId,
  });
  const tag = (issues: ImportIssue[]) => issues.map((i) => ({ ...i, file: file.name }));
  const warnings = result.files.flatMap((f) => tag(f.parse.warnings));
  if (!result.ok)
    return {
      ok: false,
      message: result.refusal ?? "The file has errors: nothing was imported.",
      errors: result.files.flatMap((f) => tag(f.parse.errors)),
      warnings,
    };
  return { ok: true, setId: result.setId!, written: result.written, discardsDraw: result.discardsDraw, warnings };
}

const JudgeFormSchema = z.object({
  judge: JudgeNameSchema,
  replace: z.literal("on").optional(),
});

/** Imports a candidate judge's outputs file (fields judge, replace, file) into the set. */
export async function importJudgeFromForm(
  db: Db,
  form: FormData,
  options: { actorId: string; setId: number },
): Promise<UploadResult> {
  const parsed = JudgeFormSchema.safeParse({
    judge: form.get("judge") ?? "",
    replace: form.get("replace") ?? undefined,
  });
  if (!parsed.success) return failure(parsed.error.issues[0]!.message);
  const file = await fileOf(form);
  if (typeof file === "string") return failure(file);
  const text = new TextDecoder().decode(file.bytes);
  try {
    const result = importJudgeOutputs(db, {
      setId: options.setId,
      name: parsed.data.judge,
      text,
      filename: file.name,
      replace: parsed.data.replace === "on",
      actorId: options.actorId,
    });
    const tag = (issues: ImportIssue[]) => issues.map((i) => ({ ...i, file: file.name }));
    if (!result.ok)
      return {
        ok: false,
        message: result.refusal ?? "The file has errors: nothing was imported.",
        errors: tag(result.parse.errors),
        warnings: tag(result.parse.warnings),
      };
    return {
      ok: true,
      setId: options.setId,
      written: result.written,
      discardsDraw: false,
      warnings: tag(result.parse.warnings),
    };
  } catch (e) {
    if (e instanceof ServiceError) return failure(e.message);
    throw e;
  }
}
