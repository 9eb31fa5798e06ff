// The job page's keyboard and copy/export tools: "Skip to chat" is the first thing Tab reaches and puts
// the caret in the chat; every copy button says what it copies; "Download JSON" saves the report's JSON;
// plots and severity counts carry labels that describe their data.
import { readFileSync } from "node:fs";
import { expect, type Page, test } from "@playwright/test";
import type { Report } from "../src/api/client";
import { apiGet, apiUpload, signIn, state } from "./helpers";

let id = "";

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  id = await apiUpload(state().realLog, state().tokens.gwen);
});

async function openReport(page: Page): Promise<void> {
  await signIn(page, state().tokens.gwen);
  await page.goto(`${state().baseURL}/analyses/${encodeURIComponent(id)}`);
  await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible();
}

for (const width of [1440, 390]) {
  test(`"Skip to chat" is the first stop on the report page and focuses the chat (${String(width)} px)`, async ({ page }) => {
    await page.setViewportSize({ width, height: 900 });
    await openReport(page);
    await page.evaluate(() => {
      (document.activeElement as HTMLElement | null)?.blur();
      window.scrollTo(0, 0);
    });
    await page.keyboard.press("Tab");
    const skip = page.getByRole("link", { name: "Skip to chat" });
    await expect(skip).toBeFocused();
    // Visible while focused: on screen, not a 1-pixel box.
    await expect(skip).toBeInViewport();
    const box = await skip.boundingBox();
    expect(box?.width ?? 0).toBeGreaterThan(40);
    expect(box?.x ?? -1).toBeGreaterThanOrEqual(0);
    await page.keyboard.press("Enter");
    await expect(page.locator("#chat-q")).toBeFocused();
    await expect(page.locator("#chat-q")).toBeInViewport();
    // "Skip to content" comes next; pages without a chat offer only that one.
    await page.goto(`${state().baseURL}/jobs`);
    await expect(page.getByTestId("job-count")).toBeVisible();
    await page.keyboard.press("Tab");
    await expect(page.getByRole("link", { name: "Skip to content" })).toBeFocused();
    await expect(page.getByRole("link", { name: "Skip to chat" })).toHaveCount(0);
  });
}

