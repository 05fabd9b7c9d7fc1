"""The page's style sheet and script, served from `/web/` so that the page's Content-Security-
Policy allows no inline style or script: text that slipped into the HTML could not run."""

from __future__ import annotations

STYLE_CSS = """
:root { color-scheme: light dark; --accent: #2f6feb; --muted: #6b7280; --bad: #c2410c; }
body { font: 16px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.4rem; } a { color: var(--accent); }
.context { color: var(--muted); margin: 0 0 1rem; white-space: pre-wrap; }
fieldset { border: 1px solid #8884; border-radius: .5rem; margin: 0 0 1rem; padding: .75rem 1rem; }
fieldset.missing { border-color: var(--bad); }
legend { font-weight: 600; padding: 0 .25rem; }
.tag { display: inline-block; font-size: .75rem; font-weight: 700; text-transform: uppercase;
       letter-spacing: .04em; background: #8882; border-radius: .25rem; padding: 0 .4rem; }
label.option { display: block; padding: .35rem .25rem; border-radius: .35rem; cursor: pointer; }
label.option:hover { background: #8881; }
.desc { display: block; color: var(--muted); font-size: .9rem; margin-left: 1.6rem; }
.error { color: var(--bad); font-weight: 600; }
.note { color: var(--accent); font-weight: 600; }
.question { white-space: pre-wrap; }
.hint { color: var(--muted); font-size: .85rem; }
button { font: inherit; padding: .45rem 1.1rem; border-radius: .4rem; border: 1px solid #8886;
         cursor: pointer; margin-right: .5rem; }
button.primary { background: var(--accent); color: white; border-color: var(--accent); }
button.danger { color: var(--bad); }
ul.requests { list-style: none; padding: 0; }
ul.requests li { border: 1px solid #8884; border-radius: .5rem; padding: .6rem 1rem;
                 margin: .5rem 0; }
#tally li.decided { font-weight: 600; }
table { border-collapse: collapse; } td, th { padding: .25rem .75rem .25rem 0; text-align: left; }
"""

LIVE_JS = """
(function () {
  const root = document.body;
  let version = Number(root.dataset.version);
  const watching = root.dataset.request;
  let leaving = false;
  document.addEventListener('submit', (event) => {
    // A button may ask first: Cancel interrupts the agent.
    const question = event.submitter && event.submitter.dataset.confirm;
    if (question && !confirm(question)) {
      event.preventDefault();
      return;
    }
    // Once the person submits, this page is on its way out: never navigate over that.
    leaving = true;
  });
  async function follow() {
    // Only the list and a waiting question change under the reader's eyes.
    if (!watching && !document.getElementById('live')) return;
    while (!leaving) {
      try {
        const reply = await fetch('/web/changes?since=' + version, {cache: 'no-store'});
        const body = await reply.json();
        if (leaving || body.version === version) continue;
        version = body.version;
        if (!watching) {
          const page = await fetch(location.pathname, {cache: 'no-store'});
          const html = new DOMParser().parseFromString(await page.text(), 'text/html');
          document.getElementById('live').replaceWith(html.getElementById('live'));
        } else if (!(body.waiting || []).includes(watching)) {
          // A GET of the question, not reload(): this page may be the answer to a POST.
          location.replace(location.pathname);
          return;
        }
      } catch (error) {
        await new Promise(resume => setTimeout(resume, 3000));
      }
    }
  }
  follow();
})();
"""
