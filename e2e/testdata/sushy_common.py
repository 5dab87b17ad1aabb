"""What the sushy e2e scripts share: connecting, waiting, timing steps and
running one sequence on several systems at once.

Environment: RF_URL, RF_USER, RF_PASSWORD, RF_AUTH (session|basic).
"""
import concurrent.futures
import json
import os
import sys
import time
import traceback

import sushy
from sushy import auth

import urllib3

urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)

URL = os.environ["RF_URL"]
USER, PASSWORD = os.environ["RF_USER"], os.environ["RF_PASSWORD"]
WAIT = 60  # seconds, like Ironic's power state wait


def connect():
    if os.environ.get("RF_AUTH") == "basic":
        method = auth.BasicAuth(username=USER, password=PASSWORD)
    else:
        method = auth.SessionOrBasicAuth(username=USER, password=PASSWORD)
    return sushy.Sushy(URL + "/redfish/v1", auth=method, verify=False)


def has_session(conn):
    return bool(conn._conn._session.headers.get("X-Auth-Token"))


def close(conn):
    conn._conn._session.close()


def wait_until(what, cond):
    deadline = time.monotonic() + WAIT
    while True:
        last = cond()
        if last is True:
            return
        if time.monotonic() > deadline:
            raise TimeoutError("%s: still %r after %ds" % (what, last, WAIT))
        time.sleep(0.5)


def wait_power(system, state):
    def cond():
        system.refresh()
        return True if system.power_state == state else str(system.power_state)
    wait_until("power " + str(state), cond)


def value(v):
    return str(getattr(v, "value", v))


def boot_of(system):
    b = system.boot
    return [value(b.target), value(b.enabled), value(b.mode)]


class Steps:
    """Seconds since start at each named step."""

    def __init__(self):
        self.t0 = time.monotonic()
        self.log = []

    def __call__(self, name):
        self.log.append([name, round(time.monotonic() - self.t0, 3)])


def run_on_all(run, ids):
    """Runs run(id) on every id at once (a thread and a connection each);
    prints {"systems": {id: result}, "errors": {id: traceback}} and returns
    the exit status (1 if any failed)."""
    result = {"systems": {}, "errors": {}}
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(ids)) as pool:
        futures = {pool.submit(run, i): i for i in ids}
        for f in concurrent.futures.as_completed(futures):
            i = futures[f]
            try:
                result["systems"][i] = f.result()
            except Exception:
                result["errors"][i] = traceback.format_exc()
    print(json.dumps(result, sort_keys=True))
    return 1 if result["errors"] else 0


def wait_once_reverted(system):
    """Waits until a Once boot override reverted after the boot it served;
    returns the Boot then."""
    def reverted():
        system.refresh()
        b = boot_of(system)
        return True if b[1] == "Disabled" else b
    wait_until("Once override revert", reverted)
    return boot_of(system)


def finish(conn, system, out, step):
    """Records the power state and the steps, closes conn, returns out."""
    out["power"] = value(system.power_state)
    out["steps"] = step.log
    close(conn)
    return out


def main(phases):
    """Runs phases[argv[1]] on the system ids argv[2:] ([run_on_all])."""
    phase, ids = sys.argv[1], sys.argv[2:]
    return run_on_all(phases[phase], ids)
