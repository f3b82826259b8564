/**
 * Screening review from the command line (docs/screening.md): import a study's files, open rounds, report every round's
 * figures, write the release. The same services as the admin pages (/admin/screening).
 */
import { writeFolderAtomic } from "../platform/output-files.server";
import { DEFAULT_RULE, type NextStep } from "./domain/screening";
import { parseVocabulary } from "./domain/screening-import";
import { getDb, type Db } from "../platform/db.server";
import {
  createScreeningStudy,
  requireScreeningStudyByName,
  ScreeningSettingsSchema,
  updateScreeningSettings,
  type ScreeningStudy,
} from "./screening.server";
import {
  importIntoNewScreeningStudy,
  importScreeningFiles,
  type ScreeningFile,
  type ScreeningImportReport,
} from "./screening-import.server";
import { describeRounds, exportScreeningRelease } from "./screening-release.server";
import { getStudyOverview, openRound } from "./screening-rounds.server";
import { getUserByUsername } from "../accounts/users.server";
import { ServiceError } from "../platform/service-error";
import { CliError, parseOptions, requireOption, type CliIO, type Command, serviceCall } from "../cli/command";
import { importFileSource, listIssues, readImportFile } from "../cli/io";
import { writeTransaction } from "../work-items/engine.server";

function studyOrFail(db: Db, name: string): ScreeningStudy {
  try {
    return requireScreeningStudyByName(db, name);
  } catch (e) {
    if (e instanceof ServiceError) throw new CliError(e.message);
    throw e;
  }
}

const pct = (x: number | null) => (x === null ? "—" : `${(100 * x).toFixed(1)}%`);
const num = (x: number | null, d = 3) => (x === null ? "—" : x.toFixed(d));

function printReport(io: CliIO, report: ScreeningImportReport, dryRun: boolean) {
  const names = { items: "items", labels: "screen labels", tiers: "recall tiers" } as const;
  let problems = 0;
  for (const f of report.files) {
    // `FILE:LINE: reason`, as every import words a refusal (docs/reliability.md, "The import contract").
    listIssues(io, f.warnings, { file: f.filename, kind: "warning" });
    listIssues(io, f.errors, { file: f.filename });
    problems += f.errors.length;
  }
  if (problems) {
    io.err(`${problems} error${problems === 1 ? "" : "s"}; nothing was imported.\n`);
    return;
  }
  for (const f of report.files)
    io.out(
      `${names[f.kind]} (${f.filename}): ${f.records} records, ${f.created} new, ${f.changed} changed, ${
        f.unchanged
      } unchanged` +
        (f.kind === "tiers" && report.tiersForRound ? `, for round ${report.tiersForRound}` : "") +
        ".\n",
    );
  io.out(dryRun ? "Dry run: nothing was written.\n" : report.written ? "Imported.\n" : "Nothing to change.\n");
}

