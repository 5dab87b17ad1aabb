package redfish

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// Inventory read by Ironic's out-of-band inspection: processors (one per
// socket), network interfaces (with MACs), disks as SimpleStorage devices
// and as Storage drives. Virtual-media CD-ROMs are not disks here.

const storageID = "default"

func cpuID(i int) string { return fmt.Sprintf("CPU%d", i) }

func (s *Server) listProcessors(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	uri := systemURI(v) + "/Processors"
	var uris []string
	for i := range v.Sockets {
		uris = append(uris, uri+"/"+cpuID(i))
	}
	return send(c, http.StatusOK, collection(uri, "#ProcessorCollection.ProcessorCollection", "Processors Collection", uris))
}

func (s *Server) getProcessor(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	for i := range v.Sockets {
		if id := cpuID(i); id == c.Param("sub") {
			return send(c, http.StatusOK, obj{
				"@odata.id":             systemURI(v) + "/Processors/" + id,
				"@odata.type":           "#Processor.v1_22_0.Processor",
				"Id":                    id,
				"Name":                  "Processor " + id,
				"Socket":                id,
				"ProcessorType":         "CPU",
				"ProcessorArchitecture": "x86",
				"InstructionSet":        "x86-64",
				"Manufacturer":          "KubeVirt",
				"Model":                 "Virtual CPU",
				"TotalCores":            v.Cores,
				"TotalThreads":          v.Cores * v.Threads,
				"Status":                statusOK(),
			})
		}
	}
	return fmt.Errorf("processor %q of %s: %w", c.Param("sub"), v.Key, ErrNotFound)
}

func (s *Server) listEthernetInterfaces(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	uri := systemURI(v) + "/EthernetInterfaces"
	var uris []string
	for _, n := range v.NICs {
		uris = append(uris, uri+"/"+n.Name)
	}
	return send(c, http.StatusOK, collection(uri, "#EthernetInterfaceCollection.EthernetInterfaceCollection", "Ethernet Interface Collection", uris))
}

func (s *Server) getEthernetInterface(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	for _, n := range v.NICs {
		if n.Name != c.Param("sub") {
			continue
		}
		body := obj{
			"@odata.id":   systemURI(v) + "/EthernetInterfaces/" + n.Name,
			"@odata.type": "#EthernetInterface.v1_12_4.EthernetInterface",
			"Id":          n.Name,
			"Name":        n.Name,
			"Status":      statusOK(),
			"LinkStatus":  "LinkUp",
		}
		if n.MAC != "" {
			body["MACAddress"] = n.MAC
			body["PermanentMACAddress"] = n.MAC
		} else {
			// No MAC yet (KubeVirt assigns one at start): not usable.
			body["Status"] = obj{"State": "Disabled", "Health": "OK"}
			body["MACAddress"] = nil
		}
		return send(c, http.StatusOK, body)
	}
	return fmt.Errorf("interface %q of %s: %w", c.Param("sub"), v.Key, ErrNotFound)
}

// disks are the VM's disks other than CD-ROMs.
func disks(v SystemView) []Disk {
	var out []Disk
	for _, d := range v.Disks {
		if !d.CDROM {
			out = append(out, d)
		}
	}
	return out
}

func (s *Server) listSimpleStorage(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	uri := systemURI(v) + "/SimpleStorage"
	return send(c, http.StatusOK, collection(uri, "#SimpleStorageCollection.SimpleStorageCollection", "Simple Storage Collection", []string{uri + "/" + storageID}))
}

func (s *Server) getSimpleStorage(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	if c.Param("sub") != storageID {
		return fmt.Errorf("simple storage %q of %s: %w", c.Param("sub"), v.Key, ErrNotFound)
	}
	devices := []obj{}
	for _, d := range disks(v) {
		devices = append(devices, obj{"Name": d.Name, "CapacityBytes": d.CapacityBytes, "Status": statusOK()})
	}
	return send(c, http.StatusOK, obj{
		"@odata.id":   systemURI(v) + "/SimpleStorage/" + storageID,
		"@odata.type": "#SimpleStorage.v1_3_2.SimpleStorage",
		"Id":          storageID,
		"Name":        "Virtual disk controller",
		"Devices":     devices,
		"Status":      statusOK(),
	})
}

