import { getDb } from "../../platform/db.server";
import { autoAssign, listStudyAnnotators } from "../assignments.server";
import { requireStudyByName } from "../studies.server";
import { ServiceError } from "../../platform/service-error";
import { CliError, parseOptions, requireOption, type Command } from "../../cli/command";
import { applyQualityFlags, describeSettings, QUALITY_FLAGS, QUALITY_FLAGS_HELP } from "./rater-quality";

export const assignCommand: Command = {
  name: "assign",
  summary: "Give every case of a study two annotators (balanced, reproducible with a seed)",
  help: `Usage: npm run concord -- assign --study NAME --annotators a,b,c [--seed N] [rater-quality flags]

Every case of the study that has fewer than two annotators gets the missing ones, chosen from the listed usernames
(active users with the annotator role): never the same person twice on a case, the load balanced across people
(counting what they already have in this study), ties broken by a random order drawn from --seed (default 1), so the
same command on the same study gives the same assignment. Existing assignments are kept. Every assignment is audited.

${QUALITY_FLAGS_HELP}`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      study: { type: "string" },
      annotators: { type: "string" },
      seed: { type: "string" },
      ...QUALITY_FLAGS,
    });
    const db = getDb();
    try {
      const study = requireStudyByName(db, requireOption(values.study, "--study"));
      const names = requireOption(values.annotators, "--annotators")
        .split(",")
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean);
      const seed = values.seed === undefined ? 1 : Number(values.seed);
      if (!Number.isInteger(seed) || seed < 0)
        throw new CliError(`--seed must be a whole number ≥ 0, not "${values.seed}".`);
      const known = listStudyAnnotators(db, study.id);
      const missing = names.filter((n) => !known.some((k) => k.username === n));
      if (missing.length)
        throw new CliError(
          `not annotators: ${missing.join(", ")}. Annotators: ${known.map((k) => k.username).join(", ") || "none"}.`,
        );
      const inactive = names.filter((n) => !known.find((k) => k.username === n)!.active);
      if (inactive.length) throw new CliError(`deactivated: ${inactive.join(", ")}.`);
      const ids = names.map((n) => known.find((k) => k.username === n)!.id);
      const { study: _s, annotators: _a, seed: _seed, ...flags } = values;
      const quality = applyQualityFlags(db, study.id, flags);
      if (quality) io.out(`Rater quality of "${study.name}": ${describeSettings(quality)}.\n`);
      const r = autoAssign(db, { studyId: study.id, annotatorIds: ids, seed, actorId: null });
      io.out(
        r.created
          ? `Assigned ${r.cases} cases of "${study.name}" (${r.created} assignments, seed ${seed}).\n`
          : `Every case of "${study.name}" already has two annotators.\n`,
      );
      for (const a of listStudyAnnotators(db, study.id).filter((x) => x.assigned > 0))
        io.out(`  ${a.username}: ${a.assigned} cases\n`);
      return 0;
    } catch (e) {
      if (e instanceof ServiceError) throw new CliError(e.message);
      throw e;
    }
  },
};