export const screeningImportCommand: Command = {
  name: "screening-import",
  summary: "Create a screening study; import its items, screen labels or recall tiers (validated as a whole)",
  help: `Usage: npm run concord -- screening-import --study NAME [--items FILE] [--labels FILE] [--tiers FILE]
       [--categories "a;b;…" | --categories-file FILE] [--reviewers N] [--inclusion-votes N] [--threshold X]
       [--controls N] [--description TEXT] [--format csv|jsonl] [--dry-run]

Creates the screening study when it does not exist (then --categories or --categories-file is required) and imports
any of its three files, CSV or JSONL (told apart by extension unless --format):
  --items FILE    the corpus: HealthBench JSONL (prompt_id, prompt = [{role, content}, …], example_tags, rubrics;
                  the whole record is kept for the release, only the messages are shown to reviewers), or plain
                  text items ({"id", "text"} lines, or a CSV with columns id,text[,tags])
  --labels FILE   the automatic screen: id (or prompt_id), label (relevant | borderline | not_relevant), optional
                  category (a term of the study's vocabulary), confidence, rationale
  --tiers FILE    a recall screen, after a round whose control-inclusion rate is above the threshold: id, tier
                  (clear | possible | no), optional rationale, for items that no round has used

All files are checked before anything is written; every bad line is reported as "FILE:LINE: reason" (exit 2) and
nothing is imported. Re-importing the same files changes nothing. The corpus and the screen labels are fixed once
round 1 opens.

Study settings (when creating; on an existing study they change it until round 1 opens):
  --categories "a;b"      the category vocabulary, separated by ";" (or --categories-file, one per line)
  --reviewers N           reviewers per round (default ${DEFAULT_RULE.reviewersPerRound})
  --inclusion-votes N     relevant votes that include an item (default ${DEFAULT_RULE.inclusionVotes}, i.e. 2 of 3)
  --threshold X           control-inclusion rate above which a recall round opens (default ${DEFAULT_RULE.controlThreshold})
  --controls N            default number of concealed controls per round (default 150)
  --description TEXT
  --dry-run               validate and report, write nothing`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      study: { type: "string" },
      items: { type: "string" },
      labels: { type: "string" },
      tiers: { type: "string" },
      categories: { type: "string" },
      "categories-file": { type: "string" },
      reviewers: { type: "string" },
      "inclusion-votes": { type: "string" },
      threshold: { type: "string" },
      controls: { type: "string" },
      description: { type: "string" },
      format: { type: "string" },
      "dry-run": { type: "boolean", default: false },
    });
    const name = requireOption(values.study, "--study");
    if (values.format && values.format !== "csv" && values.format !== "jsonl")
      throw new CliError(`--format must be csv or jsonl, not "${values.format}".`);
    const format = values.format as "csv" | "jsonl" | undefined;
    const db = getDb();
    let categories: string[] | undefined;
    if (values.categories !== undefined) categories = parseVocabulary(values.categories);
    if (values["categories-file"] !== undefined)
      categories = parseVocabulary(readImportFile(values["categories-file"], "screening", { json: false }));
    const given = {
      ...(values.description !== undefined ? { description: values.description } : {}),
      ...(categories ? { categories } : {}),
      ...(values.reviewers !== undefined ? { reviewersPerRound: values.reviewers } : {}),
      ...(values["inclusion-votes"] !== undefined ? { inclusionVotes: values["inclusion-votes"] } : {}),
      ...(values.threshold !== undefined ? { controlThreshold: values.threshold } : {}),
      ...(values.controls !== undefined ? { controlsPerRound: values.controls } : {}),
    };
    const settingsOf = (base: Record<string, unknown>) => {
      const parsed = ScreeningSettingsSchema.safeParse({ ...base, ...given });
      if (!parsed.success) throw new CliError(parsed.error.issues[0]!.message);
      return parsed.data;
    };

    const exists = (() => {
      try {
        return requireScreeningStudyByName(db, name);
      } catch (e) {
        if (e instanceof ServiceError) return null;
        throw e;
      }
    })();
    if (!exists && !categories)
      throw new CliError(`no screening study named "${name}": give --categories (or --categories-file) to create it.`);
    if (!exists && values["dry-run"]) {
      const settings = settingsOf({ ...DEFAULT_RULE, controlsPerRound: 150, description: "" });
      io.out(`Dry run: would create screening study "${name}" with ${settings.categories.length} categories.\n`);
      if (values.items || values.labels || values.tiers) io.out("Its files are checked once it exists.\n");
      return 0;
    }
    const file = (path: string | undefined): ScreeningFile | undefined =>
      path === undefined
        ? undefined
        : {
            // Streamed through the import contract (docs/reliability.md, "The import contract", "Bulk imports").
            source: importFileSource(path, "screening", {
              json: (format ?? (/\.csv$/i.test(path) ? "csv" : "jsonl")) === "jsonl",
            }),
            filename: path,
            format,
          };
    const files = { items: file(values.items), labels: file(values.labels), tiers: file(values.tiers) };
    if (!files.items && !files.labels && !files.tiers && exists && !Object.keys(given).length)
      throw new CliError("give --items, --labels or --tiers to import. See --help.");

    // A new study with its files: checked first, written behind the hidden study in short transactions, visible
    // (created, imported) at once at the end; a refused file writes nothing, not the study either
    // (docs/reliability.md, "Bulk imports").
    if (!exists && (files.items || files.labels || files.tiers)) {
      const settings = settingsOf({ ...DEFAULT_RULE, controlsPerRound: 150, description: "" });
      const r = serviceCall(() => importIntoNewScreeningStudy(db, { name, settings, ...files, actorId: null }));
      if (!r.ok) {
        printReport(io, r, false);
        return 2;
      }
      io.out(`Created screening study "${name}" (${settings.categories.length} categories).\n`);
      printReport(io, r, false);
      return 0;
    }

    // An existing study's files, with its new settings if any: checked first, the new rows written hidden in short
    // transactions, the settings and changed rows in the last one, which makes everything visible; when a file is
    // refused, --threshold is not applied either (docs/reliability.md, "Imports that add rows to an existing parent").
    const notes: string[] = [];
    let report: ScreeningImportReport | null = null;
    if (exists && (files.items || files.labels || files.tiers)) {
      const settings = Object.keys(given).length && !values["dry-run"] ? settingsOf({ ...exists }) : undefined;
      const r = serviceCall(() =>
        importScreeningFiles(db, { studyId: exists.id, ...files, settings, actorId: null, dryRun: values["dry-run"] }),
      );
      if (!r.ok) {
        printReport(io, r, values["dry-run"]);
        return 2;
      }
      if (settings) notes.push(`Updated the settings of "${exists.name}".`);
      report = r;
    } else
      // A new study without files, or an existing study's settings alone: one transaction.
      serviceCall(() =>
        writeTransaction(db, () => {
          if (!exists) {
            const settings = settingsOf({ ...DEFAULT_RULE, controlsPerRound: 150, description: "" });
            const study = createScreeningStudy(db, { name, settings, actorId: null });
            notes.push(`Created screening study "${study.name}" (${settings.categories.length} categories).`);
          } else if (Object.keys(given).length && !values["dry-run"]) {
            updateScreeningSettings(db, { studyId: exists.id, settings: settingsOf({ ...exists }), actorId: null });
            notes.push(`Updated the settings of "${exists.name}".`);
          }
        }),
      );
    for (const note of notes) io.out(`${note}\n`);
    if (report) printReport(io, report, values["dry-run"]);
    return 0;
  },
};

