package redfish

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"
)

// A resource is one family of Redfish resources the service serves, the
// one place it is registered: its routes, the @odata.type namespaces its
// bodies carry (the $metadata document references them, [servedTypes])
// and, for a child of the service root, its ServiceRoot property and its
// entry in the OData service document. $expand finds every GET route by
// itself ([Server.handle]), and the schemas a resource is checked against
// follow from its @odata.type. Adding a resource is its handler file and
// one entry in [Server.resourceList]; what links it from a parent resource's
// body (a Manager's NetworkProtocol) is the parent's.
type resource struct {
	// root is the ServiceRoot property that links the resource ("" for
	// none); odata and kind are its OData service document entry ("" for
	// none), uri is what both name.
	root, odata, kind, uri string
	// types are the versioned @odata.type namespaces of its bodies
	// ("Collection" types are unversioned), including types embedded in
	// them (Settings, Message).
	types []string
	// endpoints are its routes.
	endpoints []endpoint
}

// An endpoint is one route of a resource: public ones are served without
// authentication ([Server.handle]); a ReadOnly caller reaches only GETs and
// the writes marked forReadOnly.
type endpoint struct {
	method, path string
	h            echo.HandlerFunc
	public       bool
	// readOnlyToo: a write a ReadOnly caller may send; its handler limits
	// what the caller gets (its own logout, a view-only console).
	readOnlyToo bool
	// stream: a long-lived GET (Server-Sent Events) outside the request
	// timeout, the read shares and $expand ([Server.handleStream]).
	stream bool
}

func onGet(path string, h echo.HandlerFunc) endpoint {
	return endpoint{method: http.MethodGet, path: path, h: h}
}
func onPost(path string, h echo.HandlerFunc) endpoint {
	return endpoint{method: http.MethodPost, path: path, h: h}
}
func onPatch(path string, h echo.HandlerFunc) endpoint {
	return endpoint{method: http.MethodPatch, path: path, h: h}
}

// onStream is a GET that streams (Server-Sent Events).
func onStream(path string, h echo.HandlerFunc) endpoint {
	return endpoint{method: http.MethodGet, path: path, h: h, stream: true}
}
func onDelete(path string, h echo.HandlerFunc) endpoint {
	return endpoint{method: http.MethodDelete, path: path, h: h}
}

// unauthenticated is e served without authentication.
func unauthenticated(e endpoint) endpoint { e.public = true; return e }

// forReadOnly is the write e open to ReadOnly callers too.
func forReadOnly(e endpoint) endpoint { e.readOnlyToo = true; return e }

// OData service document kinds.
const (
	singleton = "Singleton"
	entitySet = "EntitySet"
)

