// Shared by the annotation tools: the consistency rules (read from the taxonomy the server
// sends, the same data hctqa/core/taxonomy.py defines), the API helper, active-time
// tracking, drafts kept on this device, zoom and the status line.

export class Rules {
  constructor(taxonomy) {
    this.tax = taxonomy;
    this.byCode = Object.fromEntries(taxonomy.properties.map((p) => [p.code, p]));
    this.byKey = Object.fromEntries(
      taxonomy.properties.filter((p) => p.key).map((p) => [p.key, p.code]),
    );
  }

  label(code) {
    return this.byCode[code].label;
  }

  children(code) {
    return this.tax.properties.filter((p) => p.parent === code);
  }

  descendants(code) {
    return this.children(code).flatMap((c) => [c, ...this.descendants(c.code)]);
  }

  empty() {
    return Object.fromEntries(
      this.tax.properties.map((p) => [p.code, p.kind === "flag" ? false : null]),
    );
  }

  // Mirrors taxonomy.apply_change: returns {values, notes}.
  apply(current, code, value) {
    const prop = this.byCode[code];
    const values = { ...this.empty(), ...current };
    const notes = [];
    let turningOn;
    if (prop.kind === "count") {
      const number = value === "" || value === null || value === undefined ? null : Number(value);
      values[code] = Number.isFinite(number) && number >= 0 ? Math.floor(number) : null;
      turningOn = values[code] !== null;
    } else {
      values[code] = Boolean(value);
      turningOn = values[code];
    }
    if (!turningOn) {
      const cleared = this.descendants(code).filter(
        (d) => values[d.code] !== false && values[d.code] !== null,
      );
      for (const d of this.descendants(code)) values[d.code] = d.kind === "flag" ? false : null;
      if (cleared.length) {
        const verb = cleared.length === 1 ? "it is" : "they are";
        notes.push(`Cleared ${cleared.map((d) => d.label).join(", ")}: ${verb} part of ${prop.label}.`);
      }
      return { values, notes };
    }
    if (this.tax.exclusive.includes(code)) {
      const others = this.tax.properties.filter(
        (p) => p.code !== code && values[p.code] !== false && values[p.code] !== null,
      );
      for (const p of others) values[p.code] = p.kind === "flag" ? false : null;
      if (others.length) notes.push(`${prop.label} excludes every other property: cleared the others.`);
      return { values, notes };
    }
    for (const exclusive of this.tax.exclusive) {
      if (values[exclusive] === true) {
        values[exclusive] = false;
        notes.push(`Cleared ${this.label(exclusive)}: it excludes every other property.`);
      }
    }
    let parent = prop.parent;
    while (parent) {
      if (values[parent] !== true) {
        values[parent] = true;
        notes.push(`Selected ${this.label(parent)}: ${prop.label} is part of it.`);
      }
      parent = this.byCode[parent].parent;
    }
    if (prop.kind === "flag") {
      for (const group of this.tax.groups) {
        if (!group.members.includes(code) || !["one", "at_most_one"].includes(group.rule)) continue;
        for (const sibling of group.members) {
          if (sibling !== code && values[sibling] === true) {
            values[sibling] = false;
            notes.push(`Cleared ${this.label(sibling)}: it excludes ${prop.label}.`);
          }
        }
      }
    }
    return { values, notes };
  }

  // Mirrors taxonomy.check: what still has to be chosen or is contradictory.
  check(values) {
    const on = new Set(Object.keys(values).filter((k) => values[k] === true));
    const problems = [];
    for (const prop of this.tax.properties) {
      if (!prop.parent) continue;
      const set = prop.kind === "flag" ? on.has(prop.code) : values[prop.code] !== null && values[prop.code] !== undefined && values[prop.code] !== false && values[prop.code] !== "";
      if (set && !on.has(prop.parent)) {
        problems.push(`${prop.label} is part of ${this.label(prop.parent)}, which is not set.`);
      }
    }
    for (const group of this.tax.groups) {
      if (!on.has(group.parent)) continue;
      const chosen = group.members.filter((m) => on.has(m));
      const parent = this.label(group.parent);
      const names = group.members.map((m) => this.label(m)).join(" or ");
      if (group.rule === "one" && chosen.length !== 1) {
        problems.push(
          chosen.length
            ? `${parent}: choose only one of ${names}.`
            : `${parent}: choose ${names} (${group.label.toLowerCase()}).`,
        );
      } else if (group.rule === "some" && !chosen.length) {
        problems.push(`${parent} needs at least one of ${names}.`);
      } else if (group.rule === "at_most_one" && chosen.length > 1) {
        problems.push(`${parent}: choose only one of ${names}.`);
      }
    }
    for (const code of this.tax.exclusive) {
      if (on.has(code) && on.size > 1) problems.push(`${this.label(code)} excludes every other property.`);
    }
    return problems;
  }

