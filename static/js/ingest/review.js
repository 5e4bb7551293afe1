// The review page of a table candidate: the page image with every candidate's box (move,
// resize, draw, extract again), and an editable grid of the table (cells, rows, columns,
// merges, header marks, undo) with a live preview rendered by the server, as the dataset
// will show it. Drafts go to this device at once and to the server within a second.
import { ActiveTimer, DraftSync, LocalDraft, StatusLine, api, counted } from "../annotate/common.js";

const data = JSON.parse(document.getElementById("review-state").textContent);
const pageStatus = new StatusLine(document.getElementById("page-status"));
const strategyField = document.getElementById("strategy");

// --- The page and its boxes ------------------------------------------------------------------

const panel = document.getElementById("page-panel");
const image = document.getElementById("page-image");
const boxesLayer = document.getElementById("boxes");
let currentBox = null; // [x0, top, x1, bottom] in points, the box under review
let newBox = null; // a box being drawn
const boxes = data.boxes || [];
for (const box of boxes) if (box.current && box.bbox) currentBox = [...box.bbox];

function scale() {
  return image && data.page_size ? image.clientWidth / data.page_size[0] : 1;
}

function place(element, bbox) {
  const k = scale();
  element.style.left = `${bbox[0] * k}px`;
  element.style.top = `${bbox[1] * k}px`;
  element.style.width = `${(bbox[2] - bbox[0]) * k}px`;
  element.style.height = `${(bbox[3] - bbox[1]) * k}px`;
}

function boxElement(kind, bbox, label, href) {
  const element = document.createElement(href ? "a" : "div");
  element.className = `box ${kind}`;
  if (href) {
    element.href = href;
    element.setAttribute("aria-label", label);
    element.tabIndex = -1;
  }
  const tag = document.createElement("span");
  tag.className = "label";
  tag.textContent = label;
  element.append(tag);
  if (kind === "current" || kind === "new") {
    const handle = document.createElement("span");
    handle.className = "handle";
    handle.dataset.handle = "1";
    element.append(handle);
  }
  place(element, bbox);
  return element;
}

function drawBoxes() {
  if (!boxesLayer) return;
  const items = [];
  for (const box of boxes) {
    if (!box.bbox) continue;
    if (box.current) {
      items.push(boxElement("current", currentBox, `#${box.number} (this one)`));
    } else {
      items.push(boxElement(box.status, box.bbox, `#${box.number}`, `/ingest/candidates/${box.id}/`));
    }
  }
  if (newBox) items.push(boxElement("new", newBox, "new table"));
  boxesLayer.replaceChildren(...items);
  const extractNew = document.getElementById("extract-new");
  if (extractNew) extractNew.hidden = !newBox;
}

function clampBox(bbox) {
  const [width, height] = data.page_size;
  let [x0, top, x1, bottom] = bbox;
  const w = Math.min(width, Math.max(4, x1 - x0));
  const h = Math.min(height, Math.max(4, bottom - top));
  x0 = Math.min(Math.max(0, x0), width - w);
  top = Math.min(Math.max(0, top), height - h);
  return [x0, top, x0 + w, top + h];
}

function editedBox() {
  return newBox || currentBox;
}

function setEditedBox(bbox) {
  if (newBox) newBox = clampBox(bbox);
  else if (currentBox) currentBox = clampBox(bbox);
  drawBoxes();
}

