package redfish

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// Each virtual-media action names its ActionInfo (@Redfish.ActionInfo):
// every parameter the action accepts, with the values it allows.

const (
	insertActionInfo = "InsertMediaActionInfo"
	ejectActionInfo  = "EjectMediaActionInfo"
)

// insertParameters are InsertMedia's parameters, as [Server.insertMedia]
// reads them.
var insertParameters = []obj{
	{"Name": "Image", "Required": true, "DataType": "String"},
	// Only true is accepted (a slot is inserted and write-protected by the
	// insert; false is a 400 PropertyValueNotInList), yet no AllowableValues:
	// the schema makes them strings, and clients that check a boolean
	// against them (community.general's redfish_command VirtualMediaInsert
	// compares its True with "true") refuse their own insert.
	{"Name": "Inserted", "Required": false, "DataType": "Boolean"},
	{"Name": "WriteProtected", "Required": false, "DataType": "Boolean"},
	{"Name": "TransferProtocolType", "Required": false, "DataType": "String", "AllowableValues": transferProtocols},
	{"Name": "TransferMethod", "Required": false, "DataType": "String", "AllowableValues": transferMethods},
	// Given together: the image server's Basic credentials.
	{"Name": "UserName", "Required": false, "DataType": "String"},
	{"Name": "Password", "Required": false, "DataType": "String"},
}

// mediaActions is the Actions object of a virtual-media slot at uri.
func mediaActions(uri string) obj {
	return obj{
		"#" + insertAction: obj{
			"target":              uri + "/Actions/" + insertAction,
			"@Redfish.ActionInfo": uri + "/" + insertActionInfo,
			"TransferProtocolType@Redfish.AllowableValues": transferProtocols,
			"TransferMethod@Redfish.AllowableValues":       transferMethods,
			// Only true is accepted, said on the action where the Interop
			// Validator looks for it. Clients that compare a boolean with
			// these strings (Ansible) read the ActionInfo instead while one
			// is named, and there these values are left out.
			"Inserted@Redfish.AllowableValues":       []string{"true"},
			"WriteProtected@Redfish.AllowableValues": []string{"true"},
		},
		"#" + ejectAction: obj{
			"target":              uri + "/Actions/" + ejectAction,
			"@Redfish.ActionInfo": uri + "/" + ejectActionInfo,
		},
	}
}

func (s *Server) getInsertMediaActionInfo(c echo.Context) error {
	return s.sendMediaActionInfo(c, insertActionInfo, "Insert Media Action Info", insertParameters)
}

func (s *Server) getEjectMediaActionInfo(c echo.Context) error {
	return s.sendMediaActionInfo(c, ejectActionInfo, "Eject Media Action Info", []obj{})
}

func (s *Server) sendMediaActionInfo(c echo.Context, id, name string, params []obj) error {
	v, sl, err := s.slot(c)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, obj{
		"@odata.id":   mediaBase(c, v) + "/" + sl.Slot + "/" + id,
		"@odata.type": "#ActionInfo.v1_5_0.ActionInfo",
		"Id":          id,
		"Name":        name,
		"Parameters":  params,
	})
}
