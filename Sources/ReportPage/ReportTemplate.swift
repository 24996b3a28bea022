/// The page's layout, a Mustache template: inline CSS for light and dark schemes, one section per
/// chart with its definition and its numbers folded beneath. `{{{svg}}}` is drawn by StackedChart.
enum ReportTemplate {
    static let page = #"""
    <!DOCTYPE html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Subscriptions: recovery and churn, {{from}} – {{to}}</title>
    <style>
    :root { color-scheme: light dark; --bg: #ffffff; --fg: #1d1d1f; --muted: #5f6368; --rule: #d0d0d0; }
    @media (prefers-color-scheme: dark) { :root { --bg: #16171a; --fg: #e8e8ea; --muted: #a0a4ab; --rule: #3a3c41; } }
    body { background: var(--bg); color: var(--fg); font: 15px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; max-width: 820px; margin: 2em auto; padding: 0 1em; }
    h1 { font-size: 1.5em; margin-bottom: .2em; } h2 { font-size: 1.15em; margin-top: 2em; }
    .muted, .definition { color: var(--muted); font-size: .92em; }
    .headline { display: flex; flex-wrap: wrap; gap: .5em 1.5em; margin: 1em 0; }
    .headline div { min-width: 9em; } .headline b { display: block; font-size: 1.4em; }
    svg.chart { width: 100%; height: auto; color: var(--fg); font-size: 11px; }
    svg.chart text { fill: currentColor; } svg.chart .grid { stroke: var(--rule); stroke-width: .5; }
    svg.chart .axis { stroke: currentColor; stroke-width: 1; } svg.chart .marker { stroke: currentColor; stroke-dasharray: 4 3; }
    svg.chart .reference { fill: none; stroke: currentColor; stroke-width: 2; } svg.chart .axis-title { font-size: 12px; }
    svg.chart .clipped-label { font-weight: 600; paint-order: stroke; stroke: var(--bg); stroke-width: 3px; }
    .legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .3em 1.2em; font-size: .9em; }
    .legend span { display: inline-block; width: .9em; height: .9em; margin-right: .35em; vertical-align: -.1em; border-radius: 2px; }
    table { border-collapse: collapse; font-size: .85em; margin: .5em 0; } td, th { padding: .15em .6em; text-align: right; border-bottom: 1px solid var(--rule); }
    th:first-child, td:first-child { text-align: left; } details { margin: .3em 0 1em; } summary { cursor: pointer; color: var(--muted); }
    .empty { padding: 2em; text-align: center; color: var(--muted); border: 1px dashed var(--rule); }
    @media print { details { display: block; } body { max-width: none; } }
    </style>
    </head>
    <body>
    <h1>Billing recovery and churn</h1>
    <p class="muted">{{environment}} subscriptions, {{from}} – {{to}}, from status-poller's audit trail (it starts {{trailStarts}}{{#trailStartsLate}}: older rows were pruned, so the days before it are not counted{{/trailStartsLate}}); generated {{generated}}.
    Every chart rests on the poll interval of {{pollInterval}}: a change shorter than it is invisible, and each date is when a poll or a notification saw it.</p>
    <div class="headline">
    {{#headline}}<div><b>{{value}}</b>{{label}}</div>{{/headline}}
    </div>
    {{#charts}}
    <section id="{{id}}">
    <h2>{{title}}</h2>
    {{#hasData}}{{{svg}}}{{/hasData}}{{^hasData}}<div class="empty">Nothing in this period.</div>{{/hasData}}
    <ul class="legend">{{#legend}}<li><span style="background: {{color}}"></span>{{name}}</li>{{/legend}}</ul>
    <p class="definition">{{definition}}</p>
    <details><summary>The numbers</summary>
    <table><thead><tr>{{#columns}}<th>{{.}}</th>{{/columns}}</tr></thead>
    <tbody>{{#rows}}<tr>{{#cells}}<td>{{.}}</td>{{/cells}}</tr>{{/rows}}</tbody></table>
    </details>
    </section>
    {{/charts}}
    </body>
    </html>
    """#
}
