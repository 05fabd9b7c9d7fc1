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
  async function followRequest() {
    // A question's page follows its own request only, so that nothing else reloads it and
    // loses the person's unsubmitted choice; it reloads once the request stops waiting.
    const feed = '/web/changes?request=' + encodeURIComponent(watching);
    while (!leaving) {
      try {
        const reply = await fetch(feed, {cache: 'no-store'});
        const body = await reply.json();
        if (leaving || body.status === 'waiting') continue;
        // A GET of the question, not reload(): this page may be the answer to a POST.
        location.replace(location.pathname);
        return;
      } catch (error) {
        await new Promise(resume => setTimeout(resume, 3000));
      }
    }
  }
  async function followList() {
    while (true) {
      try {
        const reply = await fetch('/web/changes?since=' + version, {cache: 'no-store'});
        const body = await reply.json();
        if (body.version === version) continue;
        version = body.version;
        // The same page of the list (`?before=`), as it is now.
        const page = await fetch(location.pathname + location.search, {cache: 'no-store'});
        const html = new DOMParser().parseFromString(await page.text(), 'text/html');
        document.getElementById('live').replaceWith(html.getElementById('live'));
      } catch (error) {
        await new Promise(resume => setTimeout(resume, 3000));
      }
    }
  }
  // Only the list and a waiting question change under the reader's eyes.
  if (watching) followRequest();
  else if (document.getElementById('live')) followList();
})();
