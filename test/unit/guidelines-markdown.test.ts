/**
 * Guidelines Markdown (docs/guidelines.md): rendered without raw HTML or script URLs, headings moved under the
 * panel's own, links opened in a new tab.
 */
import { describe, expect, it } from "vitest";
import { renderGuidelines } from "../../app/guidelines/domain/guidelines";

describe("renderGuidelines", () => {
  it("escapes raw HTML instead of passing it through", () => {
    const html = renderGuidelines('Hello <script>alert(1)</script> <img src=x onerror="alert(2)">');
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;script&gt;");
  });

  it("refuses javascript: links and opens others in a new tab", () => {
    expect(renderGuidelines("[x](javascript:alert(1))")).not.toContain('href="javascript:');
    const html = renderGuidelines("[who](https://www.who.int/)");
    expect(html).toContain('href="https://www.who.int/"');
    expect(html).toContain('target="_blank"');
    expect(html).toContain('rel="noopener noreferrer"');
  });

  it("moves headings two levels down, never past h6", () => {
    const html = renderGuidelines("# Title\n\n## Part\n\n##### Deep\n\n###### Deepest");
    expect(html).toContain("<h3>Title</h3>");
    expect(html).toContain("<h4>Part</h4>");
    expect(html).toContain("<h6>Deep</h6>");
    expect(html).toContain("<h6>Deepest</h6>");
    expect(html).not.toMatch(/<h[12]>/);
  });

  it("renders emphasis, lists and code", () => {
    expect(renderGuidelines("- **sufficient**: `F32.1`")).toBe(
      "<ul>\n<li><strong>sufficient</strong>: <code>F32.1</code></li>\n</ul>\n",
    );
  });
});
