/**
 * Commands of MENTAT (docs/mentat.md): question-bank import, variant sets, the Bradley–Terry fit and the evaluation
 * export. They call the same services as the admin pages.
 */
import { writeFileAtomic } from "../platform/output-files.server";
import { z } from "zod";
import {
  DEFAULT_AGES,
  DEFAULT_RACES,
  MENTAT_DOMAINS,
  VARIANT_DIMENSIONS,
  type MentatDomain,
  type VariantDimension,
} from "../expert-panel/domain/expert-scales";
import { getDb } from "../platform/db.server";
import { expandBank } from "./questions.server";
import { exportDataset } from "./export.server";
import { FitOptionsSchema, runBankFitInWorkers } from "./fits.server";
import { importQuestionBank, requireBankByName } from "./banks.server";
import { listIssues, importFileSource } from "../cli/io";
import { CliError, parseOptions, requireOption, type Command, serviceCall } from "../cli/command";
import { fmt } from "../expert-panel/cli";

export const mentatImportCommand: Command = {
  name: "mentat-import",
  summary: "Import a MENTAT question bank (CSV) into a bank, validated whole",
  help: `Usage: npm run concord -- mentat-import FILE --bank NAME [--preference-domains LIST] [--seed N] [--dry-run]

Reads five-option questions into the question bank NAME (created if needed). Columns (case-insensitive):
  id        the question's id (letters, digits, . _ -)
  domain    diagnosis, treatment, monitoring, triage or documentation (MENTAT's "category" is accepted)
  question  the question, with gender alternatives inline: {he/she/they}, {his/her/their}, {man/woman/person}
  he, she, they   or: the question written once per gender (MENTAT's release format) instead of "question"
  a, b, c, d, e   the five answer options
  answer    the letter of the creator's intended answer
  notes     optional
Placeholders: <AGE> (filled as "34-year-old") and <NAT> (race or nationality), where an adjective goes.

The whole file is validated first; every problem is listed as FILE:LINE and nothing is written (exit 2).
Questions are matched by id: new ones added, changed ones updated (refused once a question has ratings).

Options:
  --preference-domains LIST   domains labelled by expert preference and shown to the raters (comma-separated,
                              or "all"); default triage,documentation. Applied to a new bank, or changed if given.
  --seed N                    seed of the per-rater option order and of exported option orders (default 1)
  --dry-run                   validate and report without writing`,
  async run(argv, io) {
    const { values, positionals } = parseOptions(
      argv,
      {
        bank: { type: "string" },
        "preference-domains": { type: "string" },
        seed: { type: "string" },
        "dry-run": { type: "boolean", default: false },
      },
      true,
    );
    if (positionals.length !== 1) throw new CliError("give exactly one question-bank CSV FILE. See --help.");
    const file = positionals[0]!;
    const bankName = requireOption(values.bank, "--bank");
    let domains: MentatDomain[] | undefined;
    if (values["preference-domains"] !== undefined) {
      const raw = values["preference-domains"].trim().toLowerCase();
      domains =
        raw === "all" ? [...MENTAT_DOMAINS] : raw === "" ? [] : raw.split(",").map((d) => d.trim() as MentatDomain);
      const bad = domains.filter((d) => !MENTAT_DOMAINS.includes(d));
      if (bad.length)
        throw new CliError(
          `unknown domain${bad.length > 1 ? "s" : ""} ${bad.join(", ")}: use ${MENTAT_DOMAINS.join(", ")} or all.`,
        );
    }
    const seed = values.seed === undefined ? undefined : Number(values.seed);
    const result = importQuestionBank(getDb(), {
      bankName,
      text: importFileSource(file, "expert", { json: false }),
      actorId: null,
      preferenceDomains: domains,
      seed,
      dryRun: values["dry-run"],
    });
    if (!result.ok) {
      listIssues(io, result.errors, { file: file, kind: "error" });
      listIssues(io, result.warnings, { file: file, kind: "warning" });
      io.err(`${result.errors.length} error${result.errors.length === 1 ? "" : "s"}; nothing was imported.\n`);
      return 2;
    }
    listIssues(io, result.warnings, { file: file, kind: "warning" });
    io.out(
      `${result.written ? "Imported" : "Checked (dry run, nothing written)"} ${result.total} questions into bank "${
        result.bankName
      }"${result.createdBank ? " (new)" : ""}: ${result.created} new, ${result.updated} changed, ${
        result.unchanged
      } unchanged.\n`,
    );
    return 0;
  },
};

