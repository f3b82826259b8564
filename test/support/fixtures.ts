/** Shared e2e/integration set-up: a small study assigned to two annotators, written straight into the database. */
import type { Db } from "../../app/platform/db.server";
import { autoAssign } from "../../app/annotation/assignments.server";
import { importCases, requireStudyByName } from "../../app/annotation/studies.server";
import { createUser } from "../../app/accounts/users.server";
import type { Role } from "../../db/schema";

export const PASSWORD = "e2e-password-1";

export function smallStudyJsonl(n: number): Uint8Array {
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      id: `case-${String(i + 1).padStart(2, "0")}`,
      age_group: "28-37",
      sex: i % 2 ? "F" : "M",
      presenting_symptoms: `Presenting complaint number ${i + 1}: low mood and poor sleep for several weeks.`,
      psychiatric_history: "No previous admissions.",
      psychiatric_exam: "Depressed affect, no psychotic features.",
      psychological_exam: i % 3 === 0 ? "" : "MADRS 27.",
      secondary_diagnoses: "",
    }),
  );
  return new TextEncoder().encode(lines.join("\n") + "\n");
}

export async function seedStudy(
  db: Db,
  opts: { cases?: number; users: { username: string; roles: Role[] }[]; annotators?: string[] },
) {
  const ids: Record<string, string> = {};
  for (const u of opts.users) ids[u.username] = (await createUser(db, { ...u, password: PASSWORD, actorId: null })).id;
  importCases(db, {
    studyName: "Pilot",
    bytes: smallStudyJsonl(opts.cases ?? 6),
    filename: "pilot.jsonl",
    actorId: null,
  });
  const study = requireStudyByName(db, "Pilot");
  if (opts.annotators)
    autoAssign(db, { studyId: study.id, annotatorIds: opts.annotators.map((u) => ids[u]!), seed: 7, actorId: null });
  return { ids, study };
}