if (panel && image) {
  const ready = () => drawBoxes();
  if (image.complete) ready();
  image.addEventListener("load", ready);
  window.addEventListener("resize", ready);
  let drag = null;
  panel.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    const rect = image.getBoundingClientRect();
    const k = scale();
    const at = [(event.clientX - rect.left) / k, (event.clientY - rect.top) / k];
    const target = event.target;
    const onEdited = target.closest(".box.current, .box.new");
    if (target.closest("a.box")) return; // another candidate: follow its link
    event.preventDefault();
    panel.focus();
    if (onEdited) {
      drag = { mode: target.dataset.handle ? "resize" : "move", from: at, start: [...editedBox()] };
    } else {
      newBox = [at[0], at[1], at[0] + 4, at[1] + 4];
      drag = { mode: "resize", from: at, start: [...newBox] };
      drawBoxes();
    }
    panel.setPointerCapture(event.pointerId);
  });
  panel.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const rect = image.getBoundingClientRect();
    const k = scale();
    const dx = (event.clientX - rect.left) / k - drag.from[0];
    const dy = (event.clientY - rect.top) / k - drag.from[1];
    const [x0, top, x1, bottom] = drag.start;
    setEditedBox(
      drag.mode === "move" ? [x0 + dx, top + dy, x1 + dx, bottom + dy] : [x0, top, Math.max(x0 + 4, x1 + dx), Math.max(top + 4, bottom + dy)],
    );
  });
  panel.addEventListener("pointerup", () => {
    drag = null;
  });
  panel.addEventListener("keydown", (event) => {
    const moves = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    if (moves[event.key] && editedBox()) {
      event.preventDefault();
      const step = event.altKey ? 10 : 2;
      const [dx, dy] = moves[event.key].map((v) => v * step);
      const [x0, top, x1, bottom] = editedBox();
      setEditedBox(event.shiftKey ? [x0, top, x1 + dx, bottom + dy] : [x0 + dx, top + dy, x1 + dx, bottom + dy]);
    } else if (event.key === "n") {
      event.preventDefault();
      startNewBox();
    } else if (event.key === "x" && data.id) {
      event.preventDefault();
      reextract();
    } else if (event.key === "Enter" && newBox) {
      event.preventDefault();
      extractNew();
    } else if (event.key === "Escape" && newBox) {
      newBox = null;
      drawBoxes();
    }
  });
}

function startNewBox() {
  if (!data.page_size) return;
  const [width, height] = data.page_size;
  newBox = clampBox([width * 0.25, height * 0.25, width * 0.75, height * 0.5]);
  drawBoxes();
  panel.focus();
  pageStatus.set("", "New box: move it with the arrows, resize with Shift+arrows, Enter extracts it.");
}

async function extractNew() {
  if (!newBox) return;
  pageStatus.set("", "Extracting the new box…");
  const reply = await api("POST", data.draw, { page: data.page, bbox: newBox, strategy: strategyField.value });
  if (reply.ok) {
    window.location.assign(reply.data.url);
  } else {
    pageStatus.set("error", (reply.data && reply.data.detail) || `The server answered ${reply.status}`);
  }
}

// A page read through OCR: the words OCR read in the box, beside the box's picture.
function showOcr(payload) {
  const text = document.getElementById("ocr-text");
  if (text) text.textContent = payload.ocr_text || "";
  const crop = document.getElementById("ocr-crop");
  if (crop && payload.crop) crop.src = `${payload.crop}?v=${payload.version}`;
}

async function reextract() {
  if (!data.id || !currentBox || data.status !== "pending") return;
  pageStatus.set("", "Extracting the box again…");
  const reply = await api("POST", `${data.api}extract/`, { bbox: currentBox, strategy: strategyField.value });
  if (!reply.ok) {
    pageStatus.set("error", (reply.data && reply.data.detail) || `The server answered ${reply.status}`);
    return;
  }
  editor.replace(reply.data.machine, reply.data.version);
  showOcr(reply.data);
  pageStatus.set("saved", `Extracted again (${reply.data.strategy}); the grid shows the new extraction. Undo brings back your edits.`);
}

document.getElementById("new-box")?.addEventListener("click", startNewBox);
document.getElementById("extract-new")?.addEventListener("click", extractNew);
document.getElementById("reextract")?.addEventListener("click", reextract);

// --- The table editor ------------------------------------------------------------------------

// A grid of anchor cells with spans; every position is covered by exactly one cell. A cell's
// flags say why the extractor was unsure of it; they move with the cell and go when it is
// edited. The title and notes travel with the grid, so undo and drafts keep them too.
class Table {
  constructor(state) {
    this.nRows = state.n_rows;
    this.nCols = state.n_cols;
    this.cells = state.cells.map(([row, col, rowspan, colspan, text]) => ({ row, col, rowspan, colspan, text, flags: [] }));
    this.headerRows = Math.min(state.header_rows ?? 1, this.nRows);
    this.headerCols = Math.min(state.header_columns ?? 1, this.nCols);
    this.title = state.title ?? "";
    this.notes = state.notes ?? "";
    const flagged = new Map((state.flags || []).map(([row, col, flags]) => [`${row},${col}`, flags]));
    for (const cell of this.cells) cell.flags = flagged.get(`${cell.row},${cell.col}`) || [];
    this.fill();
  }

