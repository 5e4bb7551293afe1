// Plain forms (a changed question or verdict, an adjudication) keep what is typed on this
// device until the server has it: a POST sent after the session ended goes to the login page,
// one sent with a token rotated by a login in another tab is refused, and either would lose the
// text. The copy belongs to one user (in data-draft) and one version of the item
// (data-draft-version): after a save the version moves on and the copy is dropped. A page that
// re-renders a refused send (data-draft-pending) shows the user's input, maybe on a newer
// version: that input is what is kept.
import { LocalDraft, csrfToken } from "./common.js";

const WEEK_MS = 7 * 24 * 3600 * 1000;

// What the annotator can change: hidden fields carry the version and stay as the server sent.
function fields(form) {
  return [...form.elements].filter(
    (e) => e.name && !["hidden", "submit", "button"].includes(e.type) && e.name !== "csrfmiddlewaretoken",
  );
}

function read(form) {
  return fields(form).map((e) => (["checkbox", "radio"].includes(e.type) ? e.checked : e.value));
}

function write(form, values) {
  fields(form).forEach((e, i) => {
    if (["checkbox", "radio"].includes(e.type)) e.checked = Boolean(values[i]);
    else e.value = values[i] ?? "";
  });
}

// Copies left by items finished elsewhere (decided, changed on another device) do not pile up.
function forgetOld() {
  for (const key of Object.keys(localStorage)) {
    if (!key.startsWith("hctqa:form:")) continue;
    const stored = new LocalDraft(key.slice("hctqa:".length)).load();
    if (!stored || !(Date.now() - stored.saved_ms < WEEK_MS)) localStorage.removeItem(key);
  }
}

for (const form of document.querySelectorAll("form[data-draft]")) {
  const local = new LocalDraft(`form:${form.dataset.draft}`);
  const version = form.dataset.draftVersion || "";
  const shape = fields(form).map((e) => `${e.name}=${["checkbox", "radio"].includes(e.type) ? e.value : ""}`);
  const stored = local.load();
  const sent = read(form);
  const remember = () => local.save({ version, shape, values: read(form), saved_ms: Date.now() });
  if ("draftPending" in form.dataset) {
    remember(); // not on the server yet: keep it under the version it now goes against
  } else if (stored && stored.version === version && JSON.stringify(stored.shape) === JSON.stringify(shape)) {
    if (JSON.stringify(stored.values) !== JSON.stringify(sent)) {
      write(form, stored.values);
      const notice = document.createElement("div");
      notice.className = "notice";
      notice.setAttribute("role", "status");
      notice.id = "draft-restored";
      const text = document.createElement("p");
      text.textContent = "Restored what you typed here from this device: it had not reached the server. Check it and send it again.";
      const discard = document.createElement("button");
      discard.type = "button";
      discard.className = "small secondary";
      discard.textContent = "Discard it";
      discard.addEventListener("click", () => {
        write(form, sent);
        local.clear();
        notice.remove();
        form.dispatchEvent(new Event("change", { bubbles: true }));
      });
      notice.append(text, discard);
      form.prepend(notice);
      form.dispatchEvent(new Event("change", { bubbles: true }));
    }
  } else if (stored) {
    local.clear(); // saved meanwhile (a newer version): the server's copy is the one
  }
  // The token is read when the form is sent: a login in another tab rotates it, and the one
  // this page was served with would be refused.
  form.addEventListener("formdata", (event) => {
    const token = csrfToken();
    if (token && event.formData.has("csrfmiddlewaretoken")) event.formData.set("csrfmiddlewaretoken", token);
  });
  form.addEventListener("input", remember);
  form.addEventListener("change", remember);
}
forgetOld();
