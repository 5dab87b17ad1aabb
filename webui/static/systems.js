// systems.js: the Systems page, a Redfish client of /redfish/v1/Systems.
// Unfiltered, it pages the collection with $top/$skip; with a filter it
// reads the collection's member links once and pages the matches. Only
// the Systems on the page are read (System, its VirtualMedia, its
// Manager), and refreshed while the tab is visible.
'use strict';

const pageSize = 20;
const refreshMillis = 3000;
const systemsURI = '/redfish/v1/Systems';

const state = {
  skip: 0,
  filter: '',
  members: null, // every member link, read once a filter is set
  cards: new Map(), // System URI -> card
  tasks: new Map(), // System URI -> the Task of the page's last insert
  managers: new Map(), // System URI -> its Manager (console link)
  timer: 0,
};

const $ = (id) => document.getElementById(id);

function showError(msg) {
  $('error').textContent = msg || '';
  $('error').hidden = !msg;
}

// consoleURI is the Manager's graphical console page
// (Oem.RedfishBridge.GraphicalConsolePage) while its GraphicalConsole is
// enabled, if it is on this service or over https (never another scheme).
function consoleURI(manager) {
  const gc = manager && manager.GraphicalConsole;
  if (!gc || !gc.ServiceEnabled) return '';
  const oem = (manager.Oem && manager.Oem.RedfishBridge) || {};
  const page = oem.GraphicalConsolePage;
  if (typeof page !== 'string') return '';
  if (page.startsWith('/') && !page.startsWith('//')) return page;
  return page.startsWith('https://') ? page : '';
}

// page returns {uris, total} of the current window.
async function page() {
  if (!state.filter) {
    const c = await RF.get(`${systemsURI}?$top=${pageSize}&$skip=${state.skip}`);
    const uris = (c.Members || []).map((m) => m['@odata.id']);
    return { uris, total: c['Members@odata.count'] ?? uris.length };
  }
  if (!state.members) {
    const c = await RF.get(systemsURI);
    state.members = (c.Members || []).map((m) => m['@odata.id']);
  }
  const f = state.filter.toLowerCase();
  const matches = state.members.filter((u) => decodeURIComponent(u.slice(systemsURI.length + 1)).toLowerCase().includes(f));
  return { uris: matches.slice(state.skip, state.skip + pageSize), total: matches.length };
}

async function load() {
  try {
    const { uris, total } = await page();
    if (state.skip > 0 && state.skip >= total) {
      state.skip = Math.max(0, total - pageSize);
      return load();
    }
    $('range').textContent = total === 0 ? 'no Systems' :
      `${state.skip + 1}\u2013${state.skip + uris.length} of ${total}`;
    $('prev').disabled = state.skip === 0;
    $('next').disabled = state.skip + pageSize >= total;
    const main = $('systems');
    const keep = new Set(uris);
    for (const [uri, card] of state.cards) {
      if (!keep.has(uri)) { card.remove(); state.cards.delete(uri); }
    }
    for (const uri of uris) {
      let card = state.cards.get(uri);
      if (!card) { card = newCard(uri); state.cards.set(uri, card); }
      main.appendChild(card); // in the page's order
    }
    showError('');
    await Promise.all(uris.map((u) => refresh(u)));
  } catch (e) {
    if (e.status !== 401) showError(e.message);
  }
}

function newCard(uri) {
  const card = $('system-card').content.firstElementChild.cloneNode(true);
  card.dataset.uri = uri;
  card.dataset.id = decodeURIComponent(uri.slice(systemsURI.length + 1));
  card.querySelector('.name').textContent = card.dataset.id;
  for (const b of card.querySelectorAll('[data-reset]')) {
    b.addEventListener('click', () => act(card, `Reset ${b.dataset.reset}`, async (sys) => {
      const target = sys.Actions['#ComputerSystem.Reset'].target;
      await RF.request('POST', target, { ResetType: b.dataset.reset });
    }));
  }
  card.querySelector('.bootcd').addEventListener('click', () => act(card, 'Boot once to CD', async () => {
    await RF.request('PATCH', uri, { Boot: { BootSourceOverrideTarget: 'Cd', BootSourceOverrideEnabled: 'Once' } });
  }));
  card.querySelector('.insert').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const image = card.querySelector('.image').value;
    act(card, 'Insert', async (sys, slot) => {
      const res = await RF.request('POST', slot.Actions['#VirtualMedia.InsertMedia'].target, { Image: image, Inserted: true });
      const task = res.headers.get('Location');
      if (task) state.tasks.set(uri, task);
    });
  });
  card.querySelector('.eject').addEventListener('click', () => act(card, 'Eject', async (sys, slot) => {
    await RF.request('POST', slot.Actions['#VirtualMedia.EjectMedia'].target, {});
    state.tasks.delete(uri);
  }));
  return card;
}

// act runs one action of card's System and says how it went.
async function act(card, what, f) {
  const msg = card.querySelector('.message');
  msg.classList.remove('bad');
  msg.textContent = `${what}\u2026`;
  for (const b of card.querySelectorAll('button')) b.disabled = true;
  try {
    await f(card.rfSystem, card.rfSlot);
    msg.textContent = `${what}: accepted`;
  } catch (e) {
    msg.textContent = `${what}: ${e.message}`;
    msg.classList.add('bad');
  } finally {
    for (const b of card.querySelectorAll('button')) b.disabled = false;
    refresh(card.dataset.uri);
  }
}

