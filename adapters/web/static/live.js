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
