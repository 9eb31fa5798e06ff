// The timeline at scale, on the shared corpus's 384-rank DXT log (25,973 segments): the overview is a
// density view with a legend that says so; zooming in asks the API for the window's segments and draws
// them at full resolution; reset goes back to the overview; the canvas's text alternative says what the
// data shows in each state. At a desktop and a phone width.
import { expect, type Locator, type Page, test } from "@playwright/test";
import type { Schemas } from "../src/api/client";
import { apiGet, apiUpload, expectNoHorizontalOverflow, SHOTS, signIn, state } from "./helpers";

let id = "";

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  const log = state().scaleLog;
  if (log) id = await apiUpload(log, state().tokens.zoe);
});

async function openTimeline(page: Page, width: number): Promise<Locator> {
  await page.setViewportSize({ width, height: 900 });
  await signIn(page, state().tokens.zoe);
  await page.goto(`${state().baseURL}/analyses/${encodeURIComponent(id)}`);
  const card = page.getByTestId("plot-timeline");
  await card.scrollIntoViewIfNeeded();
  await expect(card).toBeVisible();
  return card;
}

for (const width of [1440, 390]) {
  test(`384 ranks: a density view, and zooming in brings back every segment of the window (${String(width)} px)`, async ({ page }) => {
    test.skip(!state().scaleLog, "the shared corpus's 384-rank log is missing");
    const plots = await apiGet<Schemas["PlotData"]>(`/api/v1/analyses/${encodeURIComponent(id)}/plots`, state().tokens.zoe);
    const tl = plots.timeline;
    expect(tl?.points_total).toBe(25_973);
    expect(tl?.density?.budget).toBe(5_000);

    const card = await openTimeline(page, width);
    const foot = card.locator(".plot-foot");
    const canvas = card.locator("canvas");
    // The overview: a density view, said so by the legend and by the canvas's text alternative.
    await expect(foot).toHaveAttribute("data-mode", "density");
    await expect(card.getByTestId("timeline-density-legend")).toHaveText(
      /^Density view \(over 5,000 segments\): bytes moved per rank and 100\.0 ms bin; darkest cell .+, up to \d+ segments in flight · zoom in for single segments$/,
    );
    await expect(card.getByText("write: darker = more bytes")).toBeVisible();
    await expect(canvas).toHaveAccessibleName(
      /^Per-rank I\/O timeline, density view: density view of 25,973 segments: I\/O between .+ and .+ on 384 rank row\(s\); rank \d+ moved the most \([\d.]+ % of the bytes, an even share would be 0\.3 %\); whole job: 25,973 operations moving .+ on 384 rank\(s\) over 12\.0 s/,
    );
    await expect(card.getByTestId("timeline-resolution")).toHaveCount(0);
    await expect(card.getByText("25,973 segments, every one counted in the grid")).toBeVisible();
    await expectNoHorizontalOverflow(page, "the density view");
    const before = await canvas.screenshot();
    await page.screenshot({ path: `${SHOTS}/timeline-density-${String(width)}.png` });

    // Zoom in four steps (to 0.7^4 of the time axis): the UI asks for that window's segments.
    const asked = page.waitForRequest((r) => r.url().includes(`/api/v1/analyses/${id}/plots/timeline?`), { timeout: 20_000 });
    const answered = page.waitForResponse((r) => r.url().includes(`/api/v1/analyses/${id}/plots/timeline?`) && r.status() === 200, { timeout: 20_000 });
    const zoomIn = card.getByRole("button", { name: "Zoom in" });
    for (let i = 0; i < 4; i++) await zoomIn.click();
    const url = new URL((await asked).url());
    const t0 = Number(url.searchParams.get("t0"));
    const t1 = Number(url.searchParams.get("t1"));
    expect(t1 - t0).toBeGreaterThan(12 * 0.7 ** 4 * 0.99);
    expect(t1 - t0).toBeLessThan(12 * 0.7 ** 4 * 1.01);
    expect(url.searchParams.get("layer")).toBe("MPIIO"); // the layer shown
    expect(url.searchParams.get("rank0")).toBe("0");
    expect(url.searchParams.get("rank1")).toBe("383");
    const win = (await (await answered).json()) as Schemas["TimelineWindow"];
    expect(win.sampled).toBe(false);
    expect(win.points_total).toBeGreaterThan(0);
    expect(win.points_total).toBe(win.points_shown);

    // What the user sees: the window's segments, one bar each, and a label saying so.
    await expect(foot).toHaveAttribute("data-mode", "window");
    const n = win.points_total.toLocaleString("en-US");
    await expect(card.getByTestId("timeline-resolution")).toHaveText(`full resolution: ${n} segments in this window`);
    await expect(canvas).toHaveAccessibleName(new RegExp(`^Per-rank I/O timeline: zoomed to .+ s – .+ s, ranks 0–383: full resolution, ${n} segment\\(s\\) moving .+; whole job: `));
    await expect(card.getByText(/\(this window\)$/)).toBeVisible();
    await expectNoHorizontalOverflow(page, "the zoomed timeline");
    expect((await canvas.screenshot()).equals(before)).toBe(false);
    await page.screenshot({ path: `${SHOTS}/timeline-window-${String(width)}.png` });

    // Hovering a bar tells that one segment (one op), not a merged bar.
    const box = await canvas.boundingBox();
    if (!box) throw new Error("no canvas box");
    let tip = "";
    for (let k = 0; k < 40 && !tip.includes("in 1 op(s)"); k++) {
      await page.mouse.move(box.x + box.width * (0.2 + 0.015 * k), box.y + box.height * 0.5);
      tip = (await card.locator(".plot-tip").textContent().catch(() => "")) ?? "";
    }
    expect(tip).toMatch(/^rank \d+ · MPI-IO write.+ in 1 op\(s\)$/s);

    // Back out: the overview again, no window label.
    await card.getByRole("button", { name: "Reset" }).click();
    await expect(foot).toHaveAttribute("data-mode", "density");
    await expect(card.getByTestId("timeline-resolution")).toHaveCount(0);
    await expect(canvas).toHaveAccessibleName(/^Per-rank I\/O timeline, density view: density view of 25,973 segments/);
  });
}

test("a window too busy for single segments stays a density view and says so", async ({ page }) => {
  test.skip(!state().scaleLog, "the shared corpus's 384-rank log is missing");
  const card = await openTimeline(page, 1440);
  // All layers, zoomed once: about 18,000 segments, over the 5,000-segment budget.
  await card.locator("..").getByText("All layers").click();
  const answered = page.waitForResponse((r) => r.url().includes(`/plots/timeline?`) && r.status() === 200, { timeout: 20_000 });
  await card.getByRole("button", { name: "Zoom in" }).click();
  const win = (await (await answered).json()) as Schemas["TimelineWindow"];
  expect(win.sampled).toBe(true);
  expect(win.density).toBeTruthy();
  await expect(card.locator(".plot-foot")).toHaveAttribute("data-mode", "density");
  await expect(card.getByTestId("timeline-resolution")).toHaveText(
    `${win.points_total.toLocaleString("en-US")} segments in this window, over the 5,000-segment budget: still a density view, zoom in further for single segments`,
  );
  await expect(card.locator("canvas")).toHaveAccessibleName(/^Per-rank I\/O timeline, density view: density view of the zoomed window .+, [\d,]+ segments: I\/O between/);
});