// cdSlot is the first VirtualMedia slot that takes a CD.
async function cdSlot(sys) {
  if (!sys.VirtualMedia) return null;
  const c = await RF.get(sys.VirtualMedia['@odata.id']);
  for (const m of c.Members || []) {
    const slot = await RF.get(m['@odata.id']);
    if ((slot.MediaTypes || []).some((t) => t === 'CD' || t === 'DVD')) return slot;
  }
  return null;
}

async function mediaText(uri, slot) {
  if (!slot) return 'no CD slot';
  if (slot.Status && slot.Status.State === 'Starting') {
    const task = state.tasks.get(uri);
    if (task) {
      try {
        const t = await RF.get(task);
        if (t.PercentComplete !== undefined) return `importing ${slot.ImageName || slot.Image} (${t.PercentComplete}%)`;
      } catch (e) { /* the slot's state still says importing */ }
    }
    return `importing ${slot.ImageName || slot.Image}`;
  }
  if (slot.Status && slot.Status.Health === 'Warning') {
    const c = (slot.Status.Conditions || [])[0];
    return `failed: ${slot.Image}${c ? ' (' + c.Message + ')' : ''}`;
  }
  return slot.Inserted ? `${slot.Image} (inserted)` : 'empty';
}

async function refresh(uri) {
  const card = state.cards.get(uri);
  if (!card) return;
  try {
    const sys = await RF.get(uri);
    const slot = await cdSlot(sys);
    // Not card.slot: every Element has a slot property (a string).
    card.rfSystem = sys;
    card.rfSlot = slot;
    const power = card.querySelector('.power');
    power.textContent = sys.PowerState || 'Unknown';
    power.className = `power ${sys.PowerState || ''}`;
    card.dataset.power = sys.PowerState || '';
    card.querySelector('.health').textContent = (sys.Status && sys.Status.Health) || 'Unknown';
    const boot = sys.Boot || {};
    card.querySelector('.boot').textContent = boot.BootSourceOverrideEnabled && boot.BootSourceOverrideEnabled !== 'Disabled' ?
      `${boot.BootSourceOverrideTarget} (${boot.BootSourceOverrideEnabled})` : 'none';
    card.querySelector('.bootmode').textContent = boot.BootSourceOverrideMode || 'Unknown';
    card.querySelector('.media').textContent = await mediaText(uri, slot);
    card.querySelector('.insert').hidden = !slot;
    await consoleLink(card, sys);
    await thumbnail(card, sys);
  } catch (e) {
    if (e.status === 404) { card.remove(); state.cards.delete(uri); return; }
    if (e.status !== 401) card.querySelector('.message').textContent = e.message;
  }
}

async function consoleLink(card, sys) {
  const uri = card.dataset.uri;
  if (!state.managers.has(uri)) {
    const m = ((sys.Links || {}).ManagedBy || [])[0];
    state.managers.set(uri, m ? await RF.get(m['@odata.id']).catch(() => null) : null);
  }
  const href = consoleURI(state.managers.get(uri));
  const a = card.querySelector('.console');
  a.hidden = !href;
  if (href) a.href = href;
  card.dataset.console = href ? 'linked' : 'none';
}

// thumbnail shows a running System's screenshot (the bridge's
// Oem/RedfishBridge/Thumbnail, a PNG read with the session's token and
// shown as a blob: image, as the CSP allows); none for a System that is
// not On or whose screen cannot be read.
async function thumbnail(card, sys) {
  const img = card.querySelector('.thumb');
  let url = '';
  if (sys.PowerState === 'On') {
    try {
      const res = await RF.request('GET', `${card.dataset.uri}/Oem/RedfishBridge/Thumbnail`);
      url = URL.createObjectURL(await res.blob());
    } catch (e) { /* not running yet, or no screen: no thumbnail */ }
  }
  if (img.dataset.blob) URL.revokeObjectURL(img.dataset.blob);
  img.dataset.blob = url;
  img.hidden = !url;
  if (url) {
    img.src = url;
    img.alt = `screen of ${card.dataset.id}`;
  } else {
    img.removeAttribute('src');
  }
  card.dataset.thumbnail = url ? 'shown' : 'none';
}

function schedule() {
  clearTimeout(state.timer);
  state.timer = setTimeout(async () => {
    if (document.visibilityState === 'visible') await load();
    schedule();
  }, refreshMillis);
}

// role reads the caller's own account's RoleId: a ReadOnly user is shown
// no action (the API refuses its writes in any case). The page waits for
// it, so a ReadOnly user never sees a button.
async function role(user) {
  try {
    const a = await RF.get(`/redfish/v1/AccountService/Accounts/${encodeURIComponent(user)}`);
    return a.RoleId || '';
  } catch (e) {
    return '';
  }
}

document.addEventListener('DOMContentLoaded', async () => {
  const s = RF.session();
  if (!s) { RF.toLogin(); return; }
  $('who').textContent = s.user;
  document.body.dataset.role = await role(s.user);
  $('logout').addEventListener('click', () => RF.logout());
  $('prev').addEventListener('click', () => { state.skip = Math.max(0, state.skip - pageSize); load(); });
  $('next').addEventListener('click', () => { state.skip += pageSize; load(); });
  let typing = 0;
  $('filter').addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      state.filter = $('filter').value.trim();
      state.members = null;
      state.skip = 0;
      load();
    }, 250);
  });
  load().then(schedule);
});
