// The adjudication page: the verify page's keys (g/a/n, y/w, Enter, Ctrl+Enter, zoom), the
// answer checked as it is typed and filled by cell clicks, and a refusal that says what is
// missing instead of a silent Enter. The form still posts as a plain form.
import { AnswerEditor, autoGrow, isTyping, renderList, setupZoom } from "./common.js";

const form = document.getElementById("adjudicate-form");
const answerField = document.getElementById("answer");
const textField = document.getElementById("text");
const violations = document.getElementById("violations");
const proposed = document.getElementById("proposed-answer").textContent;
const zoom = setupZoom(document.querySelector(".annotate-table"));
autoGrow(textField);

const answer = new AnswerEditor({
  field: answerField,
  message: document.getElementById("answer-check"),
  table: document.querySelector(".annotate-table"),
  onChange: () => touched(),
});
if (answerField.value) answer.check();

// Changes made by keys and clicks, not typing: form-draft.js keeps them on this device too.
function touched() {
  form.dispatchEvent(new Event("input"));
}

function rating() {
  return (form.querySelector("input[name=rating]:checked") || {}).value || "";
}

function choose(value) {
  const input = form.querySelector(`input[name=rating][value=${value}]`);
  if (input) input.checked = true;
  renderList(violations, []);
  touched();
}

function problems() {
  const found = [];
  const chosen = rating();
  if (!chosen) found.push("Choose a decision first: Good (g), Ambiguous (a) or Nonsensical (n).");
  if (chosen && chosen !== "nonsensical") {
    const problem = answer.problem("Give the gold answer (y keeps the proposed one).");
    if (problem) found.push(problem);
  }
  if (chosen === "ambiguous" && !textField.value.trim()) {
    found.push("Write the question as it should read, so only one reading remains.");
  }
  return found;
}

function decide() {
  const found = problems();
  renderList(violations, found);
  if (found.length) {
    const first = form.querySelector("input[name=rating]");
    if (!rating() && first) first.focus();
    return;
  }
  form.submit();
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  decide();
});
form.addEventListener("change", () => renderList(violations, []));

document.addEventListener("keydown", (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
    event.preventDefault();
    decide();
    return;
  }
  if (isTyping(event)) {
    if (event.key === "Escape") event.target.blur();
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const ratings = { g: "good", a: "ambiguous", n: "nonsensical" };
  if (ratings[event.key]) {
    event.preventDefault();
    choose(ratings[event.key]);
    if (event.key === "a") textField.focus();
  } else if (event.key === "y") {
    event.preventDefault();
    answerField.value = proposed;
    touched();
    answer.check();
  } else if (event.key === "w") {
    event.preventDefault();
    answerField.focus();
    answerField.select();
  } else if (event.key === "Enter") {
    event.preventDefault();
    decide();
  } else if (event.key === "+" || event.key === "=") {
    zoom(1);
  } else if (event.key === "-") {
    zoom(-1);
  }
});
