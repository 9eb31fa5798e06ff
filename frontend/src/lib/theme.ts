// Light and dark themes: follow prefers-color-scheme until the user picks one.
import { useEffect, useState } from "react";

export type Theme = "light" | "dark";
const KEY = "iodiag.theme";

function systemTheme(): Theme {
  return window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function useTheme(): [Theme, () => void] {
  const [chosen, setChosen] = useState<Theme | null>(() => {
    const v = localStorage.getItem(KEY);
    return v === "light" || v === "dark" ? v : null;
  });
  const [system, setSystem] = useState<Theme>(systemTheme);
  useEffect(() => {
    const mq = window.matchMedia("(prefers-color-scheme: dark)");
    const fn = () => {
      setSystem(mq.matches ? "dark" : "light");
    };
    mq.addEventListener("change", fn);
    return () => {
      mq.removeEventListener("change", fn);
    };
  }, []);
  const theme = chosen ?? system;
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    window.dispatchEvent(new Event("iodiag-theme"));
  }, [theme]);
  const toggle = () => {
    const next: Theme = theme === "dark" ? "light" : "dark";
    localStorage.setItem(KEY, next);
    setChosen(next);
  };
  return [theme, toggle];
}