func (s *Server) listStorage(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	uri := systemURI(v) + "/Storage"
	return send(c, http.StatusOK, collection(uri, "#StorageCollection.StorageCollection", "Storage Collection", []string{uri + "/" + storageID}))
}

func (s *Server) getStorage(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	if c.Param("sub") != storageID {
		return fmt.Errorf("storage %q of %s: %w", c.Param("sub"), v.Key, ErrNotFound)
	}
	uri := systemURI(v) + "/Storage/" + storageID
	drives := []obj{}
	for _, d := range disks(v) {
		drives = append(drives, link(uri+"/Drives/"+d.Name))
	}
	return send(c, http.StatusOK, obj{
		"@odata.id":          uri,
		"@odata.type":        "#Storage.v1_21_0.Storage",
		"Id":                 storageID,
		"Name":               "Virtual storage",
		"Drives":             drives,
		"Drives@odata.count": len(drives),
		"Controllers":        link(uri + "/Controllers"),
		"Volumes":            link(uri + "/Volumes"),
		"Status":             statusOK(),
	})
}

func (s *Server) getDrive(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	if c.Param("sub") == storageID {
		for _, d := range disks(v) {
			if d.Name != c.Param("drive") {
				continue
			}
			body := obj{
				"@odata.id":     systemURI(v) + "/Storage/" + storageID + "/Drives/" + d.Name,
				"@odata.type":   "#Drive.v1_22_0.Drive",
				"Id":            d.Name,
				"Name":          d.Name,
				"CapacityBytes": d.CapacityBytes,
				"MediaType":     "HDD",
				"Protocol":      "PCIe",
				"Status":        statusOK(),
			}
			if d.Serial != "" {
				// The serial the guest sees: what Ironic's inspection
				// records and a root-device hint (serialNumber) matches.
				body["SerialNumber"] = d.Serial
			}
			return send(c, http.StatusOK, body)
		}
	}
	return fmt.Errorf("drive %q of %s: %w", c.Param("drive"), v.Key, ErrNotFound)
}

// Storage controllers and volumes: one virtual controller, no RAID volumes.

const controllerID = "0"

func (s *Server) listStorageControllers(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	if c.Param("sub") != storageID {
		return fmt.Errorf("storage %q of %s: %w", c.Param("sub"), v.Key, ErrNotFound)
	}
	uri := systemURI(v) + "/Storage/" + storageID + "/Controllers"
	return send(c, http.StatusOK, collection(uri, "#StorageControllerCollection.StorageControllerCollection",
		"Storage Controller Collection", []string{uri + "/" + controllerID}))
}

func (s *Server) getStorageController(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	if c.Param("sub") != storageID || c.Param("ctrl") != controllerID {
		return fmt.Errorf("storage controller %q of %s: %w", c.Param("ctrl"), v.Key, ErrNotFound)
	}
	return send(c, http.StatusOK, obj{
		"@odata.id":                    systemURI(v) + "/Storage/" + storageID + "/Controllers/" + controllerID,
		"@odata.type":                  "#StorageController.v1_7_0.StorageController",
		"Id":                           controllerID,
		"Name":                         "Virtual disk controller",
		"SupportedControllerProtocols": []string{"PCIe"},
		"SupportedDeviceProtocols":     []string{"PCIe"},
		"SupportedRAIDTypes":           []string{},
		"Status":                       statusOK(),
	})
}

func (s *Server) listVolumes(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	if c.Param("sub") != storageID {
		return fmt.Errorf("storage %q of %s: %w", c.Param("sub"), v.Key, ErrNotFound)
	}
	uri := systemURI(v) + "/Storage/" + storageID + "/Volumes"
	body := collection(uri, "#VolumeCollection.VolumeCollection", "Volume Collection", nil)
	// Volumes cannot be created: no apply time is supported.
	body["@Redfish.OperationApplyTimeSupport"] = obj{
		"@odata.type":     "#Settings.v1_4_0.OperationApplyTimeSupport",
		"SupportedValues": []string{},
	}
	return send(c, http.StatusOK, body)
}
