/* serve/web.c - the live estate page of `berth serve`: GET / returns one
 * self-contained HTML page (inline CSS and JS, no external resources; its
 * Content-Security-Policy allows nothing else) that polls GET /v1/estate
 * every 1.5 s and, when the document changed, redraws the per-rack
 * utilisation table, the clusters with their pools, and the rack layout
 * picture from GET /v1/estate.svg (berth_report_nexus_svg over the committed
 * state, the same picture as `berth simulate --svg`). With token files the
 * page itself is open (it holds no data); its script reads `?token=TOKEN`
 * from the page URL, keeps it in sessionStorage, removes it from the address
 * bar and sends it as `Authorization: Bearer`. docs/api.md ("The web page")
 * documents it; tests/scenarios/serve_web_e2e.sh drives it in Chromium. */
#include "serve/serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/report.h"

static const char page[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\">\n"
    "<head>\n"
    "<meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'\">\n"
    "<meta name=\"referrer\" content=\"no-referrer\">\n"
    "<title>berth - live estate</title>\n"
    "<style>\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;font:14px/1.4 system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;color:#1d2329;background:#eef1f4}\n"
    "header{display:flex;align-items:center;gap:16px;padding:10px 20px;background:#1f3a52;color:#fff}\n"
    "header h1{font-size:18px;margin:0;font-weight:600}\n"
    "header .sum{flex:1;font-size:13px;opacity:.9}\n"
    "#status{font-size:12px;padding:3px 10px;border-radius:10px;background:#5b6b78}\n"
    "#status.ok{background:#2e7d32}#status.err{background:#c62828}#status.wait{background:#8d6e00}\n"
    "main{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:16px;padding:16px 20px}\n"
    "section{background:#fff;border:1px solid #d5dbe1;border-radius:6px;padding:12px 14px;min-width:0}\n"
    "section h2{font-size:14px;margin:0 0 8px;color:#33414e;text-transform:uppercase;letter-spacing:.04em}\n"
    "#layout{grid-column:1 / span 2}\n"
    "#racks,#clusters{overflow-x:auto}\n"
    "#picture{overflow:auto;max-height:70vh;cursor:zoom-in}\n"
    "#picture.actual{cursor:zoom-out}\n"
    "#picture svg{display:block;width:100%;height:auto}\n"
    "#picture.actual svg{width:auto}\n"
    "#note{margin:8px 0;color:#6a7782;font-size:13px}\n"
    "table{border-collapse:collapse;width:100%;font-size:12.5px}\n"
    "th,td{text-align:left;padding:3px 6px;border-bottom:1px solid #edf0f2;white-space:nowrap}\n"
    "th{color:#56636e;font-weight:600;background:#f7f9fa}\n"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    ".bar{position:relative;width:90px;height:10px;background:#e6eaee;border-radius:5px;overflow:hidden;display:inline-block;vertical-align:middle}\n"
    ".bar i{position:absolute;left:0;top:0;bottom:0;background:#3f7fbf}\n"
    ".bar i.hi{background:#d9822b}.bar i.full{background:#c62828}\n"
    ".cluster{border:1px solid #e1e6ea;border-radius:5px;margin:0 0 10px;padding:6px 8px}\n"
    ".cluster h3{margin:0 0 4px;font-size:14px;display:flex;gap:8px;align-items:baseline}\n"
    ".cluster .st{font-size:11px;font-weight:600;padding:1px 7px;border-radius:8px;background:#e0e0e0}\n"
    ".st.Succeeded{background:#d6efd8;color:#1b5e20}.st.Failed{background:#fbd5d5;color:#8e0000}\n"
    ".cluster .reason{color:#8e0000;font-size:12px;margin:0 0 4px;white-space:normal}\n"
    ".empty{color:#6a7782;font-style:italic}\n"
    "footer{padding:0 20px 16px;color:#6a7782;font-size:12px}\n"
    "#tokenform{margin:0}#tokenform input,#tokenform button{font-size:12px}\n"
    "@media (max-width:1000px){main{grid-template-columns:1fr}#layout{grid-column:auto}}\n"
    "</style>\n"
    "</head>\n"
    "<body>\n"
    "<header>\n"
    "<h1>berth</h1>\n"
    "<div class=\"sum\" id=\"summary\">loading&hellip;</div>\n"
    "<form id=\"tokenform\"><input id=\"token\" type=\"password\" placeholder=\"token\" autocomplete=\"off\" size=\"16\"> <button type=\"submit\">use</button></form>\n"
    "<span id=\"status\" class=\"wait\">connecting</span>\n"
    "</header>\n"
    "<main>\n"
    "<section id=\"layout\"><h2>Rack layout</h2><div id=\"note\"></div><div id=\"picture\" title=\"click to switch between fit and actual size\"></div></section>\n"
    "<section id=\"racks-section\"><h2>Utilisation per rack</h2><div id=\"racks\"><p class=\"empty\">no estate yet</p></div></section>\n"
    "<section id=\"clusters-section\"><h2>Clusters and pools</h2><div id=\"clusters\"><p class=\"empty\">no clusters yet</p></div></section>\n"
    "</main>\n"
    "<footer>Polls <code>GET /v1/estate</code> every 1.5 s (<span id=\"polls\">0</span> polls, <span id=\"renders\">0</span> updates, last change <span id=\"updated\">never</span>). With token files configured, open this page as <code>/?token=TOKEN</code>; see docs/api.md.</footer>\n"
    "<script>\n"
    "\"use strict\";\n"
    "(function () {\n"
    "  var POLL_MS = 1500;\n"
    "  var KEY = \"berth.token\";\n"
    "  var token = null;\n"
    "  try {\n"
    "    var q = new URLSearchParams(location.search);\n"
    "    if (q.has(\"token\")) {\n"
    "      token = q.get(\"token\");\n"
    "      try { sessionStorage.setItem(KEY, token); } catch (e) { /* storage off */ }\n"
    "      q.delete(\"token\");\n"
    "      var rest = q.toString();\n"
    "      history.replaceState(null, \"\", location.pathname + (rest ? \"?\" + rest : \"\") + location.hash);\n"
    "    } else {\n"
    "      token = sessionStorage.getItem(KEY);\n"
    "    }\n"
    "  } catch (e) { /* old browser: no token */ }\n"
    "\n"
    "  function $(id) { return document.getElementById(id); }\n"
    "  function el(tag, cls, text) {\n"
    "    var e = document.createElement(tag);\n"
    "    if (cls) e.className = cls;\n"
    "    if (text !== undefined && text !== null) e.textContent = String(text);\n"
    "    return e;\n"
    "  }\n"
    "  function get(path, accept) {\n"
    "    var h = { \"Accept\": accept };\n"
    "    if (token) h[\"Authorization\"] = \"Bearer \" + token;\n"
    "    return fetch(path, { headers: h, cache: \"no-store\", credentials: \"omit\" });\n"
    "  }\n"
    "  function status(cls, text) { var s = $(\"status\"); s.className = cls; s.textContent = text; }\n"
    "  function pct(used, cap) { return cap > 0 ? used / cap : 0; }\n"
    "  function fmtPct(r) { return (r * 100).toFixed(r > 0 && r < 0.1 ? 1 : 0) + \"%\"; }\n"
    "  var GI = 1024 * 1024 * 1024;\n"
    "  function fmtGi(b) { return (b / GI).toFixed(b % GI ? 1 : 0) + \" Gi\"; }\n"
    "  function plural(n, w) { return n + \" \" + w + (n === 1 ? \"\" : \"s\"); }\n"
    "  function bar(r) {\n"
    "    var b = el(\"span\", \"bar\"), i = el(\"i\", r >= 0.999 ? \"full\" : r >= 0.8 ? \"hi\" : \"\");\n"
    "    i.style.width = Math.min(100, Math.max(0, r * 100)).toFixed(1) + \"%\";\n"
    "    b.appendChild(i);\n"
    "    return b;\n"
    "  }\n"
    "  function row(tr, cells) {\n"
    "    cells.forEach(function (c) {\n"
    "      var td = el(\"td\", c.n ? \"n\" : \"\");\n"
    "      if (c.node) td.appendChild(c.node); else td.textContent = String(c.t);\n"
    "      tr.appendChild(td);\n"
    "    });\n"
    "    return tr;\n"
    "  }\n"
    "  function head(names) {\n"
    "    var tr = el(\"tr\");\n"
    "    names.forEach(function (n) { tr.appendChild(el(\"th\", n.charAt(0) === \"#\" ? \"n\" : \"\", n.replace(/^#/, \"\"))); });\n"
    "    var th = el(\"thead\"); th.appendChild(tr); return th;\n"
    "  }\n"
    "\n"
    "  function renderRacks(machines) {\n"
    "    var order = [], by = {};\n"
    "    machines.forEach(function (m) {\n"
    "      var r = by[m.rack];\n"
    "      if (!r) { r = by[m.rack] = { name: m.rack, machines: 0, cpu: 0, used: 0, mem: 0, usedMem: 0, off: 0 }; order.push(r); }\n"
    "      r.machines++;\n"
    "      if (m.cordoned || m.down) r.off++;\n"
    "      (m.cells || []).forEach(function (c) { r.cpu += c.cpu; r.used += c.usedCpu; r.mem += c.memory; r.usedMem += c.usedMemory; });\n"
    "    });\n"
    "    var t = el(\"table\"); t.id = \"rack-table\";\n"
    "    t.appendChild(head([\"Rack\", \"#Machines\", \"Host vCPU\", \"#Used\", \"Memory\", \"#Used\"]));\n"
    "    var tb = el(\"tbody\");\n"
    "    order.forEach(function (r) {\n"
    "      var tr = el(\"tr\"); tr.setAttribute(\"data-rack\", r.name);\n"
    "      var rc = pct(r.used, r.cpu), rm = pct(r.usedMem, r.mem);\n"
    "      row(tr, [{ t: r.name }, { t: r.machines + (r.off ? \" (\" + r.off + \" off)\" : \"\"), n: 1 },\n"
    "               { node: bar(rc) }, { t: fmtPct(rc) + \" (\" + r.used + \" / \" + r.cpu + \")\", n: 1 },\n"
    "               { node: bar(rm) }, { t: fmtPct(rm) + \" (\" + fmtGi(r.usedMem) + \" / \" + fmtGi(r.mem) + \")\", n: 1 }]);\n"
    "      tb.appendChild(tr);\n"
    "    });\n"
    "    t.appendChild(tb);\n"
    "    var box = $(\"racks\"); box.textContent = \"\"; box.appendChild(t);\n"
    "    return order;\n"
    "  }\n"
    "\n"
    "  function perRack(v) {\n"
    "    var keys = Object.keys(v || {});\n"
    "    if (!keys.length) return \"-\";\n"
    "    return keys.map(function (k) { return k + \":\" + v[k]; }).join(\" \");\n"
    "  }\n"
    "\n"
    "  function renderClusters(clusters) {\n"
    "    var box = $(\"clusters\"); box.textContent = \"\";\n"
    "    if (!clusters.length) { box.appendChild(el(\"p\", \"empty\", \"no clusters yet\")); return; }\n"
    "    clusters.forEach(function (c) {\n"
    "      var d = el(\"div\", \"cluster\"); d.setAttribute(\"data-cluster\", c.name);\n"
    "      var h = el(\"h3\"); h.appendChild(el(\"span\", \"cluster-name\", c.name)); h.appendChild(el(\"span\", \"st \" + c.status, c.status));\n"
    "      d.appendChild(h);\n"
    "      if (c.reason) d.appendChild(el(\"p\", \"reason\", c.reason));\n"
    "      var t = el(\"table\");\n"
    "      t.appendChild(head([\"Pool\", \"Role\", \"SKU\", \"#Placed\", \"VMs per rack\"]));\n"
    "      var tb = el(\"tbody\");\n"
    "      (c.pools || []).forEach(function (p) {\n"
    "        var tr = el(\"tr\"); tr.setAttribute(\"data-pool\", p.name);\n"
    "        row(tr, [{ t: p.name }, { t: p.role }, { t: p.vmSkuName }, { t: p.placed + \" / \" + p.count, n: 1 }, { t: perRack(p.vmsPerRack) }]);\n"
    "        tb.appendChild(tr);\n"
    "      });\n"
    "      t.appendChild(tb); d.appendChild(t); box.appendChild(d);\n"
    "    });\n"
    "  }\n"
    "\n"
    "  /* The picture comes from our own server; still, keep only SVG drawing:\n"
    "     no scripts, no foreign content, no event-handler attributes. */\n"
    "  function cleanSvg(node) {\n"
    "    var bad = node.querySelectorAll(\"script,foreignObject,iframe,object,embed\");\n"
    "    for (var i = 0; i < bad.length; i++) bad[i].remove();\n"
    "    var all = node.querySelectorAll(\"*\");\n"
    "    for (var j = -1; j < all.length; j++) {\n"
    "      var e = j < 0 ? node : all[j];\n"
    "      for (var k = e.attributes.length - 1; k >= 0; k--) {\n"
    "        var a = e.attributes[k];\n"
    "        if (/^on/i.test(a.name) || (/href$/i.test(a.name) && !/^#/.test(a.value))) e.removeAttribute(a.name);\n"
    "      }\n"
    "    }\n"
    "    return node;\n"
    "  }\n"
    "\n"
    "  function refreshPicture() {\n"
    "    return get(\"/v1/estate.svg\", \"image/svg+xml\").then(function (r) {\n"
    "      if (!r.ok) throw new Error(\"GET /v1/estate.svg: \" + r.status);\n"
    "      return r.text();\n"
    "    }).then(function (text) {\n"
    "      var doc = new DOMParser().parseFromString(text, \"image/svg+xml\");\n"
    "      var svg = doc.documentElement;\n"
    "      if (!svg || svg.nodeName !== \"svg\") throw new Error(\"the picture is not SVG\");\n"
    "      var box = $(\"picture\"); box.textContent = \"\";\n"
    "      box.appendChild(document.importNode(cleanSvg(svg), true));\n"
    "    });\n"
    "  }\n"
    "\n"
    "  var last = null, polls = 0, renders = 0, busy = false;\n"
    "  function render(est) {\n"
    "    var clusters = est.clusters || [], machines = est.machines || [];\n"
    "    var racks = renderRacks(machines);\n"
    "    renderClusters(clusters);\n"
    "    var cpu = 0, used = 0, vms = 0;\n"
    "    racks.forEach(function (r) { cpu += r.cpu; used += r.used; });\n"
    "    clusters.forEach(function (c) { (c.pools || []).forEach(function (p) { vms += p.placed; }); });\n"
    "    $(\"summary\").textContent = plural(racks.length, \"rack\") + \", \" + plural(machines.length, \"machine\") + \", \" +\n"
    "      plural(clusters.length, \"cluster\") + \", \" + plural(vms, \"VM\") + \", \" + fmtPct(pct(used, cpu)) + \" of host vCPU used\";\n"
    "    $(\"note\").textContent = \"\";\n"
    "    renders++; $(\"renders\").textContent = renders;\n"
    "    $(\"updated\").textContent = new Date().toLocaleTimeString();\n"
    "  }\n"
    "\n"
    "  function poll() {\n"
    "    if (busy) return;\n"
    "    busy = true;\n"
    "    polls++; $(\"polls\").textContent = polls;\n"
    "    get(\"/v1/estate\", \"application/json\").then(function (r) {\n"
    "      return r.text().then(function (text) { return { r: r, text: text }; });\n"
    "    }).then(function (x) {\n"
    "      if (x.r.status === 401 || x.r.status === 403) {\n"
    "        status(\"err\", \"unauthorized\");\n"
    "        var need = \"this page needs a token: add ?token=... or set it in the box\";\n"
    "        $(\"summary\").textContent = need;\n"
    "        $(\"note\").textContent = token ? \"the token was not accepted\" : \"\";\n"
    "        [\"racks\", \"clusters\"].forEach(function (id) {\n"
    "          var box = $(id); box.textContent = \"\"; box.appendChild(el(\"p\", \"empty\", need));\n"
    "        });\n"
    "        $(\"picture\").textContent = \"\";\n"
    "        last = null; return;\n"
    "      }\n"
    "      if (x.r.status === 404) {\n"
    "        status(\"ok\", \"live\");\n"
    "        $(\"summary\").textContent = \"no estate loaded: PUT /v1/estate first\";\n"
    "        last = null; return;\n"
    "      }\n"
    "      if (!x.r.ok) throw new Error(\"GET /v1/estate: \" + x.r.status);\n"
    "      status(\"ok\", \"live\");\n"
    "      if (x.text === last) return;\n"
    "      render(JSON.parse(x.text));\n"
    "      last = x.text;\n"
    "      return refreshPicture();\n"
    "    }).catch(function (e) {\n"
    "      status(\"err\", \"offline\");\n"
    "      last = null;\n"
    "      $(\"note\").textContent = String(e && e.message || e);\n"
    "    }).then(function () { busy = false; });\n"
    "  }\n"
    "  $(\"tokenform\").addEventListener(\"submit\", function (ev) {\n"
    "    ev.preventDefault();\n"
    "    token = $(\"token\").value.trim() || null;\n"
    "    try { if (token) sessionStorage.setItem(KEY, token); else sessionStorage.removeItem(KEY); } catch (e) { /* storage off */ }\n"
    "    $(\"token\").value = \"\"; last = null; poll();\n"
    "  });\n"
    "  poll();\n"
    "  setInterval(poll, POLL_MS);\n"
    "  $(\"picture\").addEventListener(\"click\", function () { this.classList.toggle(\"actual\"); });\n"
    "})();\n"
    "</script>\n"
    "</body>\n"
    "</html>\n";

void serve_web_page(serve_reply *r)
{
    free(r->body);
    r->body = malloc(sizeof page);
    if (!r->body) {
        serve_reply_error(r, 500, "internal", "out of memory");
        return;
    }
    memcpy(r->body, page, sizeof page);
    r->status = 200;
}

typedef struct svg_ctx {
    char *buf;
    size_t len;
    int rc;   /* 0, BERTH_ENOMEM, or -1 when no estate is loaded */
} svg_ctx;

static void render_svg(const berth_nexus *nx, void *arg)
{
    svg_ctx *c = arg;
    if (!nx) {
        c->rc = -1;
        return;
    }
    FILE *f = open_memstream(&c->buf, &c->len);
    if (!f) {
        c->rc = BERTH_ENOMEM;
        return;
    }
    c->rc = berth_report_nexus_svg(f, nx);
    if (fclose(f) && !c->rc)
        c->rc = BERTH_ENOMEM;
}

void serve_web_svg(serve_engine *g, serve_reply *r)
{
    svg_ctx c = {0};
    serve_engine_read(g, render_svg, &c);
    if (c.rc) {
        free(c.buf);
        if (c.rc == -1)
            serve_reply_error(r, 404, "no_estate", "no estate loaded: PUT /v1/estate first");
        else
            serve_reply_error(r, 500, "internal", "out of memory rendering the picture");
        return;
    }
    free(r->body);
    r->body = c.buf;
    r->status = 200;
}
