// The bridge's console page: logs in with a Redfish session (kept in the
// tab's sessionStorage under the keys the bridge's /ui/ pages use, so a
// login there serves here too), asks the System's
// Manager for a one-time console token and opens noVNC on the console
// WebSocket. No credential is ever put in a URL.
import RFB from '/console/novnc/core/rfb.js';

const keys = { token: 'rf.token', session: 'rf.session', user: 'rf.user' };
const id = decodeURIComponent(location.pathname.split('/')[2] || '');
const $ = (x) => document.getElementById(x);
let rfb = null;

function status(text) { $('status').textContent = text; document.body.dataset.state = text; }

function session() {
  const token = sessionStorage.getItem(keys.token);
  return token ? { token, location: sessionStorage.getItem(keys.session) } : null;
}

async function login(ev) {
  ev.preventDefault();
  const r = await fetch('/redfish/v1/SessionService/Sessions', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ UserName: $('user').value, Password: $('password').value }),
  });
  if (!r.ok) { $('loginError').textContent = 'Login failed (' + r.status + ')'; return; }
  sessionStorage.setItem(keys.token, r.headers.get('X-Auth-Token'));
  sessionStorage.setItem(keys.session, r.headers.get('Location') || '');
  sessionStorage.setItem(keys.user, $('user').value);
  $('login').hidden = true;
  open();
}

function needLogin(text) {
  for (const k of Object.values(keys)) sessionStorage.removeItem(k);
  status(text);
  $('login').hidden = false;
}

async function open() {
  const s = session();
  if (!s) { needLogin('Log in to open the console'); return; }
  $('title').textContent = 'Console of ' + id;
  const r = await fetch('/redfish/v1/Managers/' + encodeURIComponent(id) + '/Actions/Oem/RedfishBridge.ConsoleToken', {
    method: 'POST', headers: { 'X-Auth-Token': s.token, 'Content-Type': 'application/json' }, body: '{}',
  });
  if (r.status === 401) { needLogin('Session ended: log in again'); return; }
  if (!r.ok) { status(r.status === 404 ? 'No such System' : 'Console unavailable (' + r.status + ')'); return; }
  const { Token: token, ViewOnly: viewOnly } = await r.json();
  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host +
    '/console/' + encodeURIComponent(id) + '/vnc?token=' + encodeURIComponent(token);
  rfb = new RFB($('screen'), url);
  rfb.viewOnly = !!viewOnly;
  rfb.scaleViewport = $('scale').checked;
  $('mode').textContent = viewOnly ? 'View only' : '';
  rfb.addEventListener('connect', () => {
    status('Connected');
    $('cad').disabled = $('paste').disabled = !!viewOnly;
  });
  rfb.addEventListener('disconnect', (e) => {
    status(e.detail.clean ? 'Closed' : 'Disconnected');
    $('cad').disabled = $('paste').disabled = true;
    rfb = null;
  });
  rfb.addEventListener('clipboard', (e) => { $('clipboard').value = e.detail.text; });
}

$('login').addEventListener('submit', login);
$('cad').addEventListener('click', () => rfb && rfb.sendCtrlAltDel());
$('scale').addEventListener('change', () => { if (rfb) rfb.scaleViewport = $('scale').checked; });
$('paste').addEventListener('click', () => rfb && rfb.clipboardPasteFrom($('clipboard').value));
$('disconnect').addEventListener('click', () => rfb && rfb.disconnect());
$('logout').addEventListener('click', async () => {
  const s = session();
  if (s && s.location) { await fetch(s.location, { method: 'DELETE', headers: { 'X-Auth-Token': s.token } }); }
  needLogin('Logged out');
});
open();