test("every copy button says what it copies, and copies it", async ({ page }) => {
  await openReport(page);
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  // Unfold the guides' snippets so their copy buttons count too. They arrive with the knowledge bundle, after
  // the findings: unfold again until they are all there.
  const copies = page.getByRole("button", { name: /^Copy\b/ });
  await expect
    .poll(
      async () => {
        await page.locator("details.snippets").evaluateAll((ds) => {
          for (const d of ds) (d as HTMLDetailsElement).open = true;
        });
        return copies.count();
      },
      { timeout: 20_000 },
    )
    .toBeGreaterThan(4);
  // Name: the aria-label where there is one, else the text. None is just "Copy".
  const names = await copies.evaluateAll((els) => els.map((e) => (e.getAttribute("aria-label") ?? e.textContent).trim()));
  for (const name of names) {
    expect(name).not.toBe("Copy");
    expect(name).toMatch(/^Copy \S.{3,}/);
  }
  // Buttons that share a name copy the same thing (the same snippet shown in two places), never different things.
  const what = await copies.evaluateAll((els) =>
    els.map((e) => {
      const block = e.closest(".codeblock, .action-line");
      return block ? (block.querySelector("pre, code")?.textContent ?? "") : `export:${e.textContent}`;
    }),
  );
  const byName = new Map<string, Set<string>>();
  names.forEach((nm, i) => byName.set(nm, (byName.get(nm) ?? new Set()).add(what[i] ?? "")));
  for (const [nm, texts] of byName) expect(texts.size, `"${nm}" copies different things`).toBe(1);

  // A command "for this job" (when the report has one): its button names it and copies it exactly.
  const action = page.locator(".action-line").first();
  if ((await action.count()) > 0) {
    const command = ((await action.locator("code").textContent()) ?? "").trim();
    const btn = action.getByRole("button");
    await expect(btn).toHaveAccessibleName(new RegExp(`^Copy command: ${command.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    await btn.scrollIntoViewIfNeeded();
    await btn.click();
    await expect(btn).toHaveText("Copied");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(command);
  }
  // A guide's snippet.
  const snippets = page.locator("details.snippets").first();
  if ((await snippets.count()) > 0) {
    const block = snippets.locator(".codeblock").first();
    await block.getByRole("button").click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(await block.locator("pre").textContent());
  }
  // The report link: this page's address, no token in it.
  await page.getByRole("button", { name: "Copy report link" }).click();
  await expect(page.getByText("Report link copied")).toBeVisible();
  const link = await page.evaluate(() => navigator.clipboard.readText());
  expect(link).toBe(page.url());
  expect(link).not.toContain(state().tokens.gwen);
});

test("Download JSON saves the report as the API serves it", async ({ page }) => {
  await openReport(page);
  const exports = page.getByRole("group", { name: "Export the report" });
  await expect(exports.getByRole("button")).toContainText(["Copy Markdown", "Download .md", "Download HTML", "Download JSON", "Copy report link"]);
  const [dl] = await Promise.all([page.waitForEvent("download"), exports.getByRole("button", { name: "Download JSON" }).click()]);
  expect(dl.suggestedFilename()).toMatch(/^iodiag-.+\.json$/);
  await expect(page.getByText("JSON report downloaded")).toBeVisible();
  const saved = JSON.parse(readFileSync(await dl.path(), "utf-8")) as Report;
  const served = await apiGet<Report>(`/api/v1/analyses/${encodeURIComponent(id)}/report.json`, state().tokens.gwen);
  expect(saved).toEqual(served);
});

test("plots and severity counts are labelled with what their data says", async ({ page }) => {
  await openReport(page);
  const report = await apiGet<Report>(`/api/v1/analyses/${encodeURIComponent(id)}/report.json`, state().tokens.gwen);
  const c = report.counts;
  await expect(page.getByTestId("counts")).toHaveAccessibleName(`${String(c.critical)} critical, ${String(c.warning)} warning, ${String(c.info)} info, ${String(c.ok)} ok`);
  await expect(page.getByTestId("counts")).toHaveAttribute("role", "img");
  // Each plot's canvas: its title and the numbers behind it, then how to work it from the keyboard.
  await expect(page.getByTestId("plot-timeline").locator("canvas")).toHaveAccessibleName(/^Per-rank I\/O timeline: [\d,]+ operations moving .+ on [\d,]+ rank\(s\) over .+\. Arrow keys pan/);
  await expect(page.getByTestId("plot-sizes").locator("canvas")).toHaveAccessibleName(/^Transfer size over time: [\d,]+ requests, sizes from .+ to .+, .+ in all\. /);
  // The heatmap (from the DXT trace here): who moved the bytes, and when, in words; and it switches read/write.
  const heat = page.getByTestId("plot-heatmap").locator("canvas");
  await expect(heat).toHaveAccessibleName(/^Heatmap of bytes by rank and time: [\d,]+ rank\(s\) in [\d,]+ row\(s\) read .+ and wrote .+ between .+ and .+; .+ moved \d+\s?% of the bytes/);
  // The segmented control's label is what a user clicks (it lies over its radio).
  await page.locator("label", { hasText: "read + write" }).click();
  await expect(page.getByRole("radio", { name: "read + write" })).toBeChecked();
  for (const canvas of await page.locator("canvas[role='img']").all()) await expect(canvas).toHaveAccessibleName(/: .*\d/);
  // Severity badges read as "Severity: critical".
  await expect(page.getByTestId("finding").first().locator(".badge").first()).toHaveAccessibleName(/^Severity: (critical|warning|info|ok)$/);
});