  toState() {
    return {
      n_rows: this.nRows,
      n_cols: this.nCols,
      cells: this.cells.map((c) => [c.row, c.col, c.rowspan, c.colspan, c.text]),
      header_rows: this.headerRows,
      header_columns: this.headerCols,
      title: this.title,
      notes: this.notes,
      flags: this.cells.filter((c) => c.flags.length).map((c) => [c.row, c.col, c.flags]),
    };
  }

  owners() {
    const grid = Array.from({ length: this.nRows }, () => Array(this.nCols).fill(null));
    for (const cell of this.cells) {
      for (let r = cell.row; r < cell.row + cell.rowspan; r++) {
        for (let c = cell.col; c < cell.col + cell.colspan; c++) grid[r][c] = cell;
      }
    }
    return grid;
  }

  // Positions no cell covers become empty cells.
  fill() {
    const grid = this.owners();
    for (let r = 0; r < this.nRows; r++) {
      for (let c = 0; c < this.nCols; c++) {
        if (!grid[r][c]) this.cells.push({ row: r, col: c, rowspan: 1, colspan: 1, text: "", flags: [] });
      }
    }
    this.cells.sort((a, b) => a.row - b.row || a.col - b.col);
  }

  insertRow(at) {
    for (const cell of this.cells) {
      if (cell.row >= at) cell.row += 1;
      else if (cell.row + cell.rowspan > at) cell.rowspan += 1;
    }
    this.nRows += 1;
    if (at < this.headerRows) this.headerRows += 1;
    this.fill();
  }

  insertCol(at) {
    for (const cell of this.cells) {
      if (cell.col >= at) cell.col += 1;
      else if (cell.col + cell.colspan > at) cell.colspan += 1;
    }
    this.nCols += 1;
    if (at < this.headerCols) this.headerCols += 1;
    this.fill();
  }

  deleteRow(at) {
    if (this.nRows <= 1) return false;
    this.cells = this.cells.filter((c) => !(c.row === at && c.rowspan === 1));
    for (const cell of this.cells) {
      if (cell.row > at) cell.row -= 1;
      else if (cell.row + cell.rowspan > at) cell.rowspan -= 1;
    }
    this.nRows -= 1;
    if (at < this.headerRows) this.headerRows -= 1;
    this.fill();
    return true;
  }

  deleteCol(at) {
    if (this.nCols <= 1) return false;
    this.cells = this.cells.filter((c) => !(c.col === at && c.colspan === 1));
    for (const cell of this.cells) {
      if (cell.col > at) cell.col -= 1;
      else if (cell.col + cell.colspan > at) cell.colspan -= 1;
    }
    this.nCols -= 1;
    if (at < this.headerCols) this.headerCols -= 1;
    this.fill();
    return true;
  }

  // The smallest rectangle holding the selection and every cell it touches.
  closed(rect) {
    let [r0, c0, r1, c1] = rect;
    let changed = true;
    while (changed) {
      changed = false;
      for (const cell of this.cells) {
        const inside = cell.row <= r1 && cell.row + cell.rowspan - 1 >= r0 && cell.col <= c1 && cell.col + cell.colspan - 1 >= c0;
        if (!inside) continue;
        const next = [
          Math.min(r0, cell.row),
          Math.min(c0, cell.col),
          Math.max(r1, cell.row + cell.rowspan - 1),
          Math.max(c1, cell.col + cell.colspan - 1),
        ];
        if (next.some((v, i) => v !== [r0, c0, r1, c1][i])) {
          [r0, c0, r1, c1] = next;
          changed = true;
        }
      }
    }
    return [r0, c0, r1, c1];
  }

  merge(rect) {
    const [r0, c0, r1, c1] = this.closed(rect);
    if (r0 === r1 && c0 === c1) return false;
    const inside = (c) => c.row >= r0 && c.row <= r1 && c.col >= c0 && c.col <= c1;
    const text = this.cells.filter(inside).map((c) => c.text.trim()).filter(Boolean).join(" ");
    this.cells = this.cells.filter((c) => !inside(c));
    this.cells.push({ row: r0, col: c0, rowspan: r1 - r0 + 1, colspan: c1 - c0 + 1, text, flags: [] });
    this.fill();
    return true;
  }

  split(cell) {
    if (cell.rowspan === 1 && cell.colspan === 1) return false;
    cell.rowspan = 1;
    cell.colspan = 1;
    this.fill();
    return true;
  }
}

