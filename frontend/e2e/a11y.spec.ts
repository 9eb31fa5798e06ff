// Accessibility in CI: axe-core (@axe-core/playwright) checks every page of the app at 1440 px and at
// 390 px: sign-in, the first-use jobs list, upload, an analysis while it runs, the report of a real
// log (findings, plots, the cross-layer tables and a chat answer on screen), the report as the help
// desk sees it, the compare view, the guides, the not-found pages and both jobs lists. A violation of
// impact "serious" or "critical" fails the test (its id, impact, help and target selectors are in the
// failure message); "moderate" and "minor" ones are printed and do not fail.
// Focus management is checked too: after an upload the report's heading takes focus once the report
// is there (the skip links stay reachable), and "Show in plots" puts focus on the plot it points to.
// One user (axel) owns the logs uploaded here; they are deleted at the end, so the other spec files
// see the server as they would without this one.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, test } from "@playwright/test";
import type { AnalysisPage } from "../src/api/client";
import { apiGet, apiUpload, signIn, state } from "./helpers";

const WIDTHS = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
] as const;

/** Impacts that fail the test; the others are listed in the output. */
const BLOCKING = new Set(["serious", "critical"]);

test.describe.configure({ mode: "serial" });

let reportId = "";

/** Run axe on the page as it is now (or on the part `only` selects): blocking violations go to `found`, the rest to the console. */
async function axe(page: Page, where: string, found: string[], only?: string): Promise<void> {
  const builder = new AxeBuilder({ page });
  if (only) builder.include(only);
  const r = await builder.analyze();
  let minor = 0;
  for (const v of r.violations) {
    const targets = v.nodes
      .slice(0, 12)
      .map((n) => {
        const why = [...n.any, ...n.all, ...n.none][0]?.message ?? "";
        return `      ${n.target.map((t) => (Array.isArray(t) ? t.join(" >>> ") : t)).join(" ")}${why ? `\n        ${why}` : ""}`;
      })
      .join("\n");
    const more = v.nodes.length > 12 ? `\n      … and ${String(v.nodes.length - 12)} more` : "";
    const line = `${where}: [${v.impact ?? "?"}] ${v.id}: ${v.help} (${v.helpUrl})\n${targets}${more}`;
    if (BLOCKING.has(v.impact ?? "")) found.push(line);
    else {
      minor++;
      console.log(`a11y (moderate/minor, not failing) ${line}`);
    }
  }
  const blocking = r.violations.filter((v) => BLOCKING.has(v.impact ?? "")).length;
  console.log(`a11y: ${where}: ${String(r.passes.length)} rules pass, ${String(blocking)} serious/critical, ${String(minor)} moderate/minor`);
}

/** Open a page at each width (fresh, after resizing) and run axe on it (or on the part `only` selects). */
async function atWidths(page: Page, name: string, open: (page: Page) => Promise<void>, found: string[], only?: string): Promise<void> {
  for (const vp of WIDTHS) {
    await page.setViewportSize(vp);
    await open(page);
    await axe(page, `${name} @ ${String(vp.width)} px`, found, only);
  }
}

function expectClean(found: string[]): void {
  expect(found.length, `axe found serious or critical violations:\n\n${found.join("\n\n")}\n`).toBe(0);
}

/** Open every <details> on the page, so that what they hold is checked too. */
async function openDetails(page: Page): Promise<void> {
  await page.locator("details").evaluateAll((ds) => {
    for (const d of ds) (d as HTMLDetailsElement).open = true;
  });
}

/** Every table box and code block that scrolls sideways takes focus and is a named region; the others stay plain boxes. */
async function expectScrollersFocusable(page: Page): Promise<void> {
  const boxes = await page.locator(".table-wrap, .codeblock pre").evaluateAll((els) =>
    els
      .filter((el) => el.getClientRects().length > 0)
      .map((el) => ({
        scrolls: el.scrollWidth > el.clientWidth,
        tabindex: el.getAttribute("tabindex"),
        role: el.getAttribute("role"),
        label: el.getAttribute("aria-label") ?? "",
        what: `${el.tagName.toLowerCase()}.${el.getAttribute("class") ?? ""}: ${el.textContent.slice(0, 60)}`,
      })),
  );
  expect(boxes.length).toBeGreaterThan(0);
  for (const b of boxes) {
    if (b.scrolls) expect([b.tabindex, b.role, b.label !== ""], `${b.what}: scrolls, so it needs tabindex 0, role region and a name`).toEqual(["0", "region", true]);
    else expect(b.tabindex, `${b.what}: does not scroll, so no tab stop`).toBeNull();
  }
}

