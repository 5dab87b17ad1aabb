"""A virtual-media slot's trust and credentials through the real sushy
library: its Certificates collection, VerifyCertificate, and InsertMedia
with UserName/Password.

Usage: sushy_vmedia_trust.py SYSTEM_ID STEP...
Steps, run in order on the system's CD slot (Managers/<id>/VirtualMedia):
  addcert=FILE        POST the PEM in FILE to the slot's Certificates
  delcerts            DELETE every member of the slot's Certificates
  verify=true|false   PATCH VerifyCertificate
  eject               EjectMedia
  insert=URL          InsertMedia
  insert=URL,USER,PASSWORD_ENV
                      InsertMedia with UserName USER and the Password taken
                      from the environment variable PASSWORD_ENV
Environment: RF_URL, RF_USER, RF_PASSWORD.

Prints one JSON object: {"verify": bool, "certificates": [member ids],
"subjects": [certificate subjects]} after the steps, or {"error": text}
and exits 1.
"""
import json
import os
import sys
import traceback

import sushy
from sushy import auth

import urllib3

urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)


def main(sys_id, steps):
    conn = sushy.Sushy(os.environ["RF_URL"] + "/redfish/v1",
                       auth=auth.SessionOrBasicAuth(username=os.environ["RF_USER"],
                                                    password=os.environ["RF_PASSWORD"]),
                       verify=False)
    def fresh():
        # A new resource each time: sushy refreshes cached members, and a
        # deleted certificate would answer 404.
        mgr = conn.get_manager("/redfish/v1/Managers/" + sys_id)
        return [m for m in mgr.virtual_media.get_members()
                if sushy.VirtualMediaType.CD in m.media_types][0]

    for step in steps:
        cd = fresh()
        name, _, arg = step.partition("=")
        if name == "addcert":
            with open(arg) as f:
                cd.certificates.create_member(f.read(), sushy.CertificateType.PEM)
        elif name == "delcerts":
            for c in cd.certificates.get_members():
                c.delete()
        elif name == "verify":
            cd.set_verify_certificate(arg == "true")
        elif name == "eject":
            cd.eject_media()
        elif name == "insert":
            parts = arg.split(",")
            if len(parts) == 3:
                cd.insert_media(parts[0], username=parts[1], password=os.environ[parts[2]])
            else:
                cd.insert_media(parts[0])
        else:
            raise ValueError("unknown step " + step)
    cd = fresh()
    members = cd.certificates.get_members()
    return {"verify": cd.verify_certificate,
            "certificates": [c.identity for c in members],
            "subjects": [c.subject.common_name if c.subject else None for c in members]}


if __name__ == "__main__":
    try:
        print(json.dumps(main(sys.argv[1], sys.argv[2:])))
    except Exception:
        print(json.dumps({"error": traceback.format_exc()}))
        sys.exit(1)