const editorRoot = document.getElementById("editor");
const gridElement = document.getElementById("edit-grid");
const previewElement = document.getElementById("preview");
const previewNote = document.getElementById("preview-note");
const marksElement = document.getElementById("marks");
const problems = document.getElementById("problems");
const titleField = document.getElementById("table-title");
const notesField = document.getElementById("table-notes");
const flagLegend = document.getElementById("flag-legend");
const FLAG_LABELS = data.flag_labels || {};
const conflictBox = document.getElementById("conflict");

// Undo and redo survive a reload on this device: extracting again replaces the grid, and
// "Undo brings back your edits" must still hold after the page is reloaded.
// The copy is capped by size and tied to the candidate's version: a few large documents must
// not fill the device's storage, or no tool could keep a draft there any more.
const HISTORY_KEPT = 50;
const HISTORY_CHARS = 1_000_000;
const HISTORY_PREFIX = "hctqa:ingest-history:";
const WEEK_MS = 7 * 24 * 3600 * 1000;
const history = new LocalDraft(`ingest-history:${data.id}`);

// The newest steps of both stacks that fit under the cap; older ones are dropped.
function historyToKeep(undo, redo, limit = HISTORY_CHARS) {
  const keep = { undo: [], redo: [] };
  let size = 0;
  for (let back = 1; back <= HISTORY_KEPT; back++) {
    for (const [from, to] of [[undo, keep.undo], [redo, keep.redo]]) {
      const step = from[from.length - back];
      if (step === undefined) continue;
      size += JSON.stringify(step).length;
      if (size > limit) return keep;
      to.unshift(step);
    }
  }
  return keep;
}

// Copies left by candidates decided, abandoned or opened long ago do not pile up.
function forgetOldHistory() {
  for (const key of Object.keys(localStorage)) {
    if (!key.startsWith(HISTORY_PREFIX)) continue;
    const stored = new LocalDraft(key.slice("hctqa:".length)).load();
    if (!stored || !(Date.now() - stored.saved_ms < WEEK_MS)) localStorage.removeItem(key);
  }
}