export const screeningRoundCommand: Command = {
  name: "screening-round",
  summary: "Open a screening study's next round (round 1, or a recall round) for its reviewers",
  help: `Usage: npm run concord -- screening-round --study NAME --reviewers a,b,c --seed N [--controls N]

Opens the study's next round:
  round 1        every relevant and borderline item of the screen plus N concealed controls drawn from not_relevant
  a recall round the recall screen's clear and possible items plus N fresh concealed controls from its "no" tier
                 (only after a round whose control-inclusion rate is above the threshold, once the tiers are imported)
Items and controls are interleaved in one random order, the same for every reviewer, drawn with --seed (CPython's
random, so Python can replay it: see the release manifest's order_algorithm). Reviewers are usernames of active users
with the rater role, exactly as many as the study's "reviewers per round". The round closes by itself when every
reviewer has submitted every item.

Options:
  --reviewers a,b,c   the reviewers' usernames
  --seed N            a whole number ≥ 0, recorded with the round
  --controls N        concealed controls (default: the study's controls per round)`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      study: { type: "string" },
      reviewers: { type: "string" },
      seed: { type: "string" },
      controls: { type: "string" },
    });
    const db = getDb();
    const study = studyOrFail(db, requireOption(values.study, "--study"));
    const names = requireOption(values.reviewers, "--reviewers")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const ids = names.map((n) => {
      const user = getUserByUsername(db, n);
      if (!user) throw new CliError(`no user named "${n}".`);
      return user.id;
    });
    const seedText = requireOption(values.seed, "--seed");
    if (!/^\d+$/.test(seedText) || !Number.isSafeInteger(Number(seedText)))
      throw new CliError("--seed must be a whole number ≥ 0.");
    const controlsText = values.controls ?? String(study.controlsPerRound);
    if (!/^\d+$/.test(controlsText)) throw new CliError("--controls must be a whole number.");
    const r = serviceCall(() =>
      openRound(db, {
        studyId: study.id,
        reviewerIds: ids,
        seed: Number(seedText),
        controls: Number(controlsText),
        actorId: null,
      }),
    );
    io.out(
      `Opened round ${r.number} of "${study.name}": ${r.candidates} items + ${r.controls} concealed controls = ${
        r.candidates + r.controls
      } in one order (seed ${r.seed}), for ${names.join(", ")}.\n`,
    );
    if (r.unscreened)
      io.out(`Note: ${r.unscreened} unused items have no recall tier and are neither reviewed nor used as controls.\n`);
    return 0;
  },
};

