// A location question's answer: a cell picked on the designer's grid (docs/location.md).
//
// The grid is a set of buttons laid out by CSS grid, with a roving tabindex: Tab reaches the
// grid once, the arrow keys (and Home/End, Ctrl+Home/End) move between cells, Enter or Space
// picks one, and a live line says which cell is picked and which regions hold it. The
// designer's background image comes from the signed survey as a data: URL: nothing is loaded
// from another origin. The picked cell's "row,col" label is the value of a hidden input named
// like every other question's field, so form.js reads it the same way.
//
// On a phone every cell stays a target of at least 44 x 44 CSS pixels (the size guidelines
// for touch give): a grid wider than the screen scrolls inside its own frame (the page itself
// never scrolls sideways), a line under it says so, and a button per region brings that region
// into view with its central cell focused. The designer's regions are drawn over the cells
// (an SVG outline and name per region, not in the way of taps), so even a grid without a
// background image reads as a map.

import { adoptStyle, el } from "./dom.js";
import { N, t } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";  // the SVG namespace: an identifier, never fetched
/** The smallest tap target, in CSS pixels. */
export const MIN_CELL_PX = 44;

// This module's own style, adopted by the document the first time a grid is built: a survey
// without a location question never downloads it (page.css stays lean; a constructed
// stylesheet is CSSOM, which the page's Content-Security-Policy allows, unlike a <style>).
// Square cells of at least 44 px, over the map if any, the regions drawn on top; a grid wider
// than the screen scrolls in its own frame.
const STYLE = `
.grid-scroll { max-width: 100%; max-height: 80vh; overflow: auto; margin: 0.5rem 0;
               overscroll-behavior: contain; }
.grid-picker { display: grid; gap: 1px; position: relative; direction: ltr;
               width: max(min(100%, 36rem), calc(var(--cols) * 45px));
               background: #aeb5bf center / 100% 100% no-repeat;  /* the gaps: grid lines */
               border: 1px solid var(--muted); touch-action: manipulation; }
.grid-row { display: contents; }
.grid-picker .cell { min-width: 44px; min-height: 44px; aspect-ratio: 1; padding: 0; margin: 0;
                     border: 0; border-radius: 0; background: rgba(255, 255, 255, 0.55); }
.grid-picker .cell:hover { background: rgba(0, 90, 180, 0.25); }
.grid-picker .cell[aria-selected="true"] { background: var(--accent);
                                           box-shadow: inset 0 0 0 2px #fff; }
.region-layers, .region-layers svg { position: absolute; inset: 0; width: 100%; height: 100%;
                                     pointer-events: none; overflow: visible; }
.region-name { fill: #111; stroke: #fff; stroke-width: 0.12; paint-order: stroke;
               font-weight: 600; }
.region-go { min-height: 44px; margin-block: 0.25rem; margin-inline: 0 0.5rem; }
`;

/** "Row 3, column 5" (and the regions that hold it). */
export function cellText(q, label) {
  const [r, c] = label.split(",");
  const regions = Object.entries(q.regions || {})
    .filter(([, members]) => members.includes(label)).map(([name]) => name);
  return regions.length ? t("loc.cellRegions", { r, c, regions: regions.join(", ") })
    : t("loc.cellText", { r, c });
}

/** The picker for question `q`; its value is read back by `readCell`. */
export function gridInputs(q, name, describedBy) {
  adoptStyle(STYLE);
  const { rows, cols, cell_km: km } = q.grid;
  const hidden = el("input", { type: "hidden", name, value: "" });
  const chosen = el("p", { class: "cell-choice", id: `${name}-chosen`, "aria-live": "polite" },
    t("loc.none"));
  const board = el("div", {
    class: "grid-picker", role: "grid", "aria-describedby": `${describedBy} ${name}-chosen`,
    "aria-label": t("loc.map", { rows, cols, km: N(String(km)) }),
  });
  board.style.gridTemplateColumns = `repeat(${cols}, minmax(${MIN_CELL_PX}px, 1fr))`;
  board.style.setProperty("--cols", String(cols));
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

  function pick(button, focus = true) {
    for (const b of buttons) b.setAttribute("aria-selected", String(b === button));
    hidden.value = button.dataset.cell;
    chosen.textContent = t("loc.picked", { cell: cellText(q, button.dataset.cell) });
    if (focus) focusAt(buttons.indexOf(button));
    else for (const b of buttons) b.tabIndex = b === button ? 0 : -1;
  }
  /** The cell picked before the page changed language (form.js formState). */
  hidden.restore = (value) => {
    const button = buttons.find((b) => b.dataset.cell === value);
    if (button) pick(button, false);
  };

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

  board.append(regionLayer(q));
  const frame = el("div", { class: "grid-scroll" }, board);
  const scrollNote = el("p", { class: "hint grid-scroll-note", hidden: "" },
    t("loc.scroll"));
  // Shown only when the map does overflow its frame (measured once it is laid out).
  const overflow = () => {
    scrollNote.hidden = !(frame.scrollWidth > frame.clientWidth + 1 ||
                          frame.scrollHeight > frame.clientHeight + 1);
  };
  if (typeof ResizeObserver === "function") new ResizeObserver(overflow).observe(frame);

  const names = Object.keys(q.regions || {});
  const legend = names.length
    ? el("div", { class: "region-jump" },
        el("span", { class: "hint" }, t("loc.regions")),
        ...names.map((region) => {
          const go = el("button", { type: "button", class: "region-go" }, region);
          go.addEventListener("click", () => {
            const at = buttons[centralIndex(q.regions[region], cols)];
            focusAt(buttons.indexOf(at));
            at.scrollIntoView({ block: "center", inline: "center" });
          });
          return go;
        }))
    : null;
  return [legend, frame, scrollNote, chosen, hidden];
}

