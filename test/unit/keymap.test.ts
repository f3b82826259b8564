/**
 * The one keymap (docs/architecture.md, "Keymap"): the shared keys are the same in every workspace, and no workspace
 * uses a navigation key to record a label or two meanings for one key.
 */
import { describe, expect, it } from "vitest";
import {
  commonKeyOf,
  letterClashes,
  COMMON_KEYS,
  NAVIGATION_KEYS,
  WORKSPACE_KEYMAPS,
  workspaceBindings,
  type WorkspaceId,
} from "../../app/work-items/domain/keymap";

const WORKSPACES = Object.keys(WORKSPACE_KEYMAPS) as WorkspaceId[];

describe("the keymap", () => {
  it("covers the nine workspaces", () => {
    expect(WORKSPACES.sort()).toEqual(
      [
        "adjudication",
        "annotation",
        "case-review",
        "correction",
        "judge-validation",
        "mentat",
        "preparation",
        "screening",
        "model-review",
      ].sort(),
    );
  });

  it("uses J / K for next / previous, Ctrl+Enter to submit and go on, / search, ? guidelines, H help", () => {
    expect(COMMON_KEYS.next.keys).toEqual(["j"]);
    expect(COMMON_KEYS.previous.keys).toEqual(["k"]);
    expect(COMMON_KEYS.submitNext.show).toBe("Ctrl+Enter");
    expect(commonKeyOf("/")).toBe("search");
    expect(commonKeyOf("?")).toBe("guidelines");
    expect(commonKeyOf("h")).toBe("help");
    expect(commonKeyOf("n")).toBeNull();
    expect(NAVIGATION_KEYS).toEqual(["j", "k", "?", "h"]);
  });

  it.each(WORKSPACES)("%s: no label key is a shared key, and no key has two meanings", (id) => {
    const own = WORKSPACE_KEYMAPS[id].own.flatMap((b) => b.keys);
    for (const k of own) expect(commonKeyOf(k), `${id}: ${k}`).toBeNull();
    expect(new Set(own).size, `${id}: ${own.join(" ")}`).toBe(own.length);
  });

  it.each(WORKSPACES)("%s: its card lists next, Ctrl+Enter, guidelines and help with the shared keys", (id) => {
    const shown = workspaceBindings(id).map((b) => b.show);
    for (const k of ["J", "Ctrl+Enter", "?", "H", "Esc"]) expect(shown).toContain(k);
    expect(shown.includes("K")).toBe(WORKSPACE_KEYMAPS[id].previous);
    expect(shown.includes("/")).toBe(WORKSPACE_KEYMAPS[id].search !== null);
  });

  it("walks back with K in every workspace, adjudication included", () => {
    for (const id of WORKSPACES)
      expect(
        workspaceBindings(id).map((b) => b.show),
        id,
      ).toContain("K");
  });

  it("describes / truthfully: a search only where there is a picker, a field otherwise", () => {
    const slash = (id: WorkspaceId) => workspaceBindings(id).find((b) => b.show === "/")!.does;
    expect(slash("annotation")).toMatch(/^search ICD-10 codes/);
    expect(slash("adjudication")).toMatch(/^search ICD-10 codes/);
    expect(slash("judge-validation")).toMatch(/^go to the ICD codes field \(plain text: codes separated by commas/);
  });
});

describe("one letter, one meaning where the labels allow it", () => {
  it("one letter clash is left, N: the negative answer, said on both cards", () => {
    // docs/architecture.md, "Keymap": N is "none" (no diagnosis) in judge validation and "no" (not relevant in
    // screening, not defensible in the review of model steps); every other letter means one thing in every workspace.
    expect(letterClashes("judge-validation").map((c) => [c.key, c.here])).toEqual([["n", "none"]]);
    const n = letterClashes("judge-validation")[0]!;
    expect(n.elsewhere.map((e) => `${e.workspace}:${e.means}`)).toEqual(["screening:no", "model-review:no"]);
    for (const id of WORKSPACES)
      expect(
        letterClashes(id).map((c) => c.key),
        id,
      ).toEqual(id === "judge-validation" || id === "screening" || id === "model-review" ? ["n"] : []);
    // Symmetric: a clash said on one card is said on the other.
    for (const id of WORKSPACES)
      for (const clash of letterClashes(id))
        for (const e of clash.elsewhere)
          expect(
            letterClashes(e.workspace).some((x) => x.key === clash.key),
            `${id}/${e.workspace}: ${clash.key}`,
          ).toBe(true);
  });

  it("says nothing of letters that mean the same everywhere", () => {
    // S and I mean sufficient / insufficient in annotation and adjudication alike; M missing information; C the
    // comment in MENTAT and case review; E the rationale, R reject, T the category, O committed, P specific.
    expect(letterClashes("annotation")).toEqual([]);
    expect(letterClashes("mentat")).toEqual([]);
    expect(letterClashes("case-review")).toEqual([]);
  });

  it("gives every letter key a meaning, so that no clash can go unlisted", () => {
    for (const id of WORKSPACES)
      for (const b of WORKSPACE_KEYMAPS[id].own)
        for (const k of b.keys.filter((k) => /^[a-z]$/.test(k))) expect(b.means?.[k], `${id}: ${k}`).toBeTruthy();
  });
});
