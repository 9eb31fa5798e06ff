// Phone (390 px), tablet (768 px) and desktop (1440 px): on every page the document never scrolls
// sideways, and each page's primary actions are visible and take a click (not off-screen, not covered).
// On the phone and the tablet the chat sits below the report: the floating "Ask" button takes the reader
// there, into the question box, and a question gets its answer.
import { expect, type Page, test } from "@playwright/test";
import { apiUpload, expectNoHorizontalOverflow, expectReachable, signIn, state } from "./helpers";

const VIEWPORTS = [
  { name: "phone", width: 390, height: 844 },
  { name: "tablet", width: 768, height: 1024 },
  { name: "desktop", width: 1440, height: 900 },
] as const;

const EXPORTS = ["Copy Markdown", "Download .md", "Download HTML", "Download JSON", "Copy report link"];

let reportId = "";

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  reportId = await apiUpload(state().realLog, state().tokens.erin);
});

async function openReport(page: Page): Promise<void> {
  await signIn(page, state().tokens.erin);
  await page.goto(`${state().baseURL}/analyses/${encodeURIComponent(reportId)}`);
  await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible();
  await expect(page.getByTestId("plot-timeline")).toBeVisible();
}

/** The top bar's navigation and "Sign out" stay on screen. */
async function topBarReachable(page: Page): Promise<void> {
  await page.evaluate(() => {
    window.scrollTo(0, 0);
  });
  await expectReachable(page.getByRole("link", { name: "Upload", exact: true }));
  await expectReachable(page.getByRole("link", { name: "My jobs" }));
  await expectReachable(page.getByRole("button", { name: "Sign out" }));
  await expectReachable(page.getByRole("button", { name: /^Switch to (light|dark) theme$/ }));
}

for (const vp of VIEWPORTS) {
  test.describe(`${vp.name}, ${String(vp.width)} px wide`, () => {
    test.use({ viewport: { width: vp.width, height: vp.height } });
    const narrow = vp.width <= 1100;

    test("sign-in", async ({ page }) => {
      await page.goto(`${state().baseURL}/`);
      await expect(page.getByLabel("API token")).toBeVisible();
      await expectNoHorizontalOverflow(page, "sign-in");
      await expectReachable(page.getByLabel("API token"));
      await expectReachable(page.getByRole("button", { name: "Sign in" }));
    });

    test("upload", async ({ page }) => {
      await signIn(page, state().tokens.erin);
      await topBarReachable(page);
      await page.getByRole("link", { name: "Upload", exact: true }).click();
      await expect(page.getByRole("heading", { name: "Upload a Darshan log" })).toBeVisible();
      await expectNoHorizontalOverflow(page, "upload");
      await expectReachable(page.getByRole("button", { name: "Choose a file" }));
      await page.getByTestId("file-input").setInputFiles(state().realLog);
      await expectNoHorizontalOverflow(page, "upload with a file chosen");
      await expectReachable(page.getByRole("button", { name: "Upload and analyze" }));
    });

    test("jobs", async ({ page }) => {
      await signIn(page, state().tokens.erin);
      await expect(page.getByTestId("job-row")).toHaveCount(1);
      await expectNoHorizontalOverflow(page, "jobs");
      await topBarReachable(page);
      await expectReachable(page.getByRole("link", { name: "Upload a log" }));
      await expectReachable(page.getByTestId("search"));
      const open = page.getByTestId("job-row").first().getByRole("link").first();
      await expectReachable(open);
      await open.click();
      await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible();
    });

    test("report: header, verdict, findings, plots and exports", async ({ page }) => {
      await openReport(page);
      await expectNoHorizontalOverflow(page, "report");
      await topBarReachable(page);
      // The header card keeps its width (it once collapsed to a sliver with the command one letter per line).
      const head = page.locator(".report-head");
      const box = await head.boundingBox();
      expect(box?.width ?? 0).toBeGreaterThan(Math.min(vp.width, 1100) * 0.5);
      const exe = await page.locator(".report-head h1 .exe").boundingBox();
      expect(exe?.width ?? 0).toBeGreaterThan(100);
      await expect(page.getByRole("heading", { level: 1 })).toBeInViewport();
      await expectReachable(page.getByTestId("verdict-headline"));
      await expectReachable(page.getByTestId("io-share"));
      for (const name of EXPORTS) await expectReachable(page.getByRole("button", { name, exact: false }).first());
      await expectReachable(page.getByTestId("finding").first().locator("h3"));
      // Plots fit the width; where they get small the page says how to read them.
      for (const id of ["plot-timeline", "plot-sizes"]) {
        const canvas = page.getByTestId(id).locator("canvas");
        await canvas.scrollIntoViewIfNeeded();
        const c = await canvas.boundingBox();
        expect(c?.width ?? 0).toBeGreaterThan(150);
        expect((c?.x ?? 0) + (c?.width ?? 0)).toBeLessThanOrEqual(vp.width);
        await expectReachable(page.getByTestId(id).getByRole("button", { name: "Zoom in" }));
        const note = page.getByTestId(id).getByTestId("plot-narrow");
        if ((c?.width ?? 0) < 480) await expect(note).toContainText("rotate your device");
        else await expect(note).toHaveCount(0);
      }
      if (vp.width === 390) await expect(page.getByTestId("plot-narrow").first()).toBeVisible();
      // Everything below the fold, once drawn, still fits.
      await page.evaluate(() => {
        window.scrollTo(0, document.documentElement.scrollHeight);
      });
      await expectNoHorizontalOverflow(page, "report, scrolled to the end");
    });

    test("chat: reach it, ask, get an answer", async ({ page }) => {
      await openReport(page);
      const chat = page.getByTestId("chat");
      const input = page.locator("#chat-q");
      const fab = page.getByTestId("ask-fab");
      if (narrow) {
        // The chat is far below; the floating button jumps there and puts the caret in the question box.
        await expect(input).not.toBeInViewport();
        await expectReachable(fab);
        await expect(fab).toHaveAccessibleName("Ask about this job");
        await fab.click();
        await expect(input).toBeFocused();
        await expect(input).toBeInViewport();
        await expect(fab).toBeHidden();
      } else {
        // Beside the report, in view from the start: no floating button.
        await expect(fab).toBeHidden();
        await expect(input).toBeInViewport();
        await input.focus();
      }
      await expectNoHorizontalOverflow(page, "chat");
      const before = await chat.getByTestId("provenance").count();
      await page.keyboard.type(`Which file is worst? (${vp.name})`);
      await expectReachable(chat.getByRole("button", { name: "Ask", exact: true }));
      await page.keyboard.press("Enter");
      await expect(chat.getByTestId("msg-user").last()).toContainText(`(${vp.name})`);
      await expect(chat.getByTestId("provenance")).toHaveCount(before + 1, { timeout: 120_000 });
      await expect(chat.getByTestId("msg-assistant").last()).toBeInViewport();
      await expectNoHorizontalOverflow(page, "chat with an answer");
      // A suggested question is reachable too.
      await expectReachable(chat.getByRole("button", { name: "Why is my job slow?" }));
    });
  });
}
