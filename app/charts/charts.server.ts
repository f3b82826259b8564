/**
 * Server-side charts: a Vega-Lite specification compiled and rendered to SVG without a browser or canvas, and SVG
 * rasterised to PNG. Deterministic: the headless "none" renderer estimates text widths instead of measuring them
 * with fonts, so the same specification gives the same SVG bytes on every machine. Shared by the study report
 * (docs/statistics.md#the-study-agreement-report) and the evaluation metrics (docs/evaluation.md).
 */
import resvg from "@resvg/resvg-js";
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";

/** Renders a Vega-Lite specification (data inlined) to an SVG document. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

export interface PngOptions {
  /** Pixels per SVG unit (default 2, for sharp text in documents). */
  scale?: number;
}

/**
 * Rasterises an SVG document to PNG. Text uses the system's fonts (DejaVu Sans where the specification asks for a
 * generic family), so a PNG is reproducible on machines with the same fonts; the SVG is the portable artefact.
 */
export function svgToPng(svg: string, options: PngOptions = {}): Buffer {
  const image = new resvg.Resvg(svg, {
    fitTo: { mode: "zoom", value: options.scale ?? 2 },
    font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans", sansSerifFamily: "DejaVu Sans" },
  });
  return image.render().asPng();
}