  anySet(values) {
    return Object.values(values).some((v) => v === true);
  }
}

/** "1 row", "2 rows": a count with the right noun form (hctqa.core.wording.counted). */
export function counted(n, singular, plural = `${singular}s`) {
  return `${n.toLocaleString("en")} ${n === 1 ? singular : plural}`;
}

export function csrfToken() {
  // Read at each request: logging in again in another tab rotates the token.
  const match = document.cookie.match(/(?:^|; )csrftoken=([^;]*)/);
  return match ? decodeURIComponent(match[1]) : "";
}

// Resolves to {ok, status, data}; status 0 means the network failed.
export async function api(method, url, body) {
  try {
    const response = await fetch(url, {
      method,
      credentials: "same-origin",
      headers: {
        Accept: "application/json",
        "Content-Type": "application/json",
        "X-CSRFToken": csrfToken(),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = null;
    try {
      data = await response.json();
    } catch {
      data = null;
    }
    return { ok: response.ok, status: response.status, data };
  } catch {
    return { ok: false, status: 0, data: null };
  }
}

// Time spent working: counts while the page is visible and the annotator acted in the
// last minute, so a forgotten tab does not count.
export class ActiveTimer {
  constructor() {
    this.pending = 0;
    this.last = performance.now();
    this.lastAction = this.last;
    const mark = () => {
      this.tick();
      this.lastAction = performance.now();
    };
    for (const event of ["keydown", "pointerdown", "input", "scroll"]) {
      document.addEventListener(event, mark, { passive: true, capture: true });
    }
    document.addEventListener("visibilitychange", () => this.tick());
  }

  tick() {
    const now = performance.now();
    if (document.visibilityState === "visible" && now - this.lastAction < 60_000) {
      this.pending += now - this.last;
    }
    this.last = now;
  }

  take() {
    this.tick();
    const ms = Math.round(this.pending);
    this.pending = 0;
    return ms;
  }

  giveBack(ms) {
    this.pending += ms;
  }
}

// A copy of the work on this device, written at every change: a closed tab, a lost
// connection or an expired session cannot lose it.
export class LocalDraft {
  constructor(key) {
    this.key = `hctqa:${key}`;
  }

  load() {
    try {
      return JSON.parse(localStorage.getItem(this.key) || "null");
    } catch {
      return null;
    }
  }

  save(value) {
    try {
      localStorage.setItem(this.key, JSON.stringify(value));
    } catch {
      // Storage full or disabled: the server copy still works.
    }
  }

  clear() {
    localStorage.removeItem(this.key);
  }
}

export class StatusLine {
  constructor(element) {
    this.element = element;
  }

  set(kind, text) {
    this.element.className = `save-status ${kind}`;
    this.element.textContent = text;
  }
}

export function setupZoom(root) {
  const target = root.querySelector(".zoom-target");
  const output = root.querySelector(".zoom-level");
  if (!target) return () => {};
  let scale = Number(localStorage.getItem("hctqa:zoom") || "1");
  const apply = () => {
    target.style.transform = `scale(${scale})`;
    target.style.width = scale < 1 ? `${100 / scale}%` : "";
    if (output) output.textContent = `${Math.round(scale * 100)}%`;
    localStorage.setItem("hctqa:zoom", String(scale));
  };
  const zoom = (step) => {
    scale = step === 0 ? 1 : Math.min(3, Math.max(0.4, Math.round((scale + step * 0.1) * 10) / 10));
    apply();
  };
  for (const button of root.querySelectorAll("[data-zoom]")) {
    button.addEventListener("click", () => zoom(Number(button.dataset.zoom)));
  }
  apply();
  return zoom;
}

export function isTyping(event) {
  const target = event.target;
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName)) &&
    !(target instanceof HTMLInputElement && ["checkbox", "radio"].includes(target.type))
  );
}

