// tasklens view: renders the JSON sections embedded in the page (one script element of type
// application/json with id "tl-<run>-<section>" per run and section, listed in #tl-index).
// Every text that comes from the program (file, function, region names) is inserted as a text
// node (el() below); nothing is ever parsed as HTML.
(function () {
  'use strict';

  // ---- DOM helpers ------------------------------------------------------------------------
  const SVG_NS = 'http://www.w3.org/2000/svg';

  // el('div', {class: 'x', onclick: f}, 'text', child...): strings become text nodes.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }
  function sv(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }
  function setAttrs(node, attrs) {
    if (!attrs) return;
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, String(v));
    }
  }
  function append(node, children) {
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      node.appendChild(typeof c === 'string' || typeof c === 'number'
        ? document.createTextNode(String(c)) : c);
    }
  }

  // ---- Formatting --------------------------------------------------------------------------
  // An amount with `perSecond` units per second as a duration, else a count with k/M/G.
  function amount(v, perSecond) {
    if (v === null || v === undefined || Number.isNaN(v)) return '-';
    if (perSecond > 0) {
      const s = v / perSecond;
      if (s === 0) return '0';
      if (Math.abs(s) >= 1) return s.toFixed(3) + ' s';
      if (Math.abs(s) >= 1e-3) return (s * 1e3).toFixed(3) + ' ms';
      if (Math.abs(s) >= 1e-6) return (s * 1e6).toFixed(3) + ' us';
      return (s * 1e9).toFixed(1) + ' ns';
    }
    const a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(2) + ' G';
    if (a >= 1e6) return (v / 1e6).toFixed(2) + ' M';
    if (a >= 1e4) return (v / 1e3).toFixed(1) + ' k';
    return String(Math.round(v * 100) / 100);
  }
  function fixed(v, digits) {
    return v === null || v === undefined ? '-' : Number(v).toFixed(digits);
  }
  function pct(part, whole) { return whole > 0 ? 100 * part / whole : 0; }

  // Site colors: a fixed palette indexed by site (the program's code is grey).
  const PALETTE = ['#3b7dd8', '#e0672a', '#2e9e6a', '#9b59b6', '#d4a017', '#17a2b8', '#c0392b',
    '#6c7ae0', '#8e6c3a', '#e84393', '#5d8a00', '#00838f', '#b0608f', '#7f8c8d'];
  function siteColor(site) { return site === 0 ? '#9aa3af' : PALETTE[(site - 1) % PALETTE.length]; }

  // ---- Data -------------------------------------------------------------------------------
  function readJson(id) {
    const node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }
  const index = readJson('tl-index') || [];
  const runs = index.map((r, i) => {
    const run = { index: i, label: r.label };
    for (const s of r.sections) run[s] = readJson('tl-' + i + '-' + s);
    return run;
  });
  // Units per second of the run's work metric (0: not a time), and of its TSC.
  function workRate(run) {
    const s = run.structure;
    return s && s.metric_is_time ? s.ticks_per_second : 0;
  }
  function tscRate(run) { return run.structure ? run.structure.tsc_per_second : 0; }
  function unavailable(data) { return !data || data.unavailable !== undefined; }

  // ---- The views: one entry each. A view with `section` is skipped in a run without it. To add
  // a view from another command, add its JSON section on the C++ side (report/html_view.hpp's
  // ViewRun) and one entry here; `once: true` renders it once for all runs instead of once per
  // run, `compareOnly: true` only on a page of two runs (the differential table, whose "diff"
  // section is kept with the first run).
  const VIEWS = [
    { id: 'summary', title: 'Summary', render: renderSummary,
      explain: 'The recording and its whole-program work, span (critical path) and parallelism = work / span.' },
    { id: 'diff', title: 'Differential', render: renderDiff, once: true, compareOnly: true,
      explain: 'tasklens diff of the two runs (the first is the base, typically 1 thread: the oracle): per construct site and code fragment, the work in each run, their ratio and the inflation\'s cost on the other run\'s critical path (how much shorter it would be if the unit did only the base\'s work). Rows whose work grew by 10% or more are highlighted. Click a column header to sort.' },
    { id: 'profile', title: 'Parallelism profile', section: 'profile', render: renderProfile,
      explain: 'One row per construct site (click a column header to sort). crit.% is the share of the critical path spent directly in the site; work and span are over its outermost instances.' },
    { id: 'whatif', title: 'What-if and adviser', section: 'whatif', render: renderWhatif,
      explain: 'Program parallelism if a unit of code were parallelized (or sped up) k ways, per unit and all together; below, the adviser\'s steps.' },
    { id: 'overtime', title: 'Parallelism over time', section: 'sched', render: renderOverTime,
      explain: 'Running strands (area) and ready strands waiting for a worker (line), averaged over equal time intervals.' },
    { id: 'timeline', title: 'Per-worker timeline', section: 'structure', render: renderTimeline,
      explain: 'What each worker ran, colored by construct site. Click a slice to show its construct in the hierarchy and its site in the profile.' },
    { id: 'hierarchy', title: 'Construct hierarchy', section: 'structure', render: renderTree,
      explain: 'The construct tree with the children of a node grouped by site (x count): expand level by level. Work and span of a group cover its whole subtrees; crit.% is the share of the program\'s critical path inside them.' },
    { id: 'tasks', title: 'Task sizes and waiting times', section: 'tasks', render: renderTasks,
      explain: 'Per task type (spawn site): log2 histograms of the task sizes and of the waiting times from ready to start.' },
    { id: 'sched', title: 'Scheduling breakdown', section: 'sched', render: renderSched,
      explain: 'P x elapsed split per worker into work, delay (idle while a strand was ready), no-work-sched (idle while the ready path waited for a worker) and no-work-app (nothing ready).' },
  ];

  // ---- Summary -----------------------------------------------------------------------------
  function renderSummary(box, run) {
    const p = run.profile;
    if (!p) { box.appendChild(el('p', { class: 'note' }, 'no profile')); return; }
    const rate = workRate(run);
    const card = (k, v) => el('div', { class: 'card' }, el('div', { class: 'k' }, k), el('div', { class: 'v' }, v));
    box.appendChild(el('div', { class: 'cards' },
      card('program', (p.executable || '').split('/').pop() || '?'),
      card('threads', p.threads), card('tasks', p.tasks), card('strands', p.strands),
      card('work', amount(p.program.work, rate)), card('span', amount(p.program.span, rate)),
      card('parallelism', fixed(p.program.parallelism, 2)), card('metric', p.metric)));
    // The verdict first (report's diagnosis, most important first).
    if ((p.diagnosis || []).length) {
      box.appendChild(el('h3', null, 'Diagnosis'));
      box.appendChild(el('ol', { class: 'diagnosis' }, p.diagnosis.map((d) =>
        el('li', null, el('b', null, d.finding), d.location ? ' [' + d.location + ']' : '', ': ',
          d.evidence, '. ', el('i', null, 'What to do: ' + d.advice + '.')))));
    }
    const facts = [];
    if (!p.complete) facts.push('the trace was cut short: the profile covers what was recorded');
    for (const w of p.warnings || []) facts.push(w);
    for (const n of p.notes || []) facts.push(n);  // findings about loops (docs/report-json.md)
    if (facts.length) box.appendChild(el('ul', { class: 'plain warn' }, facts.map((f) => el('li', null, f))));
  }

  // ---- Differential (tasklens diff's JSON, docs/report-json.md) -------------------------------
  // A unit is highlighted as inflated when its work in the sort metric grew by this factor.
  const INFLATED = 1.1;
  function renderDiff(box) {
    const d = runs[0].diff;
    if (unavailable(d)) {
      box.appendChild(el('p', { class: 'note diff-reason' }, 'No differential table: ' + (d ? d.unavailable : 'no diff in this page')));
      return;
    }
    const ms = d.metrics, k = d.sort_metric;
    const rateOf = (side, m) => (side.units_per_second || {})[m] || 0;
    const ratio = (x) => (x === null || x === undefined ? '-' : x.toFixed(2) + 'x');
    const signed = (v, rate) => (v < 0 ? '-' : '+') + amount(Math.abs(v), rate);

    // The two recordings, in the sort metric.
    const sides = [['base', d.base], ['other', d.other]];
    const over = (a, b) => (b > 0 ? (a / b).toFixed(2) + 'x' : '-');
    const summary = el('table', { class: 'grid diff-summary' },
      el('thead', null, el('tr', null, ['', 'trace', 'program', 'threads', 'workers', 'tasks', 'elapsed', 'work (' + k + ')', 'span (' + k + ')', 'parallelism']
        .map((h, i) => el('th', { class: i >= 3 ? 'num' : null }, h)))),
      el('tbody', null, sides.map(([name, s]) => el('tr', null,
        el('td', null, name), el('td', null, s.trace), el('td', null, (s.executable || '').split('/').pop()),
        el('td', { class: 'num' }, s.threads), el('td', { class: 'num' }, s.workers), el('td', { class: 'num' }, s.tasks),
        el('td', { class: 'num' }, s.elapsed_seconds === null ? '-' : amount(s.elapsed_seconds, 1)),
        el('td', { class: 'num' }, amount(s.work[k], rateOf(s, k))), el('td', { class: 'num' }, amount(s.span[k], rateOf(s, k))),
        el('td', { class: 'num' }, fixed(s.parallelism[k], 2)))),
      el('tr', { class: 'ratio' }, el('td', null, 'other / base'), el('td'), el('td'), el('td'), el('td'), el('td'),
        el('td', { class: 'num' }, over(d.other.elapsed, d.base.elapsed)), el('td', { class: 'num' }, over(d.other.work[k], d.base.work[k])),
        el('td', { class: 'num' }, over(d.other.span[k], d.base.span[k])), el('td'))));
    box.appendChild(el('div', { class: 'scroll' }, summary));

    const p = d.program[k], rate = rateOf(d.other, k);
    box.appendChild(el('p', { class: 'diff-program' }, 'Whole program (' + k + '): work ' + amount(p.base, rateOf(d.base, k)) + ' in base, ' +
      amount(p.other, rate) + ' in other (' + ratio(p.ratio) + ', ' + signed(p.inflation, rate) + '); ' +
      (p.cost >= 0 ? 'scaled back to base\'s work, other\'s span would be ' + amount(p.cost, rate) + ' shorter (' + fixed(p.cost_percent, 1) + '% of it).'
        : 'other did less work than base: scaled back, its span would be ' + amount(-p.cost, rate) + ' longer.')));
    const facts = [];
    for (const [name, s] of sides) {
      if (!s.complete) facts.push(name + ': the trace was cut short');
      for (const w of s.warnings || []) facts.push(name + ': ' + w);
    }
    for (const n of d.notes || []) facts.push(n);
    if (facts.length) box.appendChild(el('ul', { class: 'plain warn diff-notes' }, facts.map((f) => el('li', null, f))));

    // Per metric: base, other, ratio, cost, cost% (the sort metric first).
    const order = [k].concat(ms.filter((m) => m !== k));
    const several = ms.length > 1;
    function columns(withCost) {
      const cols = [
        { key: 'unit', title: 'unit' },
        { key: 'kind', title: 'kind' },
        { key: 'function', title: 'function' },
      ];
      for (const m of order) {
        const t = (x) => (several ? m + ' ' + x : x);
        const br = rateOf(d.base, m), or = rateOf(d.other, m);
        cols.push({ key: m + '.base', title: t('base'), num: true, fmt: (r) => amount(r[m + '.base'], br) });
        cols.push({ key: m + '.other', title: t('other'), num: true, fmt: (r) => amount(r[m + '.other'], or) });
        cols.push({ key: m + '.ratio', title: t('ratio'), num: true, fmt: (r) => ratio(r[m + '.ratio']),
          value: (r) => (r[m + '.ratio'] === null ? Number.MAX_VALUE : r[m + '.ratio']) });
        if (!withCost) continue;
        cols.push({ key: m + '.cost', title: t('cost'), num: true, fmt: (r) => signed(r[m + '.cost'], or) });
        cols.push({ key: m + '.cost_percent', title: t('cost %'), num: true, fmt: (r) => el('span', null,
          el('span', { class: 'pct' }, el('span', { style: 'width:' + Math.max(0, Math.min(100, r[m + '.cost_percent'])).toFixed(1) + '%' })),
          fixed(r[m + '.cost_percent'], 1) + '%') });
      }
      return cols;
    }
    function row(u, extra) {
      const r = Object.assign({ unit: u.unit, kind: u.kind, function: u.function || '' }, extra);
      for (const m of ms) for (const [f, v] of Object.entries(u.metrics[m])) r[m + '.' + f] = v;
      const x = u.metrics[k];
      if (!r._pinned && x.ratio !== null && x.ratio >= INFLATED) r._class = 'inflated';
      return r;
    }
    const program = () => row({ unit: '<whole program>', kind: 'program', metrics: d.program }, { _pinned: true, _class: 'program' });
    const table = (title, units, withCost, cls) => {
      box.appendChild(el('h3', { class: 'sub' }, title));
      if (!units.length) { box.appendChild(el('p', { class: 'note' }, 'none')); return; }
      const wrap = sortableTable(columns(withCost), (withCost ? [program()] : []).concat(units.map((u) => row(u))));
      wrap.classList.add('diff-table', cls);
      box.appendChild(wrap);
    };
    table('Construct sites, by the cost of their inflation on other\'s critical path (' + k + ')', d.sites, true, 'diff-sites');
    table('Code fragments, by the cost of their inflation (' + k + ')', d.fragments, true, 'diff-fragments');
    const small = d.small_sites.concat(d.small_fragments);
    if (small.length) {
      const det = el('details', { class: 'diff-small' }, el('summary', null, small.length + ' units below ' + d.min_share_percent +
        '% of the work in both runs (their ratios are noise; no cost computed)'));
      box.appendChild(det);
      const inner = el('div');
      det.appendChild(inner);
      const wrap = sortableTable(columns(false), small.map((u) => row(u)));
      inner.appendChild(wrap);
    }
    const only = (name, list, side) => {
      if (!list.length) return;
      box.appendChild(el('p', { class: 'diff-only' }, 'only in ' + name + ': ',
        list.map((u, i) => el('span', null, i ? ', ' : '', el('code', null, u.unit), ' ' + u.kind + (u.function ? ' in ' + u.function : '') +
          ' (' + amount(u.work, rateOf(side, k)) + ')'))));
    };
    only('base', d.only_in_base, d.base);
    only('other', d.only_in_other, d.other);
  }

  // ---- Sortable tables ---------------------------------------------------------------------
  // columns: [{key, title, num, fmt(row) -> string|Node, value(row) -> sortable}]
  function sortableTable(columns, rows, opts) {
    const tbody = el('tbody');
    const heads = columns.map((c, i) => el('th', {
      class: 'sortable' + (c.num ? ' num' : ''), 'data-col': c.key, scope: 'col',
      onclick: () => sortBy(i),
    }, c.title));
    let current = -1, ascending = true;
    function fill(list) {
      tbody.textContent = '';
      for (const r of list) {
        const tr = el('tr', { class: r._class || null, 'data-key': r._key || null },
          columns.map((c) => el('td', { class: c.num ? 'num' : null }, c.fmt ? c.fmt(r) : String(r[c.key]))));
        tbody.appendChild(tr);
      }
    }
    function sortBy(i) {
      ascending = current === i ? !ascending : !columns[i].num;  // numbers: largest first
      current = i;
      const value = columns[i].value || ((r) => r[columns[i].key]);
      const pinned = rows.filter((r) => r._pinned), rest = rows.filter((r) => !r._pinned);
      rest.sort((a, b) => {
        const x = value(a), y = value(b);
        const c = typeof x === 'string' ? x.localeCompare(y) : x - y;
        return ascending ? c : -c;
      });
      heads.forEach((h, j) => h.setAttribute('aria-sort', j === i ? (ascending ? 'ascending' : 'descending') : 'none'));
      fill(pinned.concat(rest));
    }
    fill(rows);
    const table = el('table', { class: 'grid' }, el('thead', null, el('tr', null, heads)), tbody);
    return el('div', { class: 'scroll' }, table);
  }

  function siteKey(site, kind) { return site + '|' + kind; }

  function renderProfile(box, run) {
    const p = run.profile, rate = workRate(run);
    const rows = [Object.assign({ site: '<whole program>', function: '', kind: 'program', count: 1,
      critical_path_percent: 100, _pinned: true, _class: 'program' }, p.program)];
    for (const s of p.sites) rows.push(Object.assign({ _key: siteKey(s.site, s.kind) }, s));
    const bar = (r) => el('span', null, el('span', { class: 'pct' }, el('span', { style: 'width:' + Math.min(100, r.critical_path_percent).toFixed(1) + '%' })),
      r.critical_path_percent.toFixed(1) + '%');
    box.appendChild(sortableTable([
      { key: 'site', title: 'site', fmt: (r) => el('span', { title: r.file || null }, r.site) },
      { key: 'function', title: 'function' },
      { key: 'kind', title: 'kind' },
      { key: 'count', title: 'count', num: true },
      { key: 'work', title: 'work', num: true, fmt: (r) => amount(r.work, rate) },
      { key: 'span', title: 'span', num: true, fmt: (r) => amount(r.span, rate) },
      { key: 'parallelism', title: 'parallelism', num: true, fmt: (r) => fixed(r.parallelism, 2) },
      { key: 'critical_path_percent', title: 'crit.%', num: true, fmt: bar },
    ], rows));
  }

  // ---- Charts ------------------------------------------------------------------------------
  function niceMax(v) {
    if (!(v > 0)) return 1;
    const e = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * e >= v) return m * e;
    return 10 * e;
  }
  function yAxis(g, x0, x1, y, max, ticks, fmt) {
    for (let i = 0; i <= ticks; ++i) {
      const v = max * i / ticks, yy = y(v);
      g.appendChild(sv('line', { class: 'gridline', x1: x0, x2: x1, y1: yy, y2: yy }));
      g.appendChild(sv('text', { x: x0 - 6, y: yy + 4, 'text-anchor': 'end' }, fmt(v)));
    }
  }

  function renderWhatif(box, run) {
    const w = run.whatif;
    const units = w.units || [];
    if (!units.length) {
      box.appendChild(el('p', { class: 'note' }, 'No what-if units: the trace has no user region and no construct site (tasklens view --site/--region/--fragment names them).'));
      renderAdvice(box, run);
      return;
    }
    const side = el('div', { class: 'advice' });
    box.appendChild(el('div', { class: 'whatif-layout' }, whatifChart(w), side));
    renderAdvice(side, run);
  }

  function whatifChart(w) {
    const W = 640, H = 300, L = 56, R = 16, T = 14, B = 40;
    const factors = w.factors.map((f) => (f === 'inf' ? Infinity : f));
    const finite = factors.filter((f) => f !== Infinity);
    const maxLog = Math.max(1, ...finite.map((f) => Math.log2(f)));
    const hasInf = factors.includes(Infinity);
    const span = hasInf ? maxLog + Math.max(1, maxLog * 0.25) : maxLog;
    const xOf = (f) => L + (W - L - R) * (f === Infinity ? span : Math.log2(f)) / span;
    // Parallelism on a log scale: the "all" curve at k = inf can be orders of magnitude above
    // the others.
    let top = w.program.parallelism, bottom = w.program.parallelism;
    for (const u of w.units) for (const p of u.points) { top = Math.max(top, p.parallelism); bottom = Math.min(bottom, p.parallelism); }
    const lo = Math.pow(10, Math.floor(Math.log10(Math.max(bottom, 1e-3) * 0.95)));
    const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(top, lo * 10) * 1.05)));
    const y = (v) => T + (H - T - B) * (1 - (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)));
    const svg = sv('svg', { class: 'chart whatif-chart', viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'what-if curves' });
    const g = sv('g', { class: 'axis' });
    for (let d = lo; d <= hi * 1.001; d *= 10) {
      for (const m of [1, 2, 5]) {
        const v = d * m;
        if (v > hi * 1.001) break;
        g.appendChild(sv('line', { class: 'gridline', x1: L, x2: W - R, y1: y(v), y2: y(v) }));
        g.appendChild(sv('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end' }, amount(v, 0)));
      }
    }
    const xs = [1].concat(factors);
    for (const f of xs) {
      const xx = xOf(f);
      g.appendChild(sv('line', { x1: xx, x2: xx, y1: H - B, y2: H - B + 4 }));
      g.appendChild(sv('text', { x: xx, y: H - B + 16, 'text-anchor': 'middle' }, f === Infinity ? 'inf' : String(f)));
    }
    g.appendChild(sv('text', { x: (L + W - R) / 2, y: H - 6, 'text-anchor': 'middle' }, 'factor k (log scale); parallelism on a log scale'));
    g.appendChild(sv('text', { x: 12, y: T + (H - T - B) / 2, transform: 'rotate(-90 12 ' + (T + (H - T - B) / 2) + ')', 'text-anchor': 'middle' }, 'parallelism'));
    svg.appendChild(g);
    // The recorded parallelism (k = 1) as a dashed baseline.
    svg.appendChild(sv('line', { x1: L, x2: W - R, y1: y(w.program.parallelism), y2: y(w.program.parallelism), stroke: '#9aa3af', 'stroke-dasharray': '4 3' }));
    const legend = el('div', { class: 'legend' });
    w.units.forEach((u, i) => {
      const color = u.kind === 'all' ? '#1d2330' : PALETTE[i % PALETTE.length];
      const pts = [[xOf(1), y(w.program.parallelism)]].concat(
        u.points.map((p) => [xOf(p.factor === 'inf' ? Infinity : p.factor), y(p.parallelism)]));
      svg.appendChild(sv('polyline', { class: 'curve', points: pts.map((p) => p.join(',')).join(' '), fill: 'none', stroke: color,
        'stroke-width': u.kind === 'all' ? 2.5 : 1.8, 'stroke-dasharray': u.kind === 'all' ? '6 3' : null }));
      for (const [i2, p] of u.points.entries()) {
        const c = sv('circle', { cx: pts[i2 + 1][0], cy: pts[i2 + 1][1], r: 3, fill: color });
        c.appendChild(sv('title', null, u.unit + ' at k=' + p.factor + ': parallelism ' + fixed(p.parallelism, 2)));
        svg.appendChild(c);
      }
      legend.appendChild(el('span', null, el('span', { class: 'sw', style: 'background:' + color }),
        u.unit, el('span', { class: 'note' }, ' (' + u.kind + ', ' + fixed(u.critical_path_percent, 1) + '% of the path)')));
    });
    legend.appendChild(el('span', null, el('span', { class: 'sw', style: 'background:#9aa3af' }), 'recorded: ' + fixed(w.program.parallelism, 2)));
    return el('div', null, el('div', { class: 'note' }, 'mode ' + w.mode), svg, legend);
  }

  const STOPS = {
    'target-reached': 'stopped: the target parallelism is reached',
    'already-reached': 'the recorded parallelism already reaches the target',
    'candidate-too-small': 'stopped: the next candidate does too little work per strand to pay for a task',
    'nothing-left': 'stopped: no candidate left on the critical path',
    'max-steps': 'stopped after the most steps',
  };
  function renderAdvice(box, run) {
    const a = run.advise;
    if (!a) return;
    const rate = workRate(run);
    box.appendChild(el('h3', { class: 'sub' }, 'Adviser'));
    box.appendChild(el('div', { class: 'note' }, 'target parallelism ' + fixed(a.target, 1) + ' (' + a.target_origin + '), each step parallelizes a fragment ' + a.factor + ' ways'));
    const ol = el('ol', { class: 'steps' });
    for (const s of a.steps || []) {
      ol.appendChild(el('li', null, el('code', null, s.fragment), s.function ? ' in ' : '', s.function ? el('code', null, s.function) : null,
        s.region ? ' (region ' : '', s.region ? el('code', null, s.region) : null, s.region ? ')' : '',
        ': ' + fixed(s.critical_path_percent, 1) + '% of the critical path; then parallelism ' + fixed(s.parallelism, 2) + ', span ' + amount(s.span, rate)));
    }
    if (!(a.steps || []).length) ol.appendChild(el('li', { class: 'note' }, 'no step'));
    box.appendChild(ol);
    box.appendChild(el('div', null, STOPS[a.stop] || a.stop));
    if (a.burdened) {
      box.appendChild(el('div', { class: 'note' }, 'burdened parallelism (every task start charged the tasking overhead): ' +
        fixed(a.burdened.before.parallelism, 2) + ' before, ' + fixed(a.burdened.after.parallelism, 2) + ' after the steps'));
    }
  }

  function renderOverTime(box, run) {
    const s = run.sched;
    if (unavailable(s)) { box.appendChild(el('p', { class: 'note' }, s ? s.unavailable : 'no data')); return; }
    const series = s.parallelism.series, hz = s.tsc_per_second;
    const W = 900, H = 240, L = 46, R = 12, T = 12, B = 34;
    const first = s.first, elapsed = s.elapsed || 1;
    let top = s.workers;
    for (const p of series) top = Math.max(top, p.ready, p.running);
    const max = niceMax(top);
    const x = (t) => L + (W - L - R) * (t - first) / elapsed;
    const y = (v) => T + (H - T - B) * (1 - v / max);
    const svg = sv('svg', { class: 'chart overtime-chart', viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'parallelism over time' });
    const g = sv('g', { class: 'axis' });
    yAxis(g, L, W - R, y, max, 4, (v) => fixed(v, v < 10 ? 1 : 0));
    for (let i = 0; i <= 5; ++i) {
      const t = first + elapsed * i / 5;
      g.appendChild(sv('text', { x: x(t), y: H - B + 16, 'text-anchor': i === 0 ? 'start' : i === 5 ? 'end' : 'middle' }, amount(elapsed * i / 5, hz)));
    }
    svg.appendChild(g);
    let area = 'M' + x(first) + ',' + y(0), ready = '';
    for (const p of series) {
      area += ' L' + x(p.begin) + ',' + y(p.running) + ' L' + x(p.end) + ',' + y(p.running);
      ready += (ready ? ' L' : 'M') + x(p.begin) + ',' + y(p.ready) + ' L' + x(p.end) + ',' + y(p.ready);
    }
    area += ' L' + x(first + elapsed) + ',' + y(0) + ' Z';
    svg.appendChild(sv('path', { class: 'running', d: area, fill: 'var(--work)', 'fill-opacity': 0.45, stroke: 'var(--work)', 'stroke-width': 1 }));
    svg.appendChild(sv('path', { class: 'ready', d: ready, fill: 'none', stroke: 'var(--ready)', 'stroke-width': 1.5 }));
    svg.appendChild(sv('line', { x1: L, x2: W - R, y1: y(s.workers), y2: y(s.workers), stroke: '#1d2330', 'stroke-dasharray': '5 4' }));
    box.appendChild(svg);
    const p = s.parallelism;
    box.appendChild(el('div', { class: 'legend' },
      el('span', null, el('span', { class: 'sw', style: 'background:var(--work)' }), 'running: average ' + fixed(p.running_average, 2) + ', max ' + p.running_max),
      el('span', null, el('span', { class: 'sw', style: 'background:var(--ready)' }), 'ready: average ' + fixed(p.ready_average, 2) + ', max ' + p.ready_max),
      el('span', null, el('span', { class: 'sw', style: 'background:#1d2330' }), s.workers + ' workers'),
      el('span', { class: 'note' }, 'elapsed ' + amount(s.elapsed, hz))));
  }

  // ---- Timeline and hierarchy (structure section) ------------------------------------------
  function siteName(st, site) {
    const s = st.sites[site];
    return s ? s.site + (s.function ? ' (' + s.function + ')' : '') : '?';
  }

  function renderTimeline(box, run) {
    const st = run.structure, tl = st.timeline;
    if (unavailable(tl)) { box.appendChild(el('p', { class: 'note' }, tl.unavailable)); return; }
    const hz = tscRate(run);
    const rowH = 22, gap = 6, L = 70, R = 10, T = 20;
    const W = 1100, H = T + tl.workers.length * (rowH + gap) + 20;
    // The visible time range [from, to) in ticks after `first`: drag across the chart to zoom
    // into a range (slices outside it are not drawn), the buttons to zoom out.
    let from = 0, to = tl.elapsed, selected = null;
    const holder = el('div', { class: 'timeline-wrap' });
    const rangeNote = el('span', { class: 'note' });
    function draw() {
      const x = (t) => L + (W - L - R) * (t - from) / (to - from);
      const clip = (v) => Math.min(W - R, Math.max(L, v));
      const svg = sv('svg', { class: 'chart timeline', viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'per-worker timeline' });
      const g = sv('g', { class: 'axis' });
      for (let i = 0; i <= 8; ++i) {
        const t = from + (to - from) * i / 8;
        g.appendChild(sv('line', { class: 'gridline', x1: x(t), x2: x(t), y1: T - 4, y2: H - 18 }));
        g.appendChild(sv('text', { x: x(t), y: H - 4, 'text-anchor': i === 0 ? 'start' : i === 8 ? 'end' : 'middle' }, amount(t, hz)));
      }
      svg.appendChild(g);
      tl.workers.forEach((w, row) => {
        const y0 = T + row * (rowH + gap);
        svg.appendChild(sv('text', { x: L - 8, y: y0 + rowH / 2 + 4, 'text-anchor': 'end' }, 'thread ' + w.thread));
        svg.appendChild(sv('rect', { x: L, y: y0, width: W - L - R, height: rowH, fill: '#f3f5f8' }));
        w.slices.forEach(([b, e, busy, site, agg, n], k) => {
          if (e < from || b > to) return;
          const x0 = clip(x(b)), width = Math.max(0.6, clip(x(e)) - x0);
          const fill = e > b ? Math.max(0.35, busy / (e - b)) : 1;
          const key = row + ':' + k;
          const r = sv('rect', { class: 'slice' + (key === selected ? ' sel' : ''), x: x0, y: y0, width: width, height: rowH, fill: siteColor(site),
            'fill-opacity': fill.toFixed(2), 'data-agg': agg, 'data-site': site });
          r.appendChild(sv('title', null, siteName(st, site) + '\n' + (n > 1 ? n + ' strands, ' : '') + amount(busy, hz) + ' running, at ' + amount(b, hz)));
          r.addEventListener('click', () => {
            for (const o of svg.querySelectorAll('rect.sel')) o.classList.remove('sel');
            r.classList.add('sel');
            selected = key;
            selectConstruct(run.index, agg, site);
          });
          svg.appendChild(r);
        });
      });
      // Drag to zoom: a band follows the pointer; a release more than 4 units away zooms.
      const band = sv('rect', { class: 'zoomband', x: 0, y: T - 4, width: 0, height: H - T - 14, fill: 'rgba(47,111,219,.15)', stroke: '#2f6fdb', visibility: 'hidden' });
      svg.appendChild(band);
      let start = null;
      const unit = (ev) => (ev.clientX - svg.getBoundingClientRect().left) * W / svg.getBoundingClientRect().width;
      svg.addEventListener('mousedown', (ev) => { start = unit(ev); });
      svg.addEventListener('mousemove', (ev) => {
        if (start === null) return;
        const u = unit(ev);
        band.setAttribute('x', Math.min(start, u));
        band.setAttribute('width', Math.abs(u - start));
        band.setAttribute('visibility', Math.abs(u - start) > 4 ? 'visible' : 'hidden');
      });
      svg.addEventListener('mouseup', (ev) => {
        if (start === null) return;
        const u = unit(ev), a = clip(Math.min(start, u)), b = clip(Math.max(start, u));
        start = null;
        if (b - a <= 4) return;
        const t = (v) => from + (to - from) * (v - L) / (W - L - R);
        zoom(t(a), t(b));
      });
      holder.textContent = '';
      holder.appendChild(svg);
      rangeNote.textContent = from === 0 && to === tl.elapsed ? 'drag across the chart to zoom in'
        : 'showing ' + amount(from, hz) + ' to ' + amount(to, hz);
    }
    function zoom(a, b) {
      const min = Math.max(1, tl.elapsed / 1e6);
      if (b - a < min) b = a + min;
      from = Math.max(0, a);
      to = Math.min(tl.elapsed, b);
      draw();
    }
    const toolbar = el('div', { class: 'toolbar' },
      el('button', { class: 'zoom-out', onclick: () => { const w = to - from; zoom(from - w / 2, to + w / 2); } }, 'Zoom out'),
      el('button', { class: 'zoom-reset', onclick: () => zoom(0, tl.elapsed) }, 'Whole run'), rangeNote);
    box.appendChild(toolbar);
    box.appendChild(holder);
    draw();
    const used = new Map();
    for (const w of tl.workers) for (const sl of w.slices) used.set(sl[3], (used.get(sl[3]) || 0) + sl[2]);
    const legend = el('div', { class: 'legend' });
    [...used.entries()].sort((a, b) => b[1] - a[1]).slice(0, 14).forEach(([site]) =>
      legend.appendChild(el('span', null, el('span', { class: 'sw', style: 'background:' + siteColor(site) }), siteName(st, site))));
    box.appendChild(legend);
    box.appendChild(el('div', { class: 'note' }, tl.merged
      ? tl.timed_strands + ' strands merged per worker into time buckets of ' + amount(tl.bucket, hz) + ' (lighter: the bucket was partly idle; color: the site with most time in it)'
      : tl.timed_strands + ' strands, each one slice'));
  }

  const STRUCTURAL = new Set(['phase', 'implicit-task', 'chunk', 'loop']);
  const trees = [];  // per run: {st, children, rows, expand(agg)}

  function renderTree(box, run) {
    const st = run.structure, tree = st.tree, nodes = tree.nodes;
    const rate = workRate(run), span = st.program.span, work = st.program.work;
    const children = nodes.map(() => []);
    for (const n of nodes) if (n.parent !== null) children[n.parent].push(n.id);
    const rows = new Map();  // aggregate id -> {row, kids (container), open}
    const container = el('div', { class: 'tree' });
    container.appendChild(el('div', { class: 'tree-row head' }, el('div', null, 'construct (x count)'), el('div', { class: 'num' }, 'crit.%'),
      el('div', { class: 'num' }, 'work'), el('div', { class: 'num' }, 'span'), el('div', { class: 'num' }, 'parallelism'), el('div', { class: 'num' }, 'strands')));

    function label(n) {
      if (n.site !== null && n.kind !== 'program') return siteName(st, n.site);
      return n.kind === 'program' ? 'program' : '(' + n.kind + ')';
    }
    function makeRow(id) {
      const n = nodes[id];
      const kids = el('div', { class: 'tree-kids', hidden: true });
      const hasKids = children[id].length > 0;
      const toggle = el('button', { class: 'toggle' + (hasKids ? '' : ' leaf'), 'aria-expanded': 'false', title: hasKids ? 'expand' : (n.cut ? 'deeper levels not listed (--tree-nodes)' : 'no children') }, '+');
      const par = n.span_sum ? n.work / n.span_sum : 0;
      const row = el('div', { class: 'tree-row', id: 'tree-' + run.index + '-' + id, 'data-agg': id, 'data-depth': n.depth },
        el('div', { class: 'name', style: 'padding-left:' + (n.depth * 16) + 'px' }, toggle,
          el('span', { class: 'kind' + (n.site === null || STRUCTURAL.has(n.kind) ? ' structural' : '') }, n.kind),
          el('span', { class: 'lbl' }, label(n)), n.count > 1 ? el('span', { class: 'fork' }, 'x' + n.count) : null,
          n.cut ? el('span', { class: 'fork', title: 'deeper levels not listed (--tree-nodes)' }, '...') : null),
        el('div', { class: 'num' }, fixed(pct(n.critical, span), 1)),
        el('div', { class: 'num' }, el('span', { class: 'pct', style: 'width:50px' }, el('span', { style: 'width:' + pct(n.work, work).toFixed(1) + '%' })), amount(n.work, rate)),
        el('div', { class: 'num' }, n.span === null ? '-' : amount(n.span, rate)),
        el('div', { class: 'num' }, n.span_sum ? fixed(par, 2) : '-'),
        el('div', { class: 'num' }, n.strands));
      const entry = { row, kids, open: false, built: false, toggle };
      rows.set(id, entry);
      toggle.addEventListener('click', () => setOpen(id, !entry.open));
      return el('div', { class: 'tree-node' }, row, kids);
    }
    function setOpen(id, open) {
      const e = rows.get(id);
      if (!e || !children[id].length) return;
      if (open && !e.built) {
        for (const c of children[id]) e.kids.appendChild(makeRow(c));
        e.built = true;
      }
      e.open = open;
      e.kids.hidden = !open;
      e.toggle.textContent = open ? '-' : '+';
      e.toggle.setAttribute('aria-expanded', String(open));
    }
    // Expands every open path one level deeper (the deepest visible closed nodes).
    function expandLevel() {
      const closed = [...rows.entries()].filter(([id, e]) => !e.open && children[id].length && isVisible(id));
      if (!closed.length) return;
      const depth = Math.min(...closed.map(([id]) => nodes[id].depth));
      for (const [id] of closed) if (nodes[id].depth === depth) setOpen(id, true);
    }
    function isVisible(id) {
      for (let p = nodes[id].parent; p !== null; p = nodes[p].parent) if (!rows.get(p) || !rows.get(p).open) return false;
      return true;
    }
    container.appendChild(makeRow(0));
    setOpen(0, true);
    const toolbar = el('div', { class: 'toolbar' },
      el('button', { class: 'expand-level', onclick: expandLevel }, 'Expand one level'),
      el('button', { class: 'collapse-all', onclick: () => { for (const id of rows.keys()) if (id !== 0) setOpen(id, false); } }, 'Collapse all'),
      el('span', { class: 'note' }, tree.aggregates + ' groups of ' + tree.model_nodes + ' construct nodes' +
        (tree.cut ? '; ' + tree.cut + ' groups with deeper levels not listed (--tree-nodes ' + tree.max_nodes + ')' : '') +
        (tree.note ? '; ' + tree.note : tree.spans_complete ? '' : '; some spans not computed (too many strands)')));
    box.appendChild(toolbar);
    box.appendChild(container);
    trees[run.index] = {
      reveal(agg) {
        const chain = [];
        for (let p = nodes[agg] ? nodes[agg].parent : null; p !== null; p = nodes[p].parent) chain.push(p);
        for (const p of chain.reverse()) setOpen(p, true);
        const e = rows.get(agg);
        if (!e) return null;
        return e.row;
      },
    };
  }

  // From a timeline slice: highlight its construct group in the hierarchy and its site's row in
  // the profile, and scroll the hierarchy to it.
  function selectConstruct(runIndex, agg, site) {
    for (const o of document.querySelectorAll('.hl')) o.classList.remove('hl');
    const t = trees[runIndex];
    const row = t ? t.reveal(agg) : null;
    if (row) {
      row.classList.add('hl');
      row.scrollIntoView({ block: 'center' });
    }
    const st = runs[runIndex].structure, s = st.sites[site];
    if (!s) return;
    const col = document.querySelector('#view-profile .col[data-run="' + runIndex + '"]');
    if (!col) return;
    for (const tr of col.querySelectorAll('tr[data-key]')) {
      if (tr.getAttribute('data-key') === siteKey(s.site, s.kind)) tr.classList.add('hl');
    }
  }

  // ---- Tasks -------------------------------------------------------------------------------
  function histogram(bins, color, unitRate) {
    const W = 200, H = 90, B = 16, T = 4;
    const max = Math.max(1, ...bins.map((b) => b.count));
    const svg = sv('svg', { class: 'chart hist', viewBox: '0 0 ' + W + ' ' + H });
    const bw = W / Math.max(1, bins.length);
    bins.forEach((b, i) => {
      const h = (H - B - T) * b.count / max;
      const r = sv('rect', { x: i * bw + 1, y: H - B - h, width: Math.max(1, bw - 2), height: h, fill: color });
      r.appendChild(sv('title', null, '[' + amount(b.lower, unitRate) + ', ' + amount(b.upper, unitRate) + '): ' + b.count));
      svg.appendChild(r);
    });
    svg.appendChild(sv('line', { x1: 0, x2: W, y1: H - B, y2: H - B, stroke: '#9aa3af' }));
    if (bins.length) {
      svg.appendChild(sv('text', { x: 0, y: H - 3 }, amount(bins[0].lower, unitRate)));
      svg.appendChild(sv('text', { x: W, y: H - 3, 'text-anchor': 'end' }, amount(bins[bins.length - 1].upper, unitRate)));
    }
    return svg;
  }
  function renderTasks(box, run) {
    const t = run.tasks;
    if (unavailable(t)) { box.appendChild(el('p', { class: 'note' }, t ? t.unavailable : 'no data')); return; }
    const rate = workRate(run), hz = t.tsc_per_second;
    if ((t.findings || []).length)
      box.appendChild(el('ul', { class: 'plain' }, t.findings.map((f) => el('li', null, el('span', { class: 'kind' }, f.kind), ' ', f.text))));
    const grid = el('div', { class: 'types' });
    for (const ty of t.types.slice(0, 24)) {
      grid.appendChild(el('div', { class: 'type' },
        el('h3', null, ty.site, ty.function ? el('span', { class: 'note' }, ' ' + ty.function) : null, ' ', el('span', { class: 'kind' }, ty.kind)),
        el('div', { class: 'stats' }, ty.count + ' ' + ty.unit + 's, ' + fixed(ty.work_percent, 1) + '% of the work; size median ' + amount(ty.size.median, rate) +
          ', p90 ' + amount(ty.size.p90, rate) + '; wait median ' + amount(ty.wait.median, hz)),
        el('div', { class: 'hists' },
          el('div', null, el('div', { class: 'cap' }, 'size'), histogram(ty.size_histogram, 'var(--work)', rate)),
          el('div', null, el('div', { class: 'cap' }, 'waiting time'), histogram(ty.wait_histogram, 'var(--ready)', hz)))));
    }
    box.appendChild(grid);
    if (t.types.length > 24) box.appendChild(el('p', { class: 'note' }, (t.types.length - 24) + ' smaller task types not shown (tasklens tasks lists them)'));
  }

  // ---- Scheduling breakdown ----------------------------------------------------------------
  function renderSched(box, run) {
    const s = run.sched;
    if (unavailable(s)) { box.appendChild(el('p', { class: 'note' }, s ? s.unavailable : 'no data')); return; }
    const hz = s.tsc_per_second;
    const parts = [['work', 'var(--work)'], ['delay', 'var(--delay)'], ['no_work_sched', 'var(--nwsched)'], ['no_work_app', 'var(--nwapp)']];
    const bars = el('div', { class: 'bars' });
    const bar = (name, c, total) => {
      const stack = el('div', { class: 'stack' });
      for (const [k, color] of parts) {
        const share = pct(c[k], total);
        if (share <= 0) continue;
        const d = el('div', { class: 'seg-' + k, style: 'width:' + share.toFixed(3) + '%;background:' + color });
        d.title = k.replace(/_/g, '-') + ': ' + amount(c[k], hz) + ' (' + share.toFixed(1) + '%)';
        stack.appendChild(d);
      }
      return el('div', { class: 'row' + (name === 'total' ? ' total' : '') }, el('div', null, name), stack, el('div', { class: 'num' }, fixed(pct(c.work, total), 1) + '% work'));
    };
    for (const w of s.per_worker) bars.appendChild(bar('thread ' + w.thread, w, w.cumulative));
    bars.appendChild(bar('total', s.breakdown, s.breakdown.cumulative));
    box.appendChild(bars);
    box.appendChild(el('div', { class: 'legend' }, parts.map(([k, color]) =>
      el('span', null, el('span', { class: 'sw', style: 'background:' + color }), k.replace(/_/g, '-') + ' ' + fixed(pct(s.breakdown[k], s.breakdown.cumulative), 1) + '%'))));
    const b = s.bounds, rate = workRate(run);
    box.appendChild(el('div', { class: 'note' }, 'observed ' + amount(s.elapsed, hz) + ' on ' + s.workers + ' workers; T1 ' + amount(b.work, rate) + ', T-infinity ' + amount(b.span, rate) +
      ', greedy bound T1/P + T-infinity ' + amount(b.greedy_bound, rate) + (b.observed_over_bound ? ' (observed / bound ' + fixed(b.observed_over_bound, 2) + ')' : '')));
    for (const n of s.notes || []) box.appendChild(el('div', { class: 'note' }, n));
  }

  // ---- Page --------------------------------------------------------------------------------
  function build() {
    const main = document.getElementById('views');
    main.textContent = '';
    document.getElementById('title').textContent = runs.map((r) => r.label).join('  vs  ');
    const toc = document.getElementById('toc');
    for (const v of VIEWS) {
      if (v.compareOnly && runs.length < 2) continue;  // a comparison needs two runs
      toc.appendChild(el('a', { href: '#view-' + v.id }, v.title));
      const section = el('section', { class: 'view', id: 'view-' + v.id, 'data-view': v.id },
        el('h2', null, v.title), el('p', { class: 'explain' }, v.explain));
      const cols = el('div', { class: 'cols' + (runs.length > 1 && !v.once ? ' two' : '') });
      section.appendChild(cols);
      main.appendChild(section);
      const targets = v.once ? [null] : runs;
      let ok = true;
      for (const run of targets) {
        const col = el('div', { class: 'col', 'data-run': run ? run.index : 'all' });
        if (run && runs.length > 1) col.appendChild(el('div', { class: 'runlabel' }, run.label));
        cols.appendChild(col);
        try {
          if (run && v.section && !run[v.section]) col.appendChild(el('p', { class: 'note' }, 'not in this run'));
          else v.render(col, run || runs);
        } catch (e) {
          ok = false;
          col.appendChild(el('p', { class: 'error' }, 'could not draw this view: ' + e.message));
          console.error('tasklens view ' + v.id + ':', e);
        }
      }
      section.setAttribute('data-rendered', ok ? 'true' : 'false');
    }
    // For tests and the bench: when every view was drawn, in ms since navigation start.
    document.body.setAttribute('data-ready-ms', performance.now().toFixed(1));
    document.body.setAttribute('data-ready', 'true');
  }

  build();
})();
