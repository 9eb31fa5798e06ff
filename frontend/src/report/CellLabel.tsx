import type { ReactNode } from "react";
import "../styles/report.css";

/**
 * A table cell's column name, shown only where the table becomes one card per row (a phone: `.cards-narrow`
 * below 640 px): every value then carries its name, and none is cut off or scrolled out of sight.
 */
export function CellLabel({ children }: { children: ReactNode }) {
  return <span className="cell-label">{children}</span>;
}
