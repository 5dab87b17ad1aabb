package redfish

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The fake's MediaTrust: in memory, by system id and slot, validated the
// way media/ validates (a CertificateString must hold a PEM certificate).

func (f *fake) Trust(_ context.Context, key system.Key, slot string) (system.MediaTrust, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return system.MediaTrust{}, f.err
	}
	if _, ok := f.systems[key.ID()]; !ok {
		return system.MediaTrust{}, fmt.Errorf("system %s: %w", key, ErrNotFound)
	}
	t, ok := f.trust[key.ID()+"/"+slot]
	if !ok {
		return system.MediaTrust{VerifyCertificate: true}, nil
	}
	return t, nil
}

func (f *fake) editTrust(key system.Key, slot, call string, edit func(*system.MediaTrust) error) error {
	t, err := f.Trust(context.Background(), key, slot)
	if err != nil {
		return err
	}
	return f.write(key, call, func(*SystemView) error {
		t.Certificates = append([]system.MediaCertificate(nil), t.Certificates...)
		if err := edit(&t); err != nil {
			return err
		}
		f.trust[key.ID()+"/"+slot] = t
		return nil
	})
}

func (f *fake) SetVerifyCertificate(_ context.Context, key system.Key, slot string, verify bool) error {
	return f.editTrust(key, slot, fmt.Sprintf("verify %s %s %t", key.ID(), slot, verify), func(t *system.MediaTrust) error {
		t.VerifyCertificate = verify
		return nil
	})
}

func (f *fake) AddCertificate(_ context.Context, key system.Key, slot, pem string) (system.MediaCertificate, error) {
	var added system.MediaCertificate
	err := f.editTrust(key, slot, "add certificate "+key.ID()+" "+slot, func(t *system.MediaTrust) error {
		if !strings.Contains(pem, "-----BEGIN CERTIFICATE-----") {
			return &BadValueError{Property: "CertificateString", Reason: "no PEM certificate"}
		}
		added = system.MediaCertificate{ID: strconv.Itoa(len(t.Certificates) + 1), PEM: pem}
		t.Certificates = append(t.Certificates, added)
		return nil
	})
	return added, err
}

func (f *fake) DeleteCertificate(_ context.Context, key system.Key, slot, id string) error {
	return f.editTrust(key, slot, "delete certificate "+key.ID()+" "+slot+" "+id, func(t *system.MediaTrust) error {
		for i, c := range t.Certificates {
			if c.ID == id {
				t.Certificates = append(t.Certificates[:i], t.Certificates[i+1:]...)
				return nil
			}
		}
		return fmt.Errorf("certificate %s: %w", id, ErrNotFound)
	})
}

// addTestCertificate posts a fresh CA's certificate to the slot through
// the fake, so crawls meet a Certificate.
func addTestCertificate(t *testing.T, f *fake, key system.Key, slot string) system.MediaCertificate {
	t.Helper()
	ca, err := testca.New("crawl CA")
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.AddCertificate(t.Context(), key, slot, ca.PEM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