/** What has focus: its tag, id, class, accessible label and whether it holds a plot. */
async function focused(page: Page): Promise<{ tag: string; id: string; cls: string; label: string; plot: string | null; text: string }> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    const by = el?.getAttribute("aria-labelledby") ?? "";
    const label =
      el?.getAttribute("aria-label") ??
      by
        .split(/\s+/)
        .map((id) => document.getElementById(id)?.textContent ?? "")
        .join(" ")
        .trim();
    return {
      tag: el?.tagName.toLowerCase() ?? "",
      id: el?.id ?? "",
      cls: el?.className ?? "",
      label,
      plot: el?.querySelector("[data-testid^='plot-']")?.getAttribute("data-testid") ?? null,
      text: (el?.textContent ?? "").trim().slice(0, 80),
    };
  });
}

/** The report of the log uploaded above (signed in already). */
async function openReport(page: Page): Promise<void> {
  await page.goto(`${state().baseURL}/analyses/${encodeURIComponent(reportId)}`);
  await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible();
  await expect(page.getByTestId("plot-timeline").locator("canvas")).toBeVisible();
}

test.afterAll(async () => {
  const s = state();
  const mine = await apiGet<AnalysisPage>("/api/v1/analyses?owner=axel&limit=100", s.tokens.axel);
  for (const a of mine.items) {
    await fetch(`${s.apiURL}/api/v1/analyses/${encodeURIComponent(a.id)}`, { method: "DELETE", headers: { Authorization: `Bearer ${s.tokens.axel}` } });
  }
});

test("axe: sign-in, blank and with an error", async ({ page }) => {
  const found: string[] = [];
  await atWidths(
    page,
    "sign-in",
    async (p) => {
      await p.goto(`${state().baseURL}/`);
      await expect(p.getByLabel("API token")).toBeVisible();
    },
    found,
  );
  await atWidths(
    page,
    "sign-in, token refused",
    async (p) => {
      await p.goto(`${state().baseURL}/`);
      await p.getByLabel("API token").fill("not-a-token");
      await p.getByRole("button", { name: "Sign in" }).click();
      await expect(p.getByRole("alert")).toBeVisible();
    },
    found,
  );
  expectClean(found);
});

test("axe: the jobs list before the first upload (first use)", async ({ page }) => {
  const found: string[] = [];
  await signIn(page, state().tokens.axel);
  await atWidths(
    page,
    "jobs, empty",
    async (p) => {
      await p.goto(`${state().baseURL}/jobs`);
      await expect(p.getByTestId("empty-state")).toBeVisible();
    },
    found,
  );
  expectClean(found);
});

test("axe: upload, with a file chosen and the options open", async ({ page }) => {
  const found: string[] = [];
  await signIn(page, state().tokens.axel);
  await atWidths(
    page,
    "upload",
    async (p) => {
      await p.goto(`${state().baseURL}/upload`);
      await expect(p.getByRole("heading", { name: "Upload a Darshan log" })).toBeVisible();
      await expect(p.getByTestId("sample-offer")).toBeVisible();
      await p.getByTestId("file-input").setInputFiles(state().realLog);
      await expect(p.getByRole("button", { name: "Upload and analyze" })).toBeEnabled();
      await openDetails(p);
    },
    found,
  );
  expectClean(found);
});

test("after an upload, focus moves to the report's heading and the skip links stay reachable", async ({ page }) => {
  test.setTimeout(240_000);
  await page.setViewportSize(WIDTHS[0]);
  await signIn(page, state().tokens.axel);
  await page.getByRole("link", { name: "Upload", exact: true }).click();
  await page.getByTestId("file-input").setInputFiles(state().realLog);
  await page.getByRole("button", { name: "Upload and analyze" }).click();
  await page.waitForURL(/\/analyses\/[0-9a-f-]+$/);
  reportId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
  await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible({ timeout: 180_000 });
  // The report's heading has focus once the report is there (the progress page's heading had it before).
  await expect.poll(async () => (await focused(page)).id, { message: "focus is on the report's h1" }).toBe("report-title");
  const h1 = await focused(page);
  expect(h1.tag).toBe("h1");
  expect(h1.text).toContain("mpi-io-test");
  await expect(page.locator("#report-title")).toHaveAttribute("tabindex", "-1");
  await expect(page.locator("#report-title")).toBeInViewport();
  // Shift+Tab from the heading goes back through the top bar to the skip links.
  const skips: string[] = [];
  for (let i = 0; i < 15 && skips.length < 2; i++) {
    await page.keyboard.press("Shift+Tab");
    const f = await focused(page);
    if (f.tag === "a" && /^Skip to /.test(f.text)) skips.push(f.text);
  }
  expect(skips).toEqual(["Skip to content", "Skip to chat"]);
  // They are the first stops, and still work: Tab from "Skip to chat" reaches "Skip to content", which moves focus to the page.
  await expect(page.getByRole("link", { name: "Skip to chat" })).toBeFocused();
  await expect(page.getByRole("link", { name: "Skip to chat" })).toBeInViewport();
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Skip to content" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect.poll(async () => (await focused(page)).id).toBe("main");
  // A chat answer, so that the report pages below show one.
  const chat = page.getByTestId("chat");
  await chat.getByRole("button", { name: "Why is my job slow?" }).click();
  await expect(chat.getByTestId("provenance")).toBeVisible({ timeout: 120_000 });
});

