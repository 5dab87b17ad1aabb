"""Ironic's reads and boot preparations with sushy 5.8 (the library recent
Ironic drives BMCs with).

Usage:
  sushy58.py system SYSTEM_ID
      what Ironic reads of a System: Status.Health (node.health),
      BootProgress (polled while a BIOS change waits for a reboot) and the
      boot override with HttpBootUri.
  sushy58.py removable SYSTEM_ID CONFIG_URL ISO_URL
      config_via_removable (redfish-virtual-media): the configuration image
      into the slot whose MediaTypes has USBStick (ejected first), the ISO
      into the CD slot, boot Cd/Once in UEFI, power on.
  sushy58.py uefihttp SYSTEM_ID URL
      redfish-https: set_system_boot_options(UefiHttp, Once, UEFI,
      http_boot_uri=URL), power on.
Environment: RF_URL, RF_USER, RF_PASSWORD; PYTHONPATH holding sushy 5.8.
Prints one JSON object of what it saw.
"""
import json
import os
import sys

import sushy
from sushy import auth

import urllib3

urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)


def value(v):
    return None if v is None else str(getattr(v, "value", v))


def boot_of(system):
    b = system.boot
    return [value(b.target), value(b.enabled), value(b.mode), b.http_boot_uri]


def main():
    conn = sushy.Sushy(os.environ["RF_URL"] + "/redfish/v1",
                       auth=auth.SessionOrBasicAuth(
                           username=os.environ["RF_USER"],
                           password=os.environ["RF_PASSWORD"]),
                       verify=False)
    mode, sys_id = sys.argv[1], sys.argv[2]
    system = conn.get_system("/redfish/v1/Systems/" + sys_id)
    out = {"sushy": sushy.__file__}
    if mode == "system":
        bp = system.boot_progress
        when = bp.last_state_updated_at if bp is not None else None
        out.update({
            "health": value(system.status.health),
            "health_rollup": value(system.status.health_rollup),
            "last_state": value(bp.last_state) if bp is not None else None,
            "last_state_time": when.isoformat() if when is not None else None,
            "boot": boot_of(system),
        })
        print(json.dumps(out))
        return
    if mode == "removable":
        config, iso = sys.argv[3], sys.argv[4]
        slots = system.virtual_media.get_members()
        out["media_types"] = {m.identity: [value(t) for t in m.media_types] for m in slots}
        usb = [m for m in slots if sushy.VirtualMediaType.USB_STICK in m.media_types]
        cd = [m for m in slots if sushy.VirtualMediaType.CD in m.media_types]
        usb[0].eject_media()
        usb[0].insert_media(config, inserted=True, write_protected=True)
        cd[0].insert_media(iso, inserted=True, write_protected=True)
        out["usb_slot"], out["cd_slot"] = usb[0].identity, cd[0].identity
        system.set_system_boot_options(target=sushy.BootSource.CD,
                                       enabled=sushy.BootSourceOverrideEnabled.ONCE,
                                       mode=sushy.BootSourceOverrideMode.UEFI)
    elif mode == "uefihttp":
        out["allowed"] = sorted(value(t) for t in system.get_allowed_system_boot_source_values())
        system.set_system_boot_options(target=sushy.BootSource.UEFI_HTTP,
                                       enabled=sushy.BootSourceOverrideEnabled.ONCE,
                                       mode=sushy.BootSourceOverrideMode.UEFI,
                                       http_boot_uri=sys.argv[3])
    else:
        raise SystemExit("unknown mode " + mode)
    system.refresh()
    out["boot_before_on"] = boot_of(system)
    system.reset_system(sushy.ResetType.ON)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
