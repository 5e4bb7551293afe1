// The verification page: a rating, the answer checked or corrected with the query tool's answer
// editor, a rewrite for ambiguous questions. The lease is renewed while the page is open, the
// verdict is kept on this device until the server has it, and a submit brings the next slot.
import {
  ActiveTimer,
  AnswerEditor,
  LocalDraft,
  StatusLine,
  api,
  autoGrow,
  backoff,
  isTyping,
  renderList,
  setupZoom,
} from "./common.js";

const state = JSON.parse(document.getElementById("verify-state").textContent);
const form = document.getElementById("verify-form");
const status = new StatusLine(document.getElementById("save-status"));
const violations = document.getElementById("violations");
const conflictBox = document.getElementById("conflict");
const rewriteField = document.getElementById("rewritten_question");
const correctionField = document.getElementById("corrected_answer");
const local = new LocalDraft(`verify:${state.user}:${state.slot}`);
const timer = new ActiveTimer();
const zoom = setupZoom(document.querySelector(".annotate-table"));
autoGrow(rewriteField);
const RENEW_EVERY_MS = 60_000;
// The lease is kept while the page is open, hidden or not, so looking something up in another
// tab loses nothing; a page nobody has touched for this long lets its question go.
const IDLE_LIMIT_MS = 30 * 60_000;
let lastActivity = Date.now();
let lost = false;
let sending = false;
let failures = 0; // sends in a row the server refused with a fault of its own
let retry = null; // the one pending resend: a manual send during a backoff replaces it

function retryIn(ms) {
  clearTimeout(retry);
  retry = setTimeout(submit, ms);
}

const answer = new AnswerEditor({
  field: correctionField,
  message: document.getElementById("answer-check"),
  table: document.querySelector(".annotate-table"),
  // A clicked cell means the proposed answer is being corrected.
  onChange: () => (correctionField.value.trim() ? choose("answer_correct", "no") : remember()),
});

function current() {
  return {
    rating: (form.querySelector("input[name=rating]:checked") || {}).value || "",
    answer_correct: (form.querySelector("input[name=answer_correct]:checked") || {}).value || "",
    corrected_answer: correctionField.value,
    rewritten_question: rewriteField.value,
  };
}

function remember() {
  local.save(current());
  layout();
}

function choose(name, value) {
  const input = form.querySelector(`input[name=${name}][value=${value}]`);
  if (!input) return;
  input.checked = true;
  remember();
}

// Show only what the chosen rating asks for.
function layout() {
  const { rating, answer_correct: right } = current();
  document.getElementById("rewrite-field").hidden = rating !== "ambiguous";
  document.getElementById("answer-choice").hidden = rating === "nonsensical";
  document.getElementById("correction-field").hidden = rating === "nonsensical" || right !== "no";
}

function problems() {
  const verdict = current();
  const found = [];
  if (!verdict.rating) found.push("Rate the question: Good (g), Ambiguous (a) or Nonsensical (n).");
  if (verdict.rating === "ambiguous" && !verdict.rewritten_question.trim()) {
    found.push("Rewrite the ambiguous question so only one reading remains.");
  }
  if (verdict.rating && verdict.rating !== "nonsensical") {
    if (!verdict.answer_correct) found.push("Say whether the proposed answer is right (y) or wrong (w).");
    if (verdict.answer_correct === "no") {
      const problem = answer.problem("Give the corrected answer.");
      if (problem) found.push(problem);
    }
  }
  return found;
}

function showLost(message) {
  lost = true;
  local.clear();
  conflictBox.hidden = false;
  conflictBox.replaceChildren();
  const text = document.createElement("p");
  text.textContent = message;
  const next = document.createElement("a");
  next.className = "button";
  next.href = "/annotate/verify/";
  next.textContent = "Go to the next question";
  conflictBox.append(text, next);
  status.set("error", "No longer yours");
  document.getElementById("submit").disabled = true;
}

async function renew() {
  if (lost || Date.now() - lastActivity > IDLE_LIMIT_MS) return;
  const reply = await api("POST", `${state.api}renew/`);
  if (reply.status === 409) {
    showLost("This question's lease ran out while the page was away and it went to someone else. Nothing you did here was saved.");
  }
}

