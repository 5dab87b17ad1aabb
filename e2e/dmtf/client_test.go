package dmtf

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// waitTimeout bounds a wait for the demo to show a change (generous: the
// machine may be loaded by the other packages' tests).
const waitTimeout = 3 * time.Minute

// do sends one Redfish request to env as its admin and returns the status
// and the body decoded when it is a JSON object.
func do(ctx context.Context, env *demo.Env, method, path, body string) (int, map[string]any, error) {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the demo's self-signed certificate
	}}
	req, err := http.NewRequestWithContext(ctx, method, env.URL+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("request %s %s: %w", method, path, err)
	}
	req.SetBasicAuth(env.User, env.Password)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s %s: read body: %w", method, path, err)
	}
	var m map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &m) != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s %s: %d, body not JSON: %q", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, m, nil
}

// insertAndPowerOn inserts the demo's boot ISO into system's cd0 and powers
// the system on, waiting until Redfish shows both.
func insertAndPowerOn(t *testing.T, env *demo.Env, system string) {
	t.Helper()
	sys := "/redfish/v1/Systems/" + system
	slot := sys + "/VirtualMedia/cd0"
	status, body, err := do(t.Context(), env, http.MethodPost, slot+"/Actions/VirtualMedia.InsertMedia",
		`{"Image":"`+env.Images.URL+`/images/boot.iso"}`)
	if err != nil || (status != http.StatusNoContent && status != http.StatusAccepted) {
		t.Fatalf("insert: %d %v %v", status, body, err)
	}
	testutil.Eventually(t, "cd0 inserted", waitTimeout, 200*time.Millisecond, func(ctx context.Context) error {
		status, body, err := do(ctx, env, http.MethodGet, slot, "")
		if err != nil {
			return err
		}
		if status != http.StatusOK || body["Inserted"] != true || body["Image"] == nil {
			return fmt.Errorf("GET %s: %d Inserted %v Image %v", slot, status, body["Inserted"], body["Image"])
		}
		return nil
	})
	// 409 ResourceInUse: a power-on the bridge cannot run yet; retried.
	testutil.Eventually(t, "power on accepted", waitTimeout, 500*time.Millisecond, func(ctx context.Context) error {
		status, body, err := do(ctx, env, http.MethodPost, sys+"/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`)
		if err != nil {
			return err
		}
		if status != http.StatusNoContent && status != http.StatusOK && status != http.StatusAccepted {
			return fmt.Errorf("reset On: %d %v", status, body)
		}
		return nil
	})
	testutil.Eventually(t, "system on", waitTimeout, 200*time.Millisecond, func(ctx context.Context) error {
		status, body, err := do(ctx, env, http.MethodGet, sys, "")
		if err != nil {
			return err
		}
		if status != http.StatusOK || body["PowerState"] != "On" {
			return fmt.Errorf("GET %s: %d PowerState %v", sys, status, body["PowerState"])
		}
		return nil
	})
}

// subscribe creates an event subscription with every filter the bridge
// takes, so the Service Validator validates an EventDestination against
// its schema; it returns the subscription's URI.
func subscribe(t *testing.T, env *demo.Env, destination string) string {
	t.Helper()
	body := `{"Destination":"` + destination + `","Protocol":"Redfish","Context":"dmtf-validators",` +
		`"EventFormatType":"Event","EventTypes":["Alert"],"RegistryPrefixes":["ResourceEvent"],` +
		`"ResourceTypes":["ComputerSystem"],"OriginResources":[{"@odata.id":"/redfish/v1/Systems"}],"SubordinateResources":true,` +
		`"HttpHeaders":[{"X-Token":"t0ken"}],"DeliveryRetryPolicy":"SuspendRetries"}`
	status, got, err := do(t.Context(), env, http.MethodPost, "/redfish/v1/EventService/Subscriptions", body)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("create subscription: %d %v %v", status, got, err)
	}
	uri, _ := got["@odata.id"].(string)
	if uri == "" {
		t.Fatalf("created subscription without @odata.id: %v", got)
	}
	return uri
}
