/**
 * The shared form parts of the pages: the labelled field with its error (app/ui/field.tsx, used by the account page)
 * and the filters of a user's work list (app/work-items/ui/list-page.tsx, used by the annotator's, the rater's and
 * the expert's lists).
 */
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Field } from "../../app/ui/field";
import { WorkListFilters } from "../../app/work-items/ui/list-page";

describe("Field", () => {
  it("ties an error to its input and announces it", () => {
    const html = renderToStaticMarkup(
      createElement(Field, {
        id: "current",
        label: "Current password",
        error: "Wrong.",
        type: "password",
        required: true,
      }),
    );
    expect(html).toBe(
      '<label for="current">Current password</label>' +
        '<input id="current" type="password" required="" aria-invalid="true" aria-describedby="current-error"/>' +
        '<p class="field-error" id="current-error" role="alert">Wrong.</p>',
    );
  });

  it("without an error says nothing and marks nothing; `after` stands between input and error", () => {
    const button = createElement("button", { type: "submit" }, "Turn on");
    expect(renderToStaticMarkup(createElement(Field, { id: "code", label: "Code", name: "code", after: button }))).toBe(
      '<label for="code">Code</label><input id="code" name="code"/><button type="submit">Turn on</button>',
    );
    expect(
      renderToStaticMarkup(
        createElement(Field, {
          id: "pw",
          label: "Password",
          error: "Too short.",
          errorId: "disable-error",
          after: button,
        }),
      ),
    ).toBe(
      '<label for="pw">Password</label><input id="pw" aria-invalid="true" aria-describedby="disable-error"/>' +
        '<button type="submit">Turn on</button><p class="field-error" id="disable-error" role="alert">Too short.</p>',
    );
  });
});

describe("WorkListFilters", () => {
  const counts = { not_started: 3, draft: 1, submitted: 2, locked: 0 };

  it("offers the collections only when there is more than one, and every open state with its count", () => {
    const one = renderToStaticMarkup(
      createElement(WorkListFilters, {
        collection: { name: "set", label: "Validation set", selected: undefined, options: [{ value: 1, label: "A" }] },
        state: { selected: "draft", counts },
      }),
    );
    expect(one).not.toContain('name="set"');
    expect(one).toContain('<select name="state" aria-label="Filter by state">');
    expect([...one.matchAll(/<option value="([^"]*)"[^>]*>([^<]*)</g)].map((m) => [m[1], m[2]])).toEqual([
      ["", "All states"],
      ["not_started", "not started (3)"],
      ["draft", "draft (1)"],
      ["submitted", "submitted (2)"],
    ]);
    expect(one).toContain('<option value="draft" selected="">');

    const two = renderToStaticMarkup(
      createElement(WorkListFilters, {
        collection: {
          name: "round",
          label: "Round",
          selected: "7",
          options: [
            { value: 6, label: "S, round 1" },
            { value: 7, label: "S, round 2" },
          ],
        },
        state: { selected: undefined, counts },
      }),
    );
    expect(two).toContain('<select name="round" aria-label="Round">');
    expect(two).toContain('<option value="7" selected="">S, round 2</option>');
  });

  it("takes a list's own states and words", () => {
    const html = renderToStaticMarkup(
      createElement(WorkListFilters<"open" | "done">, {
        collection: { name: "study", label: "Study", selected: undefined, options: [] },
        state: {
          selected: undefined,
          counts: { open: 4, done: 5 },
          states: ["open", "done"],
          labels: { open: "Open", done: "Done" },
        },
      }),
    );
    expect(html).toContain('<option value="open">Open (4)</option><option value="done">Done (5)</option>');
  });
});
