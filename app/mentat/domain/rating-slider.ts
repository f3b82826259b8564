/**
 * The 0–100 rating slider of a MENTAT option (docs/mentat.md, "Option ratings"): an option nobody has rated has no
 * value — the page draws no thumb and no filled track, so nothing anchors the rating at the middle — until the
 * expert touches it. A click or a drag sets the value pointed at; the first key pressed on an unrated slider gives it
 * its first value here, and from then on the keys move it as on any slider. Pure: the page's key handler asks it.
 */

export const SLIDER_MIN = 0;
export const SLIDER_MAX = 100;
/** Where the keys start from: the middle of the scale, and only once a key is pressed. */
export const SLIDER_MIDDLE = 50;

/**
 * The first value an unrated slider takes for a key: Home and End their ends of the scale, the arrows, PageUp,
 * PageDown, Enter and Space the middle (the next press moves from there); null for any other key (left to the page).
 *
 * @example firstKeyValue("ArrowRight") // 50, then ArrowRight moves the rated slider to 51
 */
export function firstKeyValue(key: string): number | null {
  switch (key) {
    case "Home":
      return SLIDER_MIN;
    case "End":
      return SLIDER_MAX;
    case "ArrowLeft":
    case "ArrowRight":
    case "ArrowUp":
    case "ArrowDown":
    case "PageUp":
    case "PageDown":
    case "Enter":
    case " ":
      return SLIDER_MIDDLE;
    default:
      return null;
  }
}