test("axe: an analysis while it runs", async ({ page }) => {
  expect(reportId, "needs the upload above").not.toBe("");
  const found: string[] = [];
  await signIn(page, state().tokens.axel);
  // The real answer, held at "running".
  // Fetched once and replayed: the page polls, and a poll still in flight when
  // the next width reloads the page has its response disposed under it.
  let held: Record<string, unknown> | null = null;
  await page.route(/\/api\/v1\/analyses\/[0-9a-f-]+$/, async (route) => {
    try {
      if (held === null) {
        const res = await route.fetch();
        const body = (await res.json()) as Record<string, unknown>;
        held = { ...body, status: "running", stage: "analyzing", progress: 0.45, findings: null };
      }
      await route.fulfill({ json: held });
    } catch {
      // The page moved on (the next width) while this poll was in flight.
    }
  });
  await atWidths(
    page,
    "analysis in progress",
    async (p) => {
      await p.goto(`${state().baseURL}/analyses/${encodeURIComponent(reportId)}`);
      await expect(p.getByTestId("progress")).toContainText("analyzing");
    },
    found,
  );
  expectClean(found);
});

test("axe: the report with findings, plots, cross-layer tables and a chat answer", async ({ page }) => {
  expect(reportId, "needs the upload above").not.toBe("");
  test.setTimeout(240_000);
  const found: string[] = [];
  await signIn(page, state().tokens.axel);
  await atWidths(
    page,
    "report",
    async (p) => {
      await openReport(p);
      await expect(p.getByTestId("finding").first()).toBeVisible();
      await expect(p.getByTestId("plot-sizes").locator("canvas")).toBeVisible();
      await expect(p.getByTestId("chat").getByTestId("provenance").first()).toBeVisible();
      await expect(p.getByRole("heading", { name: "Across the I/O stack" })).toBeVisible();
      // The guides arrive after the findings: wait for their links.
      await expect(p.getByTestId("recommendation").getByRole("link").first()).toBeVisible();
      // A finding shown in the plots (the banner), every <details> open, the delete confirmation armed.
      await p.getByRole("button", { name: "Show in plots" }).first().click();
      await expect(p.getByTestId("highlight-banner")).toBeVisible();
      await openDetails(p);
      await p.getByRole("button", { name: "Delete…" }).click();
      await expect(p.getByRole("button", { name: "Keep" })).toBeVisible();
      // Under the pointer too (its hover colours once made its text unreadable).
      await p.getByRole("button", { name: "Delete for good" }).hover();
      await expectScrollersFocusable(p);
    },
    found,
  );
  expectClean(found);
});

// The rest of the page is the report checked above: only what the help desk sees in addition.
test("axe: the report as the help desk sees it (reply form)", async ({ page }) => {
  expect(reportId, "needs the upload above").not.toBe("");
  const found: string[] = [];
  await signIn(page, state().tokens.helen);
  await atWidths(
    page,
    "report, help desk",
    async (p) => {
      await openReport(p);
      await expect(p.getByTestId("reply-thread")).toBeVisible();
      await expect(p.getByTestId("draft-reply")).toBeVisible();
    },
    found,
    '[data-testid="reply-thread"]',
  );
  expectClean(found);
});

for (const vp of WIDTHS) {
  test(`"Show in plots" moves focus to the plot it points to, in view (${String(vp.width)} px)`, async ({ page }) => {
    expect(reportId, "needs the upload above").not.toBe("");
    await page.setViewportSize(vp);
    await signIn(page, state().tokens.axel);
    await openReport(page);
    const show = page.getByRole("button", { name: "Show in plots" }).first();
    await show.scrollIntoViewIfNeeded();
    await show.click();
    await expect(page.getByTestId("highlight-banner")).toBeVisible();
    // The plot's card has focus: the timeline (it shows both the finding's ranks and its time window).
    await expect.poll(async () => (await focused(page)).plot, { message: "focus is on a plot" }).toBe("plot-timeline");
    const f = await focused(page);
    expect(f.tag).toBe("section");
    expect(f.cls).toContain("plot-card");
    expect(f.label).toMatch(/timeline/i);
    const card = page.locator("section.plot-card:focus");
    await expect(card).toHaveAttribute("tabindex", "-1");
    await expect(card).toHaveAccessibleName(/timeline/i);
    await expect(card.getByTestId("plot-timeline").locator("canvas")).toBeInViewport();
    await expect(page.getByTestId("highlight-banner")).toBeInViewport();
  });
}

