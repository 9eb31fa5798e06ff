// WCAG 2.x contrast of the UI's colour tokens (the CSS custom properties on :root). Each pair is a
// foreground token the UI draws on a background token; `min` is 4.5 for text, 3 for large text and
// for graphics (focus ring, plot marks, form-control borders, severity stripes).

export interface Pair {
  fg: string;
  bg: string;
  min: 4.5 | 3;
  /** Where the UI draws this pair. */
  use: string;
}

const TEXT = 4.5;
const GRAPHIC = 3;

const TONES = ["critical", "warning", "info", "ok"] as const;

export const PAIRS: Pair[] = [
  // Body text, muted text and links on the page, cards and raised surfaces.
  ...["bg", "surface", "surface-2"].flatMap((bg): Pair[] => [
    { fg: "text", bg, min: TEXT, use: "body text" },
    { fg: "text-muted", bg, min: TEXT, use: "muted text (labels, captions, hints)" },
    { fg: "accent", bg, min: TEXT, use: "links, link buttons, citations" },
  ]),
  { fg: "accent-text", bg: "accent", min: TEXT, use: "primary buttons, your chat messages, the current stage" },
  { fg: "surface", bg: "critical", min: TEXT, use: "the Delete for good button" },
  { fg: "accent-text", bg: "series-0", min: TEXT, use: "run tag A (compare view)" },
  { fg: "accent-text", bg: "series-2", min: TEXT, use: "run tag B (compare view)" },
  // Severity badges, counts, status and provenance badges: the tone on its own background.
  ...TONES.map((t): Pair => ({ fg: t, bg: `${t}-bg`, min: TEXT, use: `${t} badges and counts` })),
  // Severity headings, better/worse cells and the like: the tone as text on the page and on cards.
  ...TONES.flatMap((t): Pair[] => [
    { fg: t, bg: "bg", min: TEXT, use: `${t} headings on the page` },
    { fg: t, bg: "surface", min: TEXT, use: `${t} text on cards` },
  ]),
  // The verdict panel, the I/O-share box, errors and notes: text, muted text and links on a tone's background.
  ...TONES.flatMap((t): Pair[] => [
    { fg: "text", bg: `${t}-bg`, min: TEXT, use: `text in a ${t} panel` },
    { fg: "text-muted", bg: `${t}-bg`, min: TEXT, use: `muted text in a ${t} panel` },
    { fg: "accent", bg: `${t}-bg`, min: TEXT, use: `finding links in a ${t} panel` },
  ]),
  // Graphics: the focus ring, form-control borders, severity stripes and the plots' marks.
  { fg: "focus", bg: "bg", min: GRAPHIC, use: "focus ring on the page" },
  { fg: "focus", bg: "surface", min: GRAPHIC, use: "focus ring on cards" },
  { fg: "input-border", bg: "surface", min: GRAPHIC, use: "form-field borders (inputs, selects, text areas)" },
  { fg: "input-border", bg: "bg", min: GRAPHIC, use: "form-field borders on the page" },
  ...TONES.map((t): Pair => ({ fg: t, bg: "surface", min: GRAPHIC, use: `${t} stripe on finding cards` })),
  ...["plot-write", "plot-read", "plot-straggler", "plot-hl", "plot-axis", ...[0, 1, 2, 3, 4, 5, 6, 7].map((i) => `series-${String(i)}`)].map(
    (fg): Pair => ({ fg, bg: "surface", min: GRAPHIC, use: "plot marks" }),
  ),
];

/** "#rgb", "#rrggbb" or "rgb(r, g, b)" to [r, g, b]; null for anything else (an unset token). */
export function parseColor(v: string): [number, number, number] | null {
  const s = v.trim().toLowerCase();
  const short = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/.exec(s);
  if (short) return [short[1], short[2], short[3]].map((c) => parseInt(`${c}${c}`, 16)) as [number, number, number];
  const long = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/.exec(s);
  if (long) return [long[1], long[2], long[3]].map((c) => parseInt(c, 16)) as [number, number, number];
  const r = /^rgba?\(\s*(\d+)[ ,]+(\d+)[ ,]+(\d+)\s*(?:[,/]\s*1(?:\.0*)?\s*)?\)$/.exec(s);
  if (r) return [Number(r[1]), Number(r[2]), Number(r[3])];
  return null;
}

function luminance([r, g, b]: [number, number, number]): number {
  const lin = (c: number) => {
    const v = c / 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

export function contrast(a: [number, number, number], b: [number, number, number]): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}