// resourceList is every resource family the service serves, in the order
// of the OData service document.
func (s *Server) resourceList() []resource {
	const sys = systemsURI + "/:id"
	const mgr = managersURI + "/:id"
	return []resource{{
		odata: "Service", kind: singleton, uri: "/redfish/v1/",
		types: []string{"ServiceRoot.v1_20_0"},
		endpoints: []endpoint{
			unauthenticated(onGet("/redfish", s.getVersions)),
			unauthenticated(onGet("/redfish/v1", s.getServiceRoot)),
			unauthenticated(onGet("/redfish/v1/odata", s.getOData)),
			unauthenticated(onGet("/redfish/v1/$metadata", s.getMetadata)),
		},
	}, {
		root: "Systems", odata: "Systems", kind: entitySet, uri: systemsURI,
		types: append([]string{
			"ComputerSystem.v1_27_0", "ComputerSystemCollection", "ActionInfo.v1_5_0",
			"Processor.v1_22_0", "ProcessorCollection", "Memory.v1_23_0", "MemoryCollection",
			"BootOption.v1_0_6", "BootOptionCollection", "EthernetInterface.v1_12_4", "EthernetInterfaceCollection",
			"SimpleStorage.v1_3_2", "SimpleStorageCollection", "Storage.v1_21_0", "StorageCollection", "Drive.v1_22_0",
			"StorageController.v1_7_0", "StorageControllerCollection", "VolumeCollection",
			"Bios.v1_2_3", "Settings.v1_4_0", "SecureBoot.v1_1_2",
		}, slices.Concat(virtualMediaTypes, logServiceTypes)...),
		endpoints: append(append([]endpoint{
			onGet(systemsURI, s.listSystems),
			onGet(sys, s.getSystem),
			onPatch(sys, s.patchSystem),
			onPost(sys+"/Actions/"+resetAction, s.resetSystem),
			onGet(sys+"/ResetActionInfo", s.getResetActionInfo),
			onGet(sys+"/Processors", s.listProcessors),
			onGet(sys+"/Processors/:sub", s.getProcessor),
			onGet(sys+"/Memory", s.listMemory),
			onGet(sys+"/BootOptions", s.listBootOptions),
			onGet(sys+"/BootOptions/:sub", s.getBootOption),
			onGet(sys+"/Memory/:sub", s.getMemory),
			onGet(sys+"/EthernetInterfaces", s.listEthernetInterfaces),
			onGet(sys+"/EthernetInterfaces/:sub", s.getEthernetInterface),
			onGet(sys+"/SimpleStorage", s.listSimpleStorage),
			onGet(sys+"/SimpleStorage/:sub", s.getSimpleStorage),
			onGet(sys+"/Storage", s.listStorage),
			onGet(sys+"/Storage/:sub", s.getStorage),
			onGet(sys+"/Storage/:sub/Drives/:drive", s.getDrive),
			onGet(sys+"/Storage/:sub/Controllers", s.listStorageControllers),
			onGet(sys+"/Storage/:sub/Controllers/:ctrl", s.getStorageController),
			onGet(sys+"/Storage/:sub/Volumes", s.listVolumes),
			onGet(sys+"/Bios", s.getBios),
			onGet(sys+"/Bios/Settings", s.getBiosSettings),
			onPatch(sys+"/Bios/Settings", s.patchBiosSettings),
			onPost(sys+"/Bios/Actions/"+resetBiosAction, s.resetBios),
			onGet(sys+"/Bios/"+resetBiosActionInfo, s.getResetBiosActionInfo),
			onGet(sys+"/SecureBoot", s.getSecureBoot),
			onPatch(sys+"/SecureBoot", s.patchSecureBoot),
			onGet(sys+thumbnailPath, s.getThumbnail),
		}, s.virtualMedia(sys)...), s.logServices(sys)...),
	}, {
		root: "Managers", odata: "Managers", kind: entitySet, uri: managersURI,
		types: append([]string{"Manager.v1_24_0", "ManagerCollection", "ManagerNetworkProtocol.v1_12_0", "EthernetInterfaceCollection"},
			slices.Concat(virtualMediaTypes, logServiceTypes)...),
		endpoints: append(append([]endpoint{
			onGet(managersURI, s.listManagers),
			onGet(mgr, s.getManager),
			onGet(mgr+"/NetworkProtocol", s.getNetworkProtocol),
			onPatch(mgr+"/NetworkProtocol", s.patchNetworkProtocol),
			onGet(mgr+"/EthernetInterfaces", s.listManagerEthernetInterfaces),
			forReadOnly(onPost(mgr+"/Actions/Oem/"+consoleTokenAction, s.issueConsoleToken)),
		}, s.virtualMedia(mgr)...), s.logServices(mgr)...),
	}, {
		root: "Chassis", odata: "Chassis", kind: entitySet, uri: chassisCollURI,
		types: []string{"Chassis.v1_28_0", "ChassisCollection"},
		endpoints: []endpoint{
			onGet(chassisCollURI, s.listChassis),
			onGet(chassisCollURI+"/:id", s.getChassis),
		},
	}, {
		root: "SessionService", odata: "SessionService", kind: singleton, uri: sessionServiceURI,
		types: []string{"SessionService.v1_2_0", "Session.v1_8_0", "SessionCollection"},
		endpoints: []endpoint{
			onGet(sessionServiceURI, s.getSessionService),
			onGet(sessionsURI, s.listSessions),
			unauthenticated(onPost(sessionsURI, s.login)),
			// Members: where some clients (and the DMTF Protocol Validator) post.
			unauthenticated(onPost(sessionsURI+"/Members", s.login)),
			onGet(sessionsURI+"/:sid", s.getSession),
			forReadOnly(onDelete(sessionsURI+"/:sid", s.logout)),
		},
	}, {
		root: "AccountService", odata: "AccountService", kind: singleton, uri: accountServiceURI,
		types: []string{"AccountService.v1_18_1", "ManagerAccount.v1_14_1", "ManagerAccountCollection", "Role.v1_3_1", "RoleCollection"},
		endpoints: []endpoint{
			onGet(accountServiceURI, s.getAccountService),
			onGet(accountsURI, s.listAccounts),
			onGet(accountsURI+"/:user", s.getAccount),
			onGet(rolesURI, s.listRoles),
			onGet(rolesURI+"/:role", s.getRole),
		},
	}, {
		root: "Tasks", odata: "TaskService", kind: singleton, uri: taskServiceURI,
		types: []string{"TaskService.v1_3_0", "Task.v1_7_4", "TaskCollection", "Message.v1_1_1"},
		endpoints: []endpoint{
			onGet(taskServiceURI, s.getTaskService),
			onGet(tasksURI, s.listTasks),
			onGet(tasksURI+"/:task", s.getTask),
			onGet(monitorsURI+"/:task", s.getTaskMonitor),
		},
	}, {
		root: "UpdateService", odata: "UpdateService", kind: singleton, uri: updateServiceURI,
		types: []string{"UpdateService.v1_17_0", "SoftwareInventory.v1_13_0", "SoftwareInventoryCollection"},
		endpoints: []endpoint{
			onGet(updateServiceURI, s.getUpdateService),
			onGet(firmwareURI, s.listFirmware),
			onGet(firmwareURI+"/:fw", s.getFirmware),
			onPost(updateServiceURI+"/Actions/"+simpleUpdate, s.simpleUpdate),
		},
	}, {
		root: "EventService", odata: "EventService", kind: singleton, uri: eventServiceURI,
		types: eventTypes,
		endpoints: []endpoint{
			onGet(eventServiceURI, s.getEventService),
			onPost(eventServiceURI+"/Actions/"+submitTestEvent, s.submitTestEvent),
			onGet(subscriptionsURI, s.listSubscriptions),
			onPost(subscriptionsURI, s.postSubscription),
			onGet(subscriptionsURI+"/:sub", s.getSubscription),
			onDelete(subscriptionsURI+"/:sub", s.deleteSubscription),
			onPatch(subscriptionsURI+"/:sub", s.patchSubscription),
			onStream(sseURI, s.streamEvents),
		},
	}, {
		root: "Registries", odata: "Registries", kind: entitySet, uri: registriesURI,
		types: []string{"MessageRegistryFile.v1_1_3", "MessageRegistryFileCollection"},
		endpoints: []endpoint{
			onGet(registriesURI, s.listRegistries),
			onGet(registriesURI+"/:reg", s.getRegistryFile),
			onGet(registriesURI+"/:reg/:file", s.getRegistry),
		},
	}}
}

