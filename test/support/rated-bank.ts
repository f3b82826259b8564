/**
 * A MENTAT bank with every question rated by every expert, for the fit's e2e test and the bench: `questions` triage
 * questions (a preference domain), `raters` experts with the rater role on the panel, scores from a seeded
 * generator (PyRandom) around a per-question strength, submitted through the ratings service as an expert would.
 */
import { addBankRaters } from "../../app/mentat/panel.server";
import { importQuestionBank } from "../../app/mentat/banks.server";
import { listRaterQuestions, saveOptionRating } from "../../app/mentat/ratings.server";
import { createUser } from "../../app/accounts/users.server";
import { PyRandom } from "../../app/python-compat/random";
import type { Db } from "../../app/platform/db.server";

export async function seedRatedBank(
  db: Db,
  input: { name: string; questions: number; raters: number; password: string; adminId: string; seed?: number },
): Promise<number> {
  const header = "id,domain,question,he,she,they,a,b,c,d,e,answer,notes";
  const lines = Array.from(
    { length: input.questions },
    (_, q) =>
      `t${String(q).padStart(4, "0")},triage,Question ${q}: what is the most appropriate next step?,,,,Option A${q},Option B${q},Option C${q},Option D${q},Option E${q},a,`,
  );
  const bank = importQuestionBank(db, {
    bankName: input.name,
    text: [header, ...lines].join("\n") + "\n",
    actorId: input.adminId,
    seed: 1,
  });
  if (!bank.ok || bank.bankId === null) throw new Error(`seedRatedBank: ${JSON.stringify(bank)}`);
  const raterIds: string[] = [];
  for (let r = 0; r < input.raters; r++)
    raterIds.push(
      (await createUser(db, { username: `expert${r}`, password: input.password, roles: ["rater"], actorId: null })).id,
    );
  addBankRaters(db, { bankId: bank.bankId, raterIds, actorId: input.adminId });
  const rng = new PyRandom(input.seed ?? 9);
  const strengths = new Map<number, number[]>();
  for (const userId of raterIds)
    for (const item of listRaterQuestions(db, userId)) {
      let beta = strengths.get(item.questionId);
      if (!beta) strengths.set(item.questionId, (beta = Array.from({ length: 5 }, () => 2 * rng.random() - 1)));
      const scores = beta.map((b) => Math.max(0, Math.min(100, Math.round(50 + 30 * b + 25 * (rng.random() - 0.5)))));
      const saved = saveOptionRating(db, {
        userId,
        questionId: item.questionId,
        values: { scores, comment: "" },
        version: 0,
        intent: "submit",
      });
      if (!saved.ok) throw new Error(`seedRatedBank: a rating was refused (${JSON.stringify(saved)})`);
    }
  return bank.bankId;
}
