package redfish

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// A VirtualMedia slot's TLS trust, the way Redfish (and sushy-tools) do it:
// VerifyCertificate (PATCH) and a Certificates collection of PEM
// certificates (POST, GET, DELETE), both applied to the next insert. The
// backend keeps them on Kubernetes objects; the service only translates.

// certificateTypes are the CertificateType values a POST accepts.
var certificateTypes = []string{"PEM", "PEMchain"}

// renderMediaTrust is the slot's VirtualMedia resource with its trust.
func (s *Server) renderMediaTrust(c echo.Context, v SystemView, sl system.MediaSlot) (obj, error) {
	t, err := s.b.Trust.Trust(c.Request().Context(), v.Key, sl.Slot)
	if err != nil {
		return nil, fmt.Errorf("trust of %s slot %s: %w", v.Key, sl.Slot, err)
	}
	body := renderMedia(mediaBase(c, v), sl)
	body["VerifyCertificate"] = t.VerifyCertificate
	body[writeableProperties] = []string{"VerifyCertificate"} // Image, Inserted: InsertMedia/EjectMedia
	body["Certificates"] = link(mediaBase(c, v) + "/" + sl.Slot + "/Certificates")
	return body, nil
}

// patchVirtualMedia writes VerifyCertificate, the slot's only writable
// property; If-Match is checked against the resource's ETag.
func (s *Server) patchVirtualMedia(c echo.Context) error {
	v, sl, body, err := s.slotBody(c)
	if err != nil {
		return err
	}
	shown, err := s.renderMediaTrust(c, v, sl)
	if err != nil {
		return err
	}
	if err := checkIfMatch(c, bodyVersion(shown)); err != nil {
		return err
	}
	p := newProps(body)
	verify, ok := p.boolean("VerifyCertificate")
	p.done(shown)
	if err := p.err(); err != nil {
		return err
	}
	if !ok {
		return newError(http.StatusBadRequest, msg("EmptyJSON", nil))
	}
	if err := s.b.Trust.SetVerifyCertificate(c.Request().Context(), v.Key, sl.Slot, verify); err != nil {
		return fmt.Errorf("set VerifyCertificate of %s slot %s: %w", v.Key, sl.Slot, err)
	}
	return c.NoContent(http.StatusNoContent)
}

// slotBody resolves :slot and reads the request's required body.
func (s *Server) slotBody(c echo.Context) (SystemView, system.MediaSlot, map[string]json.RawMessage, error) {
	v, sl, err := s.slot(c)
	if err != nil {
		return v, sl, nil, err
	}
	body, err := requireBody(c)
	return v, sl, body, err
}

func certificatesURI(c echo.Context, v SystemView, slot string) string {
	return mediaBase(c, v) + "/" + slot + "/Certificates"
}

func (s *Server) listCertificates(c echo.Context) error {
	v, sl, err := s.slot(c)
	if err != nil {
		return err
	}
	t, err := s.b.Trust.Trust(c.Request().Context(), v.Key, sl.Slot)
	if err != nil {
		return fmt.Errorf("trust of %s slot %s: %w", v.Key, sl.Slot, err)
	}
	base := certificatesURI(c, v, sl.Slot)
	uris := make([]string, len(t.Certificates))
	for i, cert := range t.Certificates {
		uris[i] = base + "/" + cert.ID
	}
	body := collection(base, "#CertificateCollection.CertificateCollection", "Certificates of virtual media "+sl.Slot, uris)
	body["@Redfish.SupportedCertificates"] = certificateTypes
	return send(c, http.StatusOK, body)
}

// postCertificate adds {"CertificateString": pem, "CertificateType": "PEM"}
// and answers 201 with the new member, its URI in Location.
func (s *Server) postCertificate(c echo.Context) error {
	v, sl, body, err := s.slotBody(c)
	if err != nil {
		return err
	}
	p := newProps(body)
	text, ok := p.str("CertificateString", nil)
	p.require("CertificateString", ok)
	_, typed := p.str("CertificateType", certificateTypes)
	p.require("CertificateType", typed)
	p.done(nil)
	if err := p.err(); err != nil {
		return err
	}
	cert, err := s.b.Trust.AddCertificate(c.Request().Context(), v.Key, sl.Slot, text)
	var bad *BadValueError
	if errors.As(err, &bad) {
		m := msg("PropertyValueFormatError", []string{"#/CertificateString"}, "(the certificate posted)", "CertificateString")
		m.Resolution = "Post PEM X.509 certificates: " + bad.Reason + "."
		return &Error{Status: http.StatusBadRequest, Messages: []Message{m}, Cause: err}
	}
	if err != nil {
		return fmt.Errorf("add certificate to %s slot %s: %w", v.Key, sl.Slot, err)
	}
	uri := certificatesURI(c, v, sl.Slot) + "/" + cert.ID
	c.Response().Header().Set(echo.HeaderLocation, uri)
	return send(c, http.StatusCreated, renderCertificate(uri, cert))
}