const NEXT_TEXT = (n: NextStep, included: number): string => {
  switch (n.kind) {
    case "import_items":
      return "import the items (screening-import --items).";
    case "import_labels":
      return `import the screen's labels: ${n.unlabelled} items have none.`;
    case "open_round":
      return `open round ${n.round} (screening-round).`;
    case "in_review":
      return `round ${n.round} is in review.`;
    case "import_tiers":
      return `the control-inclusion rate is above the threshold: import a recall screen's tiers for round ${n.round} (screening-import --tiers), then open it.`;
    case "final":
      return `stop: the included set (${included} items) is final; write it with screening-release.`;
  }
};

export const screeningReportCommand: Command = {
  name: "screening-report",
  summary: "Print a screening study's screen counts, every round's figures and the stop/continue decision",
  help: `Usage: npm run concord -- screening-report --study NAME [--json]

Prints the screen's counts (relevant / borderline / not_relevant) and, for every round: its seed and reviewers, items
reviewed by source with how many the majority included, controls included, the control-inclusion rate, Gwet's AC1 on
relevance with its 95% confidence interval, AC1 for each reviewer pair, and the decision (continue with a recall
round when the rate is above the study's threshold, stop otherwise); then what to do next.

  --json   the same as JSON: { study, settings, screen, rounds (as in the release manifest), next, included }`,
  async run(argv, io) {
    const { values } = parseOptions(argv, { study: { type: "string" }, json: { type: "boolean", default: false } });
    const db = getDb();
    const study = studyOrFail(db, requireOption(values.study, "--study"));
    const overview = (await getStudyOverview(db, study.id))!;
    const rounds = describeRounds(db, study.id);
    if (values.json) {
      io.out(
        JSON.stringify(
          {
            study: study.name,
            settings: {
              reviewers_per_round: study.reviewersPerRound,
              inclusion_votes: study.inclusionVotes,
              control_threshold: study.controlThreshold,
              categories: study.categories,
            },
            screen: overview.screen,
            rounds,
            next: overview.next,
            included: overview.included,
          },
          null,
          2,
        ) + "\n",
      );
      return 0;
    }
    const s = overview.screen;
    const lines = [
      `Screening study "${study.name}": ${s.items} items; screen: ${s.relevant} relevant, ${s.borderline} borderline, ${
        s.not_relevant
      } not_relevant${s.unlabelled ? `, ${s.unlabelled} unlabelled` : ""}.`,
      `Rule: included with ≥ ${study.inclusionVotes} of ${
        study.reviewersPerRound
      } relevant votes; recall round when the control-inclusion rate is above ${pct(study.controlThreshold)}.`,
    ];
    for (const r of rounds) {
      lines.push("");
      lines.push(
        `Round ${r.number} (${r.kind}, seed ${r.seed}, reviewers ${r.reviewers.join(", ")}): ` +
          (r.status === "open" ? `in review, ${r.votes_submitted} of ${r.votes_expected} votes submitted` : "closed"),
      );
      for (const b of r.by_stratum)
        lines.push(`  ${b.control ? "controls" : "reviewed"} ${b.stratum}: ${b.included} of ${b.n} included`);
      lines.push(`  included: ${r.included} (${r.included_candidates} candidates, ${r.included_controls} controls)`);
      lines.push(`  control-inclusion rate: ${r.included_controls}/${r.controls} = ${pct(r.control_inclusion_rate)}`);
      const ci = r.relevance_ac1.ci95 ? ` [${num(r.relevance_ac1.ci95[0])}, ${num(r.relevance_ac1.ci95[1])}]` : "";
      lines.push(
        `  relevance AC1: ${num(r.relevance_ac1.value)}${ci} (SE ${num(r.relevance_ac1.se)}); agreement ${pct(
          r.percent_agreement,
        )}`,
      );
      for (const p of r.pairwise_ac1)
        lines.push(`  AC1 ${p.reviewers.join("–")}: ${num(p.value)} (${p.n_items} items)`);
      lines.push(
        `  decision: ${
          r.decision === null
            ? "— (votes missing)"
            : r.decision === "continue"
              ? `continue (rate > ${pct(r.rule.control_threshold)}): recall round`
              : `stop (rate ≤ ${pct(r.rule.control_threshold)})`
        }`,
      );
    }
    lines.push("", `Next: ${NEXT_TEXT(overview.next, overview.included)}`, "");
    io.out(lines.join("\n"));
    return 0;
  },
};

