"""Ironic's virtual-media provisioning sequence, with the real sushy library,
on several systems at once (one thread and one sushy connection each).

Usage: sushy_ironic21.py cd|deploy SYSTEM_ID...
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
import os
import sys

import sushy

from sushy_common import Steps, boot_of, connect, finish, has_session, main, wait_once_reverted, wait_power


def cd_slots(conn, sys_id):
    mgr = conn.get_manager("/redfish/v1/Managers/" + sys_id)
    return [m for m in mgr.virtual_media.get_members()
            if sushy.VirtualMediaType.CD in m.media_types]


def eject_all(conn, sys_id):
    for m in cd_slots(conn, sys_id):
        m.eject_media()


def cd_phase(sys_id):
    out, step = {}, Steps()
    conn = connect()
    out["session"] = has_session(conn)
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
    out["boot_after_first_boot"] = wait_once_reverted(s)
    step("once reverted")
    return finish(conn, s, out, step)


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
    return finish(conn, s, out, step)


if __name__ == "__main__":
    sys.exit(main({"cd": cd_phase, "deploy": deploy_phase}))
