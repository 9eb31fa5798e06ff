// Boxes whose content can scroll (a wide table on a phone, a long line of code): while the content does
// not fit, the box takes keyboard focus, so the arrow keys can scroll it (WCAG 2.1.1), and it is a region
// named after what it holds. While everything fits it is a plain box: no extra tab stop.
import { type ReactNode, type RefObject, useEffect, useRef, useState } from "react";

/** Whether the element scrolls now: its content is wider or taller than it, and its overflow is auto or scroll. */
export function useScrolls(ref: RefObject<HTMLElement | null>): boolean {
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const check = () => {
      const s = getComputedStyle(el);
      const x = el.scrollWidth > el.clientWidth && /auto|scroll/.test(s.overflowX);
      const y = el.scrollHeight > el.clientHeight && /auto|scroll/.test(s.overflowY);
      setScrolls(x || y);
    };
    // Both report at once when they start observing, then on every resize and change of content.
    const sizes = new ResizeObserver(check);
    sizes.observe(el);
    for (const child of Array.from(el.children)) sizes.observe(child);
    const content = new MutationObserver(check);
    content.observe(el, { childList: true, subtree: true, characterData: true });
    return () => {
      sizes.disconnect();
      content.disconnect();
    };
  }, [ref]);
  return scrolls;
}

/** The attributes a box that scrolls needs: a tab stop and a name ({} while it does not scroll). */
export function scrollAttrs(scrolls: boolean, label: string): { tabIndex?: number; role?: "region"; "aria-label"?: string } {
  return scrolls ? { tabIndex: 0, role: "region", "aria-label": label } : {};
}

/** A box (by default a `.table-wrap`) whose content may scroll sideways; `label` names it while it does. */
export function ScrollBox({ label, className = "table-wrap", children }: { label: string; className?: string; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const scrolls = useScrolls(ref);
  return (
    <div ref={ref} className={className} {...scrollAttrs(scrolls, label)}>
      {children}
    </div>
  );
}