// A text box that grows with its text (where CSS field-sizing is not supported).
export function autoGrow(textarea) {
  if (!textarea || CSS.supports("field-sizing", "content")) return;
  const fit = () => {
    textarea.style.height = "auto";
    textarea.style.height = `${textarea.scrollHeight + 2}px`;
  };
  textarea.addEventListener("input", fit);
  fit();
}

// How many header levels name a body cell's column: the non-empty column-header cells above
// it (a header merged over two rows counts once). 0 for a header cell itself.
export function columnDepth(cell) {
  const table = cell.closest("table.hct");
  if (!table || cell.tagName !== "TD" || cell.dataset.col === undefined) return 0;
  const col = Number(cell.dataset.col);
  let depth = 0;
  for (const th of table.querySelectorAll("thead th[data-col]")) {
    if (th.classList.contains("hct-corner") || !th.textContent.trim()) continue;
    const start = Number(th.dataset.col);
    if (start <= col && col < start + (Number(th.getAttribute("colspan")) || 1)) depth += 1;
  }
  return depth;
}

export function setupDefinitions(toggle, container) {
  const stored = localStorage.getItem("hctqa:definitions");
  toggle.checked = stored !== "off";
  const apply = () => {
    container.classList.toggle("hide-definitions", !toggle.checked);
    localStorage.setItem("hctqa:definitions", toggle.checked ? "on" : "off");
  };
  toggle.addEventListener("change", apply);
  apply();
}

export function renderList(element, items) {
  element.replaceChildren(
    ...items.map((text) => {
      const li = document.createElement("li");
      li.textContent = text;
      return li;
    }),
  );
}

// 2 s after the first failure, then doubling, at most a minute apart.
export function backoff(failures) {
  return Math.min(60_000, 1000 * 2 ** Math.min(failures, 6));
}

// Drafts and saves for one piece of work. Every change is written to this device at once and
// sent to the server as a draft within a moment; a save asked for while offline or logged out
// is retried until it goes through. The tool says what to send and what to do with conflicts.
export class DraftSync {
  constructor({ url, status, local, timer, payload, onConflict, onRefused, onSaved }) {
    Object.assign(this, { url, status, local, timer, payload, onConflict, onRefused, onSaved });
    this.unsent = false;
    this.saving = false;
    this.saveWanted = false;
    this.draftTimer = null;
    this.retryTimer = null;
    this.failures = 0;
    window.addEventListener("online", () => this.flush());
    window.addEventListener("pagehide", () => {
      if (this.unsent) this.remember();
    });
  }

  remember() {
    this.local.save({ ...this.payload(), client_ms: Date.now() });
  }

  changed() {
    this.remember();
    this.unsent = true;
    this.status.set("unsaved", "Unsaved changes");
    this.schedule(600);
  }

  restored() {
    this.unsent = true;
    this.schedule(0);
  }

  schedule(delay) {
    clearTimeout(this.draftTimer);
    this.draftTimer = setTimeout(() => this.sendDraft(), delay);
  }

  flush() {
    return this.saveWanted ? this.save() : this.sendDraft();
  }

  async sendDraft() {
    if (!this.unsent || this.saving) return;
    const elapsed = this.timer.take();
    const sent = Date.now();
    const reply = await api("PUT", `${this.url}draft/`, { ...this.payload(), client_ms: sent, elapsed_ms: elapsed });
    if (reply.ok) {
      this.failures = 0;
      if ((this.local.load() || {}).client_ms <= sent) this.unsent = false;
      this.status.set("", "Draft kept");
      return;
    }
    this.timer.giveBack(elapsed);
    this.failed(reply);
  }

  async save() {
    if (this.saving) return;
    this.saving = true;
    this.saveWanted = true;
    clearTimeout(this.draftTimer);
    this.status.set("", "Saving…");
    const elapsed = this.timer.take();
    const reply = await api("POST", `${this.url}save/`, { ...this.payload(), elapsed_ms: elapsed });
    this.saving = false;
    if (reply.ok) {
      this.failures = 0;
      this.saveWanted = false;
      this.unsent = false;
      this.local.clear();
      await this.onSaved(reply.data);
      return;
    }
    this.timer.giveBack(elapsed);
    if (reply.status === 400 || reply.status === 409) this.saveWanted = false;
    if (reply.status === 400) {
      this.onRefused(reply.data.detail, reply.data);
      this.status.set("error", "Not saved");
      return;
    }
    this.failed(reply);
  }

