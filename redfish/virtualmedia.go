package redfish

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Virtual media is reachable under the system and under its manager; the
// same slots are behind both.

const (
	insertAction = "VirtualMedia.InsertMedia"
	ejectAction  = "VirtualMedia.EjectMedia"
)

// Transfer protocols and methods InsertMedia accepts (others: 400
// PropertyValueNotInList); a slot shows the first method. The image is
// fetched from its HTTP(S) URL by the bridge; a client does not upload it.
var (
	transferProtocols = []string{"HTTP", "HTTPS"}
	transferMethods   = []string{"Stream"}
)

// mediaBase is the URI of the VirtualMedia collection the request came
// through.
func mediaBase(c echo.Context, v SystemView) string {
	if strings.HasPrefix(c.Path(), managersURI+"/") {
		return managerURI(v) + "/VirtualMedia"
	}
	return systemURI(v) + "/VirtualMedia"
}

func (s *Server) listVirtualMedia(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	base := mediaBase(c, v)
	uris := make([]string, len(v.Slots))
	for i, sl := range v.Slots {
		uris[i] = base + "/" + sl.Slot
	}
	return send(c, http.StatusOK, collection(base, "#VirtualMediaCollection.VirtualMediaCollection", "Virtual Media Collection", uris))
}

// slot resolves :slot of a system in scope.
func (s *Server) slot(c echo.Context) (SystemView, system.MediaSlot, error) {
	v, err := s.system(c)
	if err != nil {
		return SystemView{}, system.MediaSlot{}, err
	}
	for _, sl := range v.Slots {
		if sl.Slot == c.Param("slot") {
			return v, sl, nil
		}
	}
	return SystemView{}, system.MediaSlot{}, fmt.Errorf("media slot %q of %s: %w", c.Param("slot"), v.Key, ErrNotFound)
}

func renderMedia(base string, sl system.MediaSlot) obj {
	uri := base + "/" + sl.Slot
	body := obj{
		"@odata.id":            uri,
		"@odata.type":          "#VirtualMedia.v1_6_5.VirtualMedia",
		"Id":                   sl.Slot,
		"Name":                 mediaName(sl.Slot),
		"MediaTypes":           system.KindOf(sl.Slot).MediaTypes(),
		"Inserted":             sl.Inserted(),
		"WriteProtected":       true,
		"Image":                nil,
		"ImageName":            nil,
		"ConnectedVia":         "NotConnected",
		"TransferProtocolType": nil,
		"TransferMethod":       transferMethods[0],
		"Status":               mediaStatus(sl),
		"Actions":              mediaActions(uri),
	}
	if sl.Image != "" {
		body["Image"] = sl.Image
		if sl.Inserted() {
			body["ConnectedVia"] = "URI"
		}
		if u, err := url.Parse(sl.Image); err == nil {
			body["ImageName"] = path.Base(u.Path)
			body["TransferProtocolType"] = strings.ToUpper(u.Scheme)
		}
	}
	return body
}

// mediaStatus is the slot's Status. A slot whose import failed holds no
// CD (Inserted false, ConnectedVia NotConnected: a client polling for
// Inserted never takes it for a mounted one, and an undeploy that ejects
// only inserted media has nothing to eject, since the bridge released the
// import's storage itself: media/release.go); it keeps the Image asked for
// and says why it failed: Health Warning and one condition, the Task's
// message (OperationFailed, the reason in its Resolution), until the next
// InsertMedia or EjectMedia of the slot.
func mediaStatus(sl system.MediaSlot) obj {
	switch sl.Phase {
	case system.MediaPending, system.MediaImporting:
		return obj{"State": "Starting", "Health": "OK"}
	case system.MediaFailed:
		m := importFailed(sl).render()
		cond := obj{"MessageId": m["MessageId"], "Message": m["Message"], "Severity": "Warning", "Resolution": m["Resolution"]}
		if !sl.Since.IsZero() {
			cond["Timestamp"] = sl.Since.UTC().Format(time.RFC3339)
		}
		return obj{"State": "Enabled", "Health": "Warning", "Conditions": []obj{cond}}
	}
	return statusOK()
}

func (s *Server) getVirtualMedia(c echo.Context) error {
	v, sl, err := s.slot(c)
	if err != nil {
		return err
	}
	body, err := s.renderMediaTrust(c, v, sl)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, body)
}

// insertMedia accepts {"Image": url} (Inserted and WriteProtected may be
// given, and must be true; TransferProtocolType, HTTP or HTTPS, must match the URL;
// TransferMethod may only be Stream;
// UserName and Password, together, are the image server's Basic
// credentials) and answers 202 with the task of the import, whose monitor
// is in Location.
func (s *Server) insertMedia(c echo.Context) error {
	v, sl, body, err := s.slotBody(c)
	if err != nil {
		return err
	}
	p := newParams(c, insertAction, body)
	image, ok := p.str("Image", nil)
	p.require("Image", ok)
	var scheme string
	if ok {
		u, err := url.Parse(image)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			m := msg("ActionParameterValueFormatError", []string{"#/Image"}, logctx.RedactURL(image), "Image", insertAction)
			m.Resolution = resolveURLFormat
			p.add(m)
		} else {
			scheme = strings.ToUpper(u.Scheme)
		}
	}
	for _, name := range []string{"Inserted", "WriteProtected"} {
		if b, ok := p.boolean(name); ok && !b {
			m := msg("PropertyValueNotInList", []string{"#/" + name}, "false", name)
			m.Resolution = resolveInsertTrue
			p.add(m)
		}
	}
	if t, ok := p.str("TransferProtocolType", transferProtocols); ok && scheme != "" && t != scheme {
		m := msg("PropertyValueConflict", []string{"#/TransferProtocolType", "#/Image"}, "TransferProtocolType", "Image")
		m.Resolution = "TransferProtocolType " + t + " is not the scheme of Image (" + scheme + "): send " + scheme + " or leave TransferProtocolType out."
		p.add(m)
	}
	p.str("TransferMethod", transferMethods)
	req := system.MediaInsert{Image: image, ActionURI: mediaBase(c, v) + "/" + sl.Slot + "/Actions/" + insertAction}
	req.UserName, req.Password = credentials(p)
	p.done(nil)
	if err := p.err(); err != nil {
		return err
	}
	got, err := s.b.Media.Insert(c.Request().Context(), v.Key, sl.Slot, req)
	if err != nil {
		return fmt.Errorf("insert %s into %s slot %s: %w", logctx.RedactURL(image), v.Key, sl.Slot, err)
	}
	if !validTaskID(got.InsertID) {
		if got.InsertID != "" {
			logctx.From(c.Request().Context()).Warn("insert id unusable as a task id, answering without a task", "insertID", got.InsertID)
		}
		return c.NoContent(http.StatusNoContent)
	}
	c.Response().Header().Set(echo.HeaderLocation, taskMonitorURI(got.InsertID))
	return send(c, http.StatusAccepted, renderTask(v, got))
}

// ejectMedia takes no parameters; the body may be absent, with no
// Content-Type, or an empty object.
func (s *Server) ejectMedia(c echo.Context) error {
	v, sl, err := s.slot(c)
	if err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	p := newParams(c, ejectAction, body)
	p.done(nil)
	if err := p.err(); err != nil {
		return err
	}
	if err := s.b.Media.Eject(c.Request().Context(), v.Key, sl.Slot); err != nil {
		return fmt.Errorf("eject %s slot %s: %w", v.Key, sl.Slot, err)
	}
	return c.NoContent(http.StatusNoContent)
}
