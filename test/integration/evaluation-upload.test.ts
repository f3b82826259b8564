/**
 * A run folder uploaded from the evaluation page (docs/evaluation.md, "Runs in the app"): the same preview and the
 * same refusals as `eval-import` on the same folder (one code path, `importRunFolders`), all or nothing, the CSRF token
 * checked before a file is written, a path that leaves the folder refused, and the staging folder always removed.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import { action as evalAction } from "../../app/routes/admin.evaluations.$evaluationId._index";
import { importRunFolders, listEvaluations } from "../../app/evaluation/evaluations.server";
import { freshDb, makeUser } from "../support/db";
import { signedIn } from "../support/route-calls";
import { writeEvalRuns } from "../support/eval-runs";
import { tempDirs } from "../support/cli-run";

const tempDir = tempDirs("concord-evalupload-");
const STRATEGIES = ["sequential_info_abstention_aware", "full_info_abstention_aware"];

let db: Db;
let cleanup: () => void;
let evaluationId: number;
let root: string;
beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  await makeUser(db, "admin", ["admin"]);
  root = tempDir();
  const first = writeEvalRuns(join(root, "first"), {
    cases: 12,
    models: ["alpha"],
    strategies: STRATEGIES,
    seeds: [1],
  });
  const r = importRunFolders(db, {
    evaluation: "E",
    create: { goldFile: first.goldPath, studyId: null },
    dirs: [first.runsDir],
  });
  expect(r.problems).toEqual([]);
  evaluationId = r.evaluationId!;
});
afterEach(() => cleanup());

/** Every file under `dir`, named by its path from dir's parent (as a browser's folder choice names them). */
function filesOf(dir: string): [string, Buffer][] {
  const out: [string, Buffer][] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push([relative(join(dir, ".."), p).split("\\").join("/"), readFileSync(p)]);
    }
  };
  walk(dir);
  return out.sort(([a], [b]) => (a < b ? -1 : 1));
}

const stagingFolders = () => readdirSync(tmpdir()).filter((n) => n.startsWith("concord-upload-")).length;

async function upload(intent: string, files: [string, Buffer][], csrf?: string) {
  const who = await signedIn(db, "admin");
  const cookie = who.post("/", {}).headers.get("Cookie")!;
  const form = new FormData();
  form.append("csrf", csrf ?? who.user.csrf);
  form.append("intent", intent);
  for (const [name, bytes] of files) {
    form.append("path", name);
    form.append("files", new File([new Uint8Array(bytes)], name.split("/").at(-1)!));
  }
  const request = new Request(`http://concord.test/admin/evaluations/${evaluationId}`, {
    method: "POST",
    headers: { Cookie: cookie },
    body: form,
  });
  return evalAction({ request, params: { evaluationId: String(evaluationId) }, context: {} }) as Promise<
    { problems: string[]; runs: { path: string; model: string }[]; trajectories: number; dryRun: boolean } & {
      error?: string;
    }
  >;
}

const runsOfE = () => listEvaluations(db).find((e) => e.id === evaluationId)!.runs;

describe("a run folder uploaded from the evaluation page", () => {
  it("previews and imports as eval-import does on the same folder; the step logs are not sent on", async () => {
    const { runsDir } = writeEvalRuns(join(root, "second"), {
      cases: 12,
      models: ["beta"],
      strategies: STRATEGIES,
      seeds: [1, 2],
    });
    const files = filesOf(runsDir);
    files.push(["runs/beta_x/_tmp/steps.jsonl", Buffer.from("{}\n")]);
    const before = stagingFolders();
    const cli = importRunFolders(db, { evaluation: "E", dirs: [runsDir], dryRun: true });
    const preview = await upload("preview", files);
    expect(preview.problems).toEqual([]);
    expect(preview.dryRun).toBe(true);
    expect(preview.runs).toEqual(cli.runs);
    expect(preview.trajectories).toBe(4 * 12);
    expect(runsOfE()).toBe(2);
    const done = await upload("import", files);
    expect(done).toMatchObject({ problems: [], dryRun: false, trajectories: 48 });
    expect(runsOfE()).toBe(6);
    expect(stagingFolders()).toBe(before);
    // The same folder again: refused as eval-import refuses it, and nothing changes.
    const again = await upload("import", files);
    expect(again.problems[0]).toMatch(/^runs\/beta_.*\/trajectories\.jsonl: already imported into "E"/);
    expect(runsOfE()).toBe(6);
  });

  it("refuses a bad line as eval-import does, with the file's path in the folder; nothing imported", async () => {
    const { runsDir } = writeEvalRuns(join(root, "bad"), {
      cases: 12,
      models: ["gamma"],
      strategies: STRATEGIES,
      seeds: [1],
    });
    const folder = readdirSync(runsDir).sort()[1]!;
    const file = join(runsDir, folder, "trajectories.jsonl");
    const lines = readFileSync(file, "utf8").split("\n");
    lines[2] = lines[2]!.replace('"sample_id":"case-0003"', '"sample_id":"not-a-case"');
    writeFileSync(file, lines.join("\n"));
    const cli = importRunFolders(db, { evaluation: "E", dirs: [runsDir], dryRun: true });
    expect(cli.problems).toHaveLength(1);
    const refused = await upload("import", filesOf(runsDir));
    expect(refused.problems).toEqual([cli.problems[0]!.replace(`${join(root, "bad")}/`, "")]);
    expect(refused.problems[0]).toMatch(new RegExp(`^runs/${folder}/trajectories\\.jsonl:3: `));
    expect(runsOfE()).toBe(2);
  });

  it("checks the CSRF token before writing a file, and refuses a path that leaves the folder", async () => {
    const { runsDir } = writeEvalRuns(join(root, "third"), {
      cases: 12,
      models: ["delta"],
      strategies: STRATEGIES,
      seeds: [1],
    });
    const before = stagingFolders();
    const forged = await upload("import", filesOf(runsDir), "x".repeat(43)).catch((e: unknown) => e);
    expect((forged as Response).status).toBe(403);
    const [[, bytes]] = filesOf(runsDir);
    const escape = await upload("import", [["../outside/trajectories.jsonl", bytes!]]);
    expect(escape.error).toMatch(/not a file of the chosen folder/);
    expect(runsOfE()).toBe(2);
    expect(stagingFolders()).toBe(before);
  });
});
