package deploy

import (
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// sshHostKey is the generated host key's line in a rendered Secret.
var sshHostKey = regexp.MustCompile(`(?m)^  ssh_host_key: "([A-Za-z0-9+/=]+)"$`)

// TestSSHConsoleHostKey: with sshConsole enabled the chart generates a
// host key the SSH console reads (what ssh.ParsePrivateKey takes, as
// --ssh-console-host-key does), mounts it where the config names it and
// serves the port on the <release>-ssh Service; with hostKeySecret given
// it generates none and mounts that Secret; disabled, nothing of it is
// rendered.
func TestSSHConsoleHostKey(t *testing.T) {
	out := mustHelm(t, "template", "rb", chartDir, "--namespace", "bm", "--set", "sshConsole.enabled=true")
	m := sshHostKey.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no generated ssh_host_key in:\n%s", out)
	}
	pemKey, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(pemKey)
	if err != nil {
		t.Fatalf("the generated host key does not parse: %v", err)
	}
	if got := signer.PublicKey().Type(); got != ssh.KeyAlgoED25519 {
		t.Errorf("host key type %s, want %s", got, ssh.KeyAlgoED25519)
	}
	for _, want := range []string{
		"ssh-console-listen: :2222", "ssh-console-host-key: /etc/redfish-bridge/ssh/ssh_host_key",
		"mountPath: /etc/redfish-bridge/ssh", "secretName: rb-redfish-bridge-ssh-host-key",
		"name: rb-redfish-bridge-ssh\n", "targetPort: ssh-console",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("sshConsole enabled: no %q rendered", want)
		}
	}

	given := mustHelm(t, "template", "rb", chartDir, "--namespace", "bm", "--set", "sshConsole.enabled=true", "--set", "sshConsole.hostKeySecret=my-key")
	if sshHostKey.MatchString(given) || !strings.Contains(given, "secretName: my-key") {
		t.Errorf("hostKeySecret given: a key generated, or my-key not mounted")
	}
	off := mustHelm(t, "template", "rb", chartDir, "--namespace", "bm")
	if strings.Contains(off, "ssh") {
		t.Errorf("sshConsole disabled: something of it rendered")
	}
}
