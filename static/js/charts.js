// The platform's one charting helper, over Chart.js (vendored: static/vendor/chartjs, loaded
// by a page with <script src="{% static 'vendor/chartjs/chart.umd.min.js' %}" defer>).
//
// A chart never stands alone: a canvas is not read by screen readers, so every chart sits
// next to a table with the same figures (the text alternative), and the canvas is marked
// aria-hidden. The figures come from a json_script element, never from inline script, so the
// page runs under a strict Content-Security-Policy.
//
//   import { drawChart, readJson } from "/static/js/charts.js";
//   const data = readJson("my-chart-data");     // {{ data|json_script:"my-chart-data" }}
//   drawChart(document.getElementById("my-chart"), {
//     type: "line",                              // any Chart.js type: line, bar, scatter…
//     labels: data.labels,                       // x values (omit for scatter)
//     series: [{ label: "Good", data: data.good }, …],  // colours and point shapes are given
//     percent: true,                             // y axis 0–100 %
//     xTitle: "Day", yTitle: "Share of decided questions",
//     options: {…},                              // merged into Chart.js options as they are
//   });
//
// Colours are the Okabe–Ito palette (told apart with colour-blindness), and each series also
// gets its own point shape and dash, so nothing depends on colour alone.

export const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"];
const SHAPES = ["circle", "rect", "triangle", "rectRot", "crossRot", "star", "rectRounded", "cross"];
const DASHES = [[], [6, 3], [2, 2], [8, 3, 2, 3]];

export function readJson(id) {
  const element = document.getElementById(id);
  return element ? JSON.parse(element.textContent) : null;
}

function merge(target, extra) {
  for (const [key, value] of Object.entries(extra || {})) {
    if (value && typeof value === "object" && !Array.isArray(value) && typeof target[key] === "object") {
      merge(target[key], value);
    } else {
      target[key] = value;
    }
  }
  return target;
}

export function drawChart(canvas, { type = "line", labels, series, percent = false, xTitle = "", yTitle = "", options = {} }) {
  const Chart = window.Chart;
  if (!canvas || !Chart) return null; // no script or no library: the table still says it all
  canvas.setAttribute("aria-hidden", "true");
  const reduced = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  const datasets = series.map((s, i) => ({
    borderColor: PALETTE[i % PALETTE.length],
    backgroundColor: PALETTE[i % PALETTE.length],
    pointStyle: SHAPES[i % SHAPES.length],
    borderDash: DASHES[i % DASHES.length],
    pointRadius: 3,
    borderWidth: 2,
    ...s,
  }));
  const config = {
    type,
    data: labels ? { labels, datasets } : { datasets },
    options: merge(
      {
        responsive: true,
        maintainAspectRatio: false,
        animation: reduced ? false : { duration: 300 },
        interaction: { mode: "nearest", intersect: false },
        plugins: {
          legend: { position: "bottom", labels: { usePointStyle: true } },
          tooltip: percent ? { callbacks: { label: (c) => `${c.dataset.label}: ${c.parsed.y}%` } } : {},
        },
        scales: {
          x: { title: { display: Boolean(xTitle), text: xTitle } },
          y: {
            beginAtZero: true,
            ...(percent ? { max: 100, ticks: { callback: (v) => `${v}%` } } : {}),
            title: { display: Boolean(yTitle), text: yTitle },
          },
        },
      },
      options,
    ),
  };
  return new Chart(canvas, config);
}
