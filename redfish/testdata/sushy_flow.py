"""Drive the service with the real sushy library, as Ironic does.

Prints one JSON object of what sushy saw; the Go test compares it and the
backend calls it caused.
"""
import json
import os

import sushy
from sushy import auth

url = os.environ["RF_URL"]
user, password = os.environ["RF_USER"], os.environ["RF_PASSWORD"]
out = {}

if os.environ.get("RF_AUTH") == "basic":
    method = auth.BasicAuth(username=user, password=password)
else:
    method = auth.SessionOrBasicAuth(username=user, password=password)
conn = sushy.Sushy(url + "/redfish/v1", auth=method)
out["session"] = bool(conn._conn._session.headers.get("X-Auth-Token"))
out["systems"] = sorted(conn.get_system_collection().members_identities)
s = conn.get_system("/redfish/v1/Systems/team-a.vm1")
out["uuid"] = s.uuid
out["power"] = str(s.power_state.value)
out["memory_gib"] = s.memory_summary.size_gib
out["cpus"] = s.processors.summary[0]
out["macs"] = sorted(s.ethernet_interfaces.summary.keys())
out["disk_bytes"] = s.simple_storage.disks_sizes_bytes
out["managers"] = [m.identity for m in s.managers]

# Ironic's virtual-media boot: eject, insert, mode, Cd/Once, power on.
mgr = conn.get_manager("/redfish/v1/Managers/team-a.vm1")
# The serial console as sushy parses it (Manager SerialConsole).
out["serial_console"] = [mgr.serial_console.service_enabled, mgr.serial_console.max_concurrent_sessions,
                         sorted(getattr(t, "value", t) for t in mgr.get_supported_serial_console_types())]
media = mgr.virtual_media.get_members()
out["media_ids"] = [m.identity for m in media]
cd = media[0]
out["media_types"] = sorted(str(t.value) for t in cd.media_types)
cd.eject_media()
cd.insert_media("https://img.example/boot-1.iso", inserted=True, write_protected=True)
cd.refresh()
out["media_after_insert"] = [cd.image, cd.inserted]
s.set_system_boot_options(mode=sushy.BootSourceOverrideMode.UEFI)
s.set_system_boot_options(sushy.BootSource.CD, enabled=sushy.BootSourceOverrideEnabled.ONCE)
s.refresh()
out["boot"] = [str(s.boot.target.value), str(s.boot.enabled.value), str(s.boot.mode.value)]
s.reset_system(sushy.ResetType.ON)
s.refresh()
out["power_after"] = str(s.power_state.value)

# Errors come back as sushy exceptions with the Redfish message.
try:
    s.reset_system("Explode")
except Exception as e:  # sushy validates some values itself
    out["bad_reset"] = type(e).__name__
# Ironic's inject NMI (system.reset_system(NMI)): Nmi is not advertised, so
# sushy refuses it before sending; a client that sends it anyway gets a 400
# naming the value.
try:
    s.reset_system(sushy.ResetType.NMI)
except sushy.exceptions.InvalidParameterValueError as e:
    out["nmi"] = type(e).__name__
try:
    conn._conn.post(s._actions.reset.target_uri, data={"ResetType": "Nmi"})
except sushy.exceptions.BadRequestError as e:
    out["nmi_sent"] = [e.status_code, e.code]
try:
    conn.get_system("/redfish/v1/Systems/team-b.vm3")
except sushy.exceptions.ResourceNotFoundError:
    out["other_tenant"] = "ResourceNotFoundError"

conn._conn._session.close()
print(json.dumps(out, sort_keys=True))