test("axe: the compare view, and two runs that cannot be compared", async ({ page }) => {
  const s = state();
  const logs = s.ostLogs;
  test.skip(logs === null, "PyDarshan's sample logs are missing");
  if (!logs) return;
  test.setTimeout(240_000);
  const bad = await apiUpload(logs.bad, s.tokens.axel);
  const good = await apiUpload(logs.good, s.tokens.axel);
  const other = await apiUpload(logs.other, s.tokens.axel);
  const found: string[] = [];
  await signIn(page, s.tokens.axel);
  await atWidths(
    page,
    "compare",
    async (p) => {
      await p.goto(`${s.baseURL}/compare/${bad}/${good}`);
      await expect(p.getByTestId("compare-verdict")).toBeVisible();
      await expect(p.getByTestId("compare-plot-a").first().locator("canvas")).toBeVisible();
      await expect(p.getByTestId("compare-plot-b").first().locator("canvas")).toBeVisible();
      await openDetails(p);
    },
    found,
  );
  await atWidths(
    page,
    "compare, different programs",
    async (p) => {
      await p.goto(`${s.baseURL}/compare/${bad}/${other}`);
      await expect(p.getByTestId("not-comparable")).toBeVisible();
    },
    found,
  );
  expectClean(found);
});

// The guides: every one at 1440 px would take long; these cover what the Markdown renders (code blocks,
// tables, lists, the longest one), at both widths.
const knowledge = JSON.parse(
  readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), "..", "src", "api", "knowledge.gen.json"), "utf-8"),
) as { docs: { id: string; body: string }[] };
function guides(): string[] {
  const docs = knowledge.docs;
  const pick = new Set<string>();
  const first = (ok: (b: string) => boolean) => docs.find((d) => ok(d.body))?.id;
  const longest = [...docs].sort((a, b) => b.body.length - a.body.length)[0]?.id;
  for (const id of [
    first((b) => b.includes("```") && /^\|.*\|\s*$/m.test(b)),
    first((b) => b.includes("```") && !/^\|/m.test(b)),
    first((b) => !b.includes("```")),
    longest,
  ])
    if (id) pick.add(id);
  return [...pick];
}

test("axe: the guides (code blocks, tables, the longest one)", async ({ page }) => {
  const found: string[] = [];
  await signIn(page, state().tokens.axel);
  for (const id of guides()) {
    await atWidths(
      page,
      `guide ${id}`,
      async (p) => {
        await p.goto(`${state().baseURL}/docs/${id}`);
        await expect(p.getByRole("button", { name: "← Back" })).toBeVisible();
        await expect(p.locator(".doc h1, .doc h2").first()).toBeVisible();
      },
      found,
    );
  }
  expectClean(found);
});

test("axe: not found (a page, an analysis, a guide)", async ({ page }) => {
  const found: string[] = [];
  await signIn(page, state().tokens.axel);
  for (const path of ["/no-such-page", "/analyses/00000000-0000-0000-0000-000000000000", "/docs/no-such-guide"]) {
    await atWidths(
      page,
      `not found ${path}`,
      async (p) => {
        await p.goto(`${state().baseURL}${path}`);
        await expect(p.getByRole("heading", { name: "Not found" })).toBeVisible();
      },
      found,
    );
  }
  expectClean(found);
});

test("axe: my jobs, with jobs", async ({ page }) => {
  expect(reportId, "needs the upload above").not.toBe("");
  const found: string[] = [];
  await signIn(page, state().tokens.axel);
  await atWidths(
    page,
    "my jobs",
    async (p) => {
      await p.goto(`${state().baseURL}/jobs`);
      await expect(p.getByTestId("job-row").first()).toBeVisible();
      await openDetails(p);
    },
    found,
  );
  expectClean(found);
});

test("axe: the help desk's all-jobs list, with a triage note open", async ({ page }) => {
  expect(reportId, "needs the upload above").not.toBe("");
  const found: string[] = [];
  await signIn(page, state().tokens.helen);
  await atWidths(
    page,
    "all jobs (help desk)",
    async (p) => {
      await p.goto(`${state().baseURL}/all`);
      await expect(p.getByTestId("job-row").first()).toBeVisible();
      await openDetails(p);
      await p.getByTestId("job-row").first().getByRole("button", { name: /^(Add note|Note ✎)$/ }).click();
      await expect(p.getByTestId("triage-note")).toBeVisible();
    },
    found,
  );
  expectClean(found);
});