function parseList(value: string | undefined, what: string): string[] | undefined {
  if (value === undefined) return undefined;
  const list = value.split(",").map((s) => s.trim());
  if (list.some((s) => !s)) throw new CliError(`${what} has an empty entry: "${value}".`);
  return list;
}

export const mentatExpandCommand: Command = {
  name: "mentat-expand",
  summary: "Expand a question bank into demographic variant sets (base, gender, age, race)",
  help: `Usage: npm run concord -- mentat-expand --bank NAME [--by base|gender|age|race|all] [--ages LIST] [--races LIST]

Builds the bank's variant sets, each a separate dataset with stable ids ("<question>.<set>.<value>") in a fixed
order, stored (replacing an earlier set of the same kind) and reported with a content hash: the same questions
and options always give the same set.
  base    one variant per question, demographics left out
  gender  one per gender text (he / she / they) of each question
  age     one per age for questions with <AGE> (default ages ${DEFAULT_AGES.join(", ")})
  race    one per race for questions with <NAT> (default ${DEFAULT_RACES.join(", ")})
A question without the placeholder appears once, with the value null.

Options:
  --by S       which set(s); default all
  --ages LIST  comma-separated whole numbers
  --races LIST comma-separated names`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      bank: { type: "string" },
      by: { type: "string" },
      ages: { type: "string" },
      races: { type: "string" },
    });
    const by = values.by ?? "all";
    if (by !== "all" && !VARIANT_DIMENSIONS.includes(by as VariantDimension))
      throw new CliError(`--by must be one of ${VARIANT_DIMENSIONS.join(", ")}, all; not "${by}".`);
    const ages = parseList(values.ages, "--ages")?.map((a) => {
      if (!/^\d+$/.test(a)) throw new CliError(`--ages must list whole numbers, not "${a}".`);
      return Number(a);
    });
    const races = parseList(values.races, "--races");
    const db = getDb();
    return serviceCall(() => {
      const bank = requireBankByName(db, requireOption(values.bank, "--bank"));
      for (const dimension of by === "all" ? VARIANT_DIMENSIONS : [by as VariantDimension]) {
        const r = expandBank(db, { bankId: bank.id, dimension, params: { ages, races }, actorId: null });
        io.out(
          `${dimension.padEnd(6)} ${String(r.count).padStart(6)} variants  sha256 ${r.contentHash.slice(0, 16)}  ${
            r.unchanged ? "unchanged" : r.replaced ? "replaced" : "new"
          }\n`,
        );
      }
      return 0;
    });
  },
};

