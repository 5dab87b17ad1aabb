package redfish

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// Tasks are the virtual-media imports, derived from the slots recorded on
// the VMs: the task id is the slot's InsertID and its state the slot's
// phase, so any replica answers and a restart loses nothing. A task is
// gone once its slot was ejected or re-inserted.

const (
	taskServiceURI = "/redfish/v1/TaskService"
	tasksURI       = taskServiceURI + "/Tasks"
	monitorsURI    = taskServiceURI + "/TaskMonitors"
	// taskRetryAfter is the Retry-After a running task's monitor sends.
	taskRetryAfter = "5"
)

// validTaskID reports whether an InsertID can name a task in a URI as is.
func validTaskID(id string) bool {
	return id != "" && len(id) <= 128 && !strings.ContainsFunc(id, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '-' && r != '_' && r != '.'
	})
}

func taskURI(id string) string        { return tasksURI + "/" + id }
func taskMonitorURI(id string) string { return monitorsURI + "/" + id }

func (s *Server) getTaskService(c echo.Context) error {
	return send(c, http.StatusOK, obj{
		"@odata.id":                       taskServiceURI,
		"@odata.type":                     "#TaskService.v1_3_0.TaskService",
		"Id":                              "TaskService",
		"Name":                            "Task Service",
		"ServiceEnabled":                  true,
		"CompletedTaskOverWritePolicy":    "Oldest",
		"LifeCycleEventOnTaskStateChange": false,
		"Status":                          statusOK(),
		"Tasks":                           link(tasksURI),
	})
}

func (s *Server) listTasks(c echo.Context) error {
	vs, err := s.systems(c)
	if err != nil {
		return err
	}
	var uris []string
	for _, v := range vs {
		for _, sl := range v.Slots {
			if validTaskID(sl.InsertID) {
				uris = append(uris, taskURI(sl.InsertID))
			}
		}
	}
	return send(c, http.StatusOK, collection(tasksURI, "#TaskCollection.TaskCollection", "Task Collection", uris))
}

// task finds the slot whose current insert is id, among the caller's systems.
func (s *Server) task(c echo.Context) (SystemView, system.MediaSlot, error) {
	id := c.Param("task")
	vs, err := s.systems(c)
	if err != nil {
		return SystemView{}, system.MediaSlot{}, err
	}
	for _, v := range vs {
		for _, sl := range v.Slots {
			if sl.InsertID != "" && sl.InsertID == id {
				return v, sl, nil
			}
		}
	}
	return SystemView{}, system.MediaSlot{}, fmt.Errorf("task %q: %w", id, ErrNotFound)
}

func renderTask(v SystemView, sl system.MediaSlot) obj {
	state, status := "Running", "OK"
	switch sl.Phase {
	case system.MediaPending:
		state = "Pending"
	case system.MediaReady:
		state = "Completed"
	case system.MediaFailed:
		state, status = "Exception", "Critical"
	}
	target := sl.ActionURI
	if target == "" {
		target = systemURI(v) + "/VirtualMedia/" + sl.Slot + "/Actions/" + insertAction
	}
	body := obj{
		"@odata.id":   taskURI(sl.InsertID),
		"@odata.type": "#Task.v1_7_4.Task",
		"Id":          sl.InsertID,
		"Name":        "Insert virtual media " + sl.Slot + " of " + v.Key.ID(),
		"TaskState":   state,
		"TaskStatus":  status,
		"TaskMonitor": taskMonitorURI(sl.InsertID),
		"Payload": obj{
			"HttpOperation": "POST",
			"TargetUri":     target,
			"JsonBody":      insertBody(sl),
		},
		"Messages": []obj{},
	}
	if !sl.Since.IsZero() && sl.Phase == system.MediaPending {
		body["StartTime"] = sl.Since.UTC().Format("2006-01-02T15:04:05Z")
	}
	switch sl.Phase {
	case system.MediaImporting:
		if sl.Percent > 0 { // reported by the import method (CDI's progress)
			body["PercentComplete"] = sl.Percent
		}
	case system.MediaReady:
		body["PercentComplete"] = 100
		body["Messages"] = []obj{msg("Success", nil).render()}
	case system.MediaFailed:
		body["Messages"] = []obj{importFailed(sl).render()}
	}
	return body
}

// importFailed is the message of sl's failed import, shown by its Task and
// as the slot's condition: OperationFailed, the reason in its Resolution.
func importFailed(sl system.MediaSlot) Message {
	m := msg("OperationFailed", nil)
	m.Resolution = "The image import failed: " + sl.Reason + ". Insert the image again."
	return m
}

func (s *Server) getTask(c echo.Context) error {
	v, sl, err := s.task(c)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, renderTask(v, sl))
}

// getTaskMonitor answers 202 while the import runs, then the task.
func (s *Server) getTaskMonitor(c echo.Context) error {
	v, sl, err := s.task(c)
	if err != nil {
		return err
	}
	if sl.Phase.Busy() {
		h := c.Response().Header()
		h.Set(echo.HeaderLocation, taskMonitorURI(sl.InsertID))
		h.Set("Retry-After", taskRetryAfter)
		return send(c, http.StatusAccepted, renderTask(v, sl))
	}
	return send(c, http.StatusOK, renderTask(v, sl))
}

// insertBody is the InsertMedia request body that started a task, as the
// JSON text Task.Payload.JsonBody holds, with the credentials (if any)
// redacted: the bridge never keeps them where a task could read them.
// encoding/json, not strconv.Quote: Go's quoting escapes non-BMP and
// non-printable runes as \UXXXXXXXX and \xXX, which are not JSON.
func insertBody(sl system.MediaSlot) string {
	body := struct {
		Image    string `json:"Image"`
		UserName string `json:"UserName,omitempty"`
		Password string `json:"Password,omitempty"`
	}{Image: sl.Image}
	if sl.Credentials {
		body.UserName, body.Password = redacted, redacted
	}
	b, _ := json.Marshal(body) //nolint:gosec // G117: Password only ever holds the redacted placeholder; strings always marshal
	return string(b)
}

// redacted stands for a credential in what the service shows.
const redacted = "******"
