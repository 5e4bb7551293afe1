// The verification dashboard's chart: outcome shares by day. The table beside it has the
// same figures for screen readers and for anyone without JavaScript.
import { drawChart, readJson } from "./charts.js";

const data = readJson("outcome-shares-data");
if (data && data.days.length) {
  drawChart(document.getElementById("outcome-shares-chart"), {
    type: "line",
    labels: data.days,
    series: data.series.map((s) => ({ label: s.label, data: s.shares })),
    percent: true,
    xTitle: "Day decided",
    yTitle: "Share of the day's decisions",
  });
}
