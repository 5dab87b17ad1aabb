"""Ironic's virtual-media provisioning sequence, with the real sushy library,
on several systems at once (one thread and one sushy connection each).

Usage: ironic_vmedia.py cd|deploy SYSTEM_ID...
Environment: RF_URL, RF_USER, RF_PASSWORD, RF_AUTH (session|basic),
RF_IMAGE (the ISO URL, cd phase).

  cd:     ForceOff, wait Off, eject (Managers/<id>/VirtualMedia, as Ironic
          21 does), insert the ISO, boot mode UEFI, boot Cd/Once, On, wait
          On, then wait until the Once override reverted after that boot.
  deploy: eject, boot Hdd/Continuous, reboot as Ironic does (ForceOff, wait
          Off, On), wait On.

Prints one JSON object {"systems": {id: observations}, "errors": {id: text}}
and exits 1 if any system failed.
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


def boot_of(system):
    b = system.boot
    return [str(getattr(b.target, "value", b.target)),
            str(getattr(b.enabled, "value", b.enabled)),
            str(getattr(b.mode, "value", b.mode))]


def cd_slots(conn, sys_id):
    mgr = conn.get_manager("/redfish/v1/Managers/" + sys_id)
    return [m for m in mgr.virtual_media.get_members()
            if sushy.VirtualMediaType.CD in m.media_types]


def eject_all(conn, sys_id):
    for m in cd_slots(conn, sys_id):
        m.eject_media()


class Steps:
    def __init__(self):
        self.t0 = time.monotonic()
        self.log = []

    def __call__(self, name):
        self.log.append([name, round(time.monotonic() - self.t0, 3)])


def cd_phase(sys_id):
    out, step = {}, Steps()
    conn = connect()
    out["session"] = bool(conn._conn._session.headers.get("X-Auth-Token"))
    s = conn.get_system("/redfish/v1/Systems/" + sys_id)
    s.reset_system(sushy.ResetType.FORCE_OFF)
    wait_power(s, sushy.PowerState.OFF)
    step("off")
    eject_all(conn, sys_id)
    step("ejected")
    cd = cd_slots(conn, sys_id)[0]
    cd.insert_media(os.environ["RF_IMAGE"], inserted=True, write_protected=True)
    step("inserted")
    s.set_system_boot_options(mode=sushy.BootSourceOverrideMode.UEFI)
    s.set_system_boot_options(sushy.BootSource.CD,
                              enabled=sushy.BootSourceOverrideEnabled.ONCE)
    s.refresh()
    out["boot_before_on"] = boot_of(s)
    step("boot set")
    s.reset_system(sushy.ResetType.ON)
    step("on requested")
    wait_power(s, sushy.PowerState.ON)
    step("on")
    cd.refresh()
    out["media_when_on"] = [cd.image, cd.inserted]

    def reverted():
        s.refresh()
        b = boot_of(s)
        return True if b[1] == "Disabled" else b
    wait_until("Once override revert", reverted)
    out["boot_after_first_boot"] = boot_of(s)
    out["power"] = str(s.power_state.value)
    step("once reverted")
    out["steps"] = step.log
    conn._conn._session.close()
    return out


def deploy_phase(sys_id):
    out, step = {}, Steps()
    conn = connect()
    s = conn.get_system("/redfish/v1/Systems/" + sys_id)
    eject_all(conn, sys_id)
    step("ejected")
    cd = cd_slots(conn, sys_id)[0]
    out["media_after_eject"] = [cd.image, cd.inserted]
    s.set_system_boot_options(sushy.BootSource.HDD,
                              enabled=sushy.BootSourceOverrideEnabled.CONTINUOUS)
    step("boot set")
    s.reset_system(sushy.ResetType.FORCE_OFF)
    wait_power(s, sushy.PowerState.OFF)
    step("off")
    s.reset_system(sushy.ResetType.ON)
    wait_power(s, sushy.PowerState.ON)
    step("on")
    out["boot"] = boot_of(s)
    out["power"] = str(s.power_state.value)
    out["steps"] = step.log
    conn._conn._session.close()
    return out


def main():
    phase, ids = sys.argv[1], sys.argv[2:]
    run = {"cd": cd_phase, "deploy": deploy_phase}[phase]
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


if __name__ == "__main__":
    sys.exit(main())
