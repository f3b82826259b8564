/**
 * The command shared by the expert-rating protocols (docs/mentat.md#expert-panels): the panel of a MENTAT question
 * bank or a case-review set. The protocols' own commands are in app/mentat/cli.ts and app/case-review/cli.ts.
 */
import { getDb, type Db } from "../platform/db.server";
import { CliError, parseOptions, type Command, serviceCall } from "../cli/command";
import type { PanelMember } from "./expert-panel.server";

/**
 * A kind of panel the command manages, given by its protocol (app/mentat/public.server.ts:BANK_PANEL,
 * app/case-review/public.server.ts:REVIEW_SET_PANEL); the command registry (app/cli/registry.ts) passes them in, so
 * this shared folder imports no protocol.
 */
export interface PanelKind {
  requireByName(db: Db, name: string): { id: number; name: string };
  list(db: Db, id: number): PanelMember[];
  /** Adds the raters (by the command: no actor), returning how many joined. */
  add(db: Db, id: number, raterIds: string[]): number;
  remove(db: Db, id: number, raterId: string): void;
}

export const fmt = (v: number | null | undefined, digits = 3) =>
  v === null || v === undefined || Number.isNaN(v) ? "–" : v.toFixed(digits);

export const expertPanelCommand = (kinds: { bank: PanelKind; set: PanelKind }): Command => ({
  name: "expert-panel",
  summary: "Add or remove the experts (rater role) of a question bank or a review set",
  help: `Usage: npm run concord -- expert-panel (--bank NAME | --set NAME) [--add u1,u2] [--remove u3]

Experts are users with the rater role. On a question bank they rate the options of its preference-domain questions;
on a review set they review every case and seed. Removing an expert keeps the ratings they submitted.
Without --add or --remove, lists the panel with each expert's progress.`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      bank: { type: "string" },
      set: { type: "string" },
      add: { type: "string" },
      remove: { type: "string" },
    });
    if (Boolean(values.bank) === Boolean(values.set))
      throw new CliError("give either --bank NAME or --set NAME. See --help.");
    const db = getDb();
    const names = (list: string | undefined) =>
      (list ?? "")
        .split(",")
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean);
    return serviceCall(() => {
      const kind = values.bank ? kinds.bank : kinds.set;
      const found = kind.requireByName(db, values.bank ?? values.set!);
      const target = { kind: values.bank ? "bank" : "set", id: found.id, name: found.name };
      const panel = () => kind.list(db, target.id);
      const byName = new Map(panel().map((m) => [m.username, m]));
      const lookup = (n: string) => {
        const m = byName.get(n);
        if (!m)
          throw new CliError(
            `"${n}" is not a user with the rater role. Raters: ${[...byName.keys()].join(", ") || "none"}.`,
          );
        return m.id;
      };
      const add = names(values.add).map(lookup);
      const remove = names(values.remove).map(lookup);
      if (add.length) {
        const n = kind.add(db, target.id, add);
        io.out(`Added ${n} expert${n === 1 ? "" : "s"} to ${target.kind} "${target.name}".\n`);
      }
      for (const id of remove) kind.remove(db, target.id, id);
      if (remove.length)
        io.out(
          `Removed ${remove.length} expert${remove.length === 1 ? "" : "s"} from ${target.kind} "${target.name}".\n`,
        );
      io.out(`Panel of ${target.kind} "${target.name}":\n`);
      for (const m of panel().filter((m) => m.onPanel))
        io.out(`  ${m.username}: ${m.submitted} submitted, ${m.drafts} draft${m.active ? "" : " (deactivated)"}\n`);
      return 0;
    });
  },
});