function goTo(next) {
  window.location.assign(next ? next.url : "/annotate/");
}

async function submit() {
  clearTimeout(retry);
  retry = null;
  if (lost || sending) return;
  const found = problems();
  renderList(violations, found);
  if (found.length) {
    status.set("error", "Not sent: see what is missing");
    return;
  }
  sending = true;
  status.set("", "Sending…");
  const verdict = current();
  const elapsed = timer.take();
  const reply = await api("POST", `${state.api}submit/`, {
    rating: verdict.rating,
    answer_correct: verdict.rating === "nonsensical" || verdict.answer_correct !== "no",
    corrected_answer: verdict.answer_correct === "no" ? verdict.corrected_answer : "",
    rewritten_question: verdict.rating === "ambiguous" ? verdict.rewritten_question : "",
    elapsed_ms: elapsed,
  });
  sending = false;
  if (reply.ok) {
    local.clear();
    status.set("saved", "Saved");
    goTo(reply.data.removed_from_pool ? null : reply.data.next);
    return;
  }
  timer.giveBack(elapsed);
  if (reply.status === 400) {
    renderList(violations, [reply.data.detail]);
    status.set("error", "Not saved");
  } else if (reply.status === 409) {
    showLost("This question went to someone else after its lease ran out; your verdict was not recorded.");
  } else if (reply.status === 0) {
    status.set("offline", "Offline: your verdict is kept on this device and will be sent");
    retryIn(5000);
  } else if (reply.status === 401) {
    // Logged out meanwhile: the verdict waits here and goes once they log in again.
    status.set("error", "Your session has ended: log in again in another tab; your verdict is kept on this device and will be sent");
    retryIn(10000);
  } else if (reply.status === 403) {
    status.set("error", (reply.data && reply.data.detail) || "Not allowed for your account");
  } else if (reply.status >= 500 || reply.status === 429) {
    failures += 1;
    status.set("error", `The server answered ${reply.status}: your verdict is kept on this device and will be sent again`);
    retryIn(backoff(failures));
  } else {
    status.set("error", (reply.data && reply.data.detail) || `The server answered ${reply.status}`);
  }
}

async function skip() {
  const reply = await api("POST", `${state.api}release/`);
  local.clear();
  goTo(reply.ok ? reply.data.next : { url: "/annotate/verify/" });
}

// A verdict typed before a reload or a lost connection comes back.
const stored = local.load();
if (stored) {
  if (stored.rating) choose("rating", stored.rating);
  if (stored.answer_correct) choose("answer_correct", stored.answer_correct);
  correctionField.value = stored.corrected_answer || "";
  rewriteField.value = stored.rewritten_question || "";
  if (stored.rating) status.set("unsaved", "Restored your unsent verdict from this device");
}
if (correctionField.value) answer.check();
layout();

form.addEventListener("change", remember);
form.addEventListener("input", remember);
form.addEventListener("submit", (event) => {
  event.preventDefault();
  if (event.submitter && event.submitter.id === "skip") skip();
  else submit();
});
setInterval(renew, RENEW_EVERY_MS);
for (const type of ["keydown", "pointerdown", "input"]) {
  document.addEventListener(type, () => (lastActivity = Date.now()), { passive: true });
}
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState !== "visible") return;
  lastActivity = Date.now(); // back at the page: it is in use again
  renew();
});

document.addEventListener("keydown", (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
    event.preventDefault();
    submit();
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
    choose("rating", ratings[event.key]);
    if (event.key === "a") rewriteField.focus();
  } else if (event.key === "y") {
    event.preventDefault();
    choose("answer_correct", "yes");
  } else if (event.key === "w") {
    event.preventDefault();
    choose("answer_correct", "no");
    if (!correctionField.value) correctionField.value = document.getElementById("proposed-answer").textContent;
    remember();
    correctionField.focus();
  } else if (event.key === "Enter") {
    event.preventDefault();
    submit();
  } else if (event.key === "s") {
    event.preventDefault();
    skip();
  } else if (event.key === "+" || event.key === "=") {
    zoom(1);
  } else if (event.key === "-") {
    zoom(-1);
  }
});
