// A page that fails to render (here: a report whose shape the page does not expect, as a server and a UI of
// different versions would give) shows a sentence and a way on, not a blank screen; the top bar still works
// and the next page renders normally.
import { expect, test } from "@playwright/test";
import { apiUpload, signIn, state } from "./helpers";

let id = "";

test.beforeAll(async () => {
  id = await apiUpload(state().realLog, state().tokens.gwen);
});

test("a page that fails to render keeps the app usable", async ({ page }) => {
  await signIn(page, state().tokens.gwen);
  await page.route(/\/api\/v1\/analyses\/[0-9a-f-]+\/report\.json$/, async (route) => {
    await route.fulfill({ json: { verdict: { headline: 7 }, findings: "not a list", job: null } });
  });
  await page.goto(`${state().baseURL}/analyses/${encodeURIComponent(id)}`);
  const alert = page.getByTestId("page-error");
  await expect(alert).toBeVisible();
  await expect(alert).toContainText("This page could not be shown");
  await expect(alert.getByRole("button", { name: "Reload the page" })).toBeVisible();
  // The rest of the app is intact: the top bar takes the reader to the jobs list, which renders.
  await page.unroute(/\/api\/v1\/analyses\/[0-9a-f-]+\/report\.json$/);
  await alert.getByRole("link", { name: "Back to your jobs" }).click();
  await expect(page.getByTestId("page-error")).toHaveCount(0);
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
});
