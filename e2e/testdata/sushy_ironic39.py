"""The virtual-media sequence today's Ironic (38/39) drives through sushy 5.8,
on several systems at once (one thread and one sushy connection each).

Usage: sushy_ironic39.py cd|deploy SYSTEM_ID...
Environment: RF_URL, RF_USER, RF_PASSWORD, RF_AUTH (session|basic),
RF_IMAGE (the ISO URL, cd phase).

  cd:     ForceOff, wait Off; virtual media through the System only (no
          fallback to Managers when the System links VirtualMedia); eject
          every usable slot (an InsertMedia action, CD or DVD), once as sushy
          does and once with an empty {} body; refused inserts (an NFS
          TransferProtocolType, TransferMethod Upload) leave the slot empty;
          insert with TransferProtocolType and TransferMethod Stream; boot
          mode UEFI; Pxe/Once, then Cd with only the target (Enabled is
          already Once); On (retried on 409, as Ironic 39 does), wait On,
          wait until the Once override reverted after that boot.
  deploy: eject every usable slot; Hdd/Continuous; reboot with the On sent
          while the ForceOff is still in progress (retried on 409); wait On.

Prints one JSON object {"systems": {id: observations}, "errors": {id: text}}
and exits 1 if any system failed. A refusal is recorded as
[status, MessageId suffix]; an error answer nowhere expected fails the
system.
"""
import os
import sys
import time

import sushy
from sushy import exceptions

from sushy_common import Steps, boot_of, connect, finish, has_session, main, value, wait_once_reverted, wait_power

POWER_ON_ATTEMPTS = 12  # what Ironic 39 retries a power-on refused with 409
POWER_ON_RETRY_DELAY = 1.0


def refusal(e):
    return [e.status_code, str(e.code).rsplit(".", 1)[-1]]


def usable_slots(system):
    """The System's slots Ironic would use: a CD or DVD with InsertMedia.
    sushy raises MissingAttributeError if the System links no
    VirtualMedia; Ironic would then use the Managers, this test fails."""
    out = []
    for m in system.virtual_media.get_members():
        kinds = {sushy.VirtualMediaType.CD, sushy.VirtualMediaType.DVD}
        if kinds & set(m.media_types) and m._actions and m._actions.insert_media:
            out.append(m)
    return out


def eject_all(conn, system, out, key):
    """Ejects every usable slot through sushy (POST without a body), then
    once more with an empty {} body (what sushy retries with on 400/415,
    and what some vendors need): both must answer 2xx."""
    ids = []
    for m in usable_slots(system):
        m.eject_media()
        target = m._actions.eject_media.target_uri
        r = conn._conn.post(target, data={})
        ids.append([m.identity, r.status_code])
    out[key] = ids


def post_insert(conn, slot, body):
    """InsertMedia as Ironic 39 sends it; a refusal is returned, not raised."""
    try:
        r = conn._conn.post(slot._actions.insert_media.target_uri, data=body)
        return r.status_code
    except exceptions.HTTPError as e:
        return refusal(e)


def power_on(system):
    """reset On, retried while it is refused with 409 (the system is in a
    transition); returns the refusals seen."""
    seen = []
    for attempt in range(POWER_ON_ATTEMPTS):
        try:
            system.reset_system(sushy.ResetType.ON)
            return seen
        except exceptions.HTTPError as e:
            if e.status_code != 409 or attempt == POWER_ON_ATTEMPTS - 1:
                raise
            seen.append(refusal(e))
            time.sleep(POWER_ON_RETRY_DELAY)
    return seen


def set_boot_device(system, target, enabled):
    """Ironic's set_boot_device: Enabled is sent only when it differs from
    what the system shows."""
    system.refresh()
    current = system.boot.enabled
    send = None if current == enabled else enabled
    system.set_system_boot_options(target, enabled=send)
    return value(send) if send is not None else None


def cd_phase(sys_id):
    out, step = {}, Steps()
    conn = connect()
    out["session"] = has_session(conn)
    s = conn.get_system("/redfish/v1/Systems/" + sys_id)
    s.reset_system(sushy.ResetType.FORCE_OFF)
    wait_power(s, sushy.PowerState.OFF)
    step("off")
    out["media_collection"] = s.virtual_media.path
    eject_all(conn, s, out, "ejected")
    step("ejected")
    slot = usable_slots(s)[0]
    image = os.environ["RF_IMAGE"]
    scheme = image.split(":", 1)[0].upper()
    out["refused_inserts"] = [
        post_insert(conn, slot, {"Image": image, "TransferProtocolType": "NFS"}),
        post_insert(conn, slot, {"Image": image, "TransferProtocolType": scheme, "TransferMethod": "Upload"}),
    ]
    try:
        slot.insert_media(image, transfer_method=sushy.TransferMethod.UPLOAD)
        out["refused_inserts"].append("sushy insert_media Upload accepted")
    except exceptions.BadRequestError as e:
        out["refused_inserts"].append(refusal(e))
    slot.refresh()
    out["media_after_refusals"] = [slot.image, slot.inserted]
    step("refused")
    out["insert"] = post_insert(conn, slot, {
        "Image": image, "Inserted": True, "WriteProtected": True,
        "TransferProtocolType": scheme, "TransferMethod": "Stream"})
    step("inserted")
    s.set_system_boot_options(mode=sushy.BootSourceOverrideMode.UEFI)
    s.set_system_boot_options(sushy.BootSource.PXE,
                              enabled=sushy.BootSourceOverrideEnabled.ONCE)
    out["cd_enabled_sent"] = set_boot_device(
        s, sushy.BootSource.CD, sushy.BootSourceOverrideEnabled.ONCE)
    s.refresh()
    out["boot_before_on"] = boot_of(s)
    step("boot set")
    out["on_refusals"] = power_on(s)
    step("on requested")
    wait_power(s, sushy.PowerState.ON)
    step("on")
    slot.refresh()
    out["media_when_on"] = [slot.image, slot.inserted, value(slot.transfer_method)]
    out["boot_after_first_boot"] = wait_once_reverted(s)
    step("once reverted")
    return finish(conn, s, out, step)


def deploy_phase(sys_id):
    out, step = {}, Steps()
    conn = connect()
    s = conn.get_system("/redfish/v1/Systems/" + sys_id)
    eject_all(conn, s, out, "ejected")
    slot = usable_slots(s)[0]
    slot.refresh()
    out["media_after_eject"] = [slot.image, slot.inserted]
    step("ejected")
    s.set_system_boot_options(sushy.BootSource.HDD,
                              enabled=sushy.BootSourceOverrideEnabled.CONTINUOUS)
    step("boot set")
    s.reset_system(sushy.ResetType.FORCE_OFF)
    step("off requested")
    out["on_refusals"] = power_on(s)
    step("on requested")
    wait_power(s, sushy.PowerState.ON)
    step("on")
    s.refresh()
    out["boot"] = boot_of(s)
    return finish(conn, s, out, step)


if __name__ == "__main__":
    sys.exit(main({"cd": cd_phase, "deploy": deploy_phase}))
