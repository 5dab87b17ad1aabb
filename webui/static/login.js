// login.js: the login page. A tab that holds a session goes to the Systems.
'use strict';

document.addEventListener('DOMContentLoaded', () => {
  if (RF.session()) {
    location.replace('/ui/systems.html');
    return;
  }
  const form = document.getElementById('login');
  const error = document.getElementById('login-error');
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    error.hidden = true;
    const button = document.getElementById('login-submit');
    button.disabled = true;
    try {
      await RF.login(document.getElementById('user').value, document.getElementById('password').value);
      location.replace('/ui/systems.html');
    } catch (e) {
      error.textContent = e.message;
      error.hidden = false;
    } finally {
      button.disabled = false;
    }
  });
});
