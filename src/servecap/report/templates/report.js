/* servecap report: draws the charts and recomputes SLO compliance and capacity in the page.
   Same definitions as servecap.stats.capacity: a level passes when its TTFT (on the chosen
   statistic) <= the TTFT SLO, its TPS >= the TPS SLO and it has no failed requests; C_max is
   the highest level at which it and every lower level pass; users = round(C_max * (1 + T / L_mean)),
   L_mean the mean latency at C_max, rounded half to even like Python's round(). */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);

  function drawCharts() {
    Object.keys(data.figures).forEach(function (id) {
      var el = document.getElementById("chart-" + id);
      if (!el || typeof Plotly === "undefined") { return; }
      var fig = data.figures[id];
      Plotly.newPlot(el, fig.data, fig.layout, {responsive: true, displaylogo: false})
        .then(function () { el.setAttribute("data-rendered", "1"); });
    });
  }

  function pyRound(x) {
    var f = Math.floor(x), d = x - f;
    if (d > 0.5) { return f + 1; }
    if (d < 0.5) { return f; }
    return (f % 2 === 0) ? f : f + 1;
  }

  function judge(level, slo) {
    var ttft = level["ttft_" + slo.stat], tps = level["tps_" + slo.stat];
    var clean = !level.error_rate;
    return {
      c: level.c, ttft: ttft, tps: tps,
      ttftOk: ttft !== null && ttft <= slo.ttft && clean,
      tpsOk: tps !== null && tps >= slo.tps && clean
    };
  }

  function plan(levels, slo) {
    var verdicts = levels.map(function (lv) { return judge(lv, slo); });
    var best = null;
    for (var i = 0; i < levels.length; i++) {
      if (!(verdicts[i].ttftOk && verdicts[i].tpsOk)) { break; }
      best = levels[i];
    }
    if (best === null || best.latency_mean === null) {
      return {verdicts: verdicts, cMax: null, lMean: null, users: null};
    }
    // an open loop's level is a rate X: users N = X * (R + Z); a closed loop's c * (1 + Z / R)
    var users = best.rate ? pyRound(best.c * (best.latency_mean + slo.think))
                          : pyRound(best.c * (1 + slo.think / best.latency_mean));
    /* every tested level passed: C_max and users are lower bounds */
    var lowerBound = best === levels[levels.length - 1];
    return {verdicts: verdicts, cMax: best.c, lMean: best.latency_mean, users: users,
            lowerBound: lowerBound};
  }

  function cell(row, text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) { td.className = cls; }
    row.appendChild(td);
    return td;
  }

  function num(v, digits) { return v === null || v === undefined ? "n/a" : v.toFixed(digits); }

  function readSlo() {
    return {
      ttft: parseFloat(document.getElementById("slo-ttft").value),
      tps: parseFloat(document.getElementById("slo-tps").value),
      stat: document.getElementById("slo-stat").value,
      think: parseFloat(document.getElementById("slo-think").value)
    };
  }

  /* Chart 09 shows the same matrix as the table: recolour it from the live verdicts. */
  function redrawHeatmap(plans, slo) {
    var fig = data.figures["09"];
    if (!fig) { return; }
    var z = [], text = [];
    plans.forEach(function (p) {
      var zrow = [], trow = [];
      data.levels.forEach(function (c) {
        var v = p.verdicts.filter(function (x) { return x.c === c; })[0];
        zrow.push(v ? (v.ttftOk ? 1 : 0) + (v.tpsOk ? 1 : 0) : -1);
        trow.push(v ? (v.ttftOk ? "\u2713" : "\u2717") + (v.tpsOk ? "\u2713" : "\u2717") : "");
      });
      z.push(zrow);
      text.push(trow);
    });
    fig.data[0].z = z;
    fig.data[0].text = text;
    fig.layout.yaxis.title = {text: "config (" + (slo.stat === "p90" ? "P90" : "mean") + ": TTFT, TPS)"};
    var el = document.getElementById("chart-09");
    if (el && el.getAttribute("data-rendered") === "1" && typeof Plotly !== "undefined") {
      Plotly.react(el, fig.data, fig.layout);
    }
  }

  /* Chart 06 shows C_max and users on both statistics: recompute them under the live
     TTFT, TPS and think time (trace names are "C_max (p90)", "users (mean)", ...). */
  function redrawCapacity(slo) {
    var fig = data.figures["06"];
    if (!fig) { return; }
    ["p90", "mean"].forEach(function (stat) {
      var judged = {ttft: slo.ttft, tps: slo.tps, stat: stat, think: slo.think};
      var plans = data.configs.map(function (cfg) { return plan(cfg.levels, judged); });
      fig.data.forEach(function (trace) {
        if (trace.name === "C_max (" + stat + ")") {
          trace.y = plans.map(function (p) { return p.cMax === null ? 0 : p.cMax; });
        } else if (trace.name === "users (" + stat + ")") {
          trace.y = plans.map(function (p) { return p.users === null ? 0 : p.users; });
        }
        if (trace.name.indexOf("(" + stat + ")") >= 0) {
          trace.text = trace.y.map(function (v) { return String(v); });
        }
      });
    });
    var el = document.getElementById("chart-06");
    if (el && el.getAttribute("data-rendered") === "1" && typeof Plotly !== "undefined") {
      Plotly.react(el, fig.data, fig.layout);
    }
  }

  function sloText(slo) {
    var ttft = slo.ttft >= 1000 ? (slo.ttft / 1000) + " s" : slo.ttft + " ms";
    return (slo.stat === "p90" ? "P90" : "mean") + " TTFT <= " + ttft + " and TPS >= " +
      slo.tps + " with " + slo.think + " s think time";
  }

  /* The summary's decision under the live SLOs (analysis.headline's rule: most users,
     then the larger C_max), shown while they differ from the report's own. */
  function updateHeadline(plans, slo) {
    var el = document.getElementById("headline-live");
    if (!el) { return; }
    var same = slo.ttft === data.slo.ttft && slo.tps === data.slo.tps &&
      slo.stat === data.slo.stat && slo.think === data.slo.think;
    el.hidden = same;
    if (same) { return; }
    var held = [];
    plans.forEach(function (p, i) {
      if (p.users !== null) {
        held.push({name: data.configs[i].name, users: p.users, cMax: p.cMax, bound: p.lowerBound});
      }
    });
    held.sort(function (a, b) { return (b.users - a.users) || (b.cMax - a.cMax); });
    function users(h) { return (h.bound ? ">= " : "") + h.users; }
    var text;
    if (!held.length) {
      text = "With the SLOs set below: no deployment meets " + sloText(slo) + " at any tested level.";
    } else {
      var best = held[0];
      text = "With the SLOs set below: deploy " + best.name + ": it holds " + users(best) +
        " predicted users (C_max " + (best.bound ? ">= " : "") + best.cMax + ") at " +
        sloText(slo) + (held.length > 1 ? "; runner-up " + held[1].name + ", " +
        users(held[1]) + " predicted" : "") + ".";
    }
    el.textContent = text;
  }

  function update() {
    var slo = readSlo();
    if (!(slo.ttft > 0) || !(slo.tps >= 0) || !(slo.think >= 0)) { return; }
    var matrix = document.querySelector("#slo-live tbody");
    var capacity = document.querySelector("#capacity-live tbody");
    matrix.textContent = "";
    capacity.textContent = "";
    var plans = [];
    data.configs.forEach(function (cfg) {
      var p = plan(cfg.levels, slo);
      plans.push(p);
      var row = document.createElement("tr");
      cell(row, cfg.name);
      data.levels.forEach(function (c) {
        var v = p.verdicts.filter(function (x) { return x.c === c; })[0];
        if (!v) { cell(row, ""); return; }
        var marks = (v.ttftOk ? "\u2713" : "\u2717") + (v.tpsOk ? "\u2713" : "\u2717");
        var td = cell(row, marks, v.ttftOk && v.tpsOk ? "ok" : (v.ttftOk || v.tpsOk ? "half" : "bad"));
        td.title = "TTFT " + num(v.ttft, 1) + " ms, TPS " + num(v.tps, 1) + " tok/s";
      });
      matrix.appendChild(row);
      var crow = document.createElement("tr");
      cell(crow, cfg.name);
      var atLeast = p.lowerBound ? ">= " : "";
      cell(crow, p.cMax === null ? "none" : atLeast + String(p.cMax));
      cell(crow, num(p.lMean, 2));
      cell(crow, p.users === null ? "0" : atLeast + String(p.users));
      capacity.appendChild(crow);
    });
    redrawHeatmap(plans, slo);
    redrawCapacity(slo);
    updateHeadline(plans, slo);
    document.getElementById("slo-live-label").textContent =
      "TTFT <= " + slo.ttft + " ms, TPS >= " + slo.tps + " tok/s on " +
      (slo.stat === "p90" ? "P90" : "mean") + ", think time " + slo.think + " s";
  }

  ["slo-ttft", "slo-tps", "slo-stat", "slo-think"].forEach(function (id) {
    var el = document.getElementById(id);
    el.addEventListener("input", update);
    el.addEventListener("change", update);
  });
  document.getElementById("slo-reset").addEventListener("click", function () {
    document.getElementById("slo-ttft").value = data.slo.ttft;
    document.getElementById("slo-tps").value = data.slo.tps;
    document.getElementById("slo-stat").value = data.slo.stat;
    document.getElementById("slo-think").value = data.slo.think;
    update();
  });
  update();
  drawCharts();
})();
