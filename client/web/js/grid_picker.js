// A location question's answer: a cell picked on the designer's grid (docs/location.md).
//
// The grid is a set of buttons laid out by CSS grid, with a roving tabindex: Tab reaches the
// grid once, the arrow keys (and Home/End, Ctrl+Home/End) move between cells, Enter or Space
// picks one, and a live line says which cell is picked and which regions hold it. The
// designer's background image comes from the signed survey as a data: URL: nothing is loaded
// from another origin. The picked cell's "row,col" label is the value of a hidden input named
// like every other question's field, so form.js reads it the same way.

import { el } from "./dom.js";

/** "Row 3, column 5" (and the regions that hold it). */
export function cellText(q, label) {
  const [r, c] = label.split(",");
  const regions = Object.entries(q.regions || {})
    .filter(([, members]) => members.includes(label)).map(([name]) => name);
  return `Row ${r}, column ${c}` + (regions.length ? ` (${regions.join(", ")})` : "");
}

/** The picker for question `q`; its value is read back by `readCell`. */
export function gridInputs(q, name, describedBy) {
  const { rows, cols, cell_km: km } = q.grid;
  const hidden = el("input", { type: "hidden", name, value: "" });
  const chosen = el("p", { class: "cell-choice", id: `${name}-chosen`, "aria-live": "polite" },
    "No cell picked yet.");
  const board = el("div", {
    class: "grid-picker", role: "grid", "aria-describedby": `${describedBy} ${name}-chosen`,
    "aria-label": `Map of ${rows} rows by ${cols} columns, each cell ${km} km across. ` +
                  "Arrow keys move, Enter or Space picks.",
  });
  board.style.gridTemplateColumns = `repeat(${cols}, minmax(0, 1fr))`;
  if (q.background) board.style.backgroundImage = `url("${q.background}")`;
  const buttons = [];
  for (let r = 1; r <= rows; r++) {
    const row = el("div", { role: "row", class: "grid-row" });
    for (let c = 1; c <= cols; c++) {
      const label = `${r},${c}`;
      const button = el("button", {
        type: "button", role: "gridcell", class: "cell", "data-cell": label,
        tabindex: buttons.length === 0 ? "0" : "-1", "aria-selected": "false",
        "aria-label": cellText(q, label),
      });
      button.addEventListener("click", () => pick(button));
      row.append(button);
      buttons.push(button);
    }
    board.append(row);
  }

  function focusAt(index) {
    const next = buttons[Math.max(0, Math.min(buttons.length - 1, index))];
    for (const b of buttons) b.tabIndex = b === next ? 0 : -1;
    next.focus();
  }

  function pick(button) {
    for (const b of buttons) b.setAttribute("aria-selected", String(b === button));
    hidden.value = button.dataset.cell;
    chosen.textContent = `Picked: ${cellText(q, button.dataset.cell)}.`;
    focusAt(buttons.indexOf(button));
  }

  board.addEventListener("keydown", (event) => {
    const at = buttons.indexOf(document.activeElement);
    if (at < 0) return;
    const r = Math.floor(at / cols);
    const moves = {
      ArrowLeft: at - 1, ArrowRight: at + 1, ArrowUp: at - cols, ArrowDown: at + cols,
      Home: event.ctrlKey ? 0 : r * cols, End: event.ctrlKey ? buttons.length - 1 : r * cols + cols - 1,
    };
    if (!(event.key in moves)) return;
    const target = moves[event.key];
    const sameRow = Math.floor(target / cols) === r;
    if ((event.key === "ArrowLeft" || event.key === "ArrowRight") && !sameRow) return;
    if (target < 0 || target >= buttons.length) return;
    event.preventDefault();
    focusAt(target);
  });

  const regions = Object.keys(q.regions || {});
  const legend = regions.length
    ? el("p", { class: "hint" }, `Regions on this map: ${regions.join(", ")} (each cell's ` +
         "name says which regions hold it).")
    : null;
  return [legend, board, chosen, hidden];
}

/** {value} for a picked cell, or {error}. */
export function readCell(q, raw) {
  const { rows, cols } = q.grid;
  const m = /^(\d+),(\d+)$/.exec(raw);
  if (m && +m[1] >= 1 && +m[1] <= rows && +m[2] >= 1 && +m[2] <= cols) return { value: raw };
  return { error: "Please pick a cell on the map." };
}
