// A form with data-confirm="question" asks before it is sent (deleting a submission, say).
// It replaces inline onsubmit handlers, which the Content-Security-Policy refuses.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.dataset.confirm) return;
  if (!window.confirm(form.dataset.confirm)) event.preventDefault();
});
