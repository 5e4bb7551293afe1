// On every page. A table too wide for a phone scrolls inside its own box (site.css); such a
// box is made focusable and named, so it can be scrolled with the keyboard too.
const WIDE = "table.listing, table.bars, table.data";

function markScrollers(root) {
  for (const table of root.querySelectorAll(WIDE)) {
    const scrolls = table.scrollWidth > table.clientWidth + 1;
    if (scrolls && !table.hasAttribute("tabindex")) {
      table.tabIndex = 0;
      table.dataset.scrollMarked = "";
      if (!table.hasAttribute("aria-label") && !table.querySelector("caption")) {
        const heading = table.closest("section")?.querySelector("h2, h3");
        table.setAttribute("aria-label", heading ? heading.textContent.trim() : "Table");
      }
    } else if (!scrolls && table.dataset.scrollMarked !== undefined) {
      table.removeAttribute("tabindex");
      delete table.dataset.scrollMarked;
    }
  }
}

markScrollers(document);
let pending = null;
window.addEventListener("resize", () => {
  cancelAnimationFrame(pending);
  pending = requestAnimationFrame(() => markScrollers(document));
});
document.body.addEventListener("htmx:afterSwap", (event) => markScrollers(event.target));
