// The shortcut sheet of a tool page: "?" (outside a text field) or the "Keys" button opens it;
// Esc or "?" closes it. The keys themselves are bound by each tool's own script.
const sheet = document.getElementById("shortcut-sheet");

function typing(target) {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName)) &&
    !(target instanceof HTMLInputElement && ["checkbox", "radio"].includes(target.type))
  );
}

export function toggleSheet() {
  if (!sheet) return;
  if (sheet.open) sheet.close();
  else sheet.showModal();
}

if (sheet) {
  for (const button of document.querySelectorAll("[data-open-shortcuts]")) {
    button.hidden = false;
    button.addEventListener("click", toggleSheet);
  }
  // Capture: the tool's own key handler never sees a "?" or a key pressed on the open sheet.
  document.addEventListener(
    "keydown",
    (event) => {
      if (event.key === "?" && !event.ctrlKey && !event.metaKey && !event.altKey && !typing(event.target)) {
        event.preventDefault();
        event.stopImmediatePropagation();
        toggleSheet();
      } else if (sheet.open && event.key !== "Escape" && event.key !== "Tab") {
        event.stopImmediatePropagation();
      }
    },
    true,
  );
}