// virtualMedia are the VirtualMedia routes under a System or a Manager
// (the same slots either way).
func (s *Server) virtualMedia(parent string) []endpoint {
	vm := parent + "/VirtualMedia"
	slot := vm + "/:slot"
	return []endpoint{
		onGet(vm, s.listVirtualMedia),
		onGet(slot, s.getVirtualMedia),
		onPatch(slot, s.patchVirtualMedia),
		onGet(slot+"/Certificates", s.listCertificates),
		onPost(slot+"/Certificates", s.postCertificate),
		onGet(slot+"/Certificates/:cert", s.getCertificate),
		onDelete(slot+"/Certificates/:cert", s.deleteCertificate),
		onPost(slot+"/Actions/VirtualMedia.InsertMedia", s.insertMedia),
		onPost(slot+"/Actions/VirtualMedia.EjectMedia", s.ejectMedia),
		onGet(slot+"/"+insertActionInfo, s.getInsertMediaActionInfo),
		onGet(slot+"/"+ejectActionInfo, s.getEjectMediaActionInfo),
	}
}

// virtualMediaTypes are the types of [Server.virtualMedia]'s resources
// (never appended to: shared).
var virtualMediaTypes = []string{"VirtualMedia.v1_6_5", "VirtualMediaCollection", "Certificate.v1_8_0", "CertificateCollection"}

// routes registers every resource's endpoints.
func (s *Server) routes(e *echo.Echo) {
	for _, r := range s.resources {
		for _, ep := range r.endpoints {
			if ep.stream {
				s.handleStream(e, ep.path, ep.h)
				continue
			}
			s.handle(e, ep)
		}
	}
}

// servedTypes is the sorted union of the resources' types.
func servedTypes(resources []resource) []string {
	var out []string
	for _, r := range resources {
		out = append(out, r.types...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