// certificate resolves :cert of a slot.
func (s *Server) certificate(c echo.Context) (SystemView, system.MediaSlot, system.MediaCertificate, error) {
	v, sl, err := s.slot(c)
	if err != nil {
		return v, sl, system.MediaCertificate{}, err
	}
	t, err := s.b.Trust.Trust(c.Request().Context(), v.Key, sl.Slot)
	if err != nil {
		return v, sl, system.MediaCertificate{}, fmt.Errorf("trust of %s slot %s: %w", v.Key, sl.Slot, err)
	}
	for _, cert := range t.Certificates {
		if cert.ID == c.Param("cert") {
			return v, sl, cert, nil
		}
	}
	return v, sl, system.MediaCertificate{}, fmt.Errorf("certificate %q of %s slot %s: %w", c.Param("cert"), v.Key, sl.Slot, ErrNotFound)
}

func (s *Server) getCertificate(c echo.Context) error {
	v, sl, cert, err := s.certificate(c)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, renderCertificate(certificatesURI(c, v, sl.Slot)+"/"+cert.ID, cert))
}

func (s *Server) deleteCertificate(c echo.Context) error {
	v, sl, cert, err := s.certificate(c)
	if err != nil {
		return err
	}
	if err := s.b.Trust.DeleteCertificate(c.Request().Context(), v.Key, sl.Slot, cert.ID); err != nil {
		return fmt.Errorf("delete certificate %s of %s slot %s: %w", cert.ID, v.Key, sl.Slot, err)
	}
	return c.NoContent(http.StatusNoContent)
}

// renderCertificate is a Certificate resource; the details come from the
// first certificate of the PEM.
func renderCertificate(uri string, cert system.MediaCertificate) obj {
	typ := "PEM"
	if bytes.Count([]byte(cert.PEM), []byte("-----BEGIN CERTIFICATE-----")) > 1 {
		typ = "PEMchain"
	}
	body := obj{
		"@odata.id":         uri,
		"@odata.type":       "#Certificate.v1_8_0.Certificate",
		"Id":                cert.ID,
		"Name":              "Certificate " + cert.ID,
		"CertificateString": cert.PEM,
		"CertificateType":   typ,
	}
	b, _ := pem.Decode([]byte(cert.PEM))
	if b == nil {
		return body
	}
	x, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return body
	}
	sum := sha256.Sum256(x.Raw)
	body["Issuer"] = certName(x.Issuer.CommonName, x.Issuer.Organization, x.Issuer.Country)
	body["Subject"] = certName(x.Subject.CommonName, x.Subject.Organization, x.Subject.Country)
	body["ValidNotBefore"] = x.NotBefore.UTC().Format(time.RFC3339)
	body["ValidNotAfter"] = x.NotAfter.UTC().Format(time.RFC3339)
	body["SerialNumber"] = strings.ToUpper(x.SerialNumber.Text(16))
	body["Fingerprint"] = strings.ToUpper(hex.EncodeToString(sum[:]))
	body["FingerprintHashAlgorithm"] = "TPM_ALG_SHA256"
	return body
}

func certName(cn string, org, country []string) obj {
	o := obj{}
	if cn != "" {
		o["CommonName"] = cn
	}
	if len(org) > 0 {
		o["Organization"] = org[0]
	}
	if len(country) > 0 {
		o["Country"] = country[0]
	}
	return o
}

// credentials reads InsertMedia's UserName and Password: both or neither.
// A Password's value is never echoed in an error.
func credentials(p *props) (user, pass string) {
	user, _ = p.str("UserName", nil)
	_, hasUser := p.body["UserName"]
	if v, ok := p.body["Password"]; ok {
		p.used["Password"] = true
		if err := json.Unmarshal(v, &pass); err != nil || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			p.add(msg("ActionParameterValueTypeError", []string{"#/Password"}, redacted, "Password", p.action))
			return "", ""
		}
		if !hasUser {
			m := msg("ActionParameterMissing", []string{"#/UserName"}, p.action, "UserName")
			m.Resolution = resolveCredPair
			p.add(m)
		}
		return user, pass
	}
	if hasUser {
		m := msg("ActionParameterMissing", []string{"#/Password"}, p.action, "Password")
		m.Resolution = resolveCredPair
		p.add(m)
	}
	return user, ""
}
