"""Create, list and delete an event subscription with sushy, as Ironic's
vendor passthru does, and submit a test event in between.

Usage: sushy_events.py <destination>. Prints JSON: what sushy read.
"""
import json
import sys

import sushy_common as c


def main():
    dest = sys.argv[1]
    conn = c.connect()
    es = conn.get_event_service()
    col = es.subscriptions
    sub = col.create({"Destination": dest, "EventTypes": ["Alert"], "Context": "e2e-context",
                      "Protocol": "Redfish", "HttpHeaders": [{"X-Receiver-Token": "t0ken"}]})
    listed = sorted(conn.get_event_service().subscriptions.members_identities)
    read = {"destination": sub.destination, "context": sub.context, "protocol": sub.protocol,
            "http_headers": sub.http_headers}
    es.submit_test_event("e2e-test-1", "2026-12-06T00:00:00Z", "Alert", "a test event", [],
                         "Base.1.9.3.Success", "/redfish/v1/Systems", "OK")
    sub.delete()
    # a fresh read: refreshing col would refresh its cached (deleted) member
    after = sorted(conn.get_event_service().subscriptions.members_identities)
    print(json.dumps({"created": sub.identity, "listed": listed, "read": read, "after_delete": after,
                      "service_enabled": es.service_enabled,
                      "retry_attempts": es.delivery_retry_attempts}))
    c.close(conn)


if __name__ == "__main__":
    main()