const editor = {
  table: null,
  version: data.version,
  undo: [],
  redo: [],
  at: [0, 0],
  anchor: [0, 0],
  editing: null,

  selection() {
    const [r0, c0] = this.anchor;
    const [r1, c1] = this.at;
    return [Math.min(r0, r1), Math.min(c0, c1), Math.max(r0, r1), Math.max(c0, c1)];
  },

  snapshot() {
    return JSON.stringify(this.table.toState());
  },

  change(action) {
    const before = this.snapshot();
    if (action() === false) return;
    this.step(before);
    this.changed();
  },

  step(before) {
    this.undo.push(before);
    if (this.undo.length > 200) this.undo.shift();
    this.redo = [];
  },

  // Kept on this device and sent as a draft.
  keep() {
    history.save({ version: this.version, saved_ms: Date.now(), ...historyToKeep(this.undo, this.redo) });
    sync.changed();
  },

  changed() {
    this.keep();
    this.render();
    schedulePreview();
  },

  restore(from, to) {
    if (!from.length) return;
    to.push(this.snapshot());
    this.table = new Table(JSON.parse(from.pop()));
    this.at = [Math.min(this.at[0], this.table.nRows - 1), Math.min(this.at[1], this.table.nCols - 1)];
    this.anchor = [...this.at];
    this.changed();
    this.focus();
  },

  replace(state, version) {
    this.undo.push(this.snapshot());
    this.table = new Table(state);
    this.version = version;
    this.at = [0, 0];
    this.anchor = [0, 0];
    sync.local.clear();
    this.changed();
  },

  render() {
    const t = this.table;
    const [r0, c0, r1, c1] = this.selection();
    const rows = Array.from({ length: t.nRows }, () => document.createElement("tr"));
    for (const cell of t.cells) {
      const td = document.createElement("td");
      td.dataset.row = cell.row;
      td.dataset.col = cell.col;
      if (cell.rowspan > 1) td.rowSpan = cell.rowspan;
      if (cell.colspan > 1) td.colSpan = cell.colspan;
      td.tabIndex = cell.row === this.at[0] && cell.col === this.at[1] ? 0 : -1;
      td.setAttribute("role", "gridcell");
      td.textContent = cell.text;
      if (cell.flags.length) {
        const why = cell.flags.map((f) => FLAG_LABELS[f] || f).join("; ");
        td.classList.add("flagged");
        td.title = `Check: ${why}`;
        td.setAttribute("aria-label", `${cell.text} (check: ${why})`);
      }
      const selected = cell.row <= r1 && cell.row + cell.rowspan - 1 >= r0 && cell.col <= c1 && cell.col + cell.colspan - 1 >= c0;
      td.classList.toggle("sel", selected && (r0 !== r1 || c0 !== c1));
      td.classList.toggle("hdr", cell.row < t.headerRows || cell.col < t.headerCols);
      rows[cell.row].append(td);
    }
    gridElement.replaceChildren(...rows);
    const flagged = t.cells.filter((c) => c.flags.length).length;
    marksElement.textContent = `${counted(t.nRows, "row")} × ${counted(t.nCols, "column")} · header rows: ${t.headerRows} · header columns: ${t.headerCols}${flagged ? ` · ${flagged} marked to check` : ""}`;
    if (document.activeElement !== titleField) titleField.value = t.title;
    if (document.activeElement !== notesField) notesField.value = t.notes;
    this.renderLegend();
  },

  // The legend lists the marks the grid has now (the page lists them as extracted).
  renderLegend() {
    if (!flagLegend) return;
    const items = this.table.cells
      .filter((c) => c.flags.length)
      .map((c) => {
        const li = document.createElement("li");
        const text = c.text.length > 60 ? `${c.text.slice(0, 59)}…` : c.text;
        li.textContent = `Row ${c.row + 1}, column ${c.col + 1}${text ? ` (“${text}”)` : ""}: ${c.flags.map((f) => FLAG_LABELS[f] || f).join("; ")}`;
        return li;
      });
    flagLegend.hidden = !items.length;
    flagLegend.querySelector("ul").replaceChildren(...items);
    flagLegend.querySelector("summary").textContent = `${items.length} cell${items.length === 1 ? "" : "s"} to check`;
  },

  owner(row, col) {
    return this.table.owners()[row][col];
  },

  focus() {
    const cell = this.owner(...this.at);
    const td = gridElement.querySelector(`td[data-row="${cell.row}"][data-col="${cell.col}"]`);
    if (td) td.focus();
  },

  move(dr, dc, extend) {
    const t = this.table;
    const cell = this.owner(...this.at);
    let [row, col] = this.at;
    if (dr > 0) row = cell.row + cell.rowspan;
    else if (dr < 0) row = cell.row - 1;
    if (dc > 0) col = cell.col + cell.colspan;
    else if (dc < 0) col = cell.col - 1;
    row = Math.max(0, Math.min(t.nRows - 1, row));
    col = Math.max(0, Math.min(t.nCols - 1, col));
    this.at = [row, col];
    if (!extend) this.anchor = [row, col];
    this.render();
    this.focus();
  },

  startEdit(initial) {
    const cell = this.owner(...this.at);
    const td = gridElement.querySelector(`td[data-row="${cell.row}"][data-col="${cell.col}"]`);
    if (!td) return;
    const input = document.createElement("input");
    input.value = initial ?? cell.text;
    input.setAttribute("aria-label", `Cell at row ${cell.row + 1}, column ${cell.col + 1}`);
    td.replaceChildren(input);
    this.editing = { cell, input };
    input.focus();
    if (initial === undefined) input.select();
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === "Tab") {
        event.preventDefault();
        this.finishEdit(true);
        if (event.key === "Tab") this.move(0, event.shiftKey ? -1 : 1, false);
        else this.move(1, 0, false);
      } else if (event.key === "Escape") {
        event.preventDefault();
        this.finishEdit(false);
        this.focus();
      }
      event.stopPropagation();
    });
    input.addEventListener("blur", () => this.finishEdit(true));
  },

  finishEdit(keep) {
    const editing = this.editing;
    if (!editing) return;
    this.editing = null;
    const value = editing.input.value.replace(/\s+/g, " ").trim();
    if (keep && value !== editing.cell.text) {
      this.change(() => {
        editing.cell.text = value;
        editing.cell.flags = [];
      });
    } else {
      this.render();
    }
  },

  act(name) {
    const t = this.table;
    const [r0, c0, r1, c1] = this.selection();
    const cell = this.owner(...this.at);
    const actions = {
      merge: () => t.merge([r0, c0, r1, c1]),
      split: () => t.split(cell),
      "row-above": () => t.insertRow(r0),
      "row-below": () => t.insertRow(cell.row + cell.rowspan),
      "col-left": () => t.insertCol(c0),
      "col-right": () => t.insertCol(cell.col + cell.colspan),
      "delete-row": () => t.deleteRow(this.at[0]),
      "delete-col": () => t.deleteCol(this.at[1]),
      "header-rows": () => {
        t.headerRows = t.headerRows === this.at[0] + 1 ? this.at[0] : this.at[0] + 1;
      },
      "header-cols": () => {
        t.headerCols = t.headerCols === this.at[1] + 1 ? this.at[1] : this.at[1] + 1;
      },
      clear: () => {
        for (const c of t.cells) {
          if (c.row >= r0 && c.row <= r1 && c.col >= c0 && c.col <= c1) Object.assign(c, { text: "", flags: [] });
        }
      },
    };
    if (name === "undo") return this.restore(this.undo, this.redo);
    if (name === "redo") return this.restore(this.redo, this.undo);
    this.change(actions[name]);
    if (name === "merge") {
      const [mr, mc] = t.closed([r0, c0, r1, c1]);
      this.at = [mr, mc];
    }
    // The cursor goes into a new row or column, ready to type in (or delete again).
    if (name === "row-above") this.at = [r0, this.at[1]];
    if (name === "row-below") this.at = [cell.row + cell.rowspan, this.at[1]];
    if (name === "col-left") this.at = [this.at[0], c0];
    if (name === "col-right") this.at = [this.at[0], cell.col + cell.colspan];
    if (name !== "clear") this.anchor = [...this.at];
    this.at = [Math.min(this.at[0], t.nRows - 1), Math.min(this.at[1], t.nCols - 1)];
    this.anchor = [Math.min(this.anchor[0], t.nRows - 1), Math.min(this.anchor[1], t.nCols - 1)];
    this.render();
    this.focus();
  },
};

