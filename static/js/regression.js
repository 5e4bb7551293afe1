// The regression page's chart: each table property's coefficient with its 95% interval, as a
// floating bar (the interval) and a point (the coefficient). The table holds the same figures.
import { PALETTE, drawChart, readJson } from "./charts.js";

const data = readJson("coefficients-data");
const box = document.getElementById("coefficients-box");
if (data && box && data.labels.length) {
  box.style.height = `${Math.max(12, data.labels.length * 2 + 5)}rem`;
  drawChart(box.querySelector("canvas"), {
    type: "bar",
    labels: data.labels,
    series: [
      {
        type: "bar",
        label: "95% interval",
        data: data.interval,
        backgroundColor: "rgba(0, 114, 178, 0.3)",
        borderColor: PALETTE[0],
        borderWidth: 1,
        borderDash: [],
      },
      {
        type: "line",
        label: "Coefficient",
        data: data.coef,
        showLine: false,
        pointStyle: "circle",
        pointRadius: 5,
        backgroundColor: PALETTE[3],
        borderColor: PALETTE[3],
      },
    ],
    xTitle: "Change in mean recall",
    options: {
      indexAxis: "y",
      scales: {
        // The zero line stands out: an interval that crosses it is not significant.
        x: { beginAtZero: false, grid: { color: (c) => (c.tick && c.tick.value === 0 ? "#444" : "rgba(0, 0, 0, 0.1)") } },
        y: { beginAtZero: false, title: { display: false } },
      },
      plugins: {
        tooltip: {
          callbacks: {
            label: (c) =>
              Array.isArray(c.raw) ? `95% interval: [${c.raw[0]}, ${c.raw[1]}]` : `coefficient: ${c.raw}`,
          },
        },
      },
    },
  });
}
