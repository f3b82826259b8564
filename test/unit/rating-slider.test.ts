/** The MENTAT rating slider's first key (docs/mentat.md, "Option ratings"): an unrated option starts where the key says. */
import { describe, expect, it } from "vitest";
import { firstKeyValue, SLIDER_MIDDLE } from "../../app/mentat/domain/rating-slider";

describe("firstKeyValue", () => {
  it.each([
    ["Home", 0],
    ["End", 100],
    ["ArrowRight", SLIDER_MIDDLE],
    ["ArrowLeft", SLIDER_MIDDLE],
    ["ArrowUp", SLIDER_MIDDLE],
    ["ArrowDown", SLIDER_MIDDLE],
    ["PageUp", SLIDER_MIDDLE],
    ["PageDown", SLIDER_MIDDLE],
    ["Enter", SLIDER_MIDDLE],
    [" ", SLIDER_MIDDLE],
  ])("%j gives an unrated slider %i", (key, value) => {
    expect(firstKeyValue(key)).toBe(value);
  });

  it("leaves every other key to the page (shortcuts such as 2 or C keep working)", () => {
    for (const key of ["1", "2", "c", "j", "Tab", "Escape", "a"]) expect(firstKeyValue(key)).toBeNull();
  });
});
