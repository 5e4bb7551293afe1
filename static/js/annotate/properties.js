// The table-property tool: a checklist that keeps itself consistent, one key per property,
// drafts kept on this device at once and on the server within a second.
import {
  ActiveTimer,
  DraftSync,
  LocalDraft,
  Rules,
  StatusLine,
  api,
  isTyping,
  prefetchNext,
  renderList,
  setupDefinitions,
  setupZoom,
} from "./common.js";

const taxonomy = JSON.parse(document.getElementById("taxonomy").textContent);
const state = JSON.parse(document.getElementById("annotation-state").textContent);
const rules = new Rules(taxonomy);
const form = document.getElementById("annotation-form");
const status = new StatusLine(document.getElementById("save-status"));
const notesList = document.getElementById("notes");
const violationsList = document.getElementById("violations");
const conflictBox = document.getElementById("conflict");
const local = new LocalDraft(`properties:${state.user}:${state.table}`);
const goToNext = prefetchNext("properties", state.table);
const zoom = setupZoom(document.querySelector(".annotate-table"));
setupDefinitions(document.getElementById("show-definitions"), form);

let values = { ...rules.empty(), ...state.properties };
let version = state.version;

const sync = new DraftSync({
  url: state.api,
  status,
  local,
  timer: new ActiveTimer(),
  payload: () => ({ properties: values, base_version: version }),
  onConflict: showConflict,
  onRefused: (detail) => renderList(violationsList, [detail]),
  onSaved: async (data) => {
    version = data.version;
    status.set("saved", `Saved (version ${version})`);
    await goToNext();
  },
});

// A copy on this device wins when it is newer than what the server kept for this version.
const stored = local.load();
if (stored && stored.base_version === version && stored.client_ms > (state.draft_client_ms || 0)) {
  values = { ...rules.empty(), ...stored.properties };
  status.set("unsaved", "Restored your unsaved changes from this device");
  sync.restored();
}
render();

function render() {
  for (const box of form.querySelectorAll("input[type=checkbox][data-code]")) {
    box.checked = values[box.dataset.code] === true;
    box.closest(".pnode").classList.toggle("on", box.checked);
  }
  renderList(violationsList, rules.check(values));
}

function change(code, value) {
  const result = rules.apply(values, code, value);
  values = result.values;
  renderList(notesList, result.notes);
  render();
  sync.changed();
}

function showConflict(current) {
  conflictBox.hidden = false;
  conflictBox.replaceChildren();
  const text = document.createElement("p");
  text.textContent = `This table's annotation was saved in another tab or window (version ${current.version}).`;
  const useSaved = document.createElement("button");
  useSaved.type = "button";
  useSaved.textContent = "Use the saved one";
  useSaved.addEventListener("click", () => {
    values = { ...rules.empty(), ...current.properties };
    version = current.version;
    sync.unsent = false;
    local.clear();
    conflictBox.hidden = true;
    render();
    status.set("saved", `Saved (version ${version})`);
  });
  const keepMine = document.createElement("button");
  keepMine.type = "button";
  keepMine.className = "secondary";
  keepMine.textContent = "Keep mine";
  keepMine.addEventListener("click", () => {
    version = current.version;
    conflictBox.hidden = true;
    sync.changed();
  });
  conflictBox.append(text, useSaved, keepMine);
  status.set("error", "Saved elsewhere meanwhile");
}

function save() {
  const problems = rules.check(values);
  if (!rules.anySet(values)) {
    problems.push("Choose at least one property (Standard relational table when none of the others applies).");
  }
  if (problems.length) {
    renderList(violationsList, problems);
    status.set("error", "Not saved: see what is missing");
    return;
  }
  sync.save();
}

async function skip() {
  const reply = await api("POST", `${state.api}skip/`);
  if (reply.ok) window.location.assign(reply.data.next ? reply.data.next.url : "/annotate/");
  else sync.failed(reply);
}

form.addEventListener("change", (event) => {
  const box = event.target;
  if (box instanceof HTMLInputElement && box.type === "checkbox" && box.dataset.code) {
    change(box.dataset.code, box.checked);
  }
});
form.addEventListener("submit", (event) => {
  event.preventDefault();
  save();
});
document.getElementById("skip").addEventListener("click", skip);
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event)) return;
  if (event.key === "Enter") {
    event.preventDefault();
    save();
  } else if (event.key === "s") {
    event.preventDefault();
    skip();
  } else if (event.key === "+" || event.key === "=") {
    zoom(1);
  } else if (event.key === "-") {
    zoom(-1);
  } else if (rules.byKey[event.key]) {
    event.preventDefault();
    const code = rules.byKey[event.key];
    change(code, values[code] !== true);
  }
});
