// A model page's charts: recall per table property and per query property, each beside the
// median of the board the model belongs on. The tables under the charts hold the same figures.
import { PALETTE, drawChart, readJson } from "./charts.js";

for (const box of document.querySelectorAll("[data-bars]")) {
  const data = readJson(`${box.dataset.bars}-data`);
  if (!data || !data.labels.length) continue;
  // One row of bars per group: the box grows with them (CSSOM, allowed by the policy).
  box.style.height = `${Math.max(12, data.labels.length * 2.1 + 5)}rem`;
  drawChart(box.querySelector("canvas"), {
    type: "bar",
    labels: data.labels,
    series: [
      { label: "This model", data: data.recall, backgroundColor: PALETTE[0], borderColor: PALETTE[0] },
      {
        label: "Board median",
        data: data.median,
        backgroundColor: "rgba(230, 159, 0, 0.35)",
        borderColor: PALETTE[1],
        borderWidth: 2,
        borderDash: [4, 3],
      },
    ],
    xTitle: "Recall",
    options: {
      indexAxis: "y",
      scales: { x: { min: 0, max: 1, title: { display: true, text: "Recall" } }, y: { title: { display: false } } },
    },
  });
}
