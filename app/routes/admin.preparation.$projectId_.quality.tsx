import type { ActionFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { notFound, requireById, requireForm, requireUser } from "~/accounts/guard.server";
import { formatOf } from "~/annotation/public";
import { decodeImportBytes, importLimits, refusalLine } from "~/formats/import-contract";
import { getDb } from "~/platform/db.server";
import { ServiceError } from "~/platform/service-error";
import { computeProjectQuality, getProject, importCometScores } from "~/preparation/public.server";
import { parseListFile, type QualityAnswer } from "~/preparation/public";

/** Numbers of the thresholds form: empty for "not checked". */
const Threshold = z
  .string()
  .trim()
  .max(40)
  .transform((v, ctx) => {
    if (v === "") return null;
    const n = Number(v);
    if (!Number.isFinite(n)) {
      ctx.addIssue({ code: "custom", message: `"${v}" is not a number.` });
      return z.NEVER;
    }
    return n;
  });

const QualitySchema = z.object({
  minBleu: Threshold,
  minChrf: Threshold,
  minComet: Threshold,
  tests: z.string().max(100_000),
});

/**
 * The quality check's actions of a project's page (docs/preparation.md, "Quality"): score the back-translations with
 * the thresholds given (stored as the project's), or import COMET scores under the import contract. Admins only;
 * anyone else is answered 404, as for the report.
 */
export async function action({ request, params }: ActionFunctionArgs): Promise<QualityAnswer> {
  const user = await requireUser(request);
  if (!user.roles.includes("admin")) throw notFound();
  const db = getDb();
  const project = requireById(params.projectId, (id) => getProject(db, id));
  const form = await requireForm(request, user);
  const intent = form.get("intent");
  if (intent === "quality") {
    const parsed = QualitySchema.safeParse(
      Object.fromEntries([...form.entries()].filter(([, v]) => typeof v === "string")),
    );
    if (!parsed.success)
      return { ok: false, summary: parsed.error.issues[0]?.message ?? "The form could not be read.", lines: [] };
    const tests = parseListFile(parsed.data.tests);
    try {
      const r = computeProjectQuality(db, {
        projectId: project.id,
        settings: { minBleu: parsed.data.minBleu, minChrf: parsed.data.minChrf, minComet: parsed.data.minComet, tests },
        actorId: user.id,
      });
      const f = (x: number | null) => (x === null ? "–" : x.toFixed(1));
      return {
        ok: true,
        summary: `${r.scored} notes scored, ${r.needsCorrection} needing correction, ${r.waiting} waiting for their back-translation${r.stale ? `, ${r.stale} not scored (translated before their final text changed: translate again)` : ""}. Project BLEU ${f(r.bleu)}, chrF ${f(r.chrf)}.`,
        lines: [],
      };
    } catch (e) {
      if (e instanceof ServiceError) return { ok: false, summary: e.message, lines: [] };
      throw e;
    }
  }
  if (intent === "comet") {
    const file = form.get("file");
    if (!(file instanceof File) || file.size === 0)
      return { ok: false, summary: "Choose a CSV or JSONL file.", lines: [] };
    const format = formatOf(file.name);
    if (!format) return { ok: false, summary: `Name the file .csv or .jsonl ("${file.name}").`, lines: [] };
    // The import contract (docs/reliability.md, "The import contract"), before a row is read.
    const decoded = decodeImportBytes(new Uint8Array(await file.arrayBuffer()), importLimits("preparation"), {
      json: format === "jsonl",
    });
    if ("problem" in decoded)
      return {
        ok: false,
        summary: "1 problem; nothing was imported.",
        lines: [refusalLine(file.name, decoded.problem)],
      };
    const r = importCometScores(db, { projectId: project.id, text: decoded.text, format, actorId: user.id });
    if (!r.ok)
      return {
        ok: false,
        summary: `${r.errors.length} problem${r.errors.length === 1 ? "" : "s"}; nothing was imported.`,
        lines: r.errors.map((e) => refusalLine(file.name, e)),
      };
    return {
      ok: true,
      summary: `Imported ${r.scores} COMET scores of ${r.notes} notes. Check quality to take them into the notes' verdicts.`,
      lines: [],
    };
  }
  return { ok: false, summary: "Unknown action.", lines: [] };
}