export const mentatFitCommand: Command = {
  name: "mentat-fit",
  summary: "Fit hierarchical Bradley–Terry preference labels to a bank's ratings",
  help: `Usage: npm run concord -- mentat-fit --bank NAME [--fit-version V] [--bootstrap N] [--seed N]
                                      [--rater-effects E] [--penalty X] [--slope-bounds LO,HI]
                                      [--strength-penalty X] [--workers N] [--json]

Turns the submitted 0–100 option ratings of the bank's preference-domain questions into preference labels (MENTAT,
docs/mentat.md): pairwise wins per rating (ties give nothing), one strength vector per question (summing to zero) with a
slope and an offset per expert, P(i beats j | expert) = σ(slope·(βi − βj) + offset),
penalty·Σ(slope − 1)² + penalty·Σ offset² — MENTAT's objective — fitted by projected Newton steps; label = softmax(β)
with percentile bootstrap intervals (rows resampled within each question, Python's random.Random(seed)); and
Krippendorff's α (interval) per question. A question whose wins have no finite maximum (an option that never loses
or never wins) is reported as separated and counted as not converged, in the fit and in each bootstrap refit. The
fit is stored; exports use the latest one.

Options:
  --fit-version V        the version of MENTAT's preferece_HBT.py whose penalty, bounds and refits apply:
                         2025-01-24 (default, MENTAT's current and published one: penalty 5, slopes 0.5–2,
                         offsets -3–3, 100 refits) or 2025-01-19 (the first: penalty 2, slopes 0.8–1.25, 30 refits)
  --bootstrap N          bootstrap refits (default the version's; 0 = no intervals)
  --seed N               seed of the resampling (default 0)
  --rater-effects E      slope+offset (default, MENTAT), slope, or none (plain Bradley–Terry)
  --penalty X            weight of the slope and offset penalties (default the version's)
  --slope-bounds LO,HI   bounds of the experts' slopes (default the version's), 0 < LO ≤ 1 ≤ HI
  --strength-penalty X   weight of a ridge strength-penalty·Σβ² (default 0, as MENTAT; a value > 0 is not in
                         MENTAT, keeps separated questions finite and is named in the output)
  --workers N            worker threads for the refits (default: one per core); the labels are the same for any N
  --json                 print the stored result as JSON`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      bank: { type: "string" },
      "fit-version": { type: "string" },
      bootstrap: { type: "string" },
      seed: { type: "string" },
      "rater-effects": { type: "string" },
      penalty: { type: "string" },
      "slope-bounds": { type: "string" },
      "strength-penalty": { type: "string" },
      json: { type: "boolean", default: false },
      workers: { type: "string" },
    });
    const workers = z.coerce.number().int().min(1).max(256).optional().safeParse(values.workers);
    if (!workers.success) throw new CliError(`--workers: ${workers.error.issues[0]!.message}`);
    const options = FitOptionsSchema.safeParse({
      fitVersion: values["fit-version"],
      slopeBounds: values["slope-bounds"],
      bootstrap: values.bootstrap,
      seed: values.seed,
      raterEffects: values["rater-effects"],
      penalty: values.penalty,
      strengthPenalty: values["strength-penalty"],
    });
    if (!options.success) {
      const issue = options.error.issues[0]!;
      throw new CliError(
        `--${String(issue.path[0]).replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())}: ${issue.message}`,
      );
    }
    const db = getDb();
    return serviceCall(async () => {
      const bank = requireBankByName(db, requireOption(values.bank, "--bank"));
      // The refits run on one worker thread per core (docs/mentat.md, "Fits in the background"); the bar goes to
      // stderr on a terminal only, so stdout stays the result.
      const bar = io.isTTY ? progressBar((line) => io.err(line)) : undefined;
      const fit = await runBankFitInWorkers(db, {
        bankId: bank.id,
        options: options.data,
        actorId: null,
        workers: workers.data,
        onReplicate: bar,
      });
      if (bar && options.data.bootstrap > 0) io.err("\n");
      if (values.json) {
        io.out(
          JSON.stringify(
            { bank: bank.name, fit_id: fit.id, params: fit.params, input_hash: fit.inputHash, ...fit.result },
            null,
            2,
          ) + "\n",
        );
        return 0;
      }
      const l = fit.result.labels;
      const alpha = new Map(fit.result.agreement.map((a) => [a.question, a]));
      io.out(
        `Fit ${fit.id} of bank "${bank.name}": ${fit.result.nRows} ratings, ${l.questions.length} questions, ${l.raters.length} experts; ` +
          `objective ${l.objective.toFixed(4)}, ${l.iterations} iterations, ${
            l.converged ? "converged" : "NOT CONVERGED"
          }; ` +
          `${l.bootstrap.replicates} bootstrap refits (seed ${l.bootstrap.seed})${
            l.bootstrap.notConverged ? `, ${l.bootstrap.notConverged} not converged` : ""
          }.\n`,
      );
      io.out(
        `MENTAT's fit of ${l.options.fitVersion}: penalty ${l.options.penalty}, slopes ${l.options.slopeBounds.join("–")}, offsets ${l.options.offsetBounds.join("–")}.\n`,
      );
      // Both deviations from MENTAT's numbers are said out loud (docs/mentat.md, "Separation").
      if (l.options.strengthPenalty > 0)
        io.out(`Ridge ${l.options.strengthPenalty}·Σβ² on the strengths (not in MENTAT's objective).\n`);
      const separated = l.questions.filter((q) => q.separated).map((q) => q.question);
      if (separated.length)
        io.out(
          `Separated (no finite maximum${l.options.strengthPenalty > 0 ? ", held by the ridge" : "; labels are where the optimiser stopped"}): ${separated.join(", ")}.\n`,
        );
      io.out("\n");
      io.out("question        n   alpha   label (95% interval) per option a–e\n");
      for (const q of l.questions) {
        const cells = q.labels.map(
          (p, i) => `${"abcde"[i]} ${fmt(p, 2)} [${fmt(q.lower[i], 2)}, ${fmt(q.upper[i], 2)}]`,
        );
        io.out(
          `${q.question.padEnd(12)} ${String(q.nAnnotations).padStart(4)}  ${fmt(alpha.get(q.question)?.alpha).padStart(
            6,
          )}   ${cells.join("  ")}\n`,
        );
      }
      io.out("\nexpert          ratings   slope   offset\n");
      for (const r of l.raters)
        io.out(
          `${r.rater.padEnd(14)} ${String(r.nAnnotations).padStart(8)}  ${fmt(r.slope).padStart(6)}  ${fmt(
            r.offset,
          ).padStart(7)}\n`,
        );
      return 0;
    });
  },
};

