package redfish

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// EventLogs is each System's event log (package eventlog): the System's
// events, the newest kept. A System's LogService
// (Systems/{id}/LogServices/Log, and the same under its Manager, where
// Ansible's GetLogs and ClearLogs look) serves it.
type EventLogs interface {
	// Entries is key's log, oldest first.
	Entries(key system.Key) []event.Event
	// Clear empties key's log.
	Clear(key system.Key)
	// PerSystem is how many entries a log keeps.
	PerSystem() int
}

const (
	logServiceID   = "Log"
	clearLogAction = "LogService.ClearLog"
)

var logServiceTypes = []string{"LogService.v1_1_3", "LogServiceCollection", "LogEntry.v1_6_1", "LogEntryCollection"}

// logServices are the LogService routes under a System or a Manager
// (parent ends in "/:id"): both serve the System's one log.
func (s *Server) logServices(parent string) []endpoint {
	if s.b.Logs == nil {
		return nil
	}
	svc := parent + "/LogServices/" + logServiceID
	return []endpoint{
		onGet(parent+"/LogServices", s.listLogServices),
		onGet(svc, s.getLogService),
		onGet(svc+"/Entries", s.listLogEntries),
		onGet(svc+"/Entries/:entry", s.getLogEntry),
		onPost(svc+"/Actions/"+clearLogAction, s.clearLog),
	}
}

// logParent is the System or Manager URI the request's log is under.
func logParent(c echo.Context, v SystemView) string {
	if len(c.Path()) >= len(managersURI) && c.Path()[:len(managersURI)] == managersURI {
		return managerURI(v)
	}
	return systemURI(v)
}

func (s *Server) listLogServices(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	uri := logParent(c, v) + "/LogServices"
	return send(c, http.StatusOK, collection(uri, "#LogServiceCollection.LogServiceCollection", "Log Services",
		[]string{uri + "/" + logServiceID}))
}

func (s *Server) getLogService(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	uri := logParent(c, v) + "/LogServices/" + logServiceID
	return send(c, http.StatusOK, obj{
		"@odata.id":          uri,
		"@odata.type":        "#LogService.v1_1_3.LogService",
		"Id":                 logServiceID,
		"Name":               "System Event Log",
		"Description":        "The events of " + v.Key.String() + " (docs/event-log.md)",
		"LogEntryType":       "Event",
		"MaxNumberOfRecords": s.b.Logs.PerSystem(),
		"OverWritePolicy":    "WrapsWhenFull",
		"ServiceEnabled":     true,
		"DateTime":           s.cfg.Now().UTC().Format(time.RFC3339),
		"Status":             statusOK(),
		"Entries":            link(uri + "/Entries"),
		"Actions": obj{"#" + clearLogAction: obj{
			"target": uri + "/Actions/" + clearLogAction,
		}},
	})
}

// listLogEntries answers the entries whole in Members, newest first (as
// BMCs do, and as Ansible's GetLogs reads them).
func (s *Server) listLogEntries(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	uri := logParent(c, v) + "/LogServices/" + logServiceID + "/Entries"
	entries := s.b.Logs.Entries(v.Key)
	slices.Reverse(entries)
	members := make([]obj, len(entries))
	for i, e := range entries {
		members[i] = logEntry(uri, e)
	}
	return send(c, http.StatusOK, obj{
		"@odata.id":           uri,
		"@odata.type":         "#LogEntryCollection.LogEntryCollection",
		"Name":                "Log Entries",
		"Members":             members,
		"Members@odata.count": len(members),
	})
}

func (s *Server) getLogEntry(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	uri := logParent(c, v) + "/LogServices/" + logServiceID + "/Entries"
	for _, e := range s.b.Logs.Entries(v.Key) {
		if e.ID == c.Param("entry") {
			return send(c, http.StatusOK, logEntry(uri, e))
		}
	}
	return fmt.Errorf("log entry %q of %s: %w", c.Param("entry"), v.Key, ErrNotFound)
}

// clearLog empties the System's log (on this replica: docs/event-log.md).
func (s *Server) clearLog(c echo.Context) error {
	v, err := s.parameterless(c, clearLogAction)
	if err != nil {
		return err
	}
	s.b.Logs.Clear(v.Key)
	return c.NoContent(http.StatusNoContent)
}

// logEntry is the LogEntry of e in the collection at entries.
func logEntry(entries string, e event.Event) obj {
	args := e.MessageArgs
	if args == nil {
		args = []string{}
	}
	return obj{
		"@odata.id":      entries + "/" + e.ID,
		"@odata.type":    "#LogEntry.v1_6_1.LogEntry",
		"Id":             e.ID,
		"Name":           "Log Entry " + e.ID,
		"EntryType":      "Event",
		"Severity":       string(e.Severity),
		"Created":        e.Time.UTC().Format(time.RFC3339),
		"EventTimestamp": e.Time.UTC().Format(time.RFC3339),
		"EventId":        e.ID,
		"Message":        e.Message,
		"MessageId":      e.MessageID,
		"MessageArgs":    args,
		"Links":          obj{"OriginOfCondition": link(e.Origin)},
	}
}
