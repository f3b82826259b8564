import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useMemo } from "react";
import { z } from "zod";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";
import { Ac1, DecisionBadge, PairwiseTable, percent } from "~/screening/ui/screening-figures";
import { getDb } from "~/platform/db.server";
import { invariantFound, requireRole } from "~/accounts/guard.server";
import { getRoundDetail } from "~/screening/screening-rounds.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Round ${data?.round.number ?? ""} · ${data?.study.name ?? "Screening"} · Concord` },
];

const ParamsSchema = z.object({
  studyId: z.coerce.number().int().positive(),
  number: z.coerce.number().int().positive(),
});

/**
 * Admin only: this page shows which items were controls, their strata and every reviewer's vote and notes. Its item
 * table is a window (docs/architecture.md, "Pages are windows"): the URL names the sort, the `show` and `q` filters
 * and the cursor, and the server cuts the window (app/screening/screening-rounds.server.ts:getRoundDetail).
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const p = ParamsSchema.safeParse(params);
  return invariantFound(
    p.success ? await getRoundDetail(getDb(), p.data, new URL(request.url).searchParams) : null,
    "No such round.",
  );
}

type Item = ReturnType<typeof useLoaderData<typeof loader>>["window"]["rows"][number];
const col = columnHelper<Item>();

export default function RoundPage() {
  const { study, round, includedControls, window: items } = useLoaderData<typeof loader>();
  const columns = useMemo(
    () => [
      col.accessor("position", { header: "#" }),
      col.accessor("id", { header: "Item" }),
      col.accessor((i) => (i.isControl ? "control" : ""), { id: "control", header: "Control" }),
      col.accessor("stratum", { header: "Source" }),
      col.accessor((i) => i.screenCategory ?? "", { id: "screenCategory", header: "Screen category" }),
      col.accessor(
        (i) =>
          i.votes
            .map((v) => `${v.reviewer} ${v.relevant ? "yes" : "no"}${v.category ? ` (${v.category})` : ""}`)
            .join(", "),
        {
          id: "votes",
          header: "Votes",
        },
      ),
      col.accessor((i) => `${i.yes}/${i.yes + i.no}`, { id: "yes", header: "Yes" }),
      col.accessor("outcome", { header: "Outcome" }),
      col.accessor((i) => i.consensusTier ?? "", { id: "tier", header: "Consensus" }),
      col.accessor((i) => (i.included ? i.modalCategory : ""), { id: "modal", header: "Modal category" }),
    ],
    [],
  );
  const f = round.figures;
  return (
    <section>
      <p>
        <Link to="/admin/screening">Screening reviews</Link> ›{" "}
        <Link to={`/admin/screening/${study.id}`}>{study.name}</Link> ›
      </p>
      <div className="row">
        <h1>
          Round {round.number}{" "}
          <small className="muted">
            ({round.kind === "screen" ? "screen" : "recall"} round, seed {round.seed})
          </small>
        </h1>
        <span className="spacer" />
        <DecisionBadge round={round} />
      </div>
      <div className="grid2">
        <dl className="kv card">
          <dt>Items</dt>
          <dd>
            {f.items} ({f.candidates} candidates + {f.controls} concealed controls)
          </dd>
          <dt>Included</dt>
          <dd>
            {f.included} ({f.includedCandidates} candidates, {f.includedControls} controls)
          </dd>
          <dt>Control-inclusion rate</dt>
          <dd>
            {f.includedControls} / {f.controls} = {percent(f.controlInclusionRate)} (threshold{" "}
            {percent(round.rule.controlThreshold)})
          </dd>
          <dt>Relevance AC1</dt>
          <dd>
            <Ac1 c={f.relevanceAc1} />{" "}
            <small className="muted">(95% CI; percent agreement {percent(f.percentAgreement)})</small>
          </dd>
          <dt>Rule</dt>
          <dd>
            included with ≥ {round.rule.inclusionVotes} of {round.rule.reviewersPerRound} relevant votes
          </dd>
          <dt>Votes</dt>
          <dd>
            {f.votesIn} of {f.votesExpected} submitted
          </dd>
        </dl>
        <div>
          <h3 style={{ marginTop: 0 }}>Agreement per reviewer pair</h3>
          <PairwiseTable round={round} />
          <p className="muted">
            Reviewers: {round.reviewers.map((r) => `${r.code} = ${r.username} (${r.submitted} submitted)`).join("; ")}
          </p>
        </div>
      </div>

      {includedControls.length ? (
        <>
          <h2>Controls the majority included ({includedControls.length})</h2>
          <p className="muted">
            These are the screen's misses; the reviewers' notes on them inform the recall screen's rubric.
          </p>
          <table data-testid="included-controls">
            <thead>
              <tr>
                <th>Item</th>
                <th>Votes and notes</th>
              </tr>
            </thead>
            <tbody>
              {includedControls.map((i) => (
                <tr key={i.id}>
                  <td>{i.id}</td>
                  <td>
                    {i.votes.map((v) => (
                      <div key={v.reviewer}>
                        <strong>{v.reviewer}</strong> {v.relevant ? "yes" : "no"}
                        {v.category ? ` (${v.category})` : ""}
                        {v.notes ? <span className="muted"> — {v.notes}</span> : null}
                      </div>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}

      <h2>Items in the shared order</h2>
      <WindowTable
        window={items}
        columns={columns}
        sortable={["position", "id"]}
        noun="items"
        testId="round-items"
        filterLabel="Item, source or category starts with"
        rowProps={(i) => ({ "data-item": i.id, "data-control": i.isControl ? "1" : "0" })}
        filters={
          <select aria-label="Show" name="show" defaultValue={items.query.filters.show}>
            <option value="">All items</option>
            <option value="included">Included</option>
            <option value="controls">Controls</option>
            <option value="included-controls">Included controls</option>
          </select>
        }
      />
    </section>
  );
}
