// redfish.js: the pages' Redfish client. The session's token lives in the
// tab's sessionStorage only; every request goes to the bridge's own
// /redfish/v1, so the pages see and do exactly what the API allows.
'use strict';

const RF = (() => {
  const keys = { token: 'rf.token', session: 'rf.session', user: 'rf.user' };
  const loginPage = '/ui/';

  function session() {
    const token = sessionStorage.getItem(keys.token);
    if (!token) return null;
    return { token, uri: sessionStorage.getItem(keys.session), user: sessionStorage.getItem(keys.user) };
  }

  function forget() {
    for (const k of Object.values(keys)) sessionStorage.removeItem(k);
  }

  // message is the Redfish error body's first message, or the status.
  async function message(res) {
    try {
      const body = await res.json();
      const info = body.error && body.error['@Message.ExtendedInfo'];
      if (info && info.length && info[0].Message) return info[0].Message;
      if (body.error && body.error.message) return body.error.message;
    } catch (e) { /* not JSON */ }
    return res.status + ' ' + res.statusText;
  }

  class Failure extends Error {
    constructor(status, msg) { super(msg); this.status = status; }
  }

  // login creates a Redfish session and keeps its token.
  async function login(user, password) {
    const res = await fetch('/redfish/v1/SessionService/Sessions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ UserName: user, Password: password }),
      credentials: 'omit',
    });
    if (!res.ok) throw new Failure(res.status, await message(res));
    const token = res.headers.get('X-Auth-Token');
    if (!token) throw new Failure(res.status, 'the service answered no X-Auth-Token');
    sessionStorage.setItem(keys.token, token);
    sessionStorage.setItem(keys.session, res.headers.get('Location') || '');
    sessionStorage.setItem(keys.user, user);
  }

  // toLogin forgets the session and shows the login page.
  function toLogin() {
    forget();
    location.replace(loginPage);
  }

  // request sends one authenticated request; a 401 ends the page's session.
  async function request(method, uri, body) {
    const s = session();
    if (!s) { toLogin(); throw new Failure(401, 'not logged in'); }
    const init = { method, headers: { 'X-Auth-Token': s.token, 'Accept': 'application/json' }, credentials: 'omit' };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetch(uri, init);
    if (res.status === 401) { toLogin(); throw new Failure(401, 'session ended'); }
    if (!res.ok) throw new Failure(res.status, await message(res));
    return res;
  }

  async function get(uri) {
    const res = await request('GET', uri);
    return res.json();
  }

  // logout deletes the Redfish session, whatever its answer, then shows
  // the login page.
  async function logout() {
    const s = session();
    if (s && s.uri) {
      try {
        await fetch(s.uri, { method: 'DELETE', headers: { 'X-Auth-Token': s.token }, credentials: 'omit' });
      } catch (e) { /* the token is forgotten anyway */ }
    }
    toLogin();
  }

  return { session, login, logout, request, get, toLogin, Failure };
})();
