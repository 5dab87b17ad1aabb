"""Read one System with sushy 5.8 (the library recent Ironic drives BMCs
with) and print what Ironic reads of it as JSON: Status.Health (Ironic's
node.health) and BootProgress (polled while a BIOS change waits for a
reboot), plus the boot override with HttpBootUri.

Usage: sushy58_system.py SYSTEM_ID
Environment: RF_URL, RF_USER, RF_PASSWORD; PYTHONPATH holding sushy 5.8.
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


def main():
    conn = sushy.Sushy(os.environ["RF_URL"] + "/redfish/v1",
                       auth=auth.SessionOrBasicAuth(
                           username=os.environ["RF_USER"],
                           password=os.environ["RF_PASSWORD"]),
                       verify=False)
    system = conn.get_system("/redfish/v1/Systems/" + sys.argv[1])
    bp = system.boot_progress
    when = bp.last_state_updated_at if bp is not None else None
    print(json.dumps({
        "sushy": sushy.__file__,
        "health": value(system.status.health),
        "health_rollup": value(system.status.health_rollup),
        "last_state": value(bp.last_state) if bp is not None else None,
        "last_state_time": when.isoformat() if when is not None else None,
        "boot": [value(system.boot.target), value(system.boot.enabled),
                 value(system.boot.mode), system.boot.http_boot_uri],
    }))


if __name__ == "__main__":
    main()
