// Where keyboard focus goes when a page opens because of what the reader just did (an upload), not on
// every visit: the page's heading (an h1 with tabIndex -1) takes focus once the page is there, unless the
// reader has moved focus somewhere else meanwhile.

let pending: string | null = null;

/** The page at `path`, opened next, puts focus on its heading once it is shown. */
export function focusHeadingOnArrival(path: string): void {
  pending = path;
}

/** Whether the page at `path` was opened that way (a read: call it as often as needed). */
export function arrivedToFocus(path: string): boolean {
  return pending === path;
}

/** The page at `path` is done with it (its heading took focus, or the reader left). */
export function arrivalDone(path: string): void {
  if (pending === path) pending = null;
}

/** Focus `el` unless the reader has put focus on something of their own meanwhile; true if it took focus. */
export function focusUnlessBusy(el: HTMLElement | null): boolean {
  if (!el) return false;
  const at = document.activeElement;
  const free =
    at === null ||
    at === document.body ||
    at === document.documentElement ||
    at.id === "main" ||
    (at instanceof HTMLElement && at.tabIndex === -1 && /^H[1-6]$/.test(at.tagName));
  if (!free) return false;
  el.focus();
  return true;
}