export const screeningReleaseCommand: Command = {
  name: "screening-release",
  summary: "Write a screening study's release: included subset, votes, categories and manifest",
  help: `Usage: npm run concord -- screening-release --study NAME --out DIR [--allow-incomplete]

Writes the included subset of a screening study whose last round ended the cycle (control-inclusion rate at or
below the threshold):
  DIR/included.jsonl  one object per included item: id, round (of inclusion), source (screen label or recall tier),
                      was_control, yes_votes, reviewers, consensus_tier (unanimous | majority), modal_category (or
                      "no majority"), votes [{reviewer R1…, relevant, category, confidence}]
  DIR/included.csv    the same, one row per item (votes as "R1:yes:category:confidence|…")
  DIR/subset.jsonl    the included items' records as imported (HealthBench form, rubrics included)
  DIR/categories.csv  category, n, share, by modal category ("no majority" last)
  DIR/manifest.json   settings, screen counts, every round's figures, seeds, reviewer codes and sha256 hashes of the
                      corpus, screen labels, orders, votes and recall tiers; the files' sha256; export time
Items are in code-point order of their ids; repeating the export gives byte-identical files except the manifest's
exported_at.

  --allow-incomplete  export before the cycle has ended; the manifest says "final": false`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      study: { type: "string" },
      out: { type: "string" },
      "allow-incomplete": { type: "boolean", default: false },
    });
    const db = getDb();
    const study = studyOrFail(db, requireOption(values.study, "--study"));
    const out = requireOption(values.out, "--out");
    const result = exportScreeningRelease(db, { studyId: study.id, allowIncomplete: values["allow-incomplete"] });
    if (!result.ok) throw new CliError(result.message);
    // The folder whole or not at all (docs/reliability.md, "Atomic files").
    writeFolderAtomic(out, result.files);
    io.out(
      `Wrote the ${result.final ? "" : "provisional "}release of "${study.name}" to ${out}: ${
        result.included
      } included items (${Object.keys(result.files).join(", ")}).\n`,
    );
    return 0;
  },
};