  failed(reply) {
    this.failures += 1;
    if (reply.status === 409) {
      this.onConflict(reply.data.current);
    } else if (reply.status === 0) {
      this.status.set("offline", "Offline: your work is kept on this device and will be sent");
      this.retry(5000);
    } else if (reply.status === 401 || reply.status === 403) {
      this.status.set("error", "Your session has ended: log in again in another tab; your work is kept on this device");
      this.retry(10000);
    } else if (reply.status >= 500 || reply.status === 429) {
      // A deploy restarting or a passing fault: keep trying, each time a little later.
      this.status.set("error", `The server answered ${reply.status}: your work is kept on this device and will be sent again`);
      this.retry(backoff(this.failures));
    } else {
      this.status.set("error", (reply.data && reply.data.detail) || `The server answered ${reply.status}`);
    }
  }

  retry(delay) {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.flush(), delay);
  }
}

// The next table, asked for as soon as a tool opens, so a save moves on without waiting.
export function prefetchNext(tool, table) {
  const next = api("GET", `/api/annotate/${tool}/next/?after=${encodeURIComponent(table)}`);
  return async () => {
    const reply = await next;
    window.location.assign(reply.ok && reply.data ? reply.data.url : "/annotate/");
  };
}

// The gold-answer editor, shared by the query tool and the verification page: the format is
// checked against the server's rules as it is typed, and clicking a table cell adds its value
// to the answer's last row (Shift-click starts a new row).
export class AnswerEditor {
  constructor({ field, message, table, onChange, onCell }) {
    Object.assign(this, { field, message, onChange, onCell });
    this.ok = null; // null: not checked yet
    this.timer = null;
    this.clicked = []; // cells clicked into the answer, highlighted while it holds their values
    field.addEventListener("input", () => {
      this.onChange();
      this.highlight();
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.check(), 250);
    });
    if (table) {
      table.addEventListener("click", (event) => {
        const cell = event.target.closest("td, th");
        if (!cell || !cell.closest("table.hct")) return;
        if (!this.clicked.includes(cell)) this.clicked.push(cell);
        this.insertCell(cell.textContent, event.shiftKey);
        if (this.onCell) this.onCell(this.heldCells());
      });
    }
  }

  // The values in the answer: what sits between braces and bars.
  values() {
    return new Set(
      this.field.value
        .split(/\|\||[{}|]/)
        .map((v) => v.replace(/\s+/g, " ").trim())
        .filter(Boolean),
    );
  }

  heldCells() {
    const values = this.values();
    return this.clicked.filter((cell) => values.has(cell.textContent.replace(/\s+/g, " ").trim()));
  }

  highlight() {
    const held = new Set(this.heldCells());
    for (const cell of this.clicked) cell.classList.toggle("in-answer", held.has(cell));
    this.clicked = this.clicked.filter((cell) => held.has(cell));
  }

  async check() {
    const answer = this.field.value;
    if (!answer.trim()) {
      this.ok = null;
      this.message.className = "answer-check";
      this.message.textContent = "";
      return;
    }
    const reply = await api("POST", "/api/annotate/answers/check/", { answer });
    if (answer !== this.field.value) return; // typed on meanwhile
    if (reply.ok) {
      this.ok = true;
      this.message.className = "answer-check good";
      this.message.textContent =
        reply.data.canonical === answer.trim() ? "Format OK" : `Will be saved as ${reply.data.canonical}`;
    } else if (reply.status === 400) {
      this.ok = false;
      this.message.className = "answer-check bad";
      this.message.textContent = reply.data.detail;
    }
  }

  insertCell(text, newRow) {
    const value = text.replace(/\s+/g, " ").trim();
    if (!value) return;
    const current = this.field.value.trim();
    if (!current || ["yes", "no"].includes(current.toLowerCase())) {
      this.field.value = `{${value}}`;
    } else if (newRow || !current.endsWith("}")) {
      this.field.value = `${current} || {${value}}`;
    } else {
      this.field.value = `${current.slice(0, -1)} | ${value}}`;
    }
    this.onChange();
    this.highlight();
    this.check();
  }

  // What is wrong with the answer, or null when it can be sent.
  problem(emptyMessage) {
    if (!this.field.value.trim()) return emptyMessage;
    if (this.ok === false) return `The answer: ${this.message.textContent}`;
    return null;
  }
}
