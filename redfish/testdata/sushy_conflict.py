"""A power-on refused for now, as sushy and Ironic 39 see it.

Ironic 39's redfish power interface retries a power-on when sushy raises
an HTTPError with status 409 whose text contains
ActionParameterValueConflict. Prints one JSON object: whether reset_system
raised, the status, and that predicate.
"""
import json
import os

import sushy
from sushy import auth

url = os.environ["RF_URL"]
method = auth.BasicAuth(username=os.environ["RF_USER"], password=os.environ["RF_PASSWORD"])
conn = sushy.Sushy(url + "/redfish/v1", auth=method)
s = conn.get_system("/redfish/v1/Systems/team-a.vm1")
out = {"raised": False}
try:
    s.reset_system(sushy.ResetType.ON)
except sushy.exceptions.HTTPError as e:
    out = {
        "raised": True,
        "status": e.status_code,
        "ironic39_retries": e.status_code == 409 and "ActionParameterValueConflict" in str(e),
    }
print(json.dumps(out))