const KEYS = {
  m: "merge",
  s: "split",
  h: "header-rows",
  k: "header-cols",
  ArrowUp: "row-above",
  ArrowDown: "row-below",
  ArrowLeft: "col-left",
  ArrowRight: "col-right",
};

function onGridKey(event) {
  if (editor.editing) return;
  const arrows = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
  const ctrl = event.ctrlKey || event.metaKey;
  if (event.altKey && event.key === "Backspace") {
    event.preventDefault();
    editor.act(event.shiftKey ? "delete-col" : "delete-row");
  } else if (event.altKey && KEYS[event.key] !== undefined) {
    event.preventDefault();
    editor.act(KEYS[event.key]);
  } else if (event.altKey && KEYS[event.key.toLowerCase()] !== undefined) {
    event.preventDefault();
    editor.act(KEYS[event.key.toLowerCase()]);
  } else if (ctrl && event.key.toLowerCase() === "z") {
    event.preventDefault();
    editor.act(event.shiftKey ? "redo" : "undo");
  } else if (ctrl && event.key.toLowerCase() === "y") {
    event.preventDefault();
    editor.act("redo");
  } else if (arrows[event.key] && !ctrl) {
    event.preventDefault();
    editor.move(...arrows[event.key], event.shiftKey);
  } else if (event.key === "Enter" || event.key === "F2") {
    if (ctrl) return;
    event.preventDefault();
    editor.startEdit();
  } else if (event.key === "Delete" || event.key === "Backspace") {
    event.preventDefault();
    editor.act("clear");
  } else if (event.key.length === 1 && !ctrl && !event.altKey) {
    event.preventDefault();
    editor.startEdit(event.key);
  }
}

// --- Preview, drafts, accept -----------------------------------------------------------------

let previewTimer = null;
let previewSeq = 0;

function schedulePreview() {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(refreshPreview, 250);
}