/** The cell index (row-major) of a region's member nearest its centroid, the first in row
 * order on a tie: shared/mechanisms/location.py central_cell. */
export function centralIndex(members, cols) {
  const at = members.map((label) => label.split(",").map(Number));
  const mr = at.reduce((s, [r]) => s + r, 0) / at.length;
  const mc = at.reduce((s, [, c]) => s + c, 0) / at.length;
  let best = 0;
  let far = Infinity;
  at.forEach(([r, c], i) => {
    const d = (r - mr) ** 2 + (c - mc) ** 2;
    if (d < far) { far = d; best = i; }
  });
  const [r, c] = at[best];
  return (r - 1) * cols + (c - 1);
}

/** Unit segments "x1 y1 x2 y2" (x = column − 1, y = row − 1) of a region's outline: every
 * member side whose neighbour is not a member. */
export function outline(members) {
  const inside = new Set(members);
  const d = [];
  for (const label of members) {
    const [r, c] = label.split(",").map(Number);
    const [x, y] = [c - 1, r - 1];
    if (!inside.has(`${r - 1},${c}`)) d.push(`M${x} ${y}H${x + 1}`);
    if (!inside.has(`${r + 1},${c}`)) d.push(`M${x} ${y + 1}H${x + 1}`);
    if (!inside.has(`${r},${c - 1}`)) d.push(`M${x} ${y}V${y + 1}`);
    if (!inside.has(`${r},${c + 1}`)) d.push(`M${x + 1} ${y}V${y + 1}`);
  }
  return d.join("");
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  node.append(...children);
  return node;
}

/** The regions drawn over the grid: a light fill, a dark outline on a white one, the name at
 * the central cell. Decoration for sight (the cells' names say the same to screen readers). */
function regionLayer(q) {
  const { rows, cols } = q.grid;
  const layer = svg("svg", { class: "region-layer", viewBox: `0 0 ${cols} ${rows}`,
                             preserveAspectRatio: "none", "aria-hidden": "true",
                             focusable: "false" });
  const labels = svg("svg", { class: "region-layer", viewBox: `0 0 ${cols} ${rows}`,
                              "aria-hidden": "true", focusable: "false" });
  Object.entries(q.regions || {}).forEach(([name, members], i) => {
    const d = outline(members);
    const hue = (i * 137) % 360;  // distinct neighbouring colours
    const fill = members.map((label) => {
      const [r, c] = label.split(",").map(Number);
      return `M${c - 1} ${r - 1}h1v1h-1z`;
    }).join("");
    layer.append(
      svg("path", { d: fill, fill: `hsl(${hue} 70% 55%)`, "fill-opacity": 0.14,
                    class: "region-fill" }),
      svg("path", { d, fill: "none", stroke: "#fff", "stroke-width": 5,
                    "vector-effect": "non-scaling-stroke" }),
      svg("path", { d, fill: "none", stroke: `hsl(${hue} 80% 25%)`, "stroke-width": 2.5,
                    "vector-effect": "non-scaling-stroke", class: "region-outline",
                    "data-region": name }));
    const at = centralIndex(members, cols);
    const [r, c] = [Math.floor(at / cols), at % cols];
    labels.append(svg("text", { x: c + 0.5, y: r + 0.5, class: "region-name",
                                "text-anchor": "middle", "dominant-baseline": "central",
                                "font-size": 0.42, "data-region": name }, name));
  });
  const both = el("div", { class: "region-layers", "aria-hidden": "true" }, layer, labels);
  return both;
}

/** {value} for a picked cell, or {error}. */
export function readCell(q, raw) {
  const { rows, cols } = q.grid;
  const m = /^(\d+),(\d+)$/.exec(raw);
  if (m && +m[1] >= 1 && +m[1] <= rows && +m[2] >= 1 && +m[2] <= cols) return { value: raw };
  return { error: t("loc.pick") };
}
