"""The indicator LED of a VM through sushy, as Ironic's redfish management
uses it: get_supported_indicators lists the system and each chassis only
when its indicator_led is set, and set_indicator_state calls
set_indicator_led, whose SushyError Ironic raises as RedfishError.

Usage: sushy_indicator.py SYSTEM_ID. Prints one JSON object.
"""
import json
import sys

import sushy

from sushy_common import close, connect, has_session

conn = connect()
system = conn.get_system("/redfish/v1/Systems/" + sys.argv[1])
out = {
    "session": has_session(conn),
    "system_led": None if system.indicator_led is None else str(system.indicator_led),
    "chassis_with_led": [c.identity for c in system.chassis if c.indicator_led],
}
try:
    system.set_indicator_led(sushy.INDICATOR_LED_LIT)
    out["set_error"] = None
except sushy.exceptions.SushyError as e:
    out["set_error"] = type(e).__name__
    out["set_status"] = getattr(e, "status_code", None)
close(conn)
print(json.dumps(out))
