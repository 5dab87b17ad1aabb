package inventory

// BridgeManagers are the field managers whose managedFields a cached VM
// keeps whole (for the external test of the list).
var BridgeManagers = bridgeManagers
