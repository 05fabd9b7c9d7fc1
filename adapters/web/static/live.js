(function () {
  const root = document.body;
  let version = Number(root.dataset.version);
  const watching = root.dataset.request;
  let leaving = false;
  document.addEventListener('submit', (event) => {
    // A button may ask first: Cancel interrupts the agent.
    const question = event.submitter && event.submitter.dataset.confirm;
    if (question) {
      if (!confirm(question)) {
        event.preventDefault();
        return;
      }
      // Said yes here, so the page that asks where no script runs is not shown as well.
      const yes = document.createElement('input');
      yes.type = 'hidden';
      yes.name = 'confirmed';
      yes.value = 'yes';
      event.target.append(yes);
    }
    // A date and time goes with the offset of the person's zone at that time (summer or not).
    for (const input of document.querySelectorAll('input[data-zone]')) {
      const zone = document.getElementById(input.dataset.zone);
      const offset = offsetAt(input.value);
      if (zone && offset) zone.value = offset;
    }
    // Once the person submits, this page is on its way out: never navigate over that.
    leaving = true;
  });
  function two(number) {
    return String(number).padStart(2, '0');
  }
  function offsetAt(local) {
    // "+01:00" for a "YYYY-MM-DDTHH:MM" read as this browser's time; null for no such time.
    const when = new Date(local);
    return local && !isNaN(when.getTime()) ? offsetOf(when) : null;
  }
  function offsetOf(when) {
    const east = -when.getTimezoneOffset();
    const size = Math.abs(east);
    return (east < 0 ? '-' : '+') + two(Math.floor(size / 60)) + ':' + two(size % 60);
  }
  function showInOwnZone(input) {
    // The page shows a time in the offset it came with (UTC when none); shown again in the
    // browser's zone, it is typed over in the zone the person thinks in.
    const zone = document.getElementById(input.dataset.zone);
    if (!zone) return;
    if (input.value) {
      const instant = new Date(input.value + zone.value);
      if (!isNaN(instant.getTime())) {
        const seconds = instant.getSeconds() ? ':' + two(instant.getSeconds()) : '';
        input.value = instant.getFullYear() + '-' + two(instant.getMonth() + 1) + '-' +
          two(instant.getDate()) + 'T' + two(instant.getHours()) + ':' +
          two(instant.getMinutes()) + seconds;
      }
    }
    showZone(input);
    // The offset follows the time typed (summer or winter), so the hint follows it too.
    input.addEventListener('input', () => showZone(input));
  }
  function showZone(input) {
    const zone = document.getElementById(input.dataset.zone);
    zone.value = offsetAt(input.value) || offsetOf(new Date());
    const hint = document.getElementById(input.id + '-hint');
    const name = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const named = name ? name + ', ' : '';
    if (hint) hint.textContent = 'Time in your time zone (' + named + 'UTC' + zone.value + ').';
  }
  document.querySelectorAll('input[data-zone]').forEach(showInOwnZone);
  function showTimes(within) {
    // Each time comes in UTC, which reads right where no script runs; shown again in the
    // browser's zone, named as the browser names it ("GMT+9", "EST"), the UTC kept as a tip.
    for (const time of within.querySelectorAll('time[datetime]')) {
      const when = new Date(time.dateTime);
      if (isNaN(when.getTime())) continue;
      const zone = new Intl.DateTimeFormat(undefined, {timeZoneName: 'short'})
        .formatToParts(when).find(part => part.type === 'timeZoneName');
      time.title = time.textContent;
      time.textContent = when.getFullYear() + '-' + two(when.getMonth() + 1) + '-' +
        two(when.getDate()) + ' ' + two(when.getHours()) + ':' + two(when.getMinutes()) +
        (zone ? ' ' + zone.value : '');
    }
  }
  showTimes(document);
  async function followRequest() {
    // A question's page follows its own request only, so that nothing else reloads it and
    // loses the person's unsubmitted choice; it reloads once the request stops waiting.
    // A page opened from a link's token follows with the same token.
    const token = new URLSearchParams(location.search).get('token');
    const feed = '/web/changes?request=' + encodeURIComponent(watching)
      + (token ? '&token=' + encodeURIComponent(token) : '');
    while (!leaving) {
      try {
        const reply = await fetch(feed, {cache: 'no-store'});
        const body = await reply.json();
        if (leaving || body.status === 'waiting') continue;
        // A GET of the question, not reload(): this page may be the answer to a POST.
        location.replace(location.pathname + (token ? '?token=' + encodeURIComponent(token) : ''));
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
        const live = html.getElementById('live');
        document.getElementById('live').replaceWith(live);
        showTimes(live);
      } catch (error) {
        await new Promise(resume => setTimeout(resume, 3000));
      }
    }
  }
  // Only the list and a waiting question change under the reader's eyes.
  if (watching) followRequest();
  else if (document.getElementById('live')) followList();
})();
