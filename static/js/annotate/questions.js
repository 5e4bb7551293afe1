// The query tool: question, gold answer checked as it is typed, query properties that keep
// themselves consistent, templates, cell clicks into the answer, drafts kept as you go.
import {
  ActiveTimer,
  AnswerEditor,
  DraftSync,
  LocalDraft,
  Rules,
  StatusLine,
  api,
  columnDepth,
  isTyping,
  prefetchNext,
  renderList,
  setupDefinitions,
  setupZoom,
} from "./common.js";

const taxonomy = JSON.parse(document.getElementById("taxonomy").textContent);
const templates = JSON.parse(document.getElementById("templates").textContent);
const state = JSON.parse(document.getElementById("question-state").textContent);
const rules = new Rules(taxonomy);
const form = document.getElementById("question-form");
const textField = document.getElementById("text");
const answerField = document.getElementById("gold_answer");
const templateField = document.getElementById("template");
const answerCheck = document.getElementById("answer-check");
const status = new StatusLine(document.getElementById("save-status"));
const notesList = document.getElementById("notes");
const violationsList = document.getElementById("violations");
const conflictBox = document.getElementById("conflict");
const local = new LocalDraft(`questions:${state.user}:${state.table}`);
const duplicateBox = document.getElementById("near-duplicate");
const duplicateText = document.getElementById("near-duplicate-text");
const confirmField = document.getElementById("confirm_near_duplicate");
const goToNext = prefetchNext("questions", state.table);
const zoom = setupZoom(document.querySelector(".annotate-table"));
setupDefinitions(document.getElementById("show-definitions"), form);

let clientKey = form.elements.client_key.value;
let values = { ...rules.empty(), ...((state.draft && state.draft.query_properties) || {}) };

const sync = new DraftSync({
  url: state.api,
  status,
  local,
  timer: new ActiveTimer(),
  payload: () => ({
    client_key: clientKey,
    text: textField.value,
    gold_answer: answerField.value,
    template: templateField.value,
    query_properties: values,
    confirm_near_duplicate: confirmField.value === "1",
  }),
  onConflict: (current) => showSavedElsewhere(current.question_id),
  onRefused: (detail, data) => {
    if (data && data.field === "near_duplicate") {
      // Warned once: the next save keeps it, unless the question is reworded meanwhile.
      duplicateText.textContent = `${detail.charAt(0).toUpperCase()}${detail.slice(1)}.`;
      duplicateBox.hidden = false;
      confirmField.value = "1";
      status.set("error", "Not saved: it looks like an existing question");
      return;
    }
    renderList(violationsList, [detail]);
  },
  onSaved: async (data) => {
    status.set("saved", `Saved as ${data.question.id}`);
    await goToNext();
  },
});

const answer = new AnswerEditor({
  field: answerField,
  message: answerCheck,
  table: document.querySelector(".annotate-table"),
  onChange: () => sync.changed(),
  onCell: () => fitDepth(),
});

// A returned column's depth is how many header levels name it: the deepest of the clicked
// cells the answer holds, not the template's default of 1.
function fitDepth() {
  if (values.returned_columns !== true) return;
  const depth = Math.max(0, ...answer.heldCells().map(columnDepth));
  if (depth > 0 && values.returned_columns_max_depth !== depth) {
    values = rules.apply(values, "returned_columns_max_depth", depth).values;
    renderList(notesList, [`Returned columns' depth set to ${depth}: the clicked cell sits under ${depth} header level${depth === 1 ? "" : "s"}.`]);
    render();
  }
}

const stored = local.load();
if (stored && stored.client_ms > ((state.draft && state.draft.client_ms) || 0)) {
  clientKey = stored.client_key;
  textField.value = stored.text;
  answerField.value = stored.gold_answer;
  templateField.value = stored.template;
  values = { ...rules.empty(), ...stored.query_properties };
  status.set("unsaved", "Restored your unsaved question from this device");
  sync.restored();
}
render();
showExample();
if (answerField.value) answer.check();
textField.focus();

function render() {
  for (const input of form.querySelectorAll("[data-code]")) {
    const code = input.dataset.code;
    if (input.type === "checkbox") {
      input.checked = values[code] === true;
      input.closest(".pnode").classList.toggle("on", input.checked);
    } else if (document.activeElement !== input) {
      input.value = values[code] === null || values[code] === undefined ? "" : values[code];
    }
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

function showSavedElsewhere(questionId) {
  sync.unsent = false;
  local.clear();
  conflictBox.hidden = false;
  conflictBox.replaceChildren();
  const text = document.createElement("p");
  text.textContent = `This question was already saved as ${questionId} (in another tab or window).`;
  const fresh = document.createElement("button");
  fresh.type = "button";
  fresh.textContent = "Write another question";
  fresh.addEventListener("click", () => window.location.reload());
  conflictBox.append(text, fresh);
  status.set("error", "Already saved");
}

function showExample() {
  const option = templateField.selectedOptions[0];
  document.getElementById("template-example").textContent =
    option && option.dataset.example ? `e.g. ${option.dataset.example}` : "";
}

function save() {
  const problems = [];
  if (!textField.value.trim()) problems.push("Write the question.");
  const answerProblem = answer.problem("Give the gold answer.");
  if (answerProblem) problems.push(answerProblem);
  problems.push(...rules.check(values));
  if (!rules.anySet(values)) problems.push("Choose at least one query property.");
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
  const input = event.target;
  if (input instanceof HTMLInputElement && input.dataset.code) {
    change(input.dataset.code, input.type === "checkbox" ? input.checked : input.value);
  }
});
form.addEventListener("input", (event) => {
  if (event.target === textField) {
    if (confirmField.value === "1") {
      confirmField.value = "";
      duplicateBox.hidden = true;
    }
    sync.changed();
  }
});
templateField.addEventListener("change", () => {
  showExample();
  if (templateField.value && templates[templateField.value]) {
    values = { ...rules.empty(), ...templates[templateField.value] };
    renderList(notesList, [`Query properties filled from the template “${templateField.selectedOptions[0].textContent}”.`]);
    render();
    fitDepth();
  }
  sync.changed();
});
form.addEventListener("submit", (event) => {
  event.preventDefault();
  save();
});
document.getElementById("skip").addEventListener("click", skip);
document.addEventListener("keydown", (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
    event.preventDefault();
    save();
    return;
  }
  if (isTyping(event)) {
    if (event.key === "Escape") event.target.blur();
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const jumps = { q: textField, w: answerField };
  if (event.key === "Enter") {
    event.preventDefault();
    save();
  } else if (event.key === "s") {
    event.preventDefault();
    skip();
  } else if (jumps[event.key]) {
    event.preventDefault();
    jumps[event.key].focus();
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