export const mentatExportCommand: Command = {
  name: "mentat-export",
  summary: "Write a variant set's evaluation records (JSONL) with labels and bounds",
  help: `Usage: npm run concord -- mentat-export --bank NAME --set base|gender|age|race [--out FILE] [--allow-intended]

One JSON object per line, in the set's order, keys: id, question_id, dataset, domain, demographics {gender, age,
race}, prompt (multiple choice, MENTAT's layout), question, options (in a seeded order per record), option_ids
(their original letters), labels, labels_lower, labels_upper (same order as options), label_source (preference or
intended), intended_answer (its position among options). Preference-domain questions carry the latest fit's labels;
the others their intended answer (one-hot, bounds equal). Byte-identical when repeated on the same data.

Options:
  --out FILE         write here (default: standard output)
  --allow-intended   export even when a preference-domain question has no fitted label (it keeps its intended
                     answer, label_source "intended"); otherwise that is refused (exit 2)`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      bank: { type: "string" },
      set: { type: "string" },
      out: { type: "string" },
      "allow-intended": { type: "boolean", default: false },
    });
    const dimension = requireOption(values.set, "--set") as VariantDimension;
    if (!VARIANT_DIMENSIONS.includes(dimension))
      throw new CliError(`--set must be one of ${VARIANT_DIMENSIONS.join(", ")}.`);
    const db = getDb();
    return serviceCall(() => {
      const bank = requireBankByName(db, requireOption(values.bank, "--bank"));
      const r = exportDataset(db, { bankId: bank.id, dimension, allowIntended: values["allow-intended"] });
      if (!r.ok) throw new CliError(r.message);
      for (const w of r.warnings) io.err(`warning: ${w}\n`);
      if (values.out && values.out !== "-") {
        writeFileAtomic(values.out, r.text);
        io.out(`Wrote ${r.count} records of the ${dimension} set of "${bank.name}" to ${values.out}.\n`);
      } else io.out(r.text);
      return 0;
    });
  },
};

/** A one-line progress bar of the bootstrap refits, redrawn in place on a terminal. */
function progressBar(write: (text: string) => void): (done: number, total: number) => void {
  const width = 30;
  return (done, total) => {
    const filled = Math.round((width * done) / total);
    write(`\rbootstrap [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total}`);
  };
}
