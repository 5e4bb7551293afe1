// The leaderboard: the chart of recall against model size, and the compare ticks. The board
// works without this file (the table has every figure, the compare form is a plain GET); with
// it, the chart is drawn and the compare button waits for exactly two ticks. Both are set up
// again whenever htmx swaps the board in (a filter, a sort, a page).
import { PALETTE, drawChart, readJson } from "./charts.js";

let sizeChart = null;

function sizeRange(data) {
  const sizes = [...data.computed, ...data.reported].map((p) => p.x);
  return { min: Math.min(...sizes) / 1.5, max: Math.max(...sizes) * 1.5 };
}

function drawSizeChart() {
  if (sizeChart) {
    sizeChart.destroy();
    sizeChart = null;
  }
  const data = readJson("size-chart-data");
  const canvas = document.getElementById("size-chart");
  if (!data || !canvas) return;
  // Fixed colours and shapes per series, so the paper's rows look the same on every board.
  const series = [
    { label: "Computed here", data: data.computed, pointStyle: "circle", borderColor: PALETTE[0], backgroundColor: PALETTE[0] },
    {
      label: "Reported in the paper",
      data: data.reported,
      pointStyle: "rectRot",
      borderColor: PALETTE[3],
      backgroundColor: "rgba(0, 0, 0, 0)",
      pointRadius: 6,
    },
  ].filter((s) => s.data.length);
  sizeChart = drawChart(canvas, {
    type: "scatter",
    series: series.map((s) => ({ borderDash: [], pointRadius: 5, ...s })),
    xTitle: "Parameters (billions, log scale)",
    yTitle: "Recall",
    options: {
      // Some room either side, so no point sits on the chart's edge.
      scales: { x: { type: "logarithmic", min: sizeRange(data).min, max: sizeRange(data).max }, y: { max: 1 } },
      plugins: {
        tooltip: {
          callbacks: { label: (c) => `${c.raw.name}: recall ${c.raw.y.toFixed(3)}, ${c.raw.x}B` },
        },
      },
    },
  });
}

// Two ticks, no more: the button is live only then, and the other boxes wait.
function updatePicks() {
  const button = document.getElementById("compare-button");
  if (!button) return;
  const boxes = [...document.querySelectorAll('input[name="pick"]')];
  const ticked = boxes.filter((b) => b.checked).length;
  button.disabled = ticked !== 2;
  button.textContent = ticked === 2 ? "Compare the two ticked rows" : `Tick two rows to compare (${ticked} of 2)`;
  for (const box of boxes) box.disabled = !box.checked && ticked >= 2;
}

document.addEventListener("change", (event) => {
  if (event.target instanceof HTMLInputElement && event.target.name === "pick") updatePicks();
});
document.body.addEventListener("htmx:afterSwap", () => {
  updatePicks();
  drawSizeChart();
});
updatePicks();
drawSizeChart();