async function refreshPreview() {
  const seq = ++previewSeq;
  const state = editor.table.toState();
  const reply = await api("POST", "/api/ingest/preview/", { state });
  if (seq !== previewSeq) return; // edited meanwhile
  if (!reply.ok) {
    previewNote.textContent = (reply.data && reply.data.detail) || "The preview could not be made.";
    return;
  }
  // The server's own rendering (hctqa.core.render.to_html), its text escaped there.
  previewElement.innerHTML = reply.data.html;
  const t = editor.table;
  const read = `${counted(reply.data.header_rows, "header row")} and ${counted(reply.data.header_columns, "header column")}`;
  previewNote.textContent =
    reply.data.header_rows === t.headerRows && reply.data.header_columns === t.headerCols
      ? `The dataset reads it with ${read}, as marked.`
      : `The dataset will read it with ${read}; you marked ${t.headerRows} and ${t.headerCols}. Parents above their leftmost child and row labels in the row of their topmost child are what it reads.`;
}

const status = document.getElementById("save-status") ? new StatusLine(document.getElementById("save-status")) : null;

function showConflict(current) {
  conflictBox.hidden = false;
  conflictBox.replaceChildren();
  const text = document.createElement("p");
  text.textContent =
    current.status === "pending"
      ? "This candidate was extracted again elsewhere since you opened it."
      : `This candidate was ${current.status} by ${current.decided_by} meanwhile${current.table ? ` (${current.table})` : ""}.`;
  const reload = document.createElement("button");
  reload.type = "button";
  reload.textContent = "Load what is saved";
  reload.addEventListener("click", () => window.location.reload());
  conflictBox.append(text, reload);
  status.set("error", "Changed elsewhere meanwhile");
}

const sync = {
  changed() {},
  local: new LocalDraft("unused"),
};

if (editorRoot && data.id && data.status === "pending") {
  const local = new LocalDraft(`ingest:${data.id}`);
  const draftSync = new DraftSync({
    url: data.api,
    status,
    local,
    timer: new ActiveTimer(),
    payload: () => ({ state: editor.table.toState(), base_version: editor.version }),
    onConflict: showConflict,
    onRefused: (detail) => {
      problems.hidden = false;
      problems.textContent = detail;
    },
    onSaved: async (reply) => {
      history.clear();
      status.set("saved", `Accepted as ${reply.table}`);
      window.location.assign(reply.next || reply.table_url);
    },
  });
  sync.changed = () => draftSync.changed();
  sync.local = local;
  editor.table = new Table(data.state);
  const stored = local.load();
  if (stored && stored.base_version === data.version && stored.client_ms > (data.draft_client_ms || 0)) {
    editor.table = new Table(stored.state);
    status.set("unsaved", "Restored your unsaved changes from this device");
    draftSync.restored();
  } else if (data.has_draft) {
    status.set("unsaved", "Your unsaved draft was restored");
  }
  const kept = history.load();
  if (kept && kept.version === data.version) Object.assign(editor, { undo: kept.undo || [], redo: kept.redo || [] });
  else history.clear(); // another version (extracted again elsewhere): its steps are not this grid's
  editorRoot.hidden = false;
  editor.render();
  editor.focus(); // keyboard first: the arrows work as soon as the page opens
  refreshPreview();
  gridElement.addEventListener("keydown", onGridKey);
  gridElement.addEventListener("click", (event) => {
    const td = event.target.closest("td[data-row]");
    if (!td || editor.editing) return;
    editor.at = [Number(td.dataset.row), Number(td.dataset.col)];
    if (!event.shiftKey) editor.anchor = [...editor.at];
    editor.render();
    editor.focus();
  });
  gridElement.addEventListener("dblclick", () => editor.startEdit());
  // Typing in the title or notes is one undo step from focus to leaving the field; each key
  // is kept as a draft like a grid edit.
  for (const [field, key] of [[titleField, "title"], [notesField, "notes"]]) {
    let before = null;
    field.addEventListener("focus", () => {
      before = editor.snapshot();
    });
    field.addEventListener("input", () => {
      if (before !== null) editor.step(before);
      before = null;
      editor.table[key] = field.value;
      editor.keep();
    });
  }
  for (const button of editorRoot.querySelectorAll("[data-action]")) {
    button.addEventListener("click", () => editor.act(button.dataset.action));
  }
  const accept = () => {
    editor.finishEdit(true);
    problems.hidden = true;
    draftSync.save();
  };
  document.getElementById("accept").addEventListener("click", accept);
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      event.preventDefault();
      accept();
    }
  });
}

// Decided (accepted or rejected, here or elsewhere): its undo steps are of no use any more.
if (data.id && data.status !== "pending") history.clear();
document.querySelector(`form[action$="/reject/"]`)?.addEventListener("submit", () => history.clear());
forgetOldHistory();
