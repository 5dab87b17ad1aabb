package ironicproc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
)

// matchScript runs Ironic's own root-device matcher
// (ironic.common.utils.find_devices_by_hints: what its root-device
// inspection hook and the deploy ramdisk use) on the disks and hints read
// as JSON from stdin, printing the names of the matching disks as JSON.
const matchScript = `import json, sys
from ironic.common import utils
d = json.load(sys.stdin)
print(json.dumps([m["name"] for m in utils.find_devices_by_hints(d["disks"], d["hints"])]))`

// MatchRootDevice returns the names of the disks (an inventory's "disks",
// as Ironic stored them) that root-device hints (a node's root_device, as
// baremetal-operator writes it) select, in the inventory's order, by
// r's own matcher.
func (r Release) MatchRootDevice(ctx context.Context, disks []any, hints map[string]any) ([]string, error) {
	in, err := json.Marshal(map[string]any{"disks": disks, "hints": hints})
	if err != nil {
		return nil, fmt.Errorf("root device hints: %w", err)
	}
	name, args := r.python("", "-c", matchScript)
	cmd := exec.CommandContext(ctx, name, args...) // a fixed script; the data on stdin
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("Ironic %s root-device match: %w: %s", r.Name, err, bytes.TrimSpace(stderr.Bytes()))
	}
	var names []string
	if err := json.Unmarshal(out, &names); err != nil {
		return nil, fmt.Errorf("Ironic %s root-device match output %q: %w", r.Name, out, err)
	}
	return names, nil
}
